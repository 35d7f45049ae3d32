/* kdc-plugin/router/nonces/supply.h - the prefetched nonces of the protected krbtgt key's
 * engine keys, kept supplied by a background thread.
 *
 * Nonces are chosen by the servers and prefetched ahead of time with their keystream
 * (mpc_client_gcm_prefetch), so sealing a ticket costs one tag round trip and no
 * computation between the servers. Per engine key (name, kvno; at most
 * NONCE_SUPPLY_MAX_KEYS, the least recently used gives way) and per process two pools
 * (nonces/pool.h): tickets (MPC_KDC_TICKET_KEY_BLOCKS keystream blocks per nonce, the
 * ticket key) and checksums (no keystream).
 *
 * A background thread, started on first use in the process that takes nonces and never
 * inherited across fork (it blocks all signals), keeps each pool between pool_low and
 * pool_high with its own engine client, so that a foreground tag never queues behind a bulk
 * prefetch; after a failure it backs off (1 s doubling to 30 s) and logs the first failure
 * of a run and the recovery. A key that took no nonce for pool_ttl_s (an older kvno after a
 * rotation) is no longer kept supplied. Entries older than pool_ttl_s are dropped: the
 * servers keep their half of a nonce for their own gcm_nonce_ttl_s (default 3600 s), which
 * pool_ttl_s must stay below.
 *
 * Threads and processes: calls may come from any thread. A supply belongs to the process
 * that created it; in any other, nonce_supply_destroy() only abandons it.
 *
 * Version boundary: internal to mpc_crypto_router.so.
 */
#ifndef MPC_ROUTER_NONCES_SUPPLY_H
#define MPC_ROUTER_NONCES_SUPPLY_H

#include <stddef.h>
#include <stdint.h>

#include <krb5/krb5.h>

#include "engine_conn.h"
#include "nonces/pool.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NONCE_SUPPLY_MAX_KEYS 8

enum nonce_kind { NONCE_TICKET = 0, NONCE_CHECKSUM = 1, NONCE_KINDS = 2 };

typedef struct nonce_supply nonce_supply;

/* A supply over conn (borrowed: it must outlive the supply) with conn's pool options. On
 * success *out is a supply the caller frees with nonce_supply_destroy(); ENOMEM otherwise. */
krb5_error_code nonce_supply_create(engine_conn *conn, nonce_supply **out, char *why,
                                    size_t why_len);

/* In the process that created it: stops and joins the thread, wipes and frees the pools.
 * Elsewhere (a forked child): abandons it untouched (the pools' pages are already zero
 * there, MADV_WIPEONFORK). NULL is ignored. */
void nonce_supply_destroy(nonce_supply *supply);

/* One nonce and its keystream for a seal under (name, kvno): from the pool of `kind` when
 * from_pool is set and that pool has an entry, else prefetched now through conn's
 * foreground client. keystream has room for MPC_KDC_TICKET_KEY_BLOCKS blocks (written for
 * a ticket nonce only); the caller wipes it. *pooled says whether it came from a pool.
 * Returns 0, or KRB5_CRYPTO_INTERNAL with why set (the engine down, unreachable or
 * failing). */
krb5_error_code nonce_supply_take(nonce_supply *supply, const char *name, uint32_t kvno,
                                  enum nonce_kind kind, int from_pool,
                                  uint8_t nonce[NONCE_POOL_NONCE_LEN], uint8_t *keystream,
                                  int *pooled, char *why, size_t why_len);

/* Forgets the pool of `kind` of (name, kvno): the servers no longer know its nonces (a
 * restart). Logged. */
void nonce_supply_drop(nonce_supply *supply, const char *name, uint32_t kvno,
                       enum nonce_kind kind);

#ifdef __cplusplus
}
#endif

#endif /* MPC_ROUTER_NONCES_SUPPLY_H */
