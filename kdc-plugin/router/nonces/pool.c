/* kdc-plugin/router/nonces/pool.c - bounded FIFO of prefetched GCM nonces and keystream.
 *
 * Interface and rationale: nonces/pool.h. Layout: one anonymous mapping holding
 * `capacity` slots of slot_size bytes, used as a ring (head = oldest entry). A slot is
 * stamp (8 bytes) || nonce (12) || keystream (keystream_len), rounded up to 16 bytes. A
 * slot that holds no entry is all zeros: every path that frees a slot wipes it.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "nonces/pool.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SLOT_STAMP 0
#define SLOT_NONCE 8
#define SLOT_KEYSTREAM (SLOT_NONCE + NONCE_POOL_NONCE_LEN)

struct nonce_pool {
    pid_t owner;          /* the creating process; take/put do nothing elsewhere */
    size_t capacity;
    size_t keystream_len;
    size_t slot_size;
    size_t head;          /* slot of the oldest entry */
    size_t count;
    uint8_t *arena;       /* capacity * slot_size bytes, page-rounded mapping */
    size_t arena_len;
};

static uint8_t *
slot_at(const nonce_pool *pool, size_t index)
{
    return pool->arena + ((pool->head + index) % pool->capacity) * pool->slot_size;
}

static uint64_t
slot_stamp(const uint8_t *slot)
{
    uint64_t stamp;

    memcpy(&stamp, slot + SLOT_STAMP, sizeof(stamp));
    return stamp;
}

static int
owned(const nonce_pool *pool)
{
    return pool != NULL && pool->owner == getpid();
}

/* Wipes the oldest entry's slot and advances the ring past it. */
static void
drop_oldest(nonce_pool *pool)
{
    explicit_bzero(slot_at(pool, 0), pool->slot_size);
    pool->head = (pool->head + 1) % pool->capacity;
    pool->count--;
    if (pool->count == 0)
        pool->head = 0;
}

nonce_pool *
nonce_pool_create(size_t capacity, size_t keystream_len)
{
    nonce_pool *pool = NULL;
    long page = sysconf(_SC_PAGESIZE);
    size_t slot_size, bytes;
    void *map;

    if (capacity == 0 || capacity > NONCE_POOL_MAX_CAPACITY ||
        keystream_len > NONCE_POOL_MAX_KEYSTREAM || page <= 0)
        return NULL;
    slot_size = (SLOT_KEYSTREAM + keystream_len + 15) & ~(size_t)15;
    bytes = capacity * slot_size;
    bytes = (bytes + (size_t)page - 1) & ~((size_t)page - 1);
    pool = calloc(1, sizeof(*pool));
    if (pool == NULL)
        return NULL;
    map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) {
        free(pool);
        return NULL;
    }
    /* Hygiene, not correctness: a kernel without these advices still gets a working
     * pool (fork safety also comes from the owner check). */
    (void)madvise(map, bytes, MADV_DONTDUMP);
    (void)madvise(map, bytes, MADV_WIPEONFORK);
    /* Keeps keystream out of swap where RLIMIT_MEMLOCK allows; best effort. */
    (void)mlock(map, bytes);
    pool->owner = getpid();
    pool->capacity = capacity;
    pool->keystream_len = keystream_len;
    pool->slot_size = slot_size;
    pool->arena = map;
    pool->arena_len = bytes;
    return pool;
}

void
nonce_pool_destroy(nonce_pool *pool)
{
    if (pool == NULL)
        return;
    if (owned(pool)) {
        explicit_bzero(pool->arena, pool->arena_len);
        (void)munlock(pool->arena, pool->arena_len);
    }
    (void)munmap(pool->arena, pool->arena_len);
    explicit_bzero(pool, sizeof(*pool));
    free(pool);
}

size_t
nonce_pool_count(const nonce_pool *pool)
{
    return owned(pool) ? pool->count : 0;
}

size_t
nonce_pool_capacity(const nonce_pool *pool)
{
    return pool != NULL ? pool->capacity : 0;
}

size_t
nonce_pool_keystream_len(const nonce_pool *pool)
{
    return pool != NULL ? pool->keystream_len : 0;
}

size_t
nonce_pool_put(nonce_pool *pool, uint64_t stamp, const uint8_t *nonces,
               const uint8_t *keystream, size_t count)
{
    size_t stored = 0;
    uint8_t *slot;

    if (!owned(pool) || nonces == NULL || (keystream == NULL && pool->keystream_len != 0))
        return 0;
    /* Expiry drops a prefix of the ring, which needs stamps in order. */
    if (pool->count > 0 && stamp < slot_stamp(slot_at(pool, pool->count - 1)))
        return 0;
    while (stored < count && pool->count < pool->capacity) {
        slot = slot_at(pool, pool->count);
        memcpy(slot + SLOT_STAMP, &stamp, sizeof(stamp));
        memcpy(slot + SLOT_NONCE, nonces + stored * NONCE_POOL_NONCE_LEN,
               NONCE_POOL_NONCE_LEN);
        if (pool->keystream_len != 0)
            memcpy(slot + SLOT_KEYSTREAM, keystream + stored * pool->keystream_len,
                   pool->keystream_len);
        pool->count++;
        stored++;
    }
    return stored;
}

size_t
nonce_pool_expire(nonce_pool *pool, uint64_t now, uint64_t ttl)
{
    size_t dropped = 0;

    if (!owned(pool))
        return 0;
    /* Stamps never decrease from head to tail (put refuses an older stamp), so expired
     * entries are a prefix of the ring. */
    while (pool->count > 0 && slot_stamp(slot_at(pool, 0)) + ttl <= now) {
        drop_oldest(pool);
        dropped++;
    }
    return dropped;
}

int
nonce_pool_take(nonce_pool *pool, uint64_t now, uint64_t ttl,
                uint8_t nonce[NONCE_POOL_NONCE_LEN], uint8_t *keystream)
{
    const uint8_t *slot;

    if (!owned(pool) || nonce == NULL || (keystream == NULL && pool->keystream_len != 0))
        return 0;
    (void)nonce_pool_expire(pool, now, ttl);
    if (pool->count == 0)
        return 0;
    slot = slot_at(pool, 0);
    memcpy(nonce, slot + SLOT_NONCE, NONCE_POOL_NONCE_LEN);
    if (pool->keystream_len != 0)
        memcpy(keystream, slot + SLOT_KEYSTREAM, pool->keystream_len);
    drop_oldest(pool);
    return 1;
}

void
nonce_pool_clear(nonce_pool *pool)
{
    if (!owned(pool))
        return;
    explicit_bzero(pool->arena, pool->arena_len);
    pool->head = 0;
    pool->count = 0;
}

size_t
nonce_pool_nonzero_bytes(const nonce_pool *pool, int all_slots)
{
    size_t i, j, nonzero = 0;
    const uint8_t *slot;

    if (pool == NULL)
        return 0;
    for (i = 0; i < pool->capacity; i++) {
        /* Slot i of the ring holds an entry when its distance from head is < count. */
        if (!all_slots && (i + pool->capacity - pool->head) % pool->capacity < pool->count)
            continue;
        slot = pool->arena + i * pool->slot_size;
        for (j = 0; j < pool->slot_size; j++)
            nonzero += slot[j] != 0;
    }
    return nonzero;
}
