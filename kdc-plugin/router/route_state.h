/* kdc-plugin/router/route_state.h - the crypto router's per-process state: its
 * configuration, the handle key, and the engine (connection, nonce supply and the PAC
 * checksum made ahead).
 *
 * Loaded on the first handle a process sees, once per process: each krb5kdc -w worker loads
 * its own after fork (a pid check, and pthread_atfork around the lock) and opens its own
 * engine client; an engine inherited across fork is abandoned untouched. A missing or
 * invalid configuration is logged once per process and makes every handle fail closed;
 * ordinary keys never need it. At exit, in the process whose engine it is, the engine's
 * background thread is stopped before the engine client library is torn down.
 *
 * Version boundary: internal to mpc_crypto_router.so.
 */
#ifndef MPC_ROUTER_ROUTE_STATE_H
#define MPC_ROUTER_ROUTE_STATE_H

#include <stddef.h>
#include <stdint.h>

#include <krb5/krb5.h>

#include "checksum_chain.h"
#include "engine_conn.h"
#include "handle.h"
#include "nonces/supply.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The engine of this process, borrowed for one call. */
typedef struct route_engine {
    engine_conn *conn;
    nonce_supply *nonces;
    checksum_chain *chain;
} route_engine;

/* Once per process image, before the first fork that matters: makes a forked child never
 * inherit the state's lock held. */
void route_state_init(void);

/* Verifies the handle candidate kb under this process's handle key (loading the state on the
 * first call in the process): 0 with *id and *engine set, or -1 with why saying why (the
 * configuration unusable, or the handle forged, tampered or of another version). */
int route_state_verify(const krb5_keyblock *kb, mpc_kdb_key_id *id, route_engine *engine,
                       char *why, size_t why_len);

/* Writes the combined handle of combined (kdb/handle.h) under this process's handle key:
 * 0, or -1 when there is no usable configuration or the encoding failed. */
int route_state_encode_combined(const mpc_kdb_key_id *combined,
                                uint8_t out[MPC_KDB_COMBINED_HANDLE_LEN]);

#ifdef __cplusplus
}
#endif

#endif /* MPC_ROUTER_ROUTE_STATE_H */
