/* kdc-plugin/router/gcm_seal.h - one GCM seal and one open under the protected krbtgt key,
 * shared by the tickets (gcm_jobs.c) and the checksums (gcm_checksums.c).
 *
 * Version boundary: internal to mpc_crypto_router.so.
 */
#ifndef MPC_ROUTER_GCM_SEAL_H
#define MPC_ROUTER_GCM_SEAL_H

#include <stddef.h>
#include <stdint.h>

#include <krb5/krb5.h>

#include "checksum_chain.h"
#include "engine_conn.h"
#include "nonces/supply.h"
#include "protected_key.h"

#define AAD_HEADER_LEN 5  /* the AAD's type byte and u32be usage */

/* The checksum AAD's digest of the checksummed data: SHA-256. */
#define CHECKSUM_DIGEST_LEN 32

/* The AAD of a PAC's KDC checksum over a server checksum: 0x02 || u32be 17 || N || T. */
#define CHAINED_AAD_LEN (AAD_HEADER_LEN + MPC_KDC_CHECKSUM_LEN)

/* How long PAC checksums are made one at a time after the engine refused to chain them (two
 * servers serving) or failed to. */
#define CHAIN_REFUSED_PAUSE_MS 600000
#define CHAIN_FAILED_PAUSE_MS 30000

/* The AAD's first bytes: its type (MPC_KDC_AAD_*) and the key usage, big-endian. */
void gcm_aad_header(uint8_t type, krb5_keyusage usage, uint8_t out[AAD_HEADER_LEN]);

/* Seals under a fresh nonce, writing N to out_nonce and T to out_tag:
 *   - NONCE_CHECKSUM: a GMAC over aad (len is 0, text and out_text unused);
 *   - NONCE_TICKET: text under the nonce's ticket key into out_text, tagged with AAD =
 *     aad (the 5-byte header) || C.
 * On failure out_text holds zeros. */
krb5_error_code gcm_seal(engine_conn *conn, nonce_supply *nonces, checksum_chain *chain, const mpc_kdb_key_id *key,
                     enum nonce_kind kind, const uint8_t *aad, size_t aad_len, const uint8_t *text, size_t len,
                     uint8_t out_nonce[MPC_KDC_NONCE_LEN], uint8_t *out_text, uint8_t out_tag[MPC_KDC_TAG_LEN],
                     char *why, size_t why_len);

/* Checks a GMAC over aad (a checksum). A wrong tag gives KRB5KRB_AP_ERR_BAD_INTEGRITY. */
krb5_error_code gcm_open_checksum(engine_conn *conn, const mpc_kdb_key_id *key, const uint8_t *aad, size_t aad_len,
                              const uint8_t nonce[MPC_KDC_NONCE_LEN], const uint8_t tag[MPC_KDC_TAG_LEN],
                              char *why, size_t why_len);

#endif
