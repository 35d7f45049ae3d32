/* kdc-plugin/router/nonces/demand.h - how many nonces a pool should hold: between pool_low and
 * pool_high while few seals come, and under load up to what the last second's seals took (or,
 * from a tenth of a second into a storm, its rate so far).
 *
 * A refill is a batch in the engine, and much of a batch's cost does not grow with its size:
 * a round trip per AND layer, the AND check's rounds. Pools kept at pool_high make a refill
 * of a few dozen nonces pay it again and again under load; pools that follow demand make a
 * refill a second's nonces. Idle, the pools stay small as the defaults intend: nothing is
 * prefetched beyond what is being used (a server's restart or a switch to two-party service
 * makes every prefetched nonce worthless).
 *
 * Pure: no locking, no clock (the caller passes the time in milliseconds).
 *
 * Version boundary: internal to mpc_crypto_router.so and its unit tests.
 */
#ifndef MPC_ROUTER_NONCES_DEMAND_H
#define MPC_ROUTER_NONCES_DEMAND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NONCE_DEMAND_WINDOW_MS 1000

/* Nonces taken in the current window, and in the last whole one. Zero-initialised, its
 * window starts at time 0. */
typedef struct {
    uint64_t window_start_ms;
    uint32_t taken;
    uint32_t last_window;
} nonce_demand;

/* Counts one nonce taken (or asked for) at now. */
void nonce_demand_note(nonce_demand *demand, uint64_t now);

/* The level a refill fills a pool to: pool_high, or the last window's count when that is
 * more and no whole window has passed since without a nonce taken, or the open window's count
 * at its rate so far (once a tenth of a window has passed) when that is more; at most
 * capacity. */
size_t nonce_demand_target(const nonce_demand *demand, uint64_t now, size_t pool_high,
                           size_t capacity);

/* The level below which a pool is refilled: pool_low, or a quarter of the target when demand
 * raised it and that is more, so that a refill of a second's nonces starts well before the
 * pool runs dry. */
size_t nonce_demand_floor(const nonce_demand *demand, uint64_t now, size_t pool_low,
                          size_t pool_high, size_t capacity);

#ifdef __cplusplus
}
#endif

#endif
