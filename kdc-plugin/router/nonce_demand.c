/* kdc-plugin/router/nonce_demand.c - pool levels that follow demand (nonce_demand.h). */

#include "nonce_demand.h"

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

size_t
nonce_demand_target(const nonce_demand *demand, uint64_t now, size_t pool_high, size_t capacity)
{
    size_t target = pool_high;

    if (now - demand->window_start_ms < 2u * NONCE_DEMAND_WINDOW_MS && demand->last_window > target)
        target = demand->last_window;
    return target < capacity ? target : capacity;
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
