/* kdc-plugin/router/engine_conn.c - the crypto router's foreground engine client and its
 * fail-fast state (engine_conn.h).
 *
 * Reads the engine cluster configuration named by the router configuration (mpc_client_open:
 * parsed at open, connections made on first use) and the options of router_engine_options.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "engine_conn.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "router_metrics.h"
#include <unistd.h>

#include "nonces/pool.h"
#include "router_util.h"

#define REASON_LEN 400

struct engine_conn {
    pid_t owner;                       /* the process that opened it */
    char *cluster_config;
    router_engine_options opt;
    mpc_client *client;                /* foreground calls, under call_lock */
    pthread_mutex_t call_lock;         /* one call and its last_error at a time */
    pthread_mutex_t lock;              /* the two fields below */
    uint64_t unreachable_until_ms;
    char unreachable_reason[REASON_LEN];
    router_metrics *metrics;           /* NULL without metrics_file */
    uint64_t call_started_us;          /* under call_lock */
};

const char *
engine_status_text(int rc)
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
    case MPC_EABORT: return "a server's messages failed verification";
    default: return "internal error";
    }
}

/* The options with defaults filled in, checked against what the servers and the nonce pools
 * accept. */
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
    if (out->unreachable_retry_ms == 0)
        out->unreachable_retry_ms = ROUTER_ENGINE_DEFAULT_UNREACHABLE_RETRY_MS;
    if (out->pool_ttl_s > 7 * 24 * 3600) {
        router_set_why(why, why_len, "pool_ttl_s %u is above 604800 (the servers' ceiling)",
                       out->pool_ttl_s);
        return EINVAL;
    }
    if (out->pool_high > NONCE_POOL_MAX_CAPACITY || out->pool_low >= out->pool_high) {
        router_set_why(why, why_len, "pool_low %u and pool_high %u: need pool_low < pool_high "
                       "<= %u", out->pool_low, out->pool_high, (unsigned)NONCE_POOL_MAX_CAPACITY);
        return EINVAL;
    }
    return 0;
}

krb5_error_code
engine_conn_open(const char *cluster_config, const router_engine_options *options,
                 engine_conn **out, char *why, size_t why_len)
{
    engine_conn *conn = NULL;
    router_engine_options opt;
    char err[REASON_LEN] = "";
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
    conn = calloc(1, sizeof(*conn));
    if (conn == NULL || (conn->cluster_config = strdup(cluster_config)) == NULL) {
        router_set_why(why, why_len, "out of memory");
        ret = ENOMEM;
        goto cleanup;
    }
    conn->owner = getpid();
    conn->opt = opt;
    conn->opt.metrics_file = NULL;  /* the caller's string: used here only */
    /* Counters are not worth a refused login: without its file the router runs uncounted. */
    if (options != NULL && options->metrics_file != NULL &&
        router_metrics_open(options->metrics_file, &conn->metrics, err, sizeof(err)) != 0) {
        if (opt.log != NULL) {
            char message[REASON_LEN + 64];

            snprintf(message, sizeof(message), "mpc router: running without metrics: %s", err);
            opt.log(LOG_WARNING, message);
        }
        err[0] = '\0';
    }
    if (pthread_mutex_init(&conn->call_lock, NULL) != 0) {
        router_set_why(why, why_len, "cannot create a mutex");
        ret = ENOMEM;
        goto cleanup;
    }
    locks = 1;
    if (pthread_mutex_init(&conn->lock, NULL) != 0) {
        router_set_why(why, why_len, "cannot create a mutex");
        ret = ENOMEM;
        goto cleanup;
    }
    locks = 2;
    rc = mpc_client_open(cluster_config, &conn->client, err, sizeof(err));
    if (rc != MPC_OK) {
        router_set_why(why, why_len, "engine cluster configuration %s unusable: %s",
                       cluster_config, err[0] ? err : engine_status_text(rc));
        ret = EINVAL;
        goto cleanup;
    }
    *out = conn;
    conn = NULL;
    ret = 0;

cleanup:
    if (conn != NULL) {
        mpc_client_close(conn->client);
        if (locks >= 2)
            pthread_mutex_destroy(&conn->lock);
        if (locks >= 1)
            pthread_mutex_destroy(&conn->call_lock);
        router_metrics_close(conn->metrics);
        free(conn->cluster_config);
        free(conn);
    }
    return ret;
}

void
engine_conn_close(engine_conn *conn)
{
    if (conn == NULL || !engine_conn_owned(conn))
        return;
    pthread_mutex_lock(&conn->call_lock);
    mpc_client_close(conn->client);
    conn->client = NULL;
    pthread_mutex_unlock(&conn->call_lock);
    pthread_mutex_destroy(&conn->lock);
    pthread_mutex_destroy(&conn->call_lock);
    router_metrics_close(conn->metrics);
    free(conn->cluster_config);
    free(conn);
}

int
engine_conn_owned(const engine_conn *conn)
{
    return conn != NULL && conn->owner == getpid();
}

const router_engine_options *
engine_conn_options(const engine_conn *conn)
{
    return &conn->opt;
}

const char *
engine_conn_cluster_config(const engine_conn *conn)
{
    return conn->cluster_config;
}

void
engine_conn_log(const engine_conn *conn, int priority, const char *fmt, ...)
{
    char msg[REASON_LEN + 200];
    va_list ap;

    if (conn->opt.log == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    conn->opt.log(priority, msg);
}

int
engine_conn_down(engine_conn *conn, char *why, size_t why_len)
{
    uint64_t now = router_now_ms();
    int down;

    pthread_mutex_lock(&conn->lock);
    down = now < conn->unreachable_until_ms;
    if (down)
        router_metrics_failed_fast(conn->metrics);
    if (down)
        router_set_why(why, why_len, "engine unreachable (next try in %llu ms): %s",
                       (unsigned long long)(conn->unreachable_until_ms - now),
                       conn->unreachable_reason);
    pthread_mutex_unlock(&conn->lock);
    return down;
}

void
engine_conn_note(engine_conn *conn, int rc, const char *why)
{
    pthread_mutex_lock(&conn->lock);
    if (rc == MPC_EUNREACHABLE) {
        router_metrics_engine_unreachable(conn->metrics);
        conn->unreachable_until_ms = router_now_ms() + conn->opt.unreachable_retry_ms;
        snprintf(conn->unreachable_reason, sizeof(conn->unreachable_reason), "%s", why);
    } else if (rc == MPC_OK) {
        router_metrics_engine_reached(conn->metrics);
        conn->unreachable_until_ms = 0;
    }
    pthread_mutex_unlock(&conn->lock);
}

static uint64_t
now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void
engine_conn_count_reseal(engine_conn *conn)
{
    router_metrics_reseal(conn->metrics);
}

void
engine_conn_pool_levels(engine_conn *conn, const uint64_t *counts)
{
    router_metrics_pool_levels(conn->metrics, counts);
}

mpc_client *
engine_conn_lock(engine_conn *conn)
{
    pthread_mutex_lock(&conn->call_lock);
    conn->call_started_us = now_us();
    return conn->client;
}

void
engine_conn_unlock(engine_conn *conn, enum router_op op, int rc)
{
    router_metrics_call(conn->metrics, op, rc, now_us() - conn->call_started_us);
    pthread_mutex_unlock(&conn->call_lock);
}
