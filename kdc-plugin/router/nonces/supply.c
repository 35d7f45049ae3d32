/* kdc-plugin/router/nonces/supply.c - per-key nonce pools and the thread that refills them
 * (nonces/supply.h).
 *
 * Reads the pool options of the router configuration (pool_ttl_s, pool_low, pool_high)
 * through the engine connection.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "nonces/supply.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "nonces/demand.h"
#include "protected_key.h"
#include "router_util.h"

#define REFILL_IDLE_MS 1000            /* the thread wakes at least this often */
#define REFILL_BACKOFF_MAX_MS 30000    /* after repeated failures */
#define REFILL_MAX_BLOCKS_PER_CALL 65536
#define REFILL_MIN_BLOCKS_PER_CALL 64
/* The first call is small: a call the engine cannot finish in time keeps its servers busy after
 * the router gave up on it, and every seal waits behind it. Successes grow it. */
#define REFILL_FIRST_BLOCKS_PER_CALL 4096
#define REFILL_MAX_NONCES_PER_CALL 4096
/* A refill call should take about this long: a seal that prefetches for itself meanwhile
 * waits behind it. The engine's speed changes by an order of magnitude or more (three
 * servers or two, a GPU or none), so the blocks per call follow the time the last call took. */
#define REFILL_TARGET_MS 200
/* How far above pool_high demand may raise a pool (its capacity, fixed at creation):
 * nonces/demand.h. */
#define DEMAND_CAPACITY_FACTOR 16
#define REASON_LEN 400

_Static_assert(NONCE_POOL_NONCE_LEN == MPC_KDC_NONCE_LEN, "a pool holds the format's nonces");

static const char *const kind_names[NONCE_KINDS] = { "ticket", "checksum" };

/* Keystream blocks prefetched per nonce: a ticket's key, none for a checksum. */
static uint32_t
kind_blocks(int kind)
{
    return kind == NONCE_TICKET ? MPC_KDC_TICKET_KEY_BLOCKS : 0;
}

/* The pools of one engine key. A slot's generation changes whenever its pools lose their
 * entries (eviction of the slot, a server that forgot the nonces), so that a background
 * prefetch started before does not refill them with nonces from before. */
struct key_slot {
    int used;
    char name[MPC_KDC_ENGINE_KEY_NAME_LEN];
    uint32_t kvno;
    nonce_pool *pool[NONCE_KINDS];
    uint64_t generation[NONCE_KINDS];
    uint64_t retry_at_ms[NONCE_KINDS];  /* no background refill before (after failures) */
    uint32_t failures[NONCE_KINDS];     /* consecutive background refill failures */
    nonce_demand demand[NONCE_KINDS];
    uint64_t last_used_ms;
};

struct nonce_supply {
    pid_t owner;                       /* the process that created it */
    engine_conn *conn;                 /* borrowed */
    const router_engine_options *opt;  /* conn's */
    pthread_mutex_t lock;              /* everything below */
    pthread_cond_t wake;               /* the thread: a pool ran low, or stop */
    struct key_slot keys[NONCE_SUPPLY_MAX_KEYS];
    uint64_t next_generation;
    uint32_t blocks_per_call;          /* keystream blocks one refill call may ask for */
    int refill_started;                /* 1 running, -1 could not start, 0 not yet */
    int stopping;
    pthread_t refill_thread;
};

/* A prefetch as the configuration asks: with local masks (each server computes its share of
 * a nonce's masks alone, and reopens its tickets so after a restart or with one server down)
 * unless gcm_masks = aes. Two servers of security = "active" (a pair serving while the third
 * is down) refuse local masks, which they could not check: the nonces are then AES_K's, as
 * with gcm_masks = aes, until three serve again. */
static int
prefetch(const nonce_supply *supply, mpc_client *client, const char *name, uint32_t kvno,
         uint32_t count, uint32_t blocks, uint8_t *nonces, uint8_t *keystream)
{
    int ret;

    if (supply->opt->aes_masks)
        return mpc_client_gcm_prefetch(client, name, kvno, count, blocks, nonces, keystream);
    ret = mpc_client_gcm_prefetch_local(client, name, kvno, count, blocks, nonces, keystream);
    if (ret == MPC_EREFUSED)
        ret = mpc_client_gcm_prefetch(client, name, kvno, count, blocks, nonces, keystream);
    return ret;
}

