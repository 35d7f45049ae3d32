/* kdc-plugin/router/engine_conn.h - the crypto router's connection to the engine: one
 * foreground client of the engine client library (mpc-engine/client/mpc_client.h,
 * libmpcclient.so.1) per process, its options, and failing fast while the engine is
 * unreachable.
 *
 * While an engine server is unreachable every call would wait out the client's timeout, and
 * krb5kdc's workers would fall behind a storm of requests they can only refuse; so after one
 * call finds the engine unreachable, calls fail at once for unreachable_retry_ms, and the
 * first call after that tries again. A foreground engine call goes:
 *
 *     if (engine_conn_down(conn, why, why_len))
 *         fail at once with KRB5_CRYPTO_INTERNAL (why says why);
 *     client = engine_conn_lock(conn);
 *     rc = mpc_client_...(client, ...);   read mpc_client_last_error(client) here
 *     engine_conn_unlock(conn);
 *     engine_conn_note(conn, rc, why);
 *
 * Threads and processes: calls may come from any thread. A connection belongs to the process
 * that opened it: one inherited across fork is never used by the child, and
 * engine_conn_close() there only abandons it (it touches none of the parent's connections,
 * threads or locks). The router opens its own in each process, after fork, on first use.
 *
 * Version boundary: internal to mpc_crypto_router.so.
 */
#ifndef MPC_ROUTER_ENGINE_CONN_H
#define MPC_ROUTER_ENGINE_CONN_H

#include <stddef.h>
#include <stdint.h>

#include <krb5/krb5.h>

#include "mpc_client.h"
#include "router_metrics_layout.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The router configuration's engine options (kdc-plugin/README.md, "Configuration"). A
 * field of 0 takes the default below. */
typedef struct router_engine_options {
    uint32_t pool_ttl_s;        /* drop prefetched nonces older than this; below the
                                   servers' nonce TTL */
    uint32_t pool_low;          /* refill a nonce pool that holds fewer nonces ... */
    uint32_t pool_high;         /* ... up to this many (its capacity) */
    uint32_t unreachable_retry_ms; /* after a call found the engine unreachable, calls fail
                                      at once for this long, then one tries again */
    uint32_t aes_masks;         /* gcm_masks = aes (the default): prefetch nonces masked by
                                   AES_K, computed between the servers, instead of local
                                   masks (0) */
    const char *metrics_file;   /* the counters' file every worker maps (router_metrics.h);
                                   NULL: none. Read only by engine_conn_open. */
    /* Where background failures are reported (the router's log: stderr and syslog);
     * may be NULL. Called without any engine lock held, from any thread. */
    void (*log)(int syslog_priority, const char *message);
} router_engine_options;

#define ROUTER_ENGINE_DEFAULT_POOL_TTL_S 1800
/* Small pools: every worker fills its own at start, and refills from empty after a server
 * restart or a change of service mode loses them all, while it serves (kdc-plugin/README.md). */
#define ROUTER_ENGINE_DEFAULT_POOL_LOW 16
#define ROUTER_ENGINE_DEFAULT_POOL_HIGH 96
#define ROUTER_ENGINE_DEFAULT_UNREACHABLE_RETRY_MS 3000

typedef struct engine_conn engine_conn;

/* Opens the connection for the cluster described by cluster_config (a path; parsed now,
 * connections are made on first use) with options (NULL: all defaults; the nonce pools'
 * options are checked here too). On success *out is a connection the caller frees with
 * engine_conn_close(); on failure *out is NULL and why says why. */
krb5_error_code engine_conn_open(const char *cluster_config,
                                 const router_engine_options *options, engine_conn **out,
                                 char *why, size_t why_len);

/* Frees the connection; NULL is ignored. In the process that opened it: closes its client.
 * In any other (a forked child): abandons it untouched. */
void engine_conn_close(engine_conn *conn);

/* Whether conn was opened by the calling process. */
int engine_conn_owned(const engine_conn *conn);

/* The options in force (defaults filled in) and the cluster configuration's path, for a
 * background client of the same cluster. Borrowed for the life of conn. */
const router_engine_options *engine_conn_options(const engine_conn *conn);
const char *engine_conn_cluster_config(const engine_conn *conn);

/* Reports to options->log, without any lock held. */
void engine_conn_log(const engine_conn *conn, int priority, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Nonzero while a recent call found the engine unreachable: why then says so and the caller
 * fails with KRB5_CRYPTO_INTERNAL without calling. */
int engine_conn_down(engine_conn *conn, char *why, size_t why_len);

/* The foreground client, held under the connection's call lock (one call and its
 * mpc_client_last_error at a time) until engine_conn_unlock, which counts the call as op
 * ending with mpc_status rc, with its time since the lock (router_metrics.h). */
mpc_client *engine_conn_lock(engine_conn *conn);
void engine_conn_unlock(engine_conn *conn, enum router_op op, int rc);

/* Records a foreground call's mpc_status for engine_conn_down(): MPC_EUNREACHABLE marks the
 * engine down for unreachable_retry_ms with why as the reason, MPC_OK clears the mark; any
 * other status (an answer) changes nothing. */
void engine_conn_note(engine_conn *conn, int rc, const char *why);

/* Counts a seal tried again under a fresh nonce, and publishes this process's pool levels
 * (router_metrics.h); nothing without metrics_file. */
void engine_conn_count_reseal(engine_conn *conn);
void engine_conn_pool_levels(engine_conn *conn, const uint64_t *counts);

/* A static English phrase for an mpc_status ("unreachable", "refused", ...). */
const char *engine_status_text(int rc);

#ifdef __cplusplus
}
#endif

#endif /* MPC_ROUTER_ENGINE_CONN_H */
