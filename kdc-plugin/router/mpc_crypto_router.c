/* kdc-plugin/router/mpc_crypto_router.c - LD_PRELOAD crypto router for krb5kdc:
 * calls whose key is a protected-key handle go to the engine, all others to
 * libk5crypto untouched.
 *
 * Configuration. The file named by the environment variable MPC_ROUTER_CONFIG
 * (default /etc/mpc-kdc/router.conf) holds "key = value" lines; '#' starts a
 * comment line; blank lines are ignored; an unknown key, a repeated key or a line
 * without '=' makes the whole file invalid. Keys (both required):
 *
 *   handle_key_file = PATH   the 32-byte handle key, the same file as the KDB
 *                            module's mpc_handle_key_file (kdc-plugin/kdb): a
 *                            regular file owned by root or the KDC's user, no
 *                            group or other permissions, exactly 32 bytes.
 *   engine_config   = PATH   the engine cluster configuration (mpc-engine/client,
 *                            config/cluster.example.toml), parsed by mpc_client_open.
 *
 * Optional keys, the engine's nonce pools and failures (router_engine.h,
 * kdc-plugin/README.md):
 *
 *   pool_ttl_s    = 1800     drop prefetched nonces older than this (1..604800); keep
 *                            it below the servers' gcm_nonce_ttl_s (default 3600)
 *   pool_low      = 64       refill a pool holding fewer nonces than this ...
 *   pool_high     = 512      ... up to this many (pool_low < pool_high <= 65536)
 *   ticket_blocks = 40       keystream blocks (16 bytes) prefetched per ticket nonce
 *                            (1..1022); a longer ticket prefetches for itself
 *   unreachable_retry_ms = 3000
 *                            after a call finds the engine unreachable, calls fail at
 *                            once for this long, then one tries again (1..600000)
 *
 * The configuration file itself must be a regular file not writable by group or
 * other. It is read lazily, on the first handle a process sees, once per process
 * (a krb5kdc -w worker reads it again after fork). If it is missing or invalid,
 * every call with a handle fails closed and the reason is logged once per process;
 * calls with ordinary keys never read it and keep working.
 *
 * Diagnostics, for tests only (no key bytes are ever written):
 *
 *   MPC_ROUTER_TRACE = PATH  append one line per intercepted call: pid, function,
 *                            the object that called it (dladdr of the return
 *                            address), the route taken (real | handle | container
 *                            | refused), and per key its enctype, length and an
 *                            8-byte fingerprint: for a handle candidate the first 8
 *                            bytes of SHA-256 of its contents, for any other key the
 *                            first 8 bytes of HMAC-SHA256 under a random key drawn
 *                            when the trace is opened and never written.
 *
 * What is interposed: every exported libk5crypto function (version k5crypto_3_MIT,
 * krb5 1.20.1) that computes with a key, and the keyless ones (lengths, names, type
 * checks) that krb5kdc, libkrb5 and libkdb5 consult about an enctype or checksum type,
 * plus libkrb5's krb5_is_permitted_enctype (version krb5_3_MIT): these answer for the
 * KDC-private enctype MPC_KDC_ENCTYPE_AES256_GCM and checksum type MPC_KDC_CKSUMTYPE_GMAC
 * of the protected krbtgt key (kdc-plugin/kdb/protected_key.h) and pass every other
 * value to the real function. The list is mpc_crypto_router.exports, the reasoning
 * kdc-plugin/README.md. Key recognition: a key of MPC_KDB_HANDLE_LEN bytes with the
 * handle magic is a handle candidate; no enctype has a key of that length, so a
 * candidate is never a real key. A candidate whose tag verifies under the handle key
 * goes to the engine (router_engine.h: the krbtgt key's private enctype, and users' and
 * services' keys of enctypes 17 and 18 for the usages krb5kdc uses with them); any other
 * candidate is refused. A candidate is never passed to a libk5crypto function that
 * computes with it.
 *
 * Answers of the engine about the data (a wrong tag: KRB5KRB_AP_ERR_BAD_INTEGRITY, or
 * valid = FALSE for a checksum; a malformed length or type: KRB5_BAD_MSIZE,
 * KRB5_BAD_ENCTYPE) are what libk5crypto answers in the same case: the message is set,
 * nothing is counted as a refusal (a forged ticket is the client's doing, not the
 * router's).
 *
 * Error code for a refused handle: KRB5_CRYPTO_INTERNAL. Not KRB5KDC_ERR_ETYPE_NOSUPP,
 * which tells the KDC and clients that the enctype is unsupported (they may pick
 * another key or enctype); not KRB5KRB_AP_ERR_BAD_INTEGRITY, which means "wrong
 * key" (a bad password, a forged ticket). KRB5_CRYPTO_INTERNAL is what libk5crypto
 * itself answers for a malformed key, so the KDC treats the request as a server-side
 * failure and logs the message set here (TGS: "mpc_crypto_router: krb5_c_...").
 * Exception seen in krb5kdc 1.20.1: the encrypted_timestamp preauth verifier tries
 * each key and drops every decrypt error, so an AS request of a protected user ends
 * as PREAUTH_FAILED whatever the code (the client says "Password incorrect"); the
 * router's own log (stderr, syslog) still names the cause.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <krb5/krb5.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "handle.h"
#include "protected_key.h"
#include "router_engine.h"
#include "router_kdb_interface.h"

#define ROUTER_VERSION_NAME "k5crypto_3_MIT"
#define ROUTER_KRB5_VERSION_NAME "krb5_3_MIT"
#define ROUTER_DEFAULT_CONFIG "/etc/mpc-kdc/router.conf"
#define ROUTER_CONFIG_MAX 65536
#define MSG_LEN 512

#define EXPORT __attribute__((visibility("default")))

/* libk5crypto functions exported but not declared in krb5.h (signatures of krb5
 * 1.20.1's lib/crypto, written out here; the provider structs stay opaque). */
struct krb5_enc_provider;
struct krb5_hash_provider;
EXPORT krb5_error_code krb5_encrypt_data(krb5_context, krb5_keyblock *, krb5_pointer,
                                         krb5_data *, krb5_enc_data *);
EXPORT krb5_error_code krb5int_aes_encrypt(krb5_key, const krb5_data *, krb5_crypto_iov *,
                                           size_t);
EXPORT krb5_error_code krb5int_aes_decrypt(krb5_key, const krb5_data *, krb5_crypto_iov *,
                                           size_t);
EXPORT krb5_error_code krb5int_camellia_encrypt(krb5_key, const krb5_data *,
                                                krb5_crypto_iov *, size_t);
EXPORT krb5_error_code krb5int_cmac_checksum(const struct krb5_enc_provider *, krb5_key,
                                             const krb5_crypto_iov *, size_t, krb5_data *);
EXPORT krb5_error_code krb5int_hmac(const struct krb5_hash_provider *, krb5_key,
                                    const krb5_crypto_iov *, size_t, krb5_data *);
EXPORT krb5_error_code krb5int_derive_key(const struct krb5_enc_provider *,
                                          const struct krb5_hash_provider *, krb5_key,
                                          krb5_key *, const krb5_data *, int);
EXPORT krb5_error_code krb5int_derive_random(const struct krb5_enc_provider *,
                                             const struct krb5_hash_provider *, krb5_key,
                                             krb5_data *, const krb5_data *, int);
EXPORT krb5_error_code krb5int_arcfour_gsscrypt(const krb5_keyblock *, krb5_keyusage,
                                                const krb5_data *, krb5_crypto_iov *, size_t);
EXPORT krb5_error_code krb5int_c_mandatory_cksumtype(krb5_context, krb5_enctype,
                                                     krb5_cksumtype *);
EXPORT krb5_boolean KRB5_CALLCONV krb5int_c_weak_enctype(krb5_enctype);
EXPORT krb5_boolean KRB5_CALLCONV krb5int_c_deprecated_enctype(krb5_enctype);
/* libkrb5's (k5-int.h), exported under krb5_3_MIT. */
EXPORT krb5_boolean KRB5_CALLCONV krb5_is_permitted_enctype(krb5_context, krb5_enctype);

/* ---- the real functions ---------------------------------------------------------- */