krb5_error_code
nonce_supply_create(engine_conn *conn, nonce_supply **out, char *why, size_t why_len)
{
    nonce_supply *supply;

    *out = NULL;
    supply = calloc(1, sizeof(*supply));
    if (supply == NULL) {
        router_set_why(why, why_len, "out of memory");
        return ENOMEM;
    }
    supply->owner = getpid();
    supply->conn = conn;
    supply->opt = engine_conn_options(conn);
    supply->blocks_per_call = REFILL_FIRST_BLOCKS_PER_CALL;
    if (pthread_mutex_init(&supply->lock, NULL) != 0) {
        router_set_why(why, why_len, "cannot create a mutex");
        free(supply);
        return ENOMEM;
    }
    if (pthread_cond_init(&supply->wake, NULL) != 0) {
        router_set_why(why, why_len, "cannot create a condition variable");
        pthread_mutex_destroy(&supply->lock);
        free(supply);
        return ENOMEM;
    }
    *out = supply;
    return 0;
}

static void
drop_slot(struct key_slot *slot)
{
    int k;

    for (k = 0; k < NONCE_KINDS; k++) {
        nonce_pool_destroy(slot->pool[k]);
        slot->pool[k] = NULL;
    }
    slot->used = 0;
}

void
nonce_supply_destroy(nonce_supply *supply)
{
    int i, started;

    /* A forked child's copy: its lock may have been held by a thread that does not exist
     * here, and its pools belong to the parent. Abandoned, never touched. */
    if (supply == NULL || supply->owner != getpid())
        return;
    pthread_mutex_lock(&supply->lock);
    supply->stopping = 1;
    started = supply->refill_started;
    pthread_cond_broadcast(&supply->wake);
    pthread_mutex_unlock(&supply->lock);
    if (started == 1)
        pthread_join(supply->refill_thread, NULL);
    for (i = 0; i < NONCE_SUPPLY_MAX_KEYS; i++)
        drop_slot(&supply->keys[i]);
    pthread_cond_destroy(&supply->wake);
    pthread_mutex_destroy(&supply->lock);
    free(supply);
}

/* The level a refill fills a pool to, and the level below which it is refilled. */
static size_t
pool_target(const nonce_supply *supply, const struct key_slot *slot, int k, uint64_t now)
{
    return nonce_demand_target(&slot->demand[k], now, supply->opt->pool_high,
                               nonce_pool_capacity(slot->pool[k]));
}

static size_t
pool_level(const nonce_supply *supply, const struct key_slot *slot, int k, uint64_t now)
{
    return nonce_demand_floor(&slot->demand[k], now, supply->opt->pool_low, supply->opt->pool_high,
                              nonce_pool_capacity(slot->pool[k]));
}

/* This process's pool levels for the metrics file (router_metrics.h). Called with
 * supply->lock held. */
static void
publish_levels(nonce_supply *supply)
{
    uint64_t counts[ROUTER_POOL_COUNT] = {0};
    int i;

    for (i = 0; i < NONCE_SUPPLY_MAX_KEYS; i++) {
        if (!supply->keys[i].used)
            continue;
        counts[ROUTER_POOL_TICKET] += nonce_pool_count(supply->keys[i].pool[NONCE_TICKET]);
        counts[ROUTER_POOL_CHECKSUM] += nonce_pool_count(supply->keys[i].pool[NONCE_CHECKSUM]);
    }
    engine_conn_pool_levels(supply->conn, counts);
}

/* ---- the refill thread -------------------------------------------------------------- */

/* The first slot and kind that needs a refill now, expiring old entries on the way; 0 when
 * none does. Called with supply->lock held. */
static int
find_low_pool(nonce_supply *supply, uint64_t now, struct key_slot **slot_out, int *kind_out)
{
    const uint64_t ttl_ms = (uint64_t)supply->opt->pool_ttl_s * 1000u;
    struct key_slot *slot;
    int i, k;

    for (i = 0; i < NONCE_SUPPLY_MAX_KEYS; i++) {
        slot = &supply->keys[i];
        if (!slot->used)
            continue;
        for (k = 0; k < NONCE_KINDS; k++) {
            (void)nonce_pool_expire(slot->pool[k], now, ttl_ms);
            /* A key that sealed nothing for a TTL (an older kvno after a rotation) is not
             * kept supplied: its next seal prefetches and wakes it up. */
            if (nonce_pool_count(slot->pool[k]) < pool_level(supply, slot, k, now) &&
                now >= slot->retry_at_ms[k] && now - slot->last_used_ms < ttl_ms) {
                *slot_out = slot;
                *kind_out = k;
                return 1;
            }
        }
    }
    return 0;
}

