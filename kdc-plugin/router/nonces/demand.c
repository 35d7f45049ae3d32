/* kdc-plugin/router/nonces/demand.c - pool levels that follow demand (nonces/demand.h). */

#include "nonces/demand.h"

void
nonce_demand_note(nonce_demand *demand, uint64_t now)
{
    const uint64_t elapsed = now - demand->window_start_ms;

    if (elapsed >= NONCE_DEMAND_WINDOW_MS) {
        /* A window that ended more than a window ago says nothing of the present. */
        demand->last_window = elapsed < 2u * NONCE_DEMAND_WINDOW_MS ? demand->taken : 0;
        demand->taken = 0;
        demand->window_start_ms = now;
    }
    demand->taken++;
}

/* The open window's count at the rate it has run so far, once it has run a tenth of a window:
 * a storm's first second then refills at the storm's rate rather than at pool_high's, in
 * batches large enough that their fixed costs no longer dominate. */
static uint64_t
projected_window(const nonce_demand *demand, uint64_t now)
{
    const uint64_t elapsed = now - demand->window_start_ms;

    if (elapsed < NONCE_DEMAND_WINDOW_MS / 10 || elapsed >= 2u * NONCE_DEMAND_WINDOW_MS)
        return 0;
    return (uint64_t)demand->taken * NONCE_DEMAND_WINDOW_MS / elapsed;
}

size_t
nonce_demand_target(const nonce_demand *demand, uint64_t now, size_t pool_high, size_t capacity)
{
    uint64_t target = pool_high;
    const uint64_t projected = projected_window(demand, now);

    if (now - demand->window_start_ms < 2u * NONCE_DEMAND_WINDOW_MS && demand->last_window > target)
        target = demand->last_window;
    if (projected > target)
        target = projected;
    return target < capacity ? (size_t)target : capacity;
}

size_t
nonce_demand_floor(const nonce_demand *demand, uint64_t now, size_t pool_low, size_t pool_high,
                   size_t capacity)
{
    const size_t target = nonce_demand_target(demand, now, pool_high, capacity);

    if (target <= pool_high || target / 4 <= pool_low)
        return pool_low;
    return target / 4;
}