#define ROUTER_FUNCTIONS(X)                                                              \
    X(c_encrypt, krb5_c_encrypt) X(c_decrypt, krb5_c_decrypt)                            \
    X(c_encrypt_iov, krb5_c_encrypt_iov) X(c_decrypt_iov, krb5_c_decrypt_iov)            \
    X(k_encrypt, krb5_k_encrypt) X(k_decrypt, krb5_k_decrypt)                            \
    X(k_encrypt_iov, krb5_k_encrypt_iov) X(k_decrypt_iov, krb5_k_decrypt_iov)            \
    X(c_make_checksum, krb5_c_make_checksum) X(c_verify_checksum, krb5_c_verify_checksum) \
    X(c_make_checksum_iov, krb5_c_make_checksum_iov)                                     \
    X(c_verify_checksum_iov, krb5_c_verify_checksum_iov)                                 \
    X(k_make_checksum, krb5_k_make_checksum) X(k_verify_checksum, krb5_k_verify_checksum) \
    X(k_make_checksum_iov, krb5_k_make_checksum_iov)                                     \
    X(k_verify_checksum_iov, krb5_k_verify_checksum_iov)                                 \
    X(c_prf, krb5_c_prf) X(k_prf, krb5_k_prf) X(c_prfplus, krb5_c_prfplus)               \
    X(c_derive_prfplus, krb5_c_derive_prfplus) X(c_fx_cf2_simple, krb5_c_fx_cf2_simple)  \
    X(c_init_state, krb5_c_init_state) X(c_free_state, krb5_c_free_state)                \
    X(k_create_key, krb5_k_create_key)                                                   \
    X(encrypt, krb5_encrypt) X(decrypt, krb5_decrypt) X(encrypt_data, krb5_encrypt_data) \
    X(calculate_checksum, krb5_calculate_checksum) X(verify_checksum, krb5_verify_checksum) \
    X(init_random_key, krb5_init_random_key)                                             \
    X(aes_encrypt, krb5int_aes_encrypt) X(aes_decrypt, krb5int_aes_decrypt)              \
    X(camellia_encrypt, krb5int_camellia_encrypt)                                        \
    X(cmac_checksum, krb5int_cmac_checksum) X(hmac, krb5int_hmac)                        \
    X(derive_key, krb5int_derive_key) X(derive_random, krb5int_derive_random)            \
    X(arcfour_gsscrypt, krb5int_arcfour_gsscrypt)                                        \
    X(k_key_keyblock, krb5_k_key_keyblock)                                               \
    X(c_valid_enctype, krb5_c_valid_enctype) X(c_enctype_compare, krb5_c_enctype_compare) \
    X(c_encrypt_length, krb5_c_encrypt_length) X(c_crypto_length, krb5_c_crypto_length)  \
    X(c_padding_length, krb5_c_padding_length) X(c_block_size, krb5_c_block_size)        \
    X(c_keylengths, krb5_c_keylengths)                                                   \
    X(c_mandatory_cksumtype, krb5int_c_mandatory_cksumtype)                              \
    X(c_checksum_length, krb5_c_checksum_length)                                         \
    X(c_is_keyed_cksum, krb5_c_is_keyed_cksum)                                           \
    X(c_is_coll_proof_cksum, krb5_c_is_coll_proof_cksum)                                 \
    X(c_valid_cksumtype, krb5_c_valid_cksumtype)                                         \
    X(enctype_to_name, krb5_enctype_to_name)                                             \
    X(cksumtype_to_string, krb5_cksumtype_to_string)                                     \
    X(c_deprecated_enctype, krb5int_c_deprecated_enctype)                                \
    X(c_weak_enctype, krb5int_c_weak_enctype)

/* libkrb5's, under its version name (ROUTER_KRB5_VERSION_NAME). */
#define ROUTER_KRB5_FUNCTIONS(X) X(is_permitted_enctype, krb5_is_permitted_enctype)

enum fn_id {
#define X(id, sym) FN_##id,
    ROUTER_FUNCTIONS(X)
    ROUTER_KRB5_FUNCTIONS(X)
#undef X
    FN_COUNT
};

#define X(id, sym) +1
enum { FN_FIRST_KRB5 = 0 ROUTER_FUNCTIONS(X) };
#undef X

static const char *const fn_names[FN_COUNT] = {
#define X(id, sym) #sym,
    ROUTER_FUNCTIONS(X)
    ROUTER_KRB5_FUNCTIONS(X)
#undef X
};

/* Typed pointers to libk5crypto's (and libkrb5's) definitions, resolved once per
 * process image (the addresses survive fork). */
static struct {
#define X(id, sym) __typeof__(&sym) id;
    ROUTER_FUNCTIONS(X)
    ROUTER_KRB5_FUNCTIONS(X)
#undef X
} real;

static pthread_once_t real_once = PTHREAD_ONCE_INIT;
static int trace_fd = -1;
/* Keys the fingerprints of real keys in the trace: an unkeyed hash of a key derived from a
 * password would be an offline verifier of the password. Drawn with the trace's opening (a
 * krb5kdc -w worker forked after it shares it, so one key has one fingerprint across the
 * process tree); never written anywhere. */
static uint8_t trace_key[32];

/* ---- logging ---------------------------------------------------------------------- */

static void
router_log(int priority, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
router_log(int priority, const char *fmt, ...)
{
    char msg[MSG_LEN];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    syslog(LOG_DAEMON | priority, "mpc_crypto_router: %s", msg);
    fprintf(stderr, "mpc_crypto_router[%ld]: %s\n", (long)getpid(), msg);
}

/* The engine's background reports (router_engine_options.log). */
static void
engine_log(int priority, const char *message)
{
    router_log(priority, "engine: %s", message);
}

/* ---- per-process state: configuration, handle key, engine -------------------------- */

struct process_state {
    pid_t pid;                  /* the process this state belongs to; 0: none yet */
    int ready;                  /* configuration read, handle key loaded, engine open */
    char error[MSG_LEN];        /* why not ready */
    uint8_t handle_key[MPC_KDB_HANDLE_KEY_LEN];
    router_engine *engine;
    unsigned long refused;      /* handle calls refused in this process */
    unsigned char refusal_logged[FN_COUNT]; /* a refusal by this function was logged */
};

static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static struct process_state state;

static void
atfork_prepare(void)
{
    pthread_mutex_lock(&state_lock);
}

static void
atfork_parent(void)
{
    pthread_mutex_unlock(&state_lock);
}

static void
atfork_child(void)
{
    /* The child re-reads its state on first use (state.pid no longer matches);
     * the parent's engine connection is left to the parent. */
    pthread_mutex_unlock(&state_lock);
}

static void
resolve_real(void)
{
    const char *trace;
    void *sym;
    int i;

    for (i = 0; i < FN_COUNT; i++) {
        sym = dlvsym(RTLD_NEXT, fn_names[i],
                     i < FN_FIRST_KRB5 ? ROUTER_VERSION_NAME : ROUTER_KRB5_VERSION_NAME);
        if (sym == NULL)
            sym = dlsym(RTLD_NEXT, fn_names[i]);
        memcpy((char *)&real + (size_t)i * sizeof(void *), &sym, sizeof(sym));
    }
    trace = getenv("MPC_ROUTER_TRACE");
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
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

_Static_assert(sizeof(real) == FN_COUNT * sizeof(void *), "one pointer per function");

static void
ensure_real(void)
{
    pthread_once(&real_once, resolve_real);
}

static char *
trim(char *s)
{
    char *end;

    while (*s == ' ' || *s == '\t')
        s++;
    end = s + strlen(s);
    while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r' || end[-1] == '\n'))
        *--end = '\0';
    return s;
}

/* Reads a whole small file (regular, at most max bytes) into a NUL-terminated buffer
 * the caller frees. */
static int
read_small_file(const char *path, size_t max, int strict_mode, char **out, size_t *len_out,
                char *why, size_t why_len, const char *what)
{
    struct stat st;
    char *buf = NULL;
    ssize_t got;
    size_t len = 0;
    int fd = -1, ret = -1;

    *out = NULL;
    *len_out = 0;
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        snprintf(why, why_len, "cannot open %s %s: %s", what, path, strerror(errno));
        goto cleanup;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, why_len, "%s %s is not a regular file", what, path);
        goto cleanup;
    }
    if (strict_mode == 1 && (st.st_mode & 077) != 0) {
        snprintf(why, why_len, "%s %s has mode %04o; it must not be accessible to group or "
                 "other", what, path, (unsigned)(st.st_mode & 07777));
        goto cleanup;
    }
    if (strict_mode == 2 && (st.st_mode & 022) != 0) {
        snprintf(why, why_len, "%s %s is writable by group or other", what, path);
        goto cleanup;
    }
    if (strict_mode != 0 && st.st_uid != 0 && st.st_uid != geteuid()) {
        snprintf(why, why_len, "%s %s must be owned by root or uid %u", what, path,
                 (unsigned)geteuid());
        goto cleanup;
    }
    if ((size_t)st.st_size > max) {
        snprintf(why, why_len, "%s %s is larger than %zu bytes", what, path, max);
        goto cleanup;
    }
    buf = malloc(max + 1);
    if (buf == NULL) {
        snprintf(why, why_len, "out of memory");
        goto cleanup;
    }
    for (;;) {
        got = read(fd, buf + len, max + 1 - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            snprintf(why, why_len, "cannot read %s %s: %s", what, path, strerror(errno));
            goto cleanup;
        }
        if (got == 0)
            break;
        len += (size_t)got;
        if (len > max) {
            snprintf(why, why_len, "%s %s is larger than %zu bytes", what, path, max);
            goto cleanup;
        }
    }
    buf[len] = '\0';
    *out = buf;
    *len_out = len;
    buf = NULL;
    ret = 0;

cleanup:
    if (buf != NULL) {
        OPENSSL_cleanse(buf, max + 1);
        free(buf);
    }
    if (fd >= 0)
        close(fd);
    return ret;
}

/* The optional numeric keys: name, where in router_engine_options, range. */
static const struct {
    const char *name;
    size_t offset;
    uint32_t min, max;
} option_keys[] = {
    { "pool_ttl_s", offsetof(router_engine_options, pool_ttl_s), 1, 604800 },
    { "pool_low", offsetof(router_engine_options, pool_low), 1, 65535 },
    { "pool_high", offsetof(router_engine_options, pool_high), 2, 65536 },
    { "unreachable_retry_ms", offsetof(router_engine_options, unreachable_retry_ms), 1, 600000 },
    { "ticket_blocks", offsetof(router_engine_options, ticket_blocks), 1, 1022 },
};