/* Stores a background prefetch's outcome in its slot, unless the slot was evicted, reused or
 * emptied meanwhile; writes the line to log (if any) into log_msg. Called with
 * supply->lock held. */
static void
record_refill(struct key_slot *slot, int k, const char *name, uint32_t kvno,
              uint64_t generation, int rc, uint64_t stamp, const uint8_t *nonces,
              const uint8_t *keystream, uint32_t count, const char *err, char *log_msg,
              size_t log_len, int *log_priority)
{
    uint32_t failures;
    uint64_t backoff;

    if (!slot->used || slot->kvno != kvno || strcmp(slot->name, name) != 0 ||
        slot->generation[k] != generation)
        return;
    failures = slot->failures[k];
    if (rc == MPC_OK) {
        (void)nonce_pool_put(slot->pool[k], stamp, nonces, keystream, count);
        slot->failures[k] = 0;
        slot->retry_at_ms[k] = 0;
        if (failures != 0) {
            *log_priority = LOG_NOTICE;
            snprintf(log_msg, log_len, "%s nonce refill for %s kvno %u works again after %u "
                     "failures", kind_names[k], name, kvno, failures);
        }
        return;
    }
    slot->failures[k] = failures + 1;
    backoff = 1000u << (failures < 5 ? failures : 5);
    if (backoff > REFILL_BACKOFF_MAX_MS)
        backoff = REFILL_BACKOFF_MAX_MS;
    slot->retry_at_ms[k] = router_now_ms() + backoff;
    /* The first failure of a run is logged; the recovery says how many. */
    if (failures == 0)
        snprintf(log_msg, log_len, "%s nonce refill for %s kvno %u failed, seals prefetch for "
                 "themselves meanwhile: engine %s: %s", kind_names[k], name, kvno,
                 engine_status_text(rc), err);
}

/* The next calls' size from this one's outcome: a failure (a timeout, or a server refusing a
 * job that large) quarters it; a success scales it towards REFILL_TARGET_MS. Called with
 * supply->lock held. */
static void
adapt_call_size(nonce_supply *supply, int rc, uint64_t asked_blocks, uint64_t elapsed_ms)
{
    uint64_t next;

    if (rc != MPC_OK)
        next = supply->blocks_per_call / 4;
    else if (2 * asked_blocks < supply->blocks_per_call)
        return;  /* a small top-up says little about what a full call costs */
    else
        next = asked_blocks * REFILL_TARGET_MS / (elapsed_ms != 0 ? elapsed_ms : 1);
    if (next > 2u * supply->blocks_per_call && rc == MPC_OK)
        next = 2u * supply->blocks_per_call;  /* grow gently: one fast call may be luck */
    if (next < REFILL_MIN_BLOCKS_PER_CALL)
        next = REFILL_MIN_BLOCKS_PER_CALL;
    if (next > REFILL_MAX_BLOCKS_PER_CALL)
        next = REFILL_MAX_BLOCKS_PER_CALL;
    supply->blocks_per_call = (uint32_t)next;
}

