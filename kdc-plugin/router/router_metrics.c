/* kdc-plugin/router/router_metrics.c - the crypto router's shared counters (router_metrics.h). */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "router_metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpc_client.h"

struct router_metrics {
    router_metrics_page *page;
    pid_t slot_owner;   /* the process that claimed `slot`: a forked child claims its own */
    int slot;           /* -1: none claimed yet, or none was free */
};

static const uint64_t latency_bounds_us[ROUTER_LATENCY_BUCKETS] = ROUTER_LATENCY_BOUNDS_US;

int
router_metrics_open(const char *path, router_metrics **out, char *why, size_t why_len)
{
    int fd = -1, ret = -1;
    struct stat st;
    void *mapped = MAP_FAILED;
    uint64_t expected = 0;

    *out = NULL;
    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
        snprintf(why, why_len, "metrics file %s: %s", path, strerror(errno));
        goto cleanup;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, why_len, "metrics file %s is not a regular file", path);
        goto cleanup;
    }
    /* Workers starting at once all grow it to the same size: the extra bytes are zeros. */
    if ((size_t)st.st_size < sizeof(router_metrics_page) &&
        ftruncate(fd, (off_t)sizeof(router_metrics_page)) != 0) {
        snprintf(why, why_len, "metrics file %s: %s", path, strerror(errno));
        goto cleanup;
    }
    mapped = mmap(NULL, sizeof(router_metrics_page), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (mapped == MAP_FAILED) {
        snprintf(why, why_len, "metrics file %s: %s", path, strerror(errno));
        goto cleanup;
    }
    if (!__atomic_compare_exchange_n(&((router_metrics_page *)mapped)->magic, &expected,
                                     ROUTER_METRICS_MAGIC, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST) &&
        expected != ROUTER_METRICS_MAGIC) {
        snprintf(why, why_len, "metrics file %s holds another layout (remove it)", path);
        goto cleanup;
    }
    *out = calloc(1, sizeof(**out));
    if (*out == NULL) {
        snprintf(why, why_len, "out of memory");
        goto cleanup;
    }
    (*out)->page = mapped;
    (*out)->slot = -1;
    mapped = MAP_FAILED;
    ret = 0;

cleanup:
    if (mapped != MAP_FAILED)
        munmap(mapped, sizeof(router_metrics_page));
    if (fd >= 0)
        close(fd);
    return ret;
}

void
router_metrics_close(router_metrics *metrics)
{
    if (metrics == NULL)
        return;
    munmap(metrics->page, sizeof(router_metrics_page));
    free(metrics);
}

static enum router_result
result_of(int rc)
{
    switch (rc) {
    case MPC_OK: return ROUTER_RESULT_OK;
    case MPC_EBADTAG: return ROUTER_RESULT_BAD_TAG;
    case MPC_EABORT: return ROUTER_RESULT_ABORTED;
    case MPC_EUNREACHABLE: return ROUTER_RESULT_UNREACHABLE;
    default: return ROUTER_RESULT_ERROR;
    }
}

static void
add(uint64_t *counter, uint64_t value)
{
    __atomic_fetch_add(counter, value, __ATOMIC_RELAXED);
}

void
router_metrics_call(router_metrics *metrics, enum router_op op, int rc, uint64_t micros)
{
    size_t b;

    if (metrics == NULL || (unsigned)op >= ROUTER_OP_COUNT)
        return;
    add(&metrics->page->calls[op][result_of(rc)], 1);
    add(&metrics->page->latency_sum_us[op], micros);
    for (b = 0; b < ROUTER_LATENCY_BUCKETS; b++) {
        if (micros <= latency_bounds_us[b]) {
            add(&metrics->page->latency_buckets[op][b], 1);
            break;
        }
    }
}

void
router_metrics_failed_fast(router_metrics *metrics)
{
    if (metrics != NULL)
        add(&metrics->page->failed_fast, 1);
}

void
router_metrics_engine_unreachable(router_metrics *metrics)
{
    uint64_t reached = 0;

    if (metrics != NULL &&
        __atomic_compare_exchange_n(&metrics->page->engine_unreachable, &reached, 1, 0,
                                    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        add(&metrics->page->unreachable_periods, 1);
}

void
router_metrics_engine_reached(router_metrics *metrics)
{
    /* Read first: a store on every call would bounce the line between the workers. */
    if (metrics != NULL && __atomic_load_n(&metrics->page->engine_unreachable, __ATOMIC_RELAXED) != 0)
        __atomic_store_n(&metrics->page->engine_unreachable, 0, __ATOMIC_RELAXED);
}

void
router_metrics_reseal(router_metrics *metrics)
{
    if (metrics != NULL)
        add(&metrics->page->reseals, 1);
}

/* This process's worker slot, claimed with a compare-and-swap: its own, else a free one, else
 * one whose process is gone. -1 when every slot belongs to a live process. */
static int
claim_slot(router_metrics *metrics)
{
    const uint64_t me = (uint64_t)getpid();
    uint64_t seen;
    int i, pass;

    if (metrics->slot >= 0 && metrics->slot_owner == getpid())
        return metrics->slot;
    metrics->slot = -1;
    for (pass = 0; pass < 3 && metrics->slot < 0; pass++) {
        for (i = 0; i < ROUTER_METRICS_WORKERS; i++) {
            seen = __atomic_load_n(&metrics->page->workers[i].pid, __ATOMIC_ACQUIRE);
            if (pass == 0 && seen != me)
                continue;
            if (pass == 1 && seen != 0)
                continue;
            if (pass == 2 && (seen == 0 || kill((pid_t)seen, 0) == 0 || errno != ESRCH))
                continue;
            if (seen == me || __atomic_compare_exchange_n(&metrics->page->workers[i].pid, &seen, me, 0,
                                                          __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                metrics->slot = i;
                break;
            }
        }
    }
    metrics->slot_owner = getpid();
    return metrics->slot;
}

void
router_metrics_pool_levels(router_metrics *metrics, const uint64_t *counts)
{
    int slot, k;

    if (metrics == NULL || (slot = claim_slot(metrics)) < 0)
        return;
    for (k = 0; k < ROUTER_POOL_COUNT; k++)
        __atomic_store_n(&metrics->page->workers[slot].pooled[k], counts[k], __ATOMIC_RELAXED);
}