/* Parses a decimal in [min, max] into *out; 0 on success. */
static int
parse_u32(const char *text, uint32_t min, uint32_t max, uint32_t *out)
{
    unsigned long long v = 0;
    const char *p;

    if (*text == '\0' || strlen(text) > 10)
        return -1;
    for (p = text; *p != '\0'; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        v = v * 10 + (unsigned long long)(*p - '0');
    }
    if (v < min || v > max)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

/* Parses the router configuration; on success *key_file and *engine_config are
 * malloc'd strings the caller frees and *options holds the optional keys given (0 for
 * the others: the engine's defaults). */
static int
parse_config(const char *path, char **key_file, char **engine_config,
             router_engine_options *options, char *why, size_t why_len)
{
    char *text = NULL, *line, *next, *eq, *name, *value, **slot;
    uint32_t *field;
    size_t len = 0, k;
    int lineno = 0, ret = -1;

    *key_file = NULL;
    *engine_config = NULL;
    memset(options, 0, sizeof(*options));
    if (read_small_file(path, ROUTER_CONFIG_MAX, 2, &text, &len, why, why_len,
                        "router configuration") != 0)
        goto cleanup;
    if (memchr(text, '\0', len) != NULL) {
        snprintf(why, why_len, "router configuration %s contains a NUL byte", path);
        goto cleanup;
    }
    for (line = text; line != NULL; line = next) {
        lineno++;
        next = strchr(line, '\n');
        if (next != NULL)
            *next++ = '\0';
        line = trim(line);
        if (*line == '\0' || *line == '#')
            continue;
        eq = strchr(line, '=');
        if (eq == NULL) {
            snprintf(why, why_len, "%s line %d: expected \"key = value\"", path, lineno);
            goto cleanup;
        }
        *eq = '\0';
        name = trim(line);
        value = trim(eq + 1);
        for (k = 0; k < sizeof(option_keys) / sizeof(option_keys[0]); k++) {
            if (strcmp(name, option_keys[k].name) == 0)
                break;
        }
        if (k < sizeof(option_keys) / sizeof(option_keys[0])) {
            field = (uint32_t *)((char *)options + option_keys[k].offset);
            if (*field != 0) {
                snprintf(why, why_len, "%s line %d: %s given twice", path, lineno, name);
                goto cleanup;
            }
            if (parse_u32(value, option_keys[k].min, option_keys[k].max, field) != 0) {
                snprintf(why, why_len, "%s line %d: %s must be an integer in %u..%u", path,
                         lineno, name, option_keys[k].min, option_keys[k].max);
                goto cleanup;
            }
            continue;
        }
        if (strcmp(name, "handle_key_file") == 0) {
            slot = key_file;
        } else if (strcmp(name, "engine_config") == 0) {
            slot = engine_config;
        } else {
            snprintf(why, why_len, "%s line %d: unknown key \"%.64s\"", path, lineno, name);
            goto cleanup;
        }
        if (*slot != NULL) {
            snprintf(why, why_len, "%s line %d: %s given twice", path, lineno, name);
            goto cleanup;
        }
        if (*value != '/') {
            snprintf(why, why_len, "%s line %d: %s must be an absolute path", path, lineno,
                     name);
            goto cleanup;
        }
        *slot = strdup(value);
        if (*slot == NULL) {
            snprintf(why, why_len, "out of memory");
            goto cleanup;
        }
    }
    if (*key_file == NULL || *engine_config == NULL) {
        snprintf(why, why_len, "%s: %s is missing", path,
                 *key_file == NULL ? "handle_key_file" : "engine_config");
        goto cleanup;
    }
    ret = 0;

cleanup:
    free(text);
    if (ret != 0) {
        free(*key_file);
        free(*engine_config);
        *key_file = NULL;
        *engine_config = NULL;
    }
    return ret;
}

/* At exit, in the process whose engine it is: the engine's background thread is
 * stopped and joined before the engine client library's static objects are destroyed.
 * Registered after that library's own exit handlers (on the first engine open), so it
 * runs before them. */
static int exit_hook_registered;

static void
router_at_exit(void)
{
    router_engine *engine = NULL;

    if (pthread_mutex_trylock(&state_lock) != 0)
        return;
    if (state.pid == getpid() && state.engine != NULL) {
        engine = state.engine;
        state.engine = NULL;
        state.ready = 0;
        snprintf(state.error, sizeof(state.error), "the process is exiting");
    }
    pthread_mutex_unlock(&state_lock);
    router_engine_close(engine);
}

/* Loads configuration, handle key and engine for this process into state. Called
 * with state_lock held. */
static void
load_state(pid_t pid)
{
    char *key_file = NULL, *engine_config = NULL, *key = NULL, why[MSG_LEN] = "";
    const char *path = getenv("MPC_ROUTER_CONFIG");
    router_engine_options options;
    size_t key_len = 0;

    router_engine_close(state.engine);
    OPENSSL_cleanse(&state, sizeof(state));
    state.pid = pid;
    if (path == NULL || path[0] == '\0')
        path = ROUTER_DEFAULT_CONFIG;
    if (parse_config(path, &key_file, &engine_config, &options, why, sizeof(why)) != 0)
        goto cleanup;
    if (read_small_file(key_file, MPC_KDB_HANDLE_KEY_LEN, 1, &key, &key_len, why, sizeof(why),
                        "handle key file") != 0)
        goto cleanup;
    if (key_len != MPC_KDB_HANDLE_KEY_LEN) {
        snprintf(why, sizeof(why), "handle key file %s must hold exactly %d bytes", key_file,
                 MPC_KDB_HANDLE_KEY_LEN);
        goto cleanup;
    }
    memcpy(state.handle_key, key, MPC_KDB_HANDLE_KEY_LEN);
    options.log = engine_log;
    if (router_engine_open(engine_config, &options, &state.engine, why, sizeof(why)) != 0)
        goto cleanup;
    if (!exit_hook_registered && atexit(router_at_exit) == 0)
        exit_hook_registered = 1;
    state.ready = 1;

cleanup:
    if (!state.ready) {
        OPENSSL_cleanse(state.handle_key, sizeof(state.handle_key));
        snprintf(state.error, sizeof(state.error), "configuration unusable, every protected "
                 "key is refused: %s", why);
        router_log(LOG_ERR, "%s", state.error);
    }
    if (key != NULL) {
        OPENSSL_cleanse(key, MPC_KDB_HANDLE_KEY_LEN + 1);
        free(key);
    }
    free(key_file);
    free(engine_config);
}

/* ---- routing ---------------------------------------------------------------------- */

static int
is_candidate(const krb5_keyblock *kb)
{
    return kb != NULL && kb->contents != NULL &&
           mpc_kdb_handle_is_candidate(kb->contents, kb->length);
}

/* A handle candidate is no key (a reference the KDB hands out, checked under the handle
 * key): its plain SHA-256 lets tests recognise the handles they expect and verifies no
 * password. Every other key is fingerprinted under trace_key. */
static void
fingerprint(const krb5_keyblock *kb, char out[17])
{
    uint8_t digest[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    int i, ok;

    strcpy(out, "-");
    if (kb == NULL || kb->contents == NULL)
        return;
    if (is_candidate(kb))
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

static void
trace_call(enum fn_id fn, const void *caller, const char *route, const krb5_keyblock *k1,
           const krb5_keyblock *k2)
{
    char line[MSG_LEN], fp1[17], fp2[17];
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
                 (long)getpid(), fn_names[fn], object, route, k1 ? (int)k1->enctype : 0,
                 k1 ? k1->length : 0, fp1);
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

/* Sets the message on ctx (when there is one), counts the refusal and logs the first
 * one of this process, and the first one of each function (a user's key refused in an
 * entry point, or for a usage, the engine does not serve must leave a line naming them
 * even after an earlier refusal elsewhere; one line per function bounds the log). Returns
 * code. */
static krb5_error_code
refuse(krb5_context ctx, enum fn_id fn, krb5_error_code code, const char *why)
{
    unsigned long count;
    int first_of_fn;

    if (ctx != NULL)
        krb5_set_error_message(ctx, code, "mpc_crypto_router: %s: %s", fn_names[fn], why);
    pthread_mutex_lock(&state_lock);
    count = ++state.refused;
    first_of_fn = !state.refusal_logged[fn];
    state.refusal_logged[fn] = 1;
    pthread_mutex_unlock(&state_lock);
    if (count == 1)
        router_log(LOG_ERR, "%s: %s (first refusal in this process; later ones are counted "
                   "and logged once per function)", fn_names[fn], why);
    else if (first_of_fn)
        router_log(LOG_ERR, "%s: %s (first refusal by %s in this process, %lu in all)",
                   fn_names[fn], why, fn_names[fn], count);
    return code;
}

/* For a handle candidate: verifies it and returns 0 with *id and *engine set, or
 * refuses (error code, message set, logged). */
static krb5_error_code
route_handle(krb5_context ctx, enum fn_id fn, const krb5_keyblock *kb, const void *caller,
             mpc_kdb_key_id *id, router_engine **engine)
{
    char why[MSG_LEN];
    enum mpc_kdb_handle_status status;
    pid_t pid = getpid();
    int ready;

    *engine = NULL;
    memset(id, 0, sizeof(*id));
    pthread_mutex_lock(&state_lock);
    if (state.pid != pid)
        load_state(pid);
    ready = state.ready;
    if (!ready) {
        snprintf(why, sizeof(why), "%s", state.error);
    } else {
        status = mpc_kdb_handle_verify(state.handle_key, kb->contents, kb->length, id);
        if (status != MPC_KDB_HANDLE_OK) {
            ready = 0;
            snprintf(why, sizeof(why), "key handle refused: %s",
                     mpc_kdb_handle_status_string(status));
        } else {
            *engine = state.engine;
        }
    }
    pthread_mutex_unlock(&state_lock);
    trace_call(fn, caller, ready ? "handle" : "refused", kb, NULL);
    if (!ready)
        return refuse(ctx, fn, KRB5_CRYPTO_INTERNAL, why);
    return 0;
}

/* After an engine call: passes success through; an answer about the data (wrong tag,
 * malformed length or type: what libk5crypto answers in the same case) gets its message
 * and nothing more; any other failure is a refusal. */
static krb5_error_code
engine_done(krb5_context ctx, enum fn_id fn, krb5_error_code ret, const char *why)
{
    if (ret == 0)
        return 0;
    if (ret == KRB5KRB_AP_ERR_BAD_INTEGRITY || ret == KRB5_BAD_MSIZE ||
        ret == KRB5_BAD_ENCTYPE) {
        if (ctx != NULL)
            krb5_set_error_message(ctx, ret, "mpc_crypto_router: %s: %s", fn_names[fn],
                                   why[0] ? why : "rejected");
        return ret;
    }
    return refuse(ctx, fn, ret, why[0] ? why : "engine call failed");
}

/* Preauth decryptions (PA-ENC-TIMESTAMP, usage 1; encrypted challenge, usage 54) under a
 * handle that ended without a verdict on the data: the engine down, unreachable or
 * failing, or the router refusing (kdc-plugin/shared/router_kdb_interface.h). */
static unsigned long undecided_decrypts;

static krb5_error_code
decrypt_done(krb5_keyusage usage, krb5_error_code ret)
{
    if ((usage == KRB5_KEYUSAGE_AS_REQ_PA_ENC_TS || usage == KRB5_KEYUSAGE_ENC_CHALLENGE_CLIENT) &&
        ret != 0 && ret != KRB5KRB_AP_ERR_BAD_INTEGRITY && ret != KRB5_BAD_MSIZE &&
        ret != KRB5_BAD_ENCTYPE)
        __atomic_add_fetch(&undecided_decrypts, 1, __ATOMIC_RELAXED);
    return ret;
}

static krb5_error_code
missing_real(krb5_context ctx, enum fn_id fn)
{
    char why[MSG_LEN];

    snprintf(why, sizeof(why), "the real %s@%s not found (are libk5crypto and libkrb5 "
             "loaded?)", fn_names[fn],
             (int)fn < (int)FN_FIRST_KRB5 ? ROUTER_VERSION_NAME : ROUTER_KRB5_VERSION_NAME);
    return refuse(ctx, fn, KRB5_CRYPTO_INTERNAL, why);
}

/* The keyblock of a krb5_key, copied (libk5crypto keeps krb5_key opaque). Returns
 * 0 and *out (freed by the caller with krb5_free_keyblock) or ENOMEM. */
static krb5_error_code
key_view(krb5_key key, krb5_keyblock **out)
{
    *out = NULL;
    if (key == NULL)
        return 0;
    if (real.k_key_keyblock == NULL)
        return KRB5_CRYPTO_INTERNAL;
    return real.k_key_keyblock(NULL, key, out);
}

#define CALLER __builtin_return_address(0)
#define WHY_DECL char why[MSG_LEN] = ""

#define REQUIRE_REAL(ctx, f)                                                              \
    do {                                                                                  \
        ensure_real();                                                                    \
        if (real.f == NULL)                                                               \
            return missing_real(ctx, FN_##f);                                             \
    } while (0)

/* ---- keyblock entry points -------------------------------------------------------- */

EXPORT krb5_error_code KRB5_CALLCONV
krb5_c_encrypt(krb5_context ctx, const krb5_keyblock *key, krb5_keyusage usage,
               const krb5_data *cipher_state, const krb5_data *input, krb5_enc_data *output)
{
    mpc_kdb_key_id id;
    router_engine *engine;
    krb5_error_code ret;
    WHY_DECL;

    REQUIRE_REAL(ctx, c_encrypt);
    if (!is_candidate(key)) {
        trace_call(FN_c_encrypt, CALLER, "real", key, NULL);
        return real.c_encrypt(ctx, key, usage, cipher_state, input, output);
    }
    ret = route_handle(ctx, FN_c_encrypt, key, CALLER, &id, &engine);
    if (ret)
        return ret;
    ret = router_engine_encrypt(engine, &id, usage, cipher_state, input, output, why,
                                sizeof(why));
    return engine_done(ctx, FN_c_encrypt, ret, why);
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_c_decrypt(krb5_context ctx, const krb5_keyblock *key, krb5_keyusage usage,
               const krb5_data *cipher_state, const krb5_enc_data *input, krb5_data *output)
{
    mpc_kdb_key_id id;
    router_engine *engine;
    krb5_error_code ret;
    WHY_DECL;

    REQUIRE_REAL(ctx, c_decrypt);
    if (!is_candidate(key)) {
        trace_call(FN_c_decrypt, CALLER, "real", key, NULL);
        return real.c_decrypt(ctx, key, usage, cipher_state, input, output);
    }
    ret = route_handle(ctx, FN_c_decrypt, key, CALLER, &id, &engine);
    if (ret)
        return decrypt_done(usage, ret);
    ret = router_engine_decrypt(engine, &id, usage, cipher_state, input, output, why,
                                sizeof(why));
    return decrypt_done(usage, engine_done(ctx, FN_c_decrypt, ret, why));
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_c_encrypt_iov(krb5_context ctx, const krb5_keyblock *key, krb5_keyusage usage,
                   const krb5_data *cipher_state, krb5_crypto_iov *data, size_t num_data)
{
    mpc_kdb_key_id id;
    router_engine *engine;
    krb5_error_code ret;
    WHY_DECL;

    REQUIRE_REAL(ctx, c_encrypt_iov);
    if (!is_candidate(key)) {
        trace_call(FN_c_encrypt_iov, CALLER, "real", key, NULL);
        return real.c_encrypt_iov(ctx, key, usage, cipher_state, data, num_data);
    }
    ret = route_handle(ctx, FN_c_encrypt_iov, key, CALLER, &id, &engine);
    if (ret)
        return ret;
    ret = router_engine_encrypt_iov(engine, &id, usage, cipher_state, data, num_data, why,
                                    sizeof(why));
    return engine_done(ctx, FN_c_encrypt_iov, ret, why);
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_c_decrypt_iov(krb5_context ctx, const krb5_keyblock *key, krb5_keyusage usage,
                   const krb5_data *cipher_state, krb5_crypto_iov *data, size_t num_data)
{
    mpc_kdb_key_id id;
    router_engine *engine;
    krb5_error_code ret;
    WHY_DECL;

    REQUIRE_REAL(ctx, c_decrypt_iov);
    if (!is_candidate(key)) {
        trace_call(FN_c_decrypt_iov, CALLER, "real", key, NULL);
        return real.c_decrypt_iov(ctx, key, usage, cipher_state, data, num_data);
    }
    ret = route_handle(ctx, FN_c_decrypt_iov, key, CALLER, &id, &engine);
    if (ret)
        return ret;
    ret = router_engine_decrypt_iov(engine, &id, usage, cipher_state, data, num_data, why,
                                    sizeof(why));
    return engine_done(ctx, FN_c_decrypt_iov, ret, why);
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_c_make_checksum(krb5_context ctx, krb5_cksumtype cksumtype, const krb5_keyblock *key,
                     krb5_keyusage usage, const krb5_data *input, krb5_checksum *cksum)
{
    mpc_kdb_key_id id;
    router_engine *engine;
    krb5_error_code ret;
    WHY_DECL;

    REQUIRE_REAL(ctx, c_make_checksum);
    if (!is_candidate(key)) {
        trace_call(FN_c_make_checksum, CALLER, "real", key, NULL);
        return real.c_make_checksum(ctx, cksumtype, key, usage, input, cksum);
    }
    if (cksum != NULL) {
        cksum->length = 0;
        cksum->contents = NULL;
    }
    ret = route_handle(ctx, FN_c_make_checksum, key, CALLER, &id, &engine);
    if (ret)
        return ret;
    ret = router_engine_make_checksum(engine, &id, cksumtype, usage, input, cksum, why,
                                      sizeof(why));
    return engine_done(ctx, FN_c_make_checksum, ret, why);
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_c_verify_checksum(krb5_context ctx, const krb5_keyblock *key, krb5_keyusage usage,
                       const krb5_data *data, const krb5_checksum *cksum, krb5_boolean *valid)
{
    mpc_kdb_key_id id;
    router_engine *engine;
    krb5_error_code ret;
    WHY_DECL;

    REQUIRE_REAL(ctx, c_verify_checksum);
    if (!is_candidate(key)) {
        trace_call(FN_c_verify_checksum, CALLER, "real", key, NULL);
        return real.c_verify_checksum(ctx, key, usage, data, cksum, valid);
    }
    if (valid != NULL)
        *valid = FALSE;
    ret = route_handle(ctx, FN_c_verify_checksum, key, CALLER, &id, &engine);
    if (ret)
        return ret;
    ret = router_engine_verify_checksum(engine, &id, usage, data, cksum, valid, why,
                                        sizeof(why));
    return engine_done(ctx, FN_c_verify_checksum, ret, why);
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_c_make_checksum_iov(krb5_context ctx, krb5_cksumtype cksumtype, const krb5_keyblock *key,
                         krb5_keyusage usage, krb5_crypto_iov *data, size_t num_data)
{
    mpc_kdb_key_id id;
    router_engine *engine;
    krb5_error_code ret;
    WHY_DECL;

    REQUIRE_REAL(ctx, c_make_checksum_iov);
    if (!is_candidate(key)) {
        trace_call(FN_c_make_checksum_iov, CALLER, "real", key, NULL);
        return real.c_make_checksum_iov(ctx, cksumtype, key, usage, data, num_data);
    }
    ret = route_handle(ctx, FN_c_make_checksum_iov, key, CALLER, &id, &engine);
    if (ret)
        return ret;
    ret = router_engine_make_checksum_iov(engine, &id, cksumtype, usage, data, num_data, why,
                                          sizeof(why));
    return engine_done(ctx, FN_c_make_checksum_iov, ret, why);
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_c_verify_checksum_iov(krb5_context ctx, krb5_cksumtype cksumtype,
                           const krb5_keyblock *key, krb5_keyusage usage,
                           const krb5_crypto_iov *data, size_t num_data, krb5_boolean *valid)
{
    mpc_kdb_key_id id;
    router_engine *engine;
    krb5_error_code ret;
    WHY_DECL;

    REQUIRE_REAL(ctx, c_verify_checksum_iov);
    if (!is_candidate(key)) {
        trace_call(FN_c_verify_checksum_iov, CALLER, "real", key, NULL);
        return real.c_verify_checksum_iov(ctx, cksumtype, key, usage, data, num_data, valid);
    }
    if (valid != NULL)
        *valid = FALSE;
    ret = route_handle(ctx, FN_c_verify_checksum_iov, key, CALLER, &id, &engine);
    if (ret)
        return ret;
    ret = router_engine_verify_checksum_iov(engine, &id, cksumtype, usage, data, num_data,
                                            valid, why, sizeof(why));
    return engine_done(ctx, FN_c_verify_checksum_iov, ret, why);
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_c_prf(krb5_context ctx, const krb5_keyblock *key, krb5_data *input, krb5_data *output)
{
    mpc_kdb_key_id id;
    router_engine *engine;
    krb5_error_code ret;
    WHY_DECL;

    REQUIRE_REAL(ctx, c_prf);
    if (!is_candidate(key)) {
        trace_call(FN_c_prf, CALLER, "real", key, NULL);
        return real.c_prf(ctx, key, input, output);
    }
    ret = route_handle(ctx, FN_c_prf, key, CALLER, &id, &engine);
    if (ret)
        return ret;
    ret = router_engine_prf(engine, &id, input, output, why, sizeof(why));
    return engine_done(ctx, FN_c_prf, ret, why);
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_c_prfplus(krb5_context ctx, const krb5_keyblock *key, const krb5_data *input,
               krb5_data *output)
{
    mpc_kdb_key_id id;
    router_engine *engine;
    krb5_error_code ret;
    WHY_DECL;

    REQUIRE_REAL(ctx, c_prfplus);
    if (!is_candidate(key)) {
        trace_call(FN_c_prfplus, CALLER, "real", key, NULL);
        return real.c_prfplus(ctx, key, input, output);
    }
    ret = route_handle(ctx, FN_c_prfplus, key, CALLER, &id, &engine);
    if (ret)
        return ret;
    ret = router_engine_prfplus(engine, &id, input, output, why, sizeof(why));
    return engine_done(ctx, FN_c_prfplus, ret, why);
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_c_derive_prfplus(krb5_context ctx, const krb5_keyblock *key, const krb5_data *input,
                      krb5_enctype enctype, krb5_keyblock **out)
{
    mpc_kdb_key_id id;
    router_engine *engine;
    krb5_error_code ret;
    WHY_DECL;

    REQUIRE_REAL(ctx, c_derive_prfplus);
    if (!is_candidate(key)) {
        trace_call(FN_c_derive_prfplus, CALLER, "real", key, NULL);
        return real.c_derive_prfplus(ctx, key, input, enctype, out);
    }
    if (out != NULL)
        *out = NULL;
    ret = route_handle(ctx, FN_c_derive_prfplus, key, CALLER, &id, &engine);
    if (ret)
        return ret;
    ret = router_engine_derive_prfplus(engine, &id, input, enctype, out, why, sizeof(why));
    return engine_done(ctx, FN_c_derive_prfplus, ret, why);
}

/* Wraps a combined key (the engine's description of a KRB-FX-CF2 with a protected key) in
 * an authenticated combined handle (handle.h) of the combined key's enctype: krb5kdc holds
 * it as the challenge or reply key, and every use of it comes back here. */
static krb5_error_code
combined_keyblock(krb5_context ctx, const mpc_kdb_key_id *combined, krb5_keyblock **out)
{
    krb5_keyblock *kb;
    int encoded = -1;

    kb = calloc(1, sizeof(*kb));
    if (kb == NULL || (kb->contents = malloc(MPC_KDB_COMBINED_HANDLE_LEN)) == NULL) {
        free(kb);
        return refuse(ctx, FN_c_fx_cf2_simple, ENOMEM, "out of memory");
    }
    pthread_mutex_lock(&state_lock);
    if (state.ready)
        encoded = mpc_kdb_combined_handle_encode(state.handle_key, combined, kb->contents);
    pthread_mutex_unlock(&state_lock);
    if (encoded != 0) {
        free(kb->contents);
        free(kb);
        return refuse(ctx, FN_c_fx_cf2_simple, KRB5_CRYPTO_INTERNAL,
                      "cannot make the combined key's handle");
    }
    kb->magic = KV5M_KEYBLOCK;
    kb->enctype = combined->combine.enctype;
    kb->length = MPC_KDB_COMBINED_HANDLE_LEN;
    *out = kb;
    return 0;
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_c_fx_cf2_simple(krb5_context ctx, const krb5_keyblock *k1, const char *pepper1,
                     const krb5_keyblock *k2, const char *pepper2, krb5_keyblock **out)
{
    mpc_kdb_key_id id1, id2, combined;
    router_engine *engine = NULL;
    router_key rk1 = { NULL, k1 }, rk2 = { NULL, k2 };
    krb5_error_code ret;
    WHY_DECL;

    REQUIRE_REAL(ctx, c_fx_cf2_simple);
    if (!is_candidate(k1) && !is_candidate(k2)) {
        trace_call(FN_c_fx_cf2_simple, CALLER, "real", k1, k2);
        return real.c_fx_cf2_simple(ctx, k1, pepper1, k2, pepper2, out);
    }
    if (out == NULL)
        return refuse(ctx, FN_c_fx_cf2_simple, EINVAL, "no output");
    *out = NULL;
    if (is_candidate(k1)) {
        ret = route_handle(ctx, FN_c_fx_cf2_simple, k1, CALLER, &id1, &engine);
        if (ret)
            return ret;
        rk1.id = &id1;
        rk1.clear = NULL;
    }
    if (is_candidate(k2)) {
        ret = route_handle(ctx, FN_c_fx_cf2_simple, k2, CALLER, &id2, &engine);
        if (ret)
            return ret;
        rk2.id = &id2;
        rk2.clear = NULL;
    }
    ret = router_engine_cf2(engine, &rk1, pepper1, &rk2, pepper2, &combined, why, sizeof(why));
    if (ret == 0)
        ret = combined_keyblock(ctx, &combined, out);
    else
        ret = engine_done(ctx, FN_c_fx_cf2_simple, ret, why);
    OPENSSL_cleanse(&combined, sizeof(combined));
    return ret;
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_c_init_state(krb5_context ctx, const krb5_keyblock *key, krb5_keyusage usage,
                  krb5_data *new_state)
{
    mpc_kdb_key_id id;
    router_engine *engine;
    krb5_error_code ret;
    WHY_DECL;

    REQUIRE_REAL(ctx, c_init_state);
    if (!is_candidate(key)) {
        trace_call(FN_c_init_state, CALLER, "real", key, NULL);
        return real.c_init_state(ctx, key, usage, new_state);
    }
    ret = route_handle(ctx, FN_c_init_state, key, CALLER, &id, &engine);
    if (ret)
        return ret;
    ret = router_engine_init_state(engine, &id, usage, new_state, why, sizeof(why));
    return engine_done(ctx, FN_c_init_state, ret, why);
}

/* Freeing a cipher state reads only the key's enctype: libk5crypto gets a keyblock
 * with the handle's enctype and no contents, never the handle bytes; a state of the
 * private enctype (router_engine_init_state's) is freed here. */
EXPORT krb5_error_code KRB5_CALLCONV
krb5_c_free_state(krb5_context ctx, const krb5_keyblock *key, krb5_data *state_data)
{
    krb5_keyblock stripped;

    REQUIRE_REAL(ctx, c_free_state);
    if (!is_candidate(key)) {
        trace_call(FN_c_free_state, CALLER, "real", key, NULL);
        return real.c_free_state(ctx, key, state_data);
    }
    memset(&stripped, 0, sizeof(stripped));
    stripped.magic = key->magic;
    stripped.enctype = key->enctype;
    trace_call(FN_c_free_state, CALLER, "container", &stripped, NULL);
    if (key->enctype == MPC_KDC_ENCTYPE_AES256_GCM) {
        /* libk5crypto knows no such enctype; the engine's states are plain data. */
        if (state_data != NULL) {
            free(state_data->data);
            state_data->data = NULL;
            state_data->length = 0;
        }
        return 0;
    }
    return real.c_free_state(ctx, &stripped, state_data);
}

/* A krb5_key is a container: libk5crypto copies the bytes and computes nothing, so a
 * handle may be held in one (the krb5_k_* entry points below recognise it). */
EXPORT krb5_error_code KRB5_CALLCONV
krb5_k_create_key(krb5_context ctx, const krb5_keyblock *key_data, krb5_key *out)
{
    REQUIRE_REAL(ctx, k_create_key);
    trace_call(FN_k_create_key, CALLER, is_candidate(key_data) ? "container" : "real",
               key_data, NULL);
    return real.k_create_key(ctx, key_data, out);
}

/* ---- keyless entry points: the private enctype and checksum type -------------------
 *
 * These take an enctype or checksum type and no key. They answer for
 * MPC_KDC_ENCTYPE_AES256_GCM and MPC_KDC_CKSUMTYPE_GMAC as libk5crypto would for an
 * enctype it knew (kdc-plugin/kdb/protected_key.h: nonce || ciphertext || tag; checksum
 * nonce || tag) and pass every other value to the real function. They make krb5kdc's
 * ticket path accept the private types: krb5_encrypt_tkt_part (encrypt_length),
 * krb5_decrypt_tkt_part (valid_enctype, is_permitted_enctype), libkdb5's key search
 * (is_permitted_enctype), kdc_get_server_key (enctype_compare), PAC signing
 * (mandatory_cksumtype, checksum_length) and verification (is_keyed_cksum,
 * checksum_length), and the KDC's log (enctype_to_name, deprecated_enctype). Not
 * traced: they see no key. */

static int
is_private_enctype(krb5_enctype enctype)
{
    return enctype == MPC_KDC_ENCTYPE_AES256_GCM;
}

static int
is_private_cksumtype(krb5_cksumtype cksumtype)
{
    return cksumtype == MPC_KDC_CKSUMTYPE_GMAC;
}

/* Copies name into buffer as libk5crypto does: ENOMEM when it does not fit. */
static krb5_error_code
copy_name(const char *name, char *buffer, size_t buflen)
{
    size_t len = strlen(name);

    if (buffer == NULL || len >= buflen)
        return ENOMEM;
    memcpy(buffer, name, len + 1);
    return 0;
}

EXPORT krb5_boolean KRB5_CALLCONV
krb5_c_valid_enctype(krb5_enctype ktype)
{
    ensure_real();
    if (is_private_enctype(ktype))
        return TRUE;
    return real.c_valid_enctype != NULL && real.c_valid_enctype(ktype);
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_c_enctype_compare(krb5_context ctx, krb5_enctype e1, krb5_enctype e2,
                       krb5_boolean *similar)
{
    REQUIRE_REAL(ctx, c_enctype_compare);
    if (!is_private_enctype(e1) && !is_private_enctype(e2))
        return real.c_enctype_compare(ctx, e1, e2, similar);
    /* As libk5crypto: an unknown enctype on either side is an error; otherwise the
     * private enctype is similar only to itself (no other enctype's keys fit it). */
    if (!krb5_c_valid_enctype(e1) || !krb5_c_valid_enctype(e2))
        return KRB5_BAD_ENCTYPE;
    *similar = e1 == e2;
    return 0;
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_c_encrypt_length(krb5_context ctx, krb5_enctype enctype, size_t inputlen,
                      size_t *length)
{
    REQUIRE_REAL(ctx, c_encrypt_length);
    if (!is_private_enctype(enctype))
        return real.c_encrypt_length(ctx, enctype, inputlen, length);
    if (inputlen > SIZE_MAX - MPC_KDC_ENCRYPT_OVERHEAD)
        return KRB5_BAD_MSIZE;
    *length = inputlen + MPC_KDC_ENCRYPT_OVERHEAD;
    return 0;
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_c_crypto_length(krb5_context ctx, krb5_enctype enctype, krb5_cryptotype type,
                     unsigned int *size)
{
    REQUIRE_REAL(ctx, c_crypto_length);
    if (!is_private_enctype(enctype))
        return real.c_crypto_length(ctx, enctype, type, size);
    switch (type) {
    case KRB5_CRYPTO_TYPE_EMPTY:
    case KRB5_CRYPTO_TYPE_SIGN_ONLY:
    case KRB5_CRYPTO_TYPE_PADDING:     /* counter mode: no padding */
        *size = 0;
        break;
    case KRB5_CRYPTO_TYPE_DATA:
        *size = (unsigned int)~0;      /* as libk5crypto (and Heimdal) */
        break;
    case KRB5_CRYPTO_TYPE_HEADER:
        *size = MPC_KDC_NONCE_LEN;
        break;
    case KRB5_CRYPTO_TYPE_TRAILER:
        *size = MPC_KDC_TAG_LEN;
        break;
    case KRB5_CRYPTO_TYPE_CHECKSUM:
        *size = MPC_KDC_CHECKSUM_LEN;
        break;
    default:
        return EINVAL;
    }
    return 0;
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_c_padding_length(krb5_context ctx, krb5_enctype enctype, size_t data_length,
                      unsigned int *size)
{
    REQUIRE_REAL(ctx, c_padding_length);
    if (!is_private_enctype(enctype))
        return real.c_padding_length(ctx, enctype, data_length, size);
    *size = 0;
    return 0;
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_c_block_size(krb5_context ctx, krb5_enctype enctype, size_t *blocksize)
{
    REQUIRE_REAL(ctx, c_block_size);
    if (!is_private_enctype(enctype))
        return real.c_block_size(ctx, enctype, blocksize);
    /* Counter mode is a stream: ciphertexts have any length (as RC4's block size 1). */
    *blocksize = 1;
    return 0;
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_c_keylengths(krb5_context ctx, krb5_enctype enctype, size_t *keybytes,
                  size_t *keylength)
{
    REQUIRE_REAL(ctx, c_keylengths);
    if (!is_private_enctype(enctype))
        return real.c_keylengths(ctx, enctype, keybytes, keylength);
    if (keybytes == NULL && keylength == NULL)
        return EINVAL;
    /* The AES-256 key the servers hold as shares; the KDC itself only ever holds a
     * handle (MPC_KDB_HANDLE_LEN bytes) in its place. */
    if (keybytes != NULL)
        *keybytes = 32;
    if (keylength != NULL)
        *keylength = 32;
    return 0;
}

EXPORT krb5_error_code
krb5int_c_mandatory_cksumtype(krb5_context ctx, krb5_enctype etype, krb5_cksumtype *cksumtype)
{
    REQUIRE_REAL(ctx, c_mandatory_cksumtype);
    if (!is_private_enctype(etype))
        return real.c_mandatory_cksumtype(ctx, etype, cksumtype);
    *cksumtype = MPC_KDC_CKSUMTYPE_GMAC;
    return 0;
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_c_checksum_length(krb5_context ctx, krb5_cksumtype cksumtype, size_t *length)
{
    REQUIRE_REAL(ctx, c_checksum_length);
    if (!is_private_cksumtype(cksumtype))
        return real.c_checksum_length(ctx, cksumtype, length);
    *length = MPC_KDC_CHECKSUM_LEN;
    return 0;
}

EXPORT krb5_boolean KRB5_CALLCONV
krb5_c_is_keyed_cksum(krb5_cksumtype ctype)
{
    ensure_real();
    if (is_private_cksumtype(ctype))
        return TRUE;
    return real.c_is_keyed_cksum != NULL && real.c_is_keyed_cksum(ctype);
}

EXPORT krb5_boolean KRB5_CALLCONV
krb5_c_is_coll_proof_cksum(krb5_cksumtype ctype)
{
    ensure_real();
    if (is_private_cksumtype(ctype))
        return TRUE;       /* a MAC under a secret key */
    return real.c_is_coll_proof_cksum != NULL && real.c_is_coll_proof_cksum(ctype);
}

EXPORT krb5_boolean KRB5_CALLCONV
krb5_c_valid_cksumtype(krb5_cksumtype ctype)
{
    ensure_real();
    if (is_private_cksumtype(ctype))
        return TRUE;
    return real.c_valid_cksumtype != NULL && real.c_valid_cksumtype(ctype);
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_enctype_to_name(krb5_enctype enctype, krb5_boolean shortest, char *buffer,
                     size_t buflen)
{
    REQUIRE_REAL(NULL, enctype_to_name);
    if (!is_private_enctype(enctype))
        return real.enctype_to_name(enctype, shortest, buffer, buflen);
    return copy_name(MPC_KDC_ENCTYPE_NAME, buffer, buflen);
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_cksumtype_to_string(krb5_cksumtype cksumtype, char *buffer, size_t buflen)
{
    REQUIRE_REAL(NULL, cksumtype_to_string);
    if (!is_private_cksumtype(cksumtype))
        return real.cksumtype_to_string(cksumtype, buffer, buflen);
    return copy_name(MPC_KDC_CKSUMTYPE_NAME, buffer, buflen);
}

EXPORT krb5_boolean KRB5_CALLCONV
krb5int_c_deprecated_enctype(krb5_enctype etype)
{
    ensure_real();
    if (is_private_enctype(etype))
        return FALSE;
    /* libk5crypto calls an enctype it does not know deprecated. */
    return real.c_deprecated_enctype == NULL || real.c_deprecated_enctype(etype);
}

EXPORT krb5_boolean KRB5_CALLCONV
krb5int_c_weak_enctype(krb5_enctype etype)
{
    ensure_real();
    if (is_private_enctype(etype))
        return FALSE;
    return real.c_weak_enctype != NULL && real.c_weak_enctype(etype);
}

/* libkrb5's, defined under its version krb5_3_MIT: libkrb5 (decrypt_tk.c) and libkdb5
 * (krb5_dbe_def_search_enctype) call it through their PLT, so the router's definition
 * is theirs too. The private enctype is always permitted: it is configured by protecting
 * a key, not by permitted_enctypes, which cannot name it. */
EXPORT krb5_boolean KRB5_CALLCONV
krb5_is_permitted_enctype(krb5_context ctx, krb5_enctype etype)
{
    ensure_real();
    if (is_private_enctype(etype))
        return TRUE;
    return real.is_permitted_enctype != NULL && real.is_permitted_enctype(ctx, etype);
}

/* ---- krb5_key entry points: the same, after looking at the key's keyblock ---------- */

/* Opens a krb5_key wrapper: *kb is the key's keyblock (copy) or NULL. */
#define K_BEGIN(ctx, f, key)                                                              \
    krb5_keyblock *kb = NULL;                                                             \
    mpc_kdb_key_id id;                                                                    \
    router_engine *engine;                                                                \
    krb5_error_code ret;                                                                  \
    WHY_DECL;                                                                             \
    REQUIRE_REAL(ctx, f);                                                                 \
    ret = key_view(key, &kb);                                                             \
    if (ret)                                                                              \
        return refuse(ctx, FN_##f, ret, "cannot read the key of a krb5_key");

EXPORT krb5_error_code KRB5_CALLCONV
krb5_k_encrypt(krb5_context ctx, krb5_key key, krb5_keyusage usage,
               const krb5_data *cipher_state, const krb5_data *input, krb5_enc_data *output)
{
    K_BEGIN(ctx, k_encrypt, key);
    if (!is_candidate(kb)) {
        trace_call(FN_k_encrypt, CALLER, "real", kb, NULL);
        krb5_free_keyblock(NULL, kb);
        return real.k_encrypt(ctx, key, usage, cipher_state, input, output);
    }
    ret = route_handle(ctx, FN_k_encrypt, kb, CALLER, &id, &engine);
    if (!ret)
        ret = engine_done(ctx, FN_k_encrypt,
                          router_engine_encrypt(engine, &id, usage, cipher_state, input,
                                                output, why, sizeof(why)), why);
    krb5_free_keyblock(NULL, kb);
    return ret;
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_k_decrypt(krb5_context ctx, krb5_key key, krb5_keyusage usage,
               const krb5_data *cipher_state, const krb5_enc_data *input, krb5_data *output)
{
    K_BEGIN(ctx, k_decrypt, key);
    if (!is_candidate(kb)) {
        trace_call(FN_k_decrypt, CALLER, "real", kb, NULL);
        krb5_free_keyblock(NULL, kb);
        return real.k_decrypt(ctx, key, usage, cipher_state, input, output);
    }
    ret = route_handle(ctx, FN_k_decrypt, kb, CALLER, &id, &engine);
    if (!ret)
        ret = engine_done(ctx, FN_k_decrypt,
                          router_engine_decrypt(engine, &id, usage, cipher_state, input,
                                                output, why, sizeof(why)), why);
    krb5_free_keyblock(NULL, kb);
    return decrypt_done(usage, ret);
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_k_encrypt_iov(krb5_context ctx, krb5_key key, krb5_keyusage usage,
                   const krb5_data *cipher_state, krb5_crypto_iov *data, size_t num_data)
{
    K_BEGIN(ctx, k_encrypt_iov, key);
    if (!is_candidate(kb)) {
        trace_call(FN_k_encrypt_iov, CALLER, "real", kb, NULL);
        krb5_free_keyblock(NULL, kb);
        return real.k_encrypt_iov(ctx, key, usage, cipher_state, data, num_data);
    }
    ret = route_handle(ctx, FN_k_encrypt_iov, kb, CALLER, &id, &engine);
    if (!ret)
        ret = engine_done(ctx, FN_k_encrypt_iov,
                          router_engine_encrypt_iov(engine, &id, usage, cipher_state, data,
                                                    num_data, why, sizeof(why)), why);
    krb5_free_keyblock(NULL, kb);
    return ret;
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_k_decrypt_iov(krb5_context ctx, krb5_key key, krb5_keyusage usage,
                   const krb5_data *cipher_state, krb5_crypto_iov *data, size_t num_data)
{
    K_BEGIN(ctx, k_decrypt_iov, key);
    if (!is_candidate(kb)) {
        trace_call(FN_k_decrypt_iov, CALLER, "real", kb, NULL);
        krb5_free_keyblock(NULL, kb);
        return real.k_decrypt_iov(ctx, key, usage, cipher_state, data, num_data);
    }
    ret = route_handle(ctx, FN_k_decrypt_iov, kb, CALLER, &id, &engine);
    if (!ret)
        ret = engine_done(ctx, FN_k_decrypt_iov,
                          router_engine_decrypt_iov(engine, &id, usage, cipher_state, data,
                                                    num_data, why, sizeof(why)), why);
    krb5_free_keyblock(NULL, kb);
    return ret;
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_k_make_checksum(krb5_context ctx, krb5_cksumtype cksumtype, krb5_key key,
                     krb5_keyusage usage, const krb5_data *input, krb5_checksum *cksum)
{
    K_BEGIN(ctx, k_make_checksum, key);
    if (!is_candidate(kb)) {
        trace_call(FN_k_make_checksum, CALLER, "real", kb, NULL);
        krb5_free_keyblock(NULL, kb);
        return real.k_make_checksum(ctx, cksumtype, key, usage, input, cksum);
    }
    if (cksum != NULL) {
        cksum->length = 0;
        cksum->contents = NULL;
    }
    ret = route_handle(ctx, FN_k_make_checksum, kb, CALLER, &id, &engine);
    if (!ret)
        ret = engine_done(ctx, FN_k_make_checksum,
                          router_engine_make_checksum(engine, &id, cksumtype, usage, input,
                                                      cksum, why, sizeof(why)), why);
    krb5_free_keyblock(NULL, kb);
    return ret;
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_k_verify_checksum(krb5_context ctx, krb5_key key, krb5_keyusage usage,
                       const krb5_data *data, const krb5_checksum *cksum, krb5_boolean *valid)
{
    K_BEGIN(ctx, k_verify_checksum, key);
    if (!is_candidate(kb)) {
        trace_call(FN_k_verify_checksum, CALLER, "real", kb, NULL);
        krb5_free_keyblock(NULL, kb);
        return real.k_verify_checksum(ctx, key, usage, data, cksum, valid);
    }
    if (valid != NULL)
        *valid = FALSE;
    ret = route_handle(ctx, FN_k_verify_checksum, kb, CALLER, &id, &engine);
    if (!ret)
        ret = engine_done(ctx, FN_k_verify_checksum,
                          router_engine_verify_checksum(engine, &id, usage, data, cksum,
                                                        valid, why, sizeof(why)), why);
    krb5_free_keyblock(NULL, kb);
    return ret;
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_k_make_checksum_iov(krb5_context ctx, krb5_cksumtype cksumtype, krb5_key key,
                         krb5_keyusage usage, krb5_crypto_iov *data, size_t num_data)
{
    K_BEGIN(ctx, k_make_checksum_iov, key);
    if (!is_candidate(kb)) {
        trace_call(FN_k_make_checksum_iov, CALLER, "real", kb, NULL);
        krb5_free_keyblock(NULL, kb);
        return real.k_make_checksum_iov(ctx, cksumtype, key, usage, data, num_data);
    }
    ret = route_handle(ctx, FN_k_make_checksum_iov, kb, CALLER, &id, &engine);
    if (!ret)
        ret = engine_done(ctx, FN_k_make_checksum_iov,
                          router_engine_make_checksum_iov(engine, &id, cksumtype, usage, data,
                                                          num_data, why, sizeof(why)), why);
    krb5_free_keyblock(NULL, kb);
    return ret;
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_k_verify_checksum_iov(krb5_context ctx, krb5_cksumtype cksumtype, krb5_key key,
                           krb5_keyusage usage, const krb5_crypto_iov *data, size_t num_data,
                           krb5_boolean *valid)
{
    K_BEGIN(ctx, k_verify_checksum_iov, key);
    if (!is_candidate(kb)) {
        trace_call(FN_k_verify_checksum_iov, CALLER, "real", kb, NULL);
        krb5_free_keyblock(NULL, kb);
        return real.k_verify_checksum_iov(ctx, cksumtype, key, usage, data, num_data, valid);
    }
    if (valid != NULL)
        *valid = FALSE;
    ret = route_handle(ctx, FN_k_verify_checksum_iov, kb, CALLER, &id, &engine);
    if (!ret)
        ret = engine_done(ctx, FN_k_verify_checksum_iov,
                          router_engine_verify_checksum_iov(engine, &id, cksumtype, usage,
                                                            data, num_data, valid, why,
                                                            sizeof(why)), why);
    krb5_free_keyblock(NULL, kb);
    return ret;
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_k_prf(krb5_context ctx, krb5_key key, krb5_data *input, krb5_data *output)
{
    K_BEGIN(ctx, k_prf, key);
    if (!is_candidate(kb)) {
        trace_call(FN_k_prf, CALLER, "real", kb, NULL);
        krb5_free_keyblock(NULL, kb);
        return real.k_prf(ctx, key, input, output);
    }
    ret = route_handle(ctx, FN_k_prf, kb, CALLER, &id, &engine);
    if (!ret)
        ret = engine_done(ctx, FN_k_prf,
                          router_engine_prf(engine, &id, input, output, why, sizeof(why)), why);
    krb5_free_keyblock(NULL, kb);
    return ret;
}

/* ---- deprecated krb5_encrypt_block API: never routed, a handle is refused ---------- */

static krb5_error_code
refuse_old_api(krb5_context ctx, enum fn_id fn, const krb5_keyblock *kb, const void *caller)
{
    trace_call(fn, caller, "refused", kb, NULL);
    return refuse(ctx, fn, KRB5_CRYPTO_INTERNAL,
                  "protected keys are not served through the deprecated krb5_encrypt_block "
                  "API");
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_encrypt(krb5_context ctx, krb5_const_pointer inptr, krb5_pointer outptr, size_t size,
             krb5_encrypt_block *eblock, krb5_pointer ivec)
{
    REQUIRE_REAL(ctx, encrypt);
    if (eblock != NULL && is_candidate(eblock->key))
        return refuse_old_api(ctx, FN_encrypt, eblock->key, CALLER);
    trace_call(FN_encrypt, CALLER, "real", eblock ? eblock->key : NULL, NULL);
    return real.encrypt(ctx, inptr, outptr, size, eblock, ivec);
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_decrypt(krb5_context ctx, krb5_const_pointer inptr, krb5_pointer outptr, size_t size,
             krb5_encrypt_block *eblock, krb5_pointer ivec)
{
    REQUIRE_REAL(ctx, decrypt);
    if (eblock != NULL && is_candidate(eblock->key))
        return refuse_old_api(ctx, FN_decrypt, eblock->key, CALLER);
    trace_call(FN_decrypt, CALLER, "real", eblock ? eblock->key : NULL, NULL);
    return real.decrypt(ctx, inptr, outptr, size, eblock, ivec);
}

EXPORT krb5_error_code
krb5_encrypt_data(krb5_context ctx, krb5_keyblock *key, krb5_pointer ivec, krb5_data *data,
                  krb5_enc_data *enc_data)
{
    REQUIRE_REAL(ctx, encrypt_data);
    if (is_candidate(key))
        return refuse_old_api(ctx, FN_encrypt_data, key, CALLER);
    trace_call(FN_encrypt_data, CALLER, "real", key, NULL);
    return real.encrypt_data(ctx, key, ivec, data, enc_data);
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_init_random_key(krb5_context ctx, const krb5_encrypt_block *eblock,
                     const krb5_keyblock *keyblock, krb5_pointer *ptr)
{
    REQUIRE_REAL(ctx, init_random_key);
    if (is_candidate(keyblock))
        return refuse_old_api(ctx, FN_init_random_key, keyblock, CALLER);
    trace_call(FN_init_random_key, CALLER, "real", keyblock, NULL);
    return real.init_random_key(ctx, eblock, keyblock, ptr);
}

/* The seed of these two is the key's bytes (the enctype is implied by ctype). */
static krb5_keyblock
seed_view(krb5_const_pointer seed, size_t seed_length)
{
    krb5_keyblock kb;

    memset(&kb, 0, sizeof(kb));
    kb.contents = (krb5_octet *)seed;
    kb.length = seed_length > UINT32_MAX ? 0 : (unsigned int)seed_length;
    return kb;
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_calculate_checksum(krb5_context ctx, krb5_cksumtype ctype, krb5_const_pointer in,
                        size_t in_length, krb5_const_pointer seed, size_t seed_length,
                        krb5_checksum *outcksum)
{
    krb5_keyblock kb = seed_view(seed, seed_length);

    REQUIRE_REAL(ctx, calculate_checksum);
    if (is_candidate(&kb))
        return refuse_old_api(ctx, FN_calculate_checksum, &kb, CALLER);
    trace_call(FN_calculate_checksum, CALLER, "real", &kb, NULL);
    return real.calculate_checksum(ctx, ctype, in, in_length, seed, seed_length, outcksum);
}

EXPORT krb5_error_code KRB5_CALLCONV
krb5_verify_checksum(krb5_context ctx, krb5_cksumtype ctype, const krb5_checksum *cksum,
                     krb5_const_pointer in, size_t in_length, krb5_const_pointer seed,
                     size_t seed_length)
{
    krb5_keyblock kb = seed_view(seed, seed_length);

    REQUIRE_REAL(ctx, verify_checksum);
    if (is_candidate(&kb))
        return refuse_old_api(ctx, FN_verify_checksum, &kb, CALLER);
    trace_call(FN_verify_checksum, CALLER, "real", &kb, NULL);
    return real.verify_checksum(ctx, ctype, cksum, in, in_length, seed, seed_length);
}

/* ---- libk5crypto's internal exported primitives: a backstop ------------------------
 *
 * libk5crypto reaches these through its PLT and its provider tables (relocations
 * against the exported names), so they are interposed too. The entry points above
 * already stop every handle; one arriving here means a path the router does not know,
 * and it is refused and logged as such. These have no krb5_context. */

static krb5_error_code
refuse_internal(enum fn_id fn, const krb5_keyblock *kb, const void *caller)
{
    trace_call(fn, caller, "refused", kb, NULL);
    return refuse(NULL, fn, KRB5_CRYPTO_INTERNAL,
                  "a key handle reached a libk5crypto primitive by a path the router does "
                  "not route; refused");
}

#define INTERNAL_KEY(f, key, call)                                                        \
    do {                                                                                  \
        krb5_keyblock *kb = NULL;                                                         \
        krb5_error_code ret_;                                                             \
        ensure_real();                                                                    \
        if (real.f == NULL)                                                               \
            return missing_real(NULL, FN_##f);                                            \
        ret_ = key_view(key, &kb);                                                        \
        if (ret_)                                                                         \
            return refuse(NULL, FN_##f, ret_, "cannot read the key of a krb5_key");       \
        if (is_candidate(kb)) {                                                           \
            ret_ = refuse_internal(FN_##f, kb, CALLER);                                   \
            krb5_free_keyblock(NULL, kb);                                                 \
            return ret_;                                                                  \
        }                                                                                 \
        trace_call(FN_##f, CALLER, "real", kb, NULL);                                     \
        krb5_free_keyblock(NULL, kb);                                                     \
        return call;                                                                      \
    } while (0)

EXPORT krb5_error_code
krb5int_aes_encrypt(krb5_key key, const krb5_data *ivec, krb5_crypto_iov *data,
                    size_t num_data)
{
    INTERNAL_KEY(aes_encrypt, key, real.aes_encrypt(key, ivec, data, num_data));
}

EXPORT krb5_error_code
krb5int_aes_decrypt(krb5_key key, const krb5_data *ivec, krb5_crypto_iov *data,
                    size_t num_data)
{
    INTERNAL_KEY(aes_decrypt, key, real.aes_decrypt(key, ivec, data, num_data));
}

EXPORT krb5_error_code
krb5int_camellia_encrypt(krb5_key key, const krb5_data *ivec, krb5_crypto_iov *data,
                         size_t num_data)
{
    INTERNAL_KEY(camellia_encrypt, key, real.camellia_encrypt(key, ivec, data, num_data));
}

EXPORT krb5_error_code
krb5int_cmac_checksum(const struct krb5_enc_provider *enc, krb5_key key,
                      const krb5_crypto_iov *data, size_t num_data, krb5_data *output)
{
    INTERNAL_KEY(cmac_checksum, key, real.cmac_checksum(enc, key, data, num_data, output));
}

EXPORT krb5_error_code
krb5int_hmac(const struct krb5_hash_provider *hash, krb5_key key, const krb5_crypto_iov *data,
             size_t num_data, krb5_data *output)
{
    INTERNAL_KEY(hmac, key, real.hmac(hash, key, data, num_data, output));
}

EXPORT krb5_error_code
krb5int_derive_key(const struct krb5_enc_provider *enc, const struct krb5_hash_provider *hash,
                   krb5_key inkey, krb5_key *outkey, const krb5_data *in_constant, int alg)
{
    INTERNAL_KEY(derive_key, inkey,
                 real.derive_key(enc, hash, inkey, outkey, in_constant, alg));
}

EXPORT krb5_error_code
krb5int_derive_random(const struct krb5_enc_provider *enc,
                      const struct krb5_hash_provider *hash, krb5_key inkey,
                      krb5_data *outrnd, const krb5_data *in_constant, int alg)
{
    INTERNAL_KEY(derive_random, inkey,
                 real.derive_random(enc, hash, inkey, outrnd, in_constant, alg));
}

EXPORT krb5_error_code
krb5int_arcfour_gsscrypt(const krb5_keyblock *keyblock, krb5_keyusage usage,
                         const krb5_data *kd_data, krb5_crypto_iov *data, size_t num_data)
{
    ensure_real();
    if (real.arcfour_gsscrypt == NULL)
        return missing_real(NULL, FN_arcfour_gsscrypt);
    if (is_candidate(keyblock))
        return refuse_internal(FN_arcfour_gsscrypt, keyblock, CALLER);
    trace_call(FN_arcfour_gsscrypt, CALLER, "real", keyblock, NULL);
    return real.arcfour_gsscrypt(keyblock, usage, kd_data, data, num_data);
}

/* ---- for mpc_kdb, in the same process (router_kdb_interface.h) --------------------- */

EXPORT unsigned long
mpc_router_undecided_decrypts(void)
{
    return __atomic_load_n(&undecided_decrypts, __ATOMIC_RELAXED);
}
