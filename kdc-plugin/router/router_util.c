/* kdc-plugin/router/router_util.c - reasons, overlaps and wiping (router_util.h). */

#include "router_util.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <openssl/crypto.h>

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

int
router_overlaps(const void *a, size_t alen, const void *b, size_t blen)
{
    const uint8_t *pa = a, *pb = b;

    return alen != 0 && blen != 0 && pa < pb + blen && pb < pa + alen;
}

void
router_wipe_free(void *p, size_t len)
{
    if (p == NULL)
        return;
    OPENSSL_cleanse(p, len);
    free(p);
}

uint64_t
router_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}
