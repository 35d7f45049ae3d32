/* kdc-plugin/router/router_metrics_layout.h - the crypto router's counters as they lie in the
 * metrics file that every krb5kdc worker maps (router_metrics.h) and `mpcctl kdc metrics`
 * reads (Prometheus text, for node_exporter's textfile collector).
 *
 * Layout: one page of native-endian uint64_t, updated with atomic adds by the workers of one
 * host. A file whose magic differs (another release's layout) is left alone by the router and
 * refused by the reader. The operations and results are few and fixed: a metric label never
 * carries a principal, a key name or request content.
 *
 * Nonce pools belong to each worker: a worker writes its pools' levels into a slot of its
 * own (claimed by its pid), and the reader adds the slots of the processes still alive.
 *
 * Version boundary: shared by mpc_crypto_router.so and mpcctl of one release.
 */
#ifndef MPC_ROUTER_METRICS_LAYOUT_H
#define MPC_ROUTER_METRICS_LAYOUT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ROUTER_METRICS_MAGIC UINT64_C(0x4d50434b444d3032) /* "MPCKDM02" */

enum router_op {
    ROUTER_OP_GCM_TAG = 0,      /* a ticket or PAC checksum tagged (mpc_client_gcm_tag[_checked]) */
    ROUTER_OP_GCM_TAG_CHAINED,  /* a PAC checksum tagged with its chained successor */
    ROUTER_OP_GCM_OPEN,         /* a ticket opened in full */
    ROUTER_OP_KRB,              /* a Kerberos encryption, decryption or checksum */
    ROUTER_OP_PREFETCH,         /* a nonce fetched in the foreground (its pool was empty) */
    ROUTER_OP_COUNT
};

enum router_result {
    ROUTER_RESULT_OK = 0,
    ROUTER_RESULT_BAD_TAG,      /* an answer: the integrity check failed (forged or damaged data) */
    ROUTER_RESULT_ABORTED,      /* the servers refused the job: a check of active security failed */
    ROUTER_RESULT_UNREACHABLE,
    ROUTER_RESULT_ERROR,        /* any other refusal or failure */
    ROUTER_RESULT_COUNT
};

enum router_pool {
    ROUTER_POOL_TICKET = 0,     /* nonces with a ticket's keystream */
    ROUTER_POOL_CHECKSUM,       /* nonces for PAC checksums */
    ROUTER_POOL_COUNT
};

/* Worker slots for pool levels: more workers than this share none (their levels go uncounted). */
#define ROUTER_METRICS_WORKERS 64

#define ROUTER_LATENCY_BUCKETS 12
/* Upper bounds of the latency buckets, microseconds. */
#define ROUTER_LATENCY_BOUNDS_US                                                          \
    { 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000, 200000, 500000, 1000000, 5000000 }

typedef struct router_metrics_page {
    uint64_t magic;
    uint64_t calls[ROUTER_OP_COUNT][ROUTER_RESULT_COUNT];
    /* Calls per latency bucket (not cumulative); slower than the last bound: in none. */
    uint64_t latency_buckets[ROUTER_OP_COUNT][ROUTER_LATENCY_BUCKETS];
    uint64_t latency_sum_us[ROUTER_OP_COUNT];
    uint64_t failed_fast;          /* calls refused at once while the engine was marked unreachable */
    uint64_t unreachable_periods;  /* times a call found the engine unreachable after the last call
                                    * of any worker had reached it (outages seen by this host) */
    uint64_t reseals;              /* seals tried again under a fresh nonce (the servers no longer knew
                                    * the pooled one: a server restarted or the cluster regrouped) */
    struct router_worker_pools {
        uint64_t pid;              /* the worker's; 0: a free slot */
        uint64_t pooled[ROUTER_POOL_COUNT];
    } workers[ROUTER_METRICS_WORKERS];
    /* 1 from a call that found the engine unreachable to the next call of any worker that
     * reached it. Last in the page, so that a file of the layout before it only grows. */
    uint64_t engine_unreachable;
} router_metrics_page;

#ifdef __cplusplus
}
#endif

#endif /* MPC_ROUTER_METRICS_LAYOUT_H */
