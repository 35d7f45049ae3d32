/* kdc-plugin/router/checksum_chain.h - a PAC's KDC checksum, made ahead with its server
 * checksum, until krb5kdc asks for it and until it is checked.
 *
 * krb5_pac_sign makes a PAC's server checksum, then its KDC (privsvr) checksum over the
 * server checksum's bytes, and krb5kdc then encrypts the ticket that carries both. In a TGT
 * all three are under the protected krbtgt key: three engine round trips in a row. The
 * router asks for the first two in one (mpc_client_gcm_tag_chained) and keeps the second
 * here. That one was made from the servers' additive shares and is unchecked, so once krb5kdc
 * has it, the next seal checks it in its own round trip (mpc_client_gcm_tag_checked), and a
 * failed check fails that seal: the ticket carrying it never leaves the KDC.
 *
 * One slot per process: krb5kdc signs and encrypts one ticket at a time in a worker. Pure
 * state, no engine and no lock: gcm_jobs.c calls it under the engine connection's order.
 *
 * Version boundary: internal to mpc_crypto_router.so.
 */
#ifndef MPC_ROUTER_CHECKSUM_CHAIN_H
#define MPC_ROUTER_CHECKSUM_CHAIN_H

#include <stdint.h>

#include <krb5/krb5.h>

#include "handle.h"
#include "protected_key.h"

#ifdef __cplusplus
extern "C" {
#endif

enum checksum_chain_state {
    CHAIN_EMPTY = 0,
    CHAIN_HELD,    /* made ahead, not yet asked for: it is in nothing */
    CHAIN_SERVED   /* handed to krb5kdc: to be checked before the next seal's ticket leaves */
};

typedef struct checksum_chain {
    enum checksum_chain_state state;
    uint64_t paused_until_ms; /* the engine did not chain (two servers serving: 10 minutes; a
                                 failure: 30 s): checksums are made one at a time until then */
    mpc_kdb_key_id key;
    uint8_t server_checksum[MPC_KDC_CHECKSUM_LEN];  /* N || T */
    uint8_t kdc_checksum[MPC_KDC_CHECKSUM_LEN];     /* N' || T', over server_checksum */
} checksum_chain;

/* Whether a new pair may be made ahead at now_ms (monotonic): chaining is not paused, and the
 * slot is not holding one krb5kdc already has. */
int checksum_chain_can_hold(const checksum_chain *chain, uint64_t now_ms);

/* Keeps a pair just made under key (state HELD). */
void checksum_chain_hold(checksum_chain *chain, const mpc_kdb_key_id *key,
                         const uint8_t server_checksum[MPC_KDC_CHECKSUM_LEN],
                         const uint8_t kdc_checksum[MPC_KDC_CHECKSUM_LEN]);

/* When krb5kdc asks for the checksum, under key and usage, of exactly the held server
 * checksum: writes the KDC checksum to out, marks it SERVED and returns 1; else 0. */
int checksum_chain_serve(checksum_chain *chain, const mpc_kdb_key_id *key, krb5_keyusage usage,
                         const uint8_t *data, size_t len, uint8_t out[MPC_KDC_CHECKSUM_LEN]);

/* Whether a served KDC checksum awaits its check under key (the same key and kvno). */
int checksum_chain_awaits_check(const checksum_chain *chain, const mpc_kdb_key_id *key);

/* Empties the slot (checked, failed, or never served), wiping what it held; a pause stays. */
void checksum_chain_clear(checksum_chain *chain);

#ifdef __cplusplus
}
#endif

#endif /* MPC_ROUTER_CHECKSUM_CHAIN_H */
