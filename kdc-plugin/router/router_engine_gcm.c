/* kdc-plugin/router/router_engine_gcm.c - the engine side of the crypto router: tickets
 * and checksums under the protected krbtgt key through the engine's AES-256-GCM jobs.
 *
 * Interface: router_engine.h. Formats (kdc-plugin/kdb/protected_key.h, enctype
 * MPC_KDC_ENCTYPE_AES256_GCM, checksum type MPC_KDC_CKSUMTYPE_GMAC):
 *
 *   encrypt:  N (12) || C = P xor keystream(N) || T (16),
 *             T = mpc_client_gcm_tag(N, AAD = 0x01 || u32be usage, C)
 *   checksum: N (12) || T (16),
 *             T = mpc_client_gcm_tag(N, AAD = 0x02 || u32be usage || data, empty text)
 *
 * and both are checked by mpc_client_gcm_open, which opens only the verdict and, for a
 * ciphertext, its keystream. The engine key is named by mpc_kdc_engine_key_name() of the
 * handle's key id, version = kvno.
 *
 * Reads: the engine cluster configuration named by the router (mpc_client_open; parsed at
 * open, connections made on first use) and the pool options (router_engine_options).
 *
 * Nonces. They are chosen by the servers and prefetched ahead of time with their
 * keystream (mpc_client_gcm_prefetch), so sealing a ticket costs one tag round trip and
 * no computation between the servers. Per engine key (name, kvno) and per process two
 * nonce pools (nonce_pool.h): tickets (ticket_blocks keystream blocks per nonce) and
 * checksums (no keystream). A background thread, started on first use in the process
 * that uses the pools and never inherited across fork, keeps each pool between pool_low
 * and pool_high with its own mpc_client handle (a foreground tag never queues behind a
 * bulk prefetch); a key that sealed nothing for pool_ttl_s (an older kvno after a
 * rotation) is no longer kept supplied. When a pool is empty, or a plaintext needs more
 * keystream than a pool entry holds, the caller prefetches one nonce synchronously. Entries older than
 * pool_ttl_s are dropped; the servers keep their half of a nonce for their own
 * gcm_nonce_ttl_s (default 3600 s), which pool_ttl_s must stay below. MPC_ENONCE from a
 * tag means the servers lost the nonce (a restart, eviction): the pool it came from is
 * dropped and the seal is retried once with a fresh synchronous prefetch. Every copy of
 * keystream is wiped after use, and a taken pool entry is wiped in the pool.
 *
 * Handles of enctypes 17 and 18 (protected users' and services' keys) are handed to
 * router_engine_krb.c, which shares this file's engine client and fail-fast state
 * (router_engine_internal.h). Handles of any other enctype are refused (fail closed). The
 * reasoning behind each refusal of an entry point with the krbtgt key (cf2, prf,
 * derive_prfplus, the _iov encryption) is in kdc-plugin/README.md.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "router_engine.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "mpc_client.h"
#include "nonce_pool.h"
#include "protected_key.h"
#include "router_engine_internal.h"

#define MAX_KEYS 8                     /* engine keys with pools, per process */
#define REFILL_IDLE_MS 1000            /* refill thread wakes at least this often */
#define REFILL_BACKOFF_MAX_MS 30000    /* after repeated refill failures */
#define REFILL_MAX_BLOCKS_PER_CALL 65536
#define REFILL_MAX_NONCES_PER_CALL 4096
#define ERR_LEN 400

enum pool_kind { POOL_TICKET = 0, POOL_CHECKSUM = 1, POOL_KINDS = 2 };

static const char *const pool_names[POOL_KINDS] = { "ticket", "checksum" };

/* The pools of one engine key. A slot's generation changes whenever its pools lose their
 * entries (eviction of the slot, a server that forgot the nonces), so that a background
 * prefetch started before does not refill them with nonces from before. */
struct key_slot {
    int used;
    char name[MPC_KDC_ENGINE_KEY_NAME_LEN];
    uint32_t kvno;
    nonce_pool *pool[POOL_KINDS];
    uint64_t generation[POOL_KINDS];
    uint64_t retry_at_ms[POOL_KINDS];  /* no background refill before (after failures) */
    uint32_t failures[POOL_KINDS];     /* consecutive background refill failures */
    uint64_t last_used_ms;
};

struct router_engine {
    pid_t owner;                       /* the process that opened it */
    char *cluster_config;
    router_engine_options opt;
    mpc_client *client;                /* foreground calls, under call_lock */
    pthread_mutex_t call_lock;         /* one call and its last_error at a time */
    pthread_mutex_t lock;              /* everything below */
    pthread_cond_t wake;               /* refill thread: a pool ran low, or stop */
    struct key_slot keys[MAX_KEYS];
    uint64_t next_generation;
    /* While an engine server is unreachable, every call would wait out the client timeout
     * and the KDC's workers would fall behind a storm of requests they can only refuse;
     * so after one call finds it unreachable, calls fail at once until this time, and the
     * first call after it tries again. */
    uint64_t unreachable_until_ms;
    char unreachable_reason[ERR_LEN];
    int refill_started;
    int stopping;
    pthread_t refill_thread;
};

/* ---- small helpers ----------------------------------------------------------------- */

