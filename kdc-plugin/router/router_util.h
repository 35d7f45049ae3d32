/* kdc-plugin/router/router_util.h - small helpers the engine side of the crypto router shares:
 * reasons for failures, overlapping buffers, wiping secrets, the monotonic clock.
 *
 * Version boundary: internal to mpc_crypto_router.so.
 */
#ifndef MPC_ROUTER_UTIL_H
#define MPC_ROUTER_UTIL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Formats a NUL-terminated English reason into why[0..why_len) (truncated); nothing when why
 * is NULL or why_len 0. */
void router_set_why(char *why, size_t why_len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Whether the buffers [a, a + alen) and [b, b + blen) share a byte. */
int router_overlaps(const void *a, size_t alen, const void *b, size_t blen);

/* Wipes a secret buffer of len bytes and frees it; NULL is ignored. */
void router_wipe_free(void *p, size_t len);

/* Milliseconds of CLOCK_MONOTONIC. */
uint64_t router_now_ms(void);

#ifdef __cplusplus
}
#endif

#endif /* MPC_ROUTER_UTIL_H */
