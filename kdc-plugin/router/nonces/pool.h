/* kdc-plugin/router/nonces/pool.h - a bounded FIFO of engine-chosen AES-256-GCM nonces
 * and their prefetched keystream, for one engine key and one keystream size.
 *
 * The crypto router keeps one pool per engine key for tickets (keystream for a whole
 * TGT enc-part per nonce) and one for checksums (no keystream). An entry is taken at
 * most once: taking it copies it out and wipes its slot, so a nonce's keystream can
 * never encrypt two plaintexts. Entries are stamped with the time their prefetch was
 * asked for; an entry older than the caller's TTL is dropped (wiped), because the
 * servers forget the other half of a nonce (their share of AES_K(N || 1)) after their
 * own nonce TTL.
 *
 * Memory: every slot lives in one anonymous mapping of fixed size, allocated at
 * creation and never reallocated, marked MADV_DONTDUMP (no keystream in core files)
 * and MADV_WIPEONFORK (a forked child sees zeros, never its parent's keystream). A pool
 * belongs to the process that created it: in any other process take and put do
 * nothing.
 *
 * Pure data structure: no locking (the caller serialises calls on one pool), no clock
 * (the caller passes the time, in any monotonic unit, with the TTL in the same unit),
 * no engine and no krb5 dependency.
 *
 * Version boundary: internal to mpc_crypto_router.so and its unit tests.
 */
#ifndef MPC_ROUTER_NONCES_POOL_H
#define MPC_ROUTER_NONCES_POOL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NONCE_POOL_NONCE_LEN 12
/* Largest capacity and keystream per entry accepted by nonce_pool_create. */
#define NONCE_POOL_MAX_CAPACITY 65536
#define NONCE_POOL_MAX_KEYSTREAM (4096 * 16)

typedef struct nonce_pool nonce_pool;

/* A pool of capacity (1..NONCE_POOL_MAX_CAPACITY) entries of keystream_len
 * (0..NONCE_POOL_MAX_KEYSTREAM) bytes each. Returns NULL on bad arguments or when memory
 * cannot be mapped. The caller frees it with nonce_pool_destroy(). */
nonce_pool *nonce_pool_create(size_t capacity, size_t keystream_len);

/* Wipes every slot and frees the pool; NULL is ignored. In a process other than the
 * creator the mapping is already zero (MADV_WIPEONFORK) and is only unmapped. */
void nonce_pool_destroy(nonce_pool *pool);

size_t nonce_pool_count(const nonce_pool *pool);
size_t nonce_pool_capacity(const nonce_pool *pool);
size_t nonce_pool_keystream_len(const nonce_pool *pool);

/* Appends up to count entries, oldest first: nonce i is nonces[12 i .. 12 i + 12), its
 * keystream keystream[i * keystream_len ..) (keystream may be NULL when keystream_len is
 * 0), all stamped `stamp`. Returns how many were stored: entries past the capacity are
 * not stored, and nothing is stored when stamp is older than the newest entry's (expiry
 * relies on stamps in order). The caller wipes its buffers in any case. */
size_t nonce_pool_put(nonce_pool *pool, uint64_t stamp, const uint8_t *nonces,
                      const uint8_t *keystream, size_t count);

/* Drops (and wipes) every entry with stamp + ttl <= now. Returns how many. */
size_t nonce_pool_expire(nonce_pool *pool, uint64_t now, uint64_t ttl);

/* Takes the oldest entry that has not expired (expired ones are dropped on the way):
 * copies its nonce to nonce and its keystream to keystream (keystream_len bytes, may be
 * NULL when keystream_len is 0), then wipes the slot. Returns 1, or 0 when there is no
 * such entry (nonce and keystream are then left untouched). The caller wipes its
 * copy of the keystream after use. */
int nonce_pool_take(nonce_pool *pool, uint64_t now, uint64_t ttl,
                    uint8_t nonce[NONCE_POOL_NONCE_LEN], uint8_t *keystream);

/* Drops (and wipes) every entry: the servers no longer know these nonces. */
void nonce_pool_clear(nonce_pool *pool);

/* For tests and self-checks: the number of nonzero bytes in the slots that hold no
 * entry (all_slots = 0), or in every slot (all_slots = 1). */
size_t nonce_pool_nonzero_bytes(const nonce_pool *pool, int all_slots);

#ifdef __cplusplus
}
#endif

#endif /* MPC_ROUTER_NONCES_POOL_H */
