/* kdc-plugin/router/router_metrics.h - the crypto router's counters in a file every krb5kdc
 * worker of the host maps (router.conf metrics_file; layout: router_metrics_layout.h).
 *
 * Why a shared file: krb5kdc's workers are forked processes that serve no socket of the
 * router's own, and any of them may die and be replaced; counters added atomically to one
 * shared page outlive each worker and cost a few instructions per engine call. `mpcctl kdc
 * metrics` renders the page as Prometheus text, written for node_exporter's textfile
 * collector (the standard host agent) by a timer, so the KDC host runs no extra listener.
 *
 * Version boundary: internal to mpc_crypto_router.so.
 */
#ifndef MPC_ROUTER_METRICS_H
#define MPC_ROUTER_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "router_metrics_layout.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct router_metrics router_metrics;

/* Maps path (created 0644 if missing): 0 and *out, or -1 with why saying why (then the router
 * runs without metrics). The caller frees *out with router_metrics_close(). */
int router_metrics_open(const char *path, router_metrics **out, char *why, size_t why_len);

/* Unmaps; NULL is ignored. */
void router_metrics_close(router_metrics *metrics);

/* One engine call of op that ended with mpc_status rc after micros microseconds; NULL
 * metrics: nothing. */
void router_metrics_call(router_metrics *metrics, enum router_op op, int rc, uint64_t micros);

/* A call refused at once while the engine was marked unreachable. */
void router_metrics_failed_fast(router_metrics *metrics);

/* A call found the engine unreachable: a new period when the last call of any worker of the
 * host had reached it. Host-wide, so that a worker idle between two outages still counts the
 * second. */
void router_metrics_engine_unreachable(router_metrics *metrics);

/* A call reached the engine (an answer, whatever its verdict): the period, if any, is over. */
void router_metrics_engine_reached(router_metrics *metrics);

/* A seal tried again under a fresh nonce. */
void router_metrics_reseal(router_metrics *metrics);

/* The nonces this process holds in its pools now, by router_pool (counts[ROUTER_POOL_COUNT]),
 * in its worker slot (claimed on first use: a free one, or one of a process gone). Calls on
 * one metrics handle must not overlap (the nonce supply makes them under its lock). */
void router_metrics_pool_levels(router_metrics *metrics, const uint64_t *counts);

#ifdef __cplusplus
}
#endif

#endif /* MPC_ROUTER_METRICS_H */