static void *
refill_main(void *arg)
{
    nonce_supply *supply = arg;
    mpc_client *client = NULL;
    char name[MPC_KDC_ENGINE_KEY_NAME_LEN], err[REASON_LEN], log_msg[REASON_LEN + 200];
    uint8_t *nonces = NULL, *keystream = NULL;
    size_t nonces_len, keystream_len;
    uint64_t stamp, generation, found_at;
    uint32_t kvno, want, blocks;
    size_t target;
    struct key_slot *slot = NULL;
    struct timespec until;
    int k = 0, rc, log_priority;

    pthread_mutex_lock(&supply->lock);
    while (!supply->stopping) {
        found_at = router_now_ms();
        if (!find_low_pool(supply, found_at, &slot, &k)) {
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_sec += REFILL_IDLE_MS / 1000;
            (void)pthread_cond_timedwait(&supply->wake, &supply->lock, &until);
            continue;
        }
        memcpy(name, slot->name, sizeof(name));
        kvno = slot->kvno;
        generation = slot->generation[k];
        blocks = kind_blocks(k);
        target = pool_target(supply, slot, k, found_at);
        want = target > nonce_pool_count(slot->pool[k]) ?
            (uint32_t)(target - nonce_pool_count(slot->pool[k])) : 1;
        if (want > REFILL_MAX_NONCES_PER_CALL)
            want = REFILL_MAX_NONCES_PER_CALL;
        /* Each nonce costs its keystream blocks and one for its tag mask. */
        if (want > supply->blocks_per_call / (blocks + 1))
            want = supply->blocks_per_call / (blocks + 1);
        if (want == 0)
            want = 1;
        pthread_mutex_unlock(&supply->lock);

        err[0] = '\0';
        nonces_len = (size_t)want * NONCE_POOL_NONCE_LEN;
        keystream_len = (size_t)want * blocks * 16;
        nonces = malloc(nonces_len);
        keystream = keystream_len != 0 ? malloc(keystream_len) : NULL;
        if (client == NULL) {
            rc = mpc_client_open(engine_conn_cluster_config(supply->conn), &client, err,
                                 sizeof(err));
            if (rc != MPC_OK)
                client = NULL;
        } else {
            rc = MPC_OK;
        }
        /* Stamped before asking: the servers' TTL for these nonces starts later. */
        stamp = router_now_ms();
        if (rc == MPC_OK && (nonces == NULL || (keystream_len != 0 && keystream == NULL))) {
            rc = MPC_EINTERNAL;
            snprintf(err, sizeof(err), "out of memory");
        } else if (rc == MPC_OK) {
            rc = prefetch(supply, client, name, kvno, want, blocks, nonces, keystream);
            if (rc != MPC_OK)
                snprintf(err, sizeof(err), "%s", mpc_client_last_error(client));
        }

        log_msg[0] = '\0';
        log_priority = LOG_ERR;
        pthread_mutex_lock(&supply->lock);
        adapt_call_size(supply, rc, (uint64_t)want * (blocks + 1), router_now_ms() - stamp);
        record_refill(slot, k, name, kvno, generation, rc, stamp, nonces, keystream, want,
                      err, log_msg, sizeof(log_msg), &log_priority);
        publish_levels(supply);
        pthread_mutex_unlock(&supply->lock);
        router_wipe_free(keystream, keystream_len);
        free(nonces);
        keystream = nonces = NULL;
        if (log_msg[0] != '\0')
            engine_conn_log(supply->conn, log_priority, "%s", log_msg);
        pthread_mutex_lock(&supply->lock);
    }
    pthread_mutex_unlock(&supply->lock);
    mpc_client_close(client);
    return NULL;
}

/* Starts the refill thread once, in the owning process. Called with supply->lock held.
 * Returns 0, or the pthread_create error of the one failed attempt (the caller logs it):
 * not retried, every seal then prefetches for itself. */