void
router_set_why(char *why, size_t why_len, const char *fmt, ...)
{
    va_list ap;

    if (why == NULL || why_len == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(why, why_len, fmt, ap);
    va_end(ap);
}

static uint64_t
now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void
engine_log(const router_engine *engine, int priority, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
engine_log(const router_engine *engine, int priority, const char *fmt, ...)
{
    char msg[ERR_LEN + 200];
    va_list ap;

    if (engine->opt.log == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    engine->opt.log(priority, msg);
}

const char *
router_engine_status_text(int rc)
{
    switch (rc) {
    case MPC_EINVAL: return "rejected the request as invalid";
    case MPC_ECONFIG: return "configuration or key file unusable";
    case MPC_EUNREACHABLE: return "unreachable";
    case MPC_EREFUSED: return "refused";
    case MPC_EMISMATCH: return "servers disagree";
    case MPC_EBADTAG: return "tag mismatch";
    case MPC_ENONCE: return "nonce unknown to the servers";
    case MPC_EDIVERGED: return "servers received different copies of the request";
    default: return "internal error";
    }
}

static void
store_u32be(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

int
router_overlaps(const void *a, size_t alen, const void *b, size_t blen)
{
    const uint8_t *pa = a, *pb = b;

    return alen != 0 && blen != 0 && pa < pb + blen && pb < pa + alen;
}

/* GHASH input blocks of one engine call (zero-padded AAD, zero-padded text, lengths). */
static size_t
hash_blocks(size_t aad_len, size_t text_len)
{
    return (aad_len + 15) / 16 + (text_len + 15) / 16 + 1;
}

void
router_wipe_free(void *p, size_t len)
{
    if (p == NULL)
        return;
    OPENSSL_cleanse(p, len);
    free(p);
}

/* Refuses a handle whose enctype the engine does not serve (fail closed). */
static krb5_error_code
refuse_enctype(const char *op, const mpc_kdb_key_id *key, char *why, size_t why_len)
{
    router_set_why(why, why_len,
            "%s with a protected key refused: the engine serves only keys of enctypes "
            MPC_KDC_ENCTYPE_NAME " (%d, the protected krbtgt key), aes128-cts-hmac-sha1-96 "
            "(17), aes256-cts-hmac-sha1-96 (18), aes128-cts-hmac-sha256-128 (19) and "
            "aes256-cts-hmac-sha384-192 (20), not enctype %d (fail closed)",
            op, MPC_KDC_ENCTYPE_AES256_GCM, (int)key->enctype);
    return KRB5_CRYPTO_INTERNAL;
}

static int
served(const mpc_kdb_key_id *key)
{
    return key != NULL && key->enctype == MPC_KDC_ENCTYPE_AES256_GCM;
}

/* ---- open / close ------------------------------------------------------------------ */

static krb5_error_code
check_options(const router_engine_options *in, router_engine_options *out, char *why,
              size_t why_len)
{
    memset(out, 0, sizeof(*out));
    if (in != NULL)
        *out = *in;
    if (out->pool_ttl_s == 0)
        out->pool_ttl_s = ROUTER_ENGINE_DEFAULT_POOL_TTL_S;
    if (out->pool_low == 0)
        out->pool_low = ROUTER_ENGINE_DEFAULT_POOL_LOW;
    if (out->pool_high == 0)
        out->pool_high = ROUTER_ENGINE_DEFAULT_POOL_HIGH;
    if (out->ticket_blocks == 0)
        out->ticket_blocks = ROUTER_ENGINE_DEFAULT_TICKET_BLOCKS;
    if (out->unreachable_retry_ms == 0)
        out->unreachable_retry_ms = ROUTER_ENGINE_DEFAULT_UNREACHABLE_RETRY_MS;
    if (out->pool_ttl_s > 7 * 24 * 3600) {
        router_set_why(why, why_len, "pool_ttl_s %u is above 604800 (the servers' ceiling)",
                out->pool_ttl_s);
        return EINVAL;
    }
    if (out->pool_high > NONCE_POOL_MAX_CAPACITY || out->pool_low >= out->pool_high) {
        router_set_why(why, why_len, "pool_low %u and pool_high %u: need pool_low < pool_high <= %u",
                out->pool_low, out->pool_high, (unsigned)NONCE_POOL_MAX_CAPACITY);
        return EINVAL;
    }
    /* A ticket's GHASH covers one AAD block, its blocks and the length block. */
    if (out->ticket_blocks > MPC_GCM_MAX_HASH_BLOCKS - 2) {
        router_set_why(why, why_len, "ticket_blocks %u is above %u (the engine's GHASH limit)",
                out->ticket_blocks, (unsigned)(MPC_GCM_MAX_HASH_BLOCKS - 2));
        return EINVAL;
    }
    return 0;
}

krb5_error_code
router_engine_open(const char *cluster_config, const router_engine_options *options,
                   router_engine **out, char *why, size_t why_len)
{
    router_engine *engine = NULL;
    router_engine_options opt;
    char err[ERR_LEN] = "";
    krb5_error_code ret;
    int rc, locks = 0;

    *out = NULL;
    if (why != NULL && why_len > 0)
        why[0] = '\0';
    if (cluster_config == NULL || cluster_config[0] == '\0') {
        router_set_why(why, why_len, "no engine cluster configuration named");
        ret = EINVAL;
        goto cleanup;
    }
    ret = check_options(options, &opt, why, why_len);
    if (ret)
        goto cleanup;
    engine = calloc(1, sizeof(*engine));
    if (engine == NULL || (engine->cluster_config = strdup(cluster_config)) == NULL) {
        router_set_why(why, why_len, "out of memory");
        ret = ENOMEM;
        goto cleanup;
    }
    engine->owner = getpid();
    engine->opt = opt;
    if (pthread_mutex_init(&engine->call_lock, NULL) != 0) {
        router_set_why(why, why_len, "cannot create a mutex");
        ret = ENOMEM;
        goto cleanup;
    }
    locks = 1;
    if (pthread_mutex_init(&engine->lock, NULL) != 0) {
        router_set_why(why, why_len, "cannot create a mutex");
        ret = ENOMEM;
        goto cleanup;
    }
    locks = 2;
    if (pthread_cond_init(&engine->wake, NULL) != 0) {
        router_set_why(why, why_len, "cannot create a condition variable");
        ret = ENOMEM;
        goto cleanup;
    }
    locks = 3;
    rc = mpc_client_open(cluster_config, &engine->client, err, sizeof(err));
    if (rc != MPC_OK) {
        router_set_why(why, why_len, "engine cluster configuration %s unusable: %s", cluster_config,
                err[0] ? err : router_engine_status_text(rc));
        ret = EINVAL;
        goto cleanup;
    }
    *out = engine;
    engine = NULL;
    ret = 0;

cleanup:
    if (engine != NULL) {
        mpc_client_close(engine->client);
        if (locks >= 3)
            pthread_cond_destroy(&engine->wake);
        if (locks >= 2)
            pthread_mutex_destroy(&engine->lock);
        if (locks >= 1)
            pthread_mutex_destroy(&engine->call_lock);
        free(engine->cluster_config);
        free(engine);
    }
    return ret;
}

static void
drop_slot(struct key_slot *slot)
{
    int k;

    for (k = 0; k < POOL_KINDS; k++) {
        nonce_pool_destroy(slot->pool[k]);
        slot->pool[k] = NULL;
    }
    slot->used = 0;
}

void
router_engine_close(router_engine *engine)
{
    int k, started;

    if (engine == NULL)
        return;
    if (engine->owner != getpid()) {
        /* A forked child's copy: its locks may have been held by a thread that does not
         * exist here, and its connections and pools belong to the parent (the pools'
         * pages are already zero here, MADV_WIPEONFORK). Abandoned, never touched. */
        return;
    }
    pthread_mutex_lock(&engine->lock);
    engine->stopping = 1;
    started = engine->refill_started;
    pthread_cond_broadcast(&engine->wake);
    pthread_mutex_unlock(&engine->lock);
    if (started == 1)
        pthread_join(engine->refill_thread, NULL);
    for (k = 0; k < MAX_KEYS; k++)
        drop_slot(&engine->keys[k]);
    pthread_mutex_lock(&engine->call_lock);
    mpc_client_close(engine->client);
    engine->client = NULL;
    pthread_mutex_unlock(&engine->call_lock);
    pthread_cond_destroy(&engine->wake);
    pthread_mutex_destroy(&engine->lock);
    pthread_mutex_destroy(&engine->call_lock);
    free(engine->cluster_config);
    free(engine);
}

/* ---- pools and the refill thread --------------------------------------------------- */

static void *refill_main(void *arg);

/* Starts the refill thread once, in the owning process. Called with engine->lock held.
 * Returns 0, or the pthread_create error of the one failed attempt (the caller logs it):
 * not retried, every seal then prefetches for itself. */
static int
start_refill(router_engine *engine)
{
    sigset_t all, old;
    int rc;

    if (engine->refill_started || engine->stopping || engine->owner != getpid())
        return 0;
    /* Signals stay with the KDC's own threads: the refill thread blocks them all. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&engine->refill_thread, NULL, refill_main, engine);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    engine->refill_started = rc == 0 ? 1 : -1;
    return rc;
}

/* The slot of (name, kvno), created (and an older slot evicted) as needed, with its pools
 * created. Called with engine->lock held. NULL: out of memory. */
static struct key_slot *
find_slot(router_engine *engine, const char *name, uint32_t kvno, uint64_t now)
{
    struct key_slot *slot = NULL;
    size_t ks_len = (size_t)engine->opt.ticket_blocks * 16;
    int i, k;

    for (i = 0; i < MAX_KEYS && slot == NULL; i++) {
        if (engine->keys[i].used && engine->keys[i].kvno == kvno &&
            strcmp(engine->keys[i].name, name) == 0)
            slot = &engine->keys[i];
    }
    if (slot == NULL) {
        /* A free slot, else the least recently used key's (an old kvno after a
         * rotation) gives way. */
        for (i = 0; i < MAX_KEYS; i++) {
            if (!engine->keys[i].used) {
                slot = &engine->keys[i];
                break;
            }
            if (slot == NULL || engine->keys[i].last_used_ms < slot->last_used_ms)
                slot = &engine->keys[i];
        }
        drop_slot(slot);
        memset(slot, 0, sizeof(*slot));
        snprintf(slot->name, sizeof(slot->name), "%s", name);
        slot->kvno = kvno;
        for (k = 0; k < POOL_KINDS; k++)
            slot->generation[k] = ++engine->next_generation;
        slot->pool[POOL_TICKET] = nonce_pool_create(engine->opt.pool_high, ks_len);
        slot->pool[POOL_CHECKSUM] = nonce_pool_create(engine->opt.pool_high, 0);
        if (slot->pool[POOL_TICKET] == NULL || slot->pool[POOL_CHECKSUM] == NULL) {
            drop_slot(slot);
            return NULL;
        }
        slot->used = 1;
    }
    slot->last_used_ms = now;
    return slot;
}

static void *
refill_main(void *arg)
{
    router_engine *engine = arg;
    mpc_client *client = NULL;
    char name[MPC_KDC_ENGINE_KEY_NAME_LEN], err[ERR_LEN], log_msg[ERR_LEN + 200];
    uint8_t *nonces = NULL, *keystream = NULL;
    size_t nonces_len = 0, keystream_len = 0, stored;
    uint64_t now, stamp, generation, backoff;
    uint32_t kvno, want, blocks, failures;
    struct key_slot *slot;
    struct timespec until;
    const uint64_t ttl_ms = (uint64_t)engine->opt.pool_ttl_s * 1000u;
    int i, k, rc, found, log_priority;

    pthread_mutex_lock(&engine->lock);
    while (!engine->stopping) {
        now = now_ms();
        found = 0;
        for (i = 0; i < MAX_KEYS && !found; i++) {
            slot = &engine->keys[i];
            if (!slot->used)
                continue;
            for (k = 0; k < POOL_KINDS && !found; k++) {
                (void)nonce_pool_expire(slot->pool[k], now, ttl_ms);
                /* A key that sealed nothing for a TTL (an older kvno after a rotation)
                 * is not kept supplied: its next seal prefetches and wakes it up. */
                if (nonce_pool_count(slot->pool[k]) < engine->opt.pool_low &&
                    now >= slot->retry_at_ms[k] && now - slot->last_used_ms < ttl_ms) {
                    found = 1;
                    break;
                }
            }
            if (found)
                break;
        }
        if (!found) {
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_sec += REFILL_IDLE_MS / 1000;
            (void)pthread_cond_timedwait(&engine->wake, &engine->lock, &until);
            continue;
        }
        memcpy(name, slot->name, sizeof(name));
        kvno = slot->kvno;
        generation = slot->generation[k];
        blocks = k == POOL_TICKET ? engine->opt.ticket_blocks : 0;
        want = (uint32_t)(nonce_pool_capacity(slot->pool[k]) - nonce_pool_count(slot->pool[k]));
        if (want > REFILL_MAX_NONCES_PER_CALL)
            want = REFILL_MAX_NONCES_PER_CALL;
        if (blocks != 0 && want > REFILL_MAX_BLOCKS_PER_CALL / blocks)
            want = REFILL_MAX_BLOCKS_PER_CALL / blocks;
        pthread_mutex_unlock(&engine->lock);

        err[0] = '\0';
        nonces_len = (size_t)want * MPC_KDC_NONCE_LEN;
        keystream_len = (size_t)want * blocks * 16;
        nonces = malloc(nonces_len);
        keystream = keystream_len != 0 ? malloc(keystream_len) : NULL;
        if (client == NULL) {
            rc = mpc_client_open(engine->cluster_config, &client, err, sizeof(err));
            if (rc != MPC_OK)
                client = NULL;
        } else {
            rc = MPC_OK;
        }
        /* Stamped before asking: the servers' TTL for these nonces starts later. */
        stamp = now_ms();
        if (rc == MPC_OK && (nonces == NULL || (keystream_len != 0 && keystream == NULL))) {
            rc = MPC_EINTERNAL;
            snprintf(err, sizeof(err), "out of memory");
        } else if (rc == MPC_OK) {
            rc = mpc_client_gcm_prefetch(client, name, kvno, want, blocks, nonces, keystream);
            if (rc != MPC_OK)
                snprintf(err, sizeof(err), "%s", mpc_client_last_error(client));
        }

        log_msg[0] = '\0';
        log_priority = LOG_ERR;
        pthread_mutex_lock(&engine->lock);
        /* The slot may have been evicted, reused or emptied meanwhile. */
        if (slot->used && slot->kvno == kvno && strcmp(slot->name, name) == 0 &&
            slot->generation[k] == generation) {
            failures = slot->failures[k];
            if (rc == MPC_OK) {
                stored = nonce_pool_put(slot->pool[k], stamp, nonces, keystream, want);
                (void)stored;
                slot->failures[k] = 0;
                slot->retry_at_ms[k] = 0;
                if (failures != 0) {
                    log_priority = LOG_NOTICE;
                    snprintf(log_msg, sizeof(log_msg), "%s nonce refill for %s kvno %u works "
                             "again after %u failures", pool_names[k], name, kvno, failures);
                }
            } else {
                slot->failures[k] = failures + 1;
                backoff = 1000u << (failures < 5 ? failures : 5);
                if (backoff > REFILL_BACKOFF_MAX_MS)
                    backoff = REFILL_BACKOFF_MAX_MS;
                slot->retry_at_ms[k] = now_ms() + backoff;
                /* The first failure of a run is logged; the recovery says how many. */
                if (failures == 0)
                    snprintf(log_msg, sizeof(log_msg), "%s nonce refill for %s kvno %u "
                             "failed, seals prefetch for themselves meanwhile: engine %s: %s",
                             pool_names[k], name, kvno, router_engine_status_text(rc), err);
            }
        }
        pthread_mutex_unlock(&engine->lock);
        router_wipe_free(keystream, keystream_len);
        free(nonces);
        keystream = nonces = NULL;
        if (log_msg[0] != '\0')
            engine_log(engine, log_priority, "%s", log_msg);
        pthread_mutex_lock(&engine->lock);
    }
    pthread_mutex_unlock(&engine->lock);
    mpc_client_close(client);
    return NULL;
}

/* Nonzero (and why says so) while a recent call found the engine unreachable
 * (router_engine_internal.h). */
int
router_engine_down(router_engine *engine, char *why, size_t why_len)
{
    uint64_t now = now_ms();
    int down;

    pthread_mutex_lock(&engine->lock);
    down = now < engine->unreachable_until_ms;
    if (down)
        router_set_why(why, why_len, "engine unreachable (next try in %llu ms): %s",
                (unsigned long long)(engine->unreachable_until_ms - now),
                engine->unreachable_reason);
    pthread_mutex_unlock(&engine->lock);
    return down;
}

/* Records the outcome of a foreground call for router_engine_down(). */
void
router_engine_note(router_engine *engine, int rc, const char *why)
{
    pthread_mutex_lock(&engine->lock);
    if (rc == MPC_EUNREACHABLE) {
        engine->unreachable_until_ms = now_ms() + engine->opt.unreachable_retry_ms;
        snprintf(engine->unreachable_reason, sizeof(engine->unreachable_reason), "%s", why);
    } else if (rc == MPC_OK) {
        engine->unreachable_until_ms = 0;
    }
    pthread_mutex_unlock(&engine->lock);
}

mpc_client *
router_engine_client_lock(router_engine *engine)
{
    pthread_mutex_lock(&engine->call_lock);
    return engine->client;
}

void
router_engine_client_unlock(router_engine *engine)
{
    pthread_mutex_unlock(&engine->call_lock);
}

/* One nonce and its keystream for a seal: from the pool of `kind` when it has one with
 * at least `blocks` keystream blocks (and from_pool is allowed), else prefetched now.
 * keystream has room for max(blocks, ticket_blocks) blocks. *pooled says where it came
 * from. */
static krb5_error_code
get_nonce(router_engine *engine, const char *name, uint32_t kvno, enum pool_kind kind,
          uint32_t blocks, int from_pool, uint8_t nonce[MPC_KDC_NONCE_LEN],
          uint8_t *keystream, int *pooled, char *why, size_t why_len)
{
    struct key_slot *slot;
    uint64_t now = now_ms();
    int got = 0, rc, thread_error = 0;

    *pooled = 0;
    if (from_pool) {
        pthread_mutex_lock(&engine->lock);
        slot = find_slot(engine, name, kvno, now);
        if (slot != NULL) {
            thread_error = start_refill(engine);
            if (kind == POOL_CHECKSUM || blocks <= engine->opt.ticket_blocks)
                got = nonce_pool_take(slot->pool[kind], now,
                                      (uint64_t)engine->opt.pool_ttl_s * 1000u, nonce,
                                      keystream);
            if (nonce_pool_count(slot->pool[kind]) < engine->opt.pool_low)
                pthread_cond_signal(&engine->wake);
        }
        pthread_mutex_unlock(&engine->lock);
        if (thread_error != 0)
            engine_log(engine, LOG_ERR, "cannot start the nonce refill thread: %s; every "
                       "seal prefetches its own nonce", strerror(thread_error));
        if (got) {
            *pooled = 1;
            return 0;
        }
    }
    if (router_engine_down(engine, why, why_len))
        return KRB5_CRYPTO_INTERNAL;
    pthread_mutex_lock(&engine->call_lock);
    rc = mpc_client_gcm_prefetch(engine->client, name, kvno, 1, blocks, nonce,
                                 blocks != 0 ? keystream : NULL);
    if (rc != MPC_OK)
        router_set_why(why, why_len, "engine %s prefetching a nonce for %s kvno %u: %s",
                router_engine_status_text(rc), name, kvno,
                mpc_client_last_error(engine->client));
    pthread_mutex_unlock(&engine->call_lock);
    router_engine_note(engine, rc, why);
    return rc == MPC_OK ? 0 : KRB5_CRYPTO_INTERNAL;
}

/* Forgets the pool of `kind` of (name, kvno): the servers no longer know its nonces. */
static void
drop_pool(router_engine *engine, const char *name, uint32_t kvno, enum pool_kind kind)
{
    size_t dropped = 0;
    int i;

    pthread_mutex_lock(&engine->lock);
    for (i = 0; i < MAX_KEYS; i++) {
        if (engine->keys[i].used && engine->keys[i].kvno == kvno &&
            strcmp(engine->keys[i].name, name) == 0) {
            dropped = nonce_pool_count(engine->keys[i].pool[kind]);
            nonce_pool_clear(engine->keys[i].pool[kind]);
            engine->keys[i].generation[kind] = ++engine->next_generation;
            pthread_cond_signal(&engine->wake);
        }
    }
    pthread_mutex_unlock(&engine->lock);
    /* Worth a line: it happens when a server restarted. */
    engine_log(engine, LOG_NOTICE, "%s nonce pool for %s kvno %u dropped (%zu nonces): the "
               "servers no longer know its nonces (a server restarted?); sealing again with "
               "a fresh nonce", pool_names[kind], name, kvno, dropped);
}

/* Seals text (len bytes; out_text may overlap it in any way) under a fresh nonce: writes
 * N to out_nonce, C to out_text, T to out_tag. On failure out_text holds zeros. */
static krb5_error_code
seal(router_engine *engine, const mpc_kdb_key_id *key, enum pool_kind kind,
     const uint8_t *aad, size_t aad_len, const uint8_t *text, size_t len,
     uint8_t out_nonce[MPC_KDC_NONCE_LEN], uint8_t *out_text,
     uint8_t out_tag[MPC_KDC_TAG_LEN], char *why, size_t why_len)
{
    char name[MPC_KDC_ENGINE_KEY_NAME_LEN];
    uint8_t *keystream = NULL, *plain_copy = NULL;
    const uint8_t *plain = text;
    uint32_t blocks = (uint32_t)((len + 15) / 16);
    size_t ks_len, i;
    krb5_error_code ret;
    int attempt, pooled = 0, rc;

    mpc_kdc_engine_key_name(key, name);
    if (hash_blocks(aad_len, len) > MPC_GCM_MAX_HASH_BLOCKS) {
        router_set_why(why, why_len, "%zu bytes of data and %zu of associated data are more than "
                "the engine authenticates in one call (%u GHASH blocks)", len, aad_len,
                (unsigned)MPC_GCM_MAX_HASH_BLOCKS);
        return KRB5_BAD_MSIZE;
    }
    /* An empty text needs no keystream: a checksum-pool nonce serves. */
    if (len == 0)
        kind = POOL_CHECKSUM;
    ks_len = (size_t)(blocks > engine->opt.ticket_blocks ? blocks : engine->opt.ticket_blocks)
             * 16;
    keystream = malloc(ks_len);
    if (keystream == NULL) {
        router_set_why(why, why_len, "out of memory");
        ret = ENOMEM;
        goto cleanup;
    }
    /* A retry needs the plaintext again, so it must survive writing the ciphertext. */
    if (router_overlaps(text, len, out_text, len)) {
        plain_copy = malloc(len);
        if (plain_copy == NULL) {
            router_set_why(why, why_len, "out of memory");
            ret = ENOMEM;
            goto cleanup;
        }
        memcpy(plain_copy, text, len);
        plain = plain_copy;
    }
    for (attempt = 0; attempt < 2; attempt++) {
        ret = get_nonce(engine, name, key->kvno, kind, kind == POOL_TICKET ? blocks : 0,
                        attempt == 0, out_nonce, keystream, &pooled, why, why_len);
        if (ret)
            goto cleanup;
        for (i = 0; i < len; i++)
            out_text[i] = plain[i] ^ keystream[i];
        OPENSSL_cleanse(keystream, ks_len);
        if (router_engine_down(engine, why, why_len))
            break;
        pthread_mutex_lock(&engine->call_lock);
        rc = mpc_client_gcm_tag(engine->client, name, key->kvno, out_nonce, aad, aad_len,
                                out_text, len, out_tag);
        if (rc != MPC_OK)
            router_set_why(why, why_len, "engine %s tagging under %s kvno %u: %s",
                    router_engine_status_text(rc), name, key->kvno,
                    mpc_client_last_error(engine->client));
        pthread_mutex_unlock(&engine->call_lock);
        router_engine_note(engine, rc, why);
        if (rc == MPC_OK) {
            ret = 0;
            goto cleanup;
        }
        if (rc != MPC_ENONCE)
            break;
        /* The servers forgot the nonce (restart, expiry, eviction): so they forgot the
         * rest of that pool too. */
        if (pooled)
            drop_pool(engine, name, key->kvno, kind);
    }
    ret = KRB5_CRYPTO_INTERNAL;

cleanup:
    if (ret != 0 && out_text != NULL)
        OPENSSL_cleanse(out_text, len);
    router_wipe_free(keystream, ks_len);
    router_wipe_free(plain_copy, len);
    return ret;
}

/* Checks tag over text under nonce; on success writes the plaintext to out (len bytes;
 * may be NULL when len is 0). A wrong tag gives KRB5KRB_AP_ERR_BAD_INTEGRITY. */
static krb5_error_code
open_sealed(router_engine *engine, const mpc_kdb_key_id *key, const uint8_t *aad,
            size_t aad_len, const uint8_t nonce[MPC_KDC_NONCE_LEN], const uint8_t *text,
            size_t len, const uint8_t tag[MPC_KDC_TAG_LEN], uint8_t *out, char *why,
            size_t why_len)
{
    char name[MPC_KDC_ENGINE_KEY_NAME_LEN];
    uint8_t *text_copy = NULL;
    krb5_error_code ret;
    int rc;

    mpc_kdc_engine_key_name(key, name);
    if (hash_blocks(aad_len, len) > MPC_GCM_MAX_HASH_BLOCKS) {
        router_set_why(why, why_len, "%zu bytes of data and %zu of associated data are more than "
                "the engine authenticates in one call (%u GHASH blocks)", len, aad_len,
                (unsigned)MPC_GCM_MAX_HASH_BLOCKS);
        return KRB5_BAD_MSIZE;
    }
    /* The client decrypts in place or into a separate buffer, never a shifted one. */
    if (out != text && router_overlaps(text, len, out, len)) {
        text_copy = malloc(len);
        if (text_copy == NULL) {
            router_set_why(why, why_len, "out of memory");
            return ENOMEM;
        }
        memcpy(text_copy, text, len);
        text = text_copy;
    }
    if (router_engine_down(engine, why, why_len)) {
        router_wipe_free(text_copy, len);
        if (out != NULL)
            OPENSSL_cleanse(out, len);
        return KRB5_CRYPTO_INTERNAL;
    }
    pthread_mutex_lock(&engine->call_lock);
    rc = mpc_client_gcm_open(engine->client, name, key->kvno, nonce, aad, aad_len, text, len,
                             tag, out);
    if (rc != MPC_OK && rc != MPC_EBADTAG)
        router_set_why(why, why_len, "engine %s checking under %s kvno %u: %s",
                router_engine_status_text(rc), name, key->kvno,
                mpc_client_last_error(engine->client));
    pthread_mutex_unlock(&engine->call_lock);
    router_engine_note(engine, rc == MPC_EBADTAG ? MPC_OK : rc, why);
    if (rc == MPC_OK) {
        ret = 0;
    } else if (rc == MPC_EBADTAG) {
        router_set_why(why, why_len, "integrity check failed under %s kvno %u (forged or damaged "
                "data, or another key)", name, key->kvno);
        ret = KRB5KRB_AP_ERR_BAD_INTEGRITY;
    } else {
        ret = KRB5_CRYPTO_INTERNAL;
    }
    if (ret != 0 && out != NULL)
        OPENSSL_cleanse(out, len);
    router_wipe_free(text_copy, len);
    return ret;
}

/* ---- encryption -------------------------------------------------------------------- */

static void
encrypt_aad(krb5_keyusage usage, uint8_t aad[5])
{
    aad[0] = MPC_KDC_AAD_ENCRYPT;
    store_u32be(aad + 1, (uint32_t)usage);
}

/* A cipher state chains nothing in this format: only the empty one init_state makes. */
static krb5_error_code
check_cipher_state(const char *op, const krb5_data *cipher_state, char *why, size_t why_len)
{
    if (cipher_state != NULL && cipher_state->length != 0) {
        router_set_why(why, why_len, "%s with the protected krbtgt key: a cipher state is not "
                "supported (" MPC_KDC_ENCTYPE_NAME " chains nothing between messages)", op);
        return KRB5_CRYPTO_INTERNAL;
    }
    return 0;
}

krb5_error_code
router_engine_encrypt(router_engine *engine, const mpc_kdb_key_id *key, krb5_keyusage usage,
                      const krb5_data *cipher_state, const krb5_data *input,
                      krb5_enc_data *output, char *why, size_t why_len)
{
    uint8_t aad[5], *out;
    size_t total;
    krb5_error_code ret;

    if (router_krb_serves(key))
        return router_krb_encrypt(engine, key, usage, cipher_state, input, output, why,
                                  why_len);
    if (!served(key))
        return refuse_enctype("encrypt", key, why, why_len);
    ret = check_cipher_state("encrypt", cipher_state, why, why_len);
    if (ret)
        return ret;
    if (input == NULL || output == NULL || (input->length != 0 && input->data == NULL)) {
        router_set_why(why, why_len, "encrypt: no input or output");
        return EINVAL;
    }
    total = (size_t)input->length + MPC_KDC_ENCRYPT_OVERHEAD;
    output->magic = KV5M_ENC_DATA;
    output->kvno = 0;
    output->enctype = MPC_KDC_ENCTYPE_AES256_GCM;
    if (output->ciphertext.data == NULL || output->ciphertext.length < total) {
        router_set_why(why, why_len, "encrypt: output buffer of %u bytes, %zu needed "
                "(krb5_c_encrypt_length)", output->ciphertext.length, total);
        return KRB5_BAD_MSIZE;
    }
    out = (uint8_t *)output->ciphertext.data;
    encrypt_aad(usage, aad);
    ret = seal(engine, key, POOL_TICKET, aad, sizeof(aad), (const uint8_t *)input->data,
               input->length, out, out + MPC_KDC_NONCE_LEN,
               out + MPC_KDC_NONCE_LEN + input->length, why, why_len);
    if (ret == 0)
        output->ciphertext.length = (unsigned int)total;
    return ret;
}

krb5_error_code
router_engine_decrypt(router_engine *engine, const mpc_kdb_key_id *key, krb5_keyusage usage,
                      const krb5_data *cipher_state, const krb5_enc_data *input,
                      krb5_data *output, char *why, size_t why_len)
{
    const uint8_t *in;
    uint8_t aad[5];
    size_t plain_len;
    krb5_error_code ret;

    if (router_krb_serves(key))
        return router_krb_decrypt(engine, key, usage, cipher_state, input, output, why,
                                  why_len);
    if (!served(key))
        return refuse_enctype("decrypt", key, why, why_len);
    ret = check_cipher_state("decrypt", cipher_state, why, why_len);
    if (ret)
        return ret;
    if (input == NULL || output == NULL) {
        router_set_why(why, why_len, "decrypt: no input or output");
        return EINVAL;
    }
    /* As libk5crypto: an enctype other than the key's (or unspecified) is refused. */
    if (input->enctype != ENCTYPE_UNKNOWN && input->enctype != MPC_KDC_ENCTYPE_AES256_GCM) {
        router_set_why(why, why_len, "decrypt: ciphertext of enctype %d under a key of enctype "
                MPC_KDC_ENCTYPE_NAME, (int)input->enctype);
        return KRB5_BAD_ENCTYPE;
    }
    if (input->ciphertext.length < MPC_KDC_ENCRYPT_OVERHEAD || input->ciphertext.data == NULL) {
        router_set_why(why, why_len, "decrypt: ciphertext of %u bytes is shorter than nonce and "
                "tag (%d)", input->ciphertext.length, MPC_KDC_ENCRYPT_OVERHEAD);
        return KRB5_BAD_MSIZE;
    }
    plain_len = input->ciphertext.length - MPC_KDC_ENCRYPT_OVERHEAD;
    if (output->length < plain_len || (plain_len != 0 && output->data == NULL)) {
        router_set_why(why, why_len, "decrypt: output buffer of %u bytes, %zu needed",
                output->length, plain_len);
        return KRB5_BAD_MSIZE;
    }
    in = (const uint8_t *)input->ciphertext.data;
    encrypt_aad(usage, aad);
    ret = open_sealed(engine, key, aad, sizeof(aad), in, in + MPC_KDC_NONCE_LEN, plain_len,
                      in + MPC_KDC_NONCE_LEN + plain_len, (uint8_t *)output->data, why,
                      why_len);
    if (ret == 0)
        output->length = (unsigned int)plain_len;
    return ret;
}

/* krb5kdc 1.20.1 never calls the _iov encryption (GSSAPI's) with any key: refused. */
krb5_error_code
router_engine_encrypt_iov(router_engine *engine, const mpc_kdb_key_id *key, krb5_keyusage usage,
                          const krb5_data *cipher_state, krb5_crypto_iov *data,
                          size_t num_data, char *why, size_t why_len)
{
    (void)engine; (void)usage; (void)cipher_state; (void)data; (void)num_data;
    if (router_krb_serves(key))
        return router_krb_encrypt_iov(engine, key, usage, why, why_len);
    if (!served(key))
        return refuse_enctype("encrypt_iov", key, why, why_len);
    router_set_why(why, why_len, "encrypt_iov with the protected krbtgt key refused: only "
            "krb5_c_encrypt is served (krb5kdc never encrypts a ticket with iovs)");
    return KRB5_CRYPTO_INTERNAL;
}

krb5_error_code
router_engine_decrypt_iov(router_engine *engine, const mpc_kdb_key_id *key, krb5_keyusage usage,
                          const krb5_data *cipher_state, krb5_crypto_iov *data,
                          size_t num_data, char *why, size_t why_len)
{
    (void)engine; (void)usage; (void)cipher_state; (void)data; (void)num_data;
    if (router_krb_serves(key))
        return router_krb_decrypt_iov(engine, key, usage, why, why_len);
    if (!served(key))
        return refuse_enctype("decrypt_iov", key, why, why_len);
    router_set_why(why, why_len, "decrypt_iov with the protected krbtgt key refused: only "
            "krb5_c_decrypt is served (krb5kdc never decrypts a ticket with iovs)");
    return KRB5_CRYPTO_INTERNAL;
}

/* ---- checksums --------------------------------------------------------------------- */

/* The checksum AAD, 0x02 || u32be usage || data, data being the buffers libk5crypto
 * checksums (HEADER, DATA, PADDING, SIGN_ONLY, in order: its SIGN_IOV). *aad_out is
 * malloc'd; the caller frees it. */
static krb5_error_code
checksum_aad(krb5_keyusage usage, const krb5_crypto_iov *iov, size_t n, const krb5_data *one,
             uint8_t **aad_out, size_t *aad_len_out, char *why, size_t why_len)
{
    size_t i, len = 5, at;
    uint8_t *aad;

    *aad_out = NULL;
    *aad_len_out = 0;
    for (i = 0; i < n; i++) {
        if (iov[i].flags == KRB5_CRYPTO_TYPE_HEADER || iov[i].flags == KRB5_CRYPTO_TYPE_DATA ||
            iov[i].flags == KRB5_CRYPTO_TYPE_PADDING ||
            iov[i].flags == KRB5_CRYPTO_TYPE_SIGN_ONLY)
            len += iov[i].data.length;
    }
    if (one != NULL)
        len += one->length;
    /* Checked here, before the copy, so that a huge input costs no allocation. */
    if (hash_blocks(len, 0) > MPC_GCM_MAX_HASH_BLOCKS) {
        router_set_why(why, why_len, "checksum over %zu bytes: more than the engine authenticates "
                "in one call (%u GHASH blocks)", len - 5, (unsigned)MPC_GCM_MAX_HASH_BLOCKS);
        return KRB5_BAD_MSIZE;
    }
    aad = malloc(len);
    if (aad == NULL) {
        router_set_why(why, why_len, "out of memory");
        return ENOMEM;
    }
    aad[0] = MPC_KDC_AAD_CHECKSUM;
    store_u32be(aad + 1, (uint32_t)usage);
    at = 5;
    for (i = 0; i < n; i++) {
        if (iov[i].flags == KRB5_CRYPTO_TYPE_HEADER || iov[i].flags == KRB5_CRYPTO_TYPE_DATA ||
            iov[i].flags == KRB5_CRYPTO_TYPE_PADDING ||
            iov[i].flags == KRB5_CRYPTO_TYPE_SIGN_ONLY) {
            if (iov[i].data.length != 0)
                memcpy(aad + at, iov[i].data.data, iov[i].data.length);
            at += iov[i].data.length;
        }
    }
    if (one != NULL && one->length != 0)
        memcpy(aad + at, one->data, one->length);
    *aad_out = aad;
    *aad_len_out = len;
    return 0;
}

/* cksumtype 0 means the enctype's mandatory type, ours; any other type with our key is
 * what libk5crypto answers for a keyed checksum of another enctype. */
static krb5_error_code
check_cksumtype(const char *op, krb5_cksumtype cksumtype, char *why, size_t why_len)
{
    if (cksumtype == 0 || cksumtype == MPC_KDC_CKSUMTYPE_GMAC)
        return 0;
    router_set_why(why, why_len, "%s: checksum type %d with a key of enctype " MPC_KDC_ENCTYPE_NAME
            " (only " MPC_KDC_CKSUMTYPE_NAME ", %d)", op, (int)cksumtype,
            MPC_KDC_CKSUMTYPE_GMAC);
    return KRB5_BAD_ENCTYPE;
}

static krb5_error_code
checksum_make(router_engine *engine, const mpc_kdb_key_id *key, krb5_keyusage usage,
              const krb5_crypto_iov *iov, size_t n, const krb5_data *one,
              uint8_t out[MPC_KDC_CHECKSUM_LEN], char *why, size_t why_len)
{
    uint8_t *aad = NULL;
    size_t aad_len = 0;
    krb5_error_code ret;

    ret = checksum_aad(usage, iov, n, one, &aad, &aad_len, why, why_len);
    if (ret)
        return ret;
    ret = seal(engine, key, POOL_CHECKSUM, aad, aad_len, NULL, 0, out, NULL,
               out + MPC_KDC_NONCE_LEN, why, why_len);
    free(aad);
    return ret;
}

static krb5_error_code
checksum_verify(router_engine *engine, const mpc_kdb_key_id *key, krb5_keyusage usage,
                const krb5_crypto_iov *iov, size_t n, const krb5_data *one,
                const uint8_t *cksum, krb5_boolean *valid, char *why, size_t why_len)
{
    uint8_t *aad = NULL;
    size_t aad_len = 0;
    krb5_error_code ret;

    ret = checksum_aad(usage, iov, n, one, &aad, &aad_len, why, why_len);
    if (ret)
        return ret;
    ret = open_sealed(engine, key, aad, aad_len, cksum, NULL, 0, cksum + MPC_KDC_NONCE_LEN,
                      NULL, why, why_len);
    free(aad);
    if (ret == KRB5KRB_AP_ERR_BAD_INTEGRITY) {
        /* A wrong checksum is an answer, not an error (as libk5crypto). */
        *valid = FALSE;
        return 0;
    }
    if (ret == 0)
        *valid = TRUE;
    return ret;
}

krb5_error_code
router_engine_make_checksum(router_engine *engine, const mpc_kdb_key_id *key,
                            krb5_cksumtype cksumtype, krb5_keyusage usage,
                            const krb5_data *input, krb5_checksum *cksum,
                            char *why, size_t why_len)
{
    uint8_t *contents;
    krb5_error_code ret;

    if (router_krb_serves(key))
        return router_krb_make_checksum(engine, key, cksumtype, usage, input, cksum,
                                        why, why_len);
    if (!served(key))
        return refuse_enctype("make_checksum", key, why, why_len);
    ret = check_cksumtype("make_checksum", cksumtype, why, why_len);
    if (ret)
        return ret;
    if (input == NULL || cksum == NULL || (input->length != 0 && input->data == NULL)) {
        router_set_why(why, why_len, "make_checksum: no input or output");
        return EINVAL;
    }
    contents = malloc(MPC_KDC_CHECKSUM_LEN);
    if (contents == NULL) {
        router_set_why(why, why_len, "out of memory");
        return ENOMEM;
    }
    ret = checksum_make(engine, key, usage, NULL, 0, input, contents, why, why_len);
    if (ret) {
        free(contents);
        return ret;
    }
    cksum->magic = KV5M_CHECKSUM;
    cksum->checksum_type = MPC_KDC_CKSUMTYPE_GMAC;
    cksum->length = MPC_KDC_CHECKSUM_LEN;
    cksum->contents = contents;
    return 0;
}

krb5_error_code
router_engine_verify_checksum(router_engine *engine, const mpc_kdb_key_id *key,
                              krb5_keyusage usage, const krb5_data *data,
                              const krb5_checksum *cksum, krb5_boolean *valid,
                              char *why, size_t why_len)
{
    krb5_error_code ret;

    if (router_krb_serves(key))
        return router_krb_verify_checksum(engine, key, usage, data, cksum, valid,
                                          why, why_len);
    if (!served(key))
        return refuse_enctype("verify_checksum", key, why, why_len);
    if (data == NULL || cksum == NULL || valid == NULL ||
        (data->length != 0 && data->data == NULL)) {
        router_set_why(why, why_len, "verify_checksum: no data, checksum or result");
        return EINVAL;
    }
    ret = check_cksumtype("verify_checksum", cksum->checksum_type, why, why_len);
    if (ret)
        return ret;
    if (cksum->length != MPC_KDC_CHECKSUM_LEN || cksum->contents == NULL) {
        router_set_why(why, why_len, "verify_checksum: checksum of %u bytes, " MPC_KDC_CKSUMTYPE_NAME
                " has %d", cksum->length, MPC_KDC_CHECKSUM_LEN);
        return KRB5_BAD_MSIZE;
    }
    return checksum_verify(engine, key, usage, NULL, 0, data, cksum->contents, valid, why,
                           why_len);
}

static krb5_crypto_iov *
find_checksum_iov(const krb5_crypto_iov *data, size_t num_data)
{
    size_t i;

    for (i = 0; i < num_data; i++) {
        if (data[i].flags == KRB5_CRYPTO_TYPE_CHECKSUM)
            return (krb5_crypto_iov *)&data[i];
    }
    return NULL;
}

krb5_error_code
router_engine_make_checksum_iov(router_engine *engine, const mpc_kdb_key_id *key,
                                krb5_cksumtype cksumtype, krb5_keyusage usage,
                                krb5_crypto_iov *data, size_t num_data,
                                char *why, size_t why_len)
{
    uint8_t out[MPC_KDC_CHECKSUM_LEN];
    krb5_crypto_iov *checksum;
    krb5_error_code ret;

    if (router_krb_serves(key))
        return router_krb_make_checksum_iov(engine, key, cksumtype, usage, data,
                                            num_data, why, why_len);
    if (!served(key))
        return refuse_enctype("make_checksum_iov", key, why, why_len);
    ret = check_cksumtype("make_checksum_iov", cksumtype, why, why_len);
    if (ret)
        return ret;
    checksum = data != NULL ? find_checksum_iov(data, num_data) : NULL;
    if (checksum == NULL || checksum->data.length < MPC_KDC_CHECKSUM_LEN ||
        checksum->data.data == NULL) {
        router_set_why(why, why_len, "make_checksum_iov: no CHECKSUM buffer of at least %d bytes",
                MPC_KDC_CHECKSUM_LEN);
        return KRB5_BAD_MSIZE;
    }
    ret = checksum_make(engine, key, usage, data, num_data, NULL, out, why, why_len);
    if (ret)
        return ret;
    memcpy(checksum->data.data, out, MPC_KDC_CHECKSUM_LEN);
    checksum->data.length = MPC_KDC_CHECKSUM_LEN;
    return 0;
}

krb5_error_code
router_engine_verify_checksum_iov(router_engine *engine, const mpc_kdb_key_id *key,
                                  krb5_cksumtype cksumtype, krb5_keyusage usage,
                                  const krb5_crypto_iov *data, size_t num_data,
                                  krb5_boolean *valid, char *why, size_t why_len)
{
    const krb5_crypto_iov *checksum;
    krb5_error_code ret;

    if (router_krb_serves(key))
        return router_krb_verify_checksum_iov(engine, key, cksumtype, usage, data,
                                              num_data, valid, why, why_len);
    if (!served(key))
        return refuse_enctype("verify_checksum_iov", key, why, why_len);
    ret = check_cksumtype("verify_checksum_iov", cksumtype, why, why_len);
    if (ret)
        return ret;
    if (valid == NULL) {
        router_set_why(why, why_len, "verify_checksum_iov: no result");
        return EINVAL;
    }
    checksum = data != NULL ? find_checksum_iov(data, num_data) : NULL;
    if (checksum == NULL || checksum->data.length != MPC_KDC_CHECKSUM_LEN ||
        checksum->data.data == NULL) {
        router_set_why(why, why_len, "verify_checksum_iov: no CHECKSUM buffer of %d bytes",
                MPC_KDC_CHECKSUM_LEN);
        return KRB5_BAD_MSIZE;
    }
    return checksum_verify(engine, key, usage, data, num_data, NULL,
                           (const uint8_t *)checksum->data.data, valid, why, why_len);
}

/* ---- refused with the krbtgt key --------------------------------------------------- */

krb5_error_code
router_engine_prf(router_engine *engine, const mpc_kdb_key_id *key, const krb5_data *input,
                  krb5_data *output, char *why, size_t why_len)
{
    (void)engine; (void)input; (void)output;
    if (router_krb_serves(key))
        return router_krb_prf(engine, key, input, output, why, why_len);
    if (!served(key))
        return refuse_enctype("prf", key, why, why_len);
    router_set_why(why, why_len, "prf with the protected krbtgt key refused: krb5kdc never "
            "computes a PRF of the krbtgt key");
    return KRB5_CRYPTO_INTERNAL;
}

krb5_error_code
router_engine_prfplus(router_engine *engine, const mpc_kdb_key_id *key, const krb5_data *input,
                      krb5_data *output, char *why, size_t why_len)
{
    (void)engine; (void)input; (void)output;
    if (router_krb_serves(key))
        return router_krb_prfplus(engine, key, input, output, why, why_len);
    if (!served(key))
        return refuse_enctype("prfplus", key, why, why_len);
    router_set_why(why, why_len, "prfplus with the protected krbtgt key refused: krb5kdc never "
            "computes a PRF+ of the krbtgt key");
    return KRB5_CRYPTO_INTERNAL;
}

krb5_error_code
router_engine_derive_prfplus(router_engine *engine, const mpc_kdb_key_id *key,
                             const krb5_data *input, krb5_enctype enctype, krb5_keyblock **out,
                             char *why, size_t why_len)
{
    (void)engine; (void)input; (void)enctype; (void)out;
    if (router_krb_serves(key))
        return router_krb_derive_prfplus(engine, key, why, why_len);
    if (!served(key))
        return refuse_enctype("derive_prfplus", key, why, why_len);
    router_set_why(why, why_len, "derive_prfplus with the protected krbtgt key refused: it derives "
            "the FAST cookie key, needed only for cookies with contents (SPAKE preauth, which "
            "must stay disabled)");
    return KRB5_CRYPTO_INTERNAL;
}

krb5_error_code
router_engine_cf2(router_engine *engine, const router_key *k1, const char *pepper1,
                  const router_key *k2, const char *pepper2, mpc_kdb_key_id *combined,
                  char *why, size_t why_len)
{
    /* Handles of the standard enctypes (a user's key in FAST encrypted challenge) with
     * clear keys; the krbtgt key never takes part in a cf2. */
    if ((k1->id == NULL || router_krb_serves(k1->id)) &&
        (k2->id == NULL || router_krb_serves(k2->id)))
        return router_krb_cf2(engine, k1, pepper1, k2, pepper2, combined, why, why_len);
    if (k1->id != NULL && !served(k1->id))
        return refuse_enctype("fx_cf2_simple", k1->id, why, why_len);
    if (k2->id != NULL && !served(k2->id))
        return refuse_enctype("fx_cf2_simple", k2->id, why, why_len);
    router_set_why(why, why_len, "fx_cf2_simple with the protected krbtgt key refused: krb5kdc "
            "combines only session, armor and reply keys with cf2");
    return KRB5_CRYPTO_INTERNAL;
}

krb5_error_code
router_engine_init_state(router_engine *engine, const mpc_kdb_key_id *key, krb5_keyusage usage,
                         krb5_data *new_state, char *why, size_t why_len)
{
    (void)engine; (void)usage;
    if (router_krb_serves(key))
        return router_krb_init_state(engine, key, usage, why, why_len);
    if (!served(key))
        return refuse_enctype("init_state", key, why, why_len);
    if (new_state == NULL) {
        router_set_why(why, why_len, "init_state: no output");
        return EINVAL;
    }
    /* Nothing chains between messages: the empty state (krb5_c_free_state frees it). */
    new_state->magic = KV5M_DATA;
    new_state->length = 0;
    new_state->data = NULL;
    return 0;
}
