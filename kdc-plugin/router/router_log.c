/* kdc-plugin/router/router_log.c - the crypto router's log, refusal counts and call trace
 * (router_log.h).
 *
 * Reads MPC_ROUTER_TRACE (router_log.h).
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "router_log.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <syslog.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "handle.h"

static int trace_fd = -1;
/* Keys the fingerprints of real keys in the trace; never written anywhere. */
static uint8_t trace_key[32];

/* Refusals in this process: counted with atomics (any thread may refuse), and zeroed in a
 * forked child so that "first refusal in this process" means this process. */
static unsigned long refused;
static unsigned char refusal_logged[ROUTER_FN_COUNT];

static void
count_afresh_in_child(void)
{
    refused = 0;
    memset(refusal_logged, 0, sizeof(refusal_logged));
}

void
router_log(int priority, const char *fmt, ...)
{
    char msg[ROUTER_MSG_LEN];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    syslog(LOG_DAEMON | priority, "mpc_crypto_router: %s", msg);
    fprintf(stderr, "mpc_crypto_router[%ld]: %s\n", (long)getpid(), msg);
}

void
router_log_init(void)
{
    const char *trace = getenv("MPC_ROUTER_TRACE");

    if (trace != NULL && trace[0] != '\0') {
        if (getrandom(trace_key, sizeof(trace_key), 0) != (ssize_t)sizeof(trace_key)) {
            router_log(LOG_WARNING, "MPC_ROUTER_TRACE %s not opened: no random key for its "
                       "fingerprints: %s", trace, strerror(errno));
        } else {
            trace_fd = open(trace, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
            if (trace_fd < 0)
                router_log(LOG_WARNING, "cannot open MPC_ROUTER_TRACE %s: %s", trace,
                           strerror(errno));
        }
    }
    pthread_atfork(NULL, NULL, count_afresh_in_child);
}

/* The fingerprint of kb as 16 hex digits, or "-" for no key. */
static void
fingerprint(const krb5_keyblock *kb, char out[17])
{
    uint8_t digest[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    int i, ok;

    strcpy(out, "-");
    if (kb == NULL || kb->contents == NULL)
        return;
    if (mpc_kdb_handle_is_candidate(kb->contents, kb->length))
        ok = EVP_Digest(kb->contents, kb->length, digest, &n, EVP_sha256(), NULL) == 1;
    else
        ok = HMAC(EVP_sha256(), trace_key, (int)sizeof(trace_key), kb->contents, kb->length,
                  digest, &n) != NULL;
    if (!ok || n < 8) {
        OPENSSL_cleanse(digest, sizeof(digest));
        return;
    }
    for (i = 0; i < 8; i++)
        snprintf(out + 2 * i, 3, "%02x", digest[i]);
    OPENSSL_cleanse(digest, sizeof(digest));
}

void
router_trace(enum router_fn fn, const void *caller, const char *route, const krb5_keyblock *k1,
             const krb5_keyblock *k2)
{
    char line[ROUTER_MSG_LEN], fp1[17], fp2[17];
    const char *object = "?", *slash;
    Dl_info info;
    int n;

    if (trace_fd < 0)
        return;
    if (caller != NULL && dladdr(caller, &info) != 0 && info.dli_fname != NULL) {
        slash = strrchr(info.dli_fname, '/');
        object = slash != NULL ? slash + 1 : info.dli_fname;
    }
    fingerprint(k1, fp1);
    fingerprint(k2, fp2);
    n = snprintf(line, sizeof(line), "pid=%ld fn=%s caller=%s route=%s key=%d:%u:%s",
                 (long)getpid(), router_fn_name(fn), object, route,
                 k1 ? (int)k1->enctype : 0, k1 ? k1->length : 0, fp1);
    if (k2 != NULL && n > 0 && (size_t)n < sizeof(line))
        n += snprintf(line + n, sizeof(line) - (size_t)n, " key2=%d:%u:%s", (int)k2->enctype,
                      k2->length, fp2);
    if (n > 0 && (size_t)n < sizeof(line) - 1) {
        line[n++] = '\n';
        if (write(trace_fd, line, (size_t)n) < 0) {
            /* diagnostics only */
        }
    }
}

krb5_error_code
router_refuse(krb5_context ctx, enum router_fn fn, krb5_error_code code, const char *why)
{
    const char *name = router_fn_name(fn);
    unsigned long count;
    int first_of_fn;

    if (ctx != NULL)
        krb5_set_error_message(ctx, code, "mpc_crypto_router: %s: %s", name, why);
    count = __atomic_add_fetch(&refused, 1, __ATOMIC_RELAXED);
    first_of_fn = (unsigned)fn < ROUTER_FN_COUNT &&
                  __atomic_exchange_n(&refusal_logged[fn], 1, __ATOMIC_RELAXED) == 0;
    if (count == 1)
        router_log(LOG_ERR, "%s: %s (first refusal in this process; later ones are counted "
                   "and logged once per function)", name, why);
    else if (first_of_fn)
        router_log(LOG_ERR, "%s: %s (first refusal by %s in this process, %lu in all)", name,
                   why, name, count);
    return code;
}