static int
start_refill(nonce_supply *supply)
{
    sigset_t all, old;
    int rc;

    if (supply->refill_started || supply->stopping || supply->owner != getpid())
        return 0;
    /* Signals stay with the KDC's own threads: the refill thread blocks them all. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&supply->refill_thread, NULL, refill_main, supply);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    supply->refill_started = rc == 0 ? 1 : -1;
    return rc;
}

/* ---- taking nonces ------------------------------------------------------------------ */

/* A pool's capacity: room for demand above pool_high. */
static size_t
pool_capacity(const router_engine_options *opt)
{
    const size_t capacity = (size_t)opt->pool_high * DEMAND_CAPACITY_FACTOR;

    return capacity < NONCE_POOL_MAX_CAPACITY ? capacity : NONCE_POOL_MAX_CAPACITY;
}

/* The slot of (name, kvno), created (and an older slot evicted) as needed, with its pools
 * created. Called with supply->lock held. NULL: out of memory. */
static struct key_slot *
find_slot(nonce_supply *supply, const char *name, uint32_t kvno, uint64_t now)
{
    struct key_slot *slot = NULL;
    size_t ks_len = (size_t)kind_blocks(NONCE_TICKET) * 16;
    int i, k;

    for (i = 0; i < NONCE_SUPPLY_MAX_KEYS && slot == NULL; i++) {
        if (supply->keys[i].used && supply->keys[i].kvno == kvno &&
            strcmp(supply->keys[i].name, name) == 0)
            slot = &supply->keys[i];
    }
    if (slot == NULL) {
        /* A free slot, else the least recently used key's (an old kvno after a
         * rotation) gives way. */
        for (i = 0; i < NONCE_SUPPLY_MAX_KEYS; i++) {
            if (!supply->keys[i].used) {
                slot = &supply->keys[i];
                break;
            }
            if (slot == NULL || supply->keys[i].last_used_ms < slot->last_used_ms)
                slot = &supply->keys[i];
        }
        drop_slot(slot);
        memset(slot, 0, sizeof(*slot));
        snprintf(slot->name, sizeof(slot->name), "%s", name);
        slot->kvno = kvno;
        for (k = 0; k < NONCE_KINDS; k++)
            slot->generation[k] = ++supply->next_generation;
        slot->pool[NONCE_TICKET] = nonce_pool_create(pool_capacity(supply->opt), ks_len);
        slot->pool[NONCE_CHECKSUM] = nonce_pool_create(pool_capacity(supply->opt), 0);
        for (k = 0; k < NONCE_KINDS; k++)
            slot->demand[k].window_start_ms = now;
        if (slot->pool[NONCE_TICKET] == NULL || slot->pool[NONCE_CHECKSUM] == NULL) {
            drop_slot(slot);
            return NULL;
        }
        slot->used = 1;
    }
    slot->last_used_ms = now;
    return slot;
}

/* Takes a pooled nonce: 1 when one was taken. Starts the thread on first use and wakes it
 * when the pool runs low. */
static int
take_pooled(nonce_supply *supply, const char *name, uint32_t kvno, enum nonce_kind kind,
            uint8_t nonce[NONCE_POOL_NONCE_LEN], uint8_t *keystream)
{
    const router_engine_options *opt = supply->opt;
    struct key_slot *slot;
    uint64_t now = router_now_ms();
    int got = 0, thread_error = 0;

    pthread_mutex_lock(&supply->lock);
    slot = find_slot(supply, name, kvno, now);
    if (slot != NULL) {
        thread_error = start_refill(supply);
        nonce_demand_note(&slot->demand[kind], now);
        got = nonce_pool_take(slot->pool[kind], now, (uint64_t)opt->pool_ttl_s * 1000u, nonce,
                              keystream);
        if (nonce_pool_count(slot->pool[kind]) < pool_level(supply, slot, kind, now))
            pthread_cond_signal(&supply->wake);
        publish_levels(supply);
    }
    pthread_mutex_unlock(&supply->lock);
    if (thread_error != 0)
        engine_conn_log(supply->conn, LOG_ERR, "cannot start the nonce refill thread: %s; "
                        "every seal prefetches its own nonce", strerror(thread_error));
    return got;
}

krb5_error_code
nonce_supply_take(nonce_supply *supply, const char *name, uint32_t kvno, enum nonce_kind kind,
                  int from_pool, uint8_t nonce[NONCE_POOL_NONCE_LEN],
                  uint8_t *keystream, int *pooled, char *why, size_t why_len)
{
    const uint32_t blocks = kind_blocks(kind);
    mpc_client *client;
    int rc;

    *pooled = 0;
    if (from_pool && take_pooled(supply, name, kvno, kind, nonce, keystream)) {
        *pooled = 1;
        return 0;
    }
    if (engine_conn_down(supply->conn, why, why_len))
        return KRB5_CRYPTO_INTERNAL;
    client = engine_conn_lock(supply->conn);
    rc = prefetch(supply, client, name, kvno, 1, blocks, nonce, blocks != 0 ? keystream : NULL);
    if (rc != MPC_OK)
        router_set_why(why, why_len, "engine %s prefetching a nonce for %s kvno %u: %s",
                       engine_status_text(rc), name, kvno, mpc_client_last_error(client));
    engine_conn_unlock(supply->conn, ROUTER_OP_PREFETCH, rc);
    engine_conn_note(supply->conn, rc, why);
    return rc == MPC_OK ? 0 : KRB5_CRYPTO_INTERNAL;
}

void
nonce_supply_drop(nonce_supply *supply, const char *name, uint32_t kvno, enum nonce_kind kind)
{
    size_t dropped = 0;
    int i;

    pthread_mutex_lock(&supply->lock);
    for (i = 0; i < NONCE_SUPPLY_MAX_KEYS; i++) {
        if (supply->keys[i].used && supply->keys[i].kvno == kvno &&
            strcmp(supply->keys[i].name, name) == 0) {
            dropped = nonce_pool_count(supply->keys[i].pool[kind]);
            nonce_pool_clear(supply->keys[i].pool[kind]);
            supply->keys[i].generation[kind] = ++supply->next_generation;
            pthread_cond_signal(&supply->wake);
        }
    }
    publish_levels(supply);
    pthread_mutex_unlock(&supply->lock);
    /* Worth a line: it happens when a server restarted. */
    engine_conn_log(supply->conn, LOG_NOTICE, "%s nonce pool for %s kvno %u dropped (%zu "
                    "nonces): the servers no longer know its nonces (a server restarted?); "
                    "sealing again with a fresh nonce", kind_names[kind], name, kvno, dropped);
}
