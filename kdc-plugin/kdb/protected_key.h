/* kdc-plugin/kdb/protected_key.h - what a protected key is (the krbtgt key, users' keys), for
 * the KDB module, the crypto router and enrollment (mpcctl kdc).
 *
 * A protected key is stored in the KDB as a marker (never as key bytes) and lives in the
 * engine as an AES-256-GCM key (mpc_client.h, MPC_AES256_GCM). Tickets and checksums made
 * with it use a KDC-private enctype and checksum type (negative numbers are reserved for
 * local use by RFC 3961's registry), which only this KDC reads:
 *
 *   encryption: nonce N (12) || C (same length as the plaintext) || tag (16)
 *               ticket key = the GCM keystream of N's first MPC_KDC_TICKET_KEY_LEN bytes
 *               C = AES-256-CTR under the ticket key, counter block 0
 *               tag = the GCM tag of 32 zero bytes of ciphertext under N,
 *               AAD = MPC_KDC_AAD_TICKET_KEY || u32 big-endian key usage || C
 *   checksum:   nonce (12) || tag (16), a GMAC with an empty text
 *               AAD = MPC_KDC_AAD_CHECKSUM || u32 big-endian key usage || the data
 *
 * The first AAD byte separates the uses of the one key; nonces are chosen by the engine
 * servers and never repeat, so no two tags share a mask. Tickets of the earlier format
 * (keystream over the whole text, AAD = MPC_KDC_AAD_KEYSTREAM || usage) are still opened.
 *
 * Engine key id: name = "kdc/" + 32 lowercase hex digits of the handle's name hash
 * (handle.h), version = kvno, algorithm MPC_AES256_GCM.
 *
 * Marker: each key_data of a protected principal has enctype MPC_KDC_ENCTYPE_AES256_GCM
 * and, encrypted under the master key as any key, the MPC_KDC_MARKER_LEN bytes of
 * MPC_KDC_MARKER. Admin tools (kadmin, kdb5_util dump/load, master key rotation) carry it
 * like any key; the KDB module hands krb5kdc a handle in its place.
 *
 * Version boundary: everything below exists since protected-key format version 1.
 */
#ifndef MPC_KDC_PROTECTED_KEY_H
#define MPC_KDC_PROTECTED_KEY_H

#include <stddef.h>
#include <stdint.h>

#include "handle.h"
#include "keys/key_algorithms.h"
#include "keys/protected_key.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The private enctype and checksum type: the key-algorithm table's (the aes256-gcm row). The
 * names are how krb5kdc's log and kadmin spell them (libk5crypto knows neither). */
#define MPC_KDC_ENCTYPE_AES256_GCM MPC_KEY_GCM_ENCTYPE
#define MPC_KDC_CKSUMTYPE_GMAC MPC_KEY_GCM_CKSUMTYPE
#define MPC_KDC_ENCTYPE_NAME MPC_PROTECTED_KEY_ENCTYPE_NAME
#define MPC_KDC_CKSUMTYPE_NAME MPC_PROTECTED_KEY_CKSUMTYPE_NAME

/* Lengths of the format. The tag is the aes256-gcm row's mac_bytes
 * (tests/unit/kdc-plugin/protected_key_test.cpp checks that they agree). */
#define MPC_KDC_NONCE_LEN 12
#define MPC_KDC_TAG_LEN 16
#define MPC_KDC_ENCRYPT_OVERHEAD (MPC_KDC_NONCE_LEN + MPC_KDC_TAG_LEN)
#define MPC_KDC_CHECKSUM_LEN (MPC_KDC_NONCE_LEN + MPC_KDC_TAG_LEN)

/* The first AAD byte: a ticket sealed under its own ticket key, a checksum, and a ticket of
 * the earlier format, sealed with keystream over its whole text (docs/ticket-format.md). */
#define MPC_KDC_AAD_TICKET_KEY 0x03
#define MPC_KDC_AAD_CHECKSUM 0x02
#define MPC_KDC_AAD_KEYSTREAM 0x01

/* A ticket's own AES-256 key: the keystream of its nonce's first two counter blocks. */
#define MPC_KDC_TICKET_KEY_LEN 32
#define MPC_KDC_TICKET_KEY_BLOCKS (MPC_KDC_TICKET_KEY_LEN / 16)

#define MPC_KDC_MARKER MPC_PROTECTED_KEY_MARKER
#define MPC_KDC_MARKER_LEN MPC_PROTECTED_KEY_MARKER_LEN

/* Users' keys: keys of the enctypes of the Kerberos rows of the key-algorithm table (17, 18,
 * 19, 20). The engine holds the derived keys of the protocol key (the row's algorithm) under
 * the same name as above, version = kvno. Each key_data keeps its enctype, kvno and salt (the
 * KDC still sends the salt in ETYPE-INFO2) and holds, encrypted under the master key as any
 * key, the MPC_KDC_USER_MARKER_LEN bytes of MPC_KDC_USER_MARKER instead of the key: public
 * text, never used as a key, since the KDB module hands krb5kdc a handle in its place (and
 * the module enrols on store: kdc-plugin/kdb/user_enroll.h). */
#define MPC_KDC_USER_MARKER MPC_PROTECTED_KEY_USER_MARKER
#define MPC_KDC_USER_MARKER_LEN MPC_PROTECTED_KEY_USER_MARKER_LEN

/* The engine algorithm (the key-algorithm table's id, mpc_client.h's enum mpc_key_algorithm)
 * of a protected user's key of this enctype: the id of the enctype's Kerberos row, 0 for any
 * other enctype. */
static inline int
mpc_kdc_user_algorithm(int32_t enctype)
{
    const struct mpc_key_algorithm_info *row = mpc_key_algorithm_by_enctype(enctype);

    return mpc_key_is_kerberos(row) ? row->id : 0;
}
#define MPC_KDC_USER_ALGORITHM(enctype) mpc_kdc_user_algorithm(enctype)

/* "kdc/" + 32 hex digits + NUL */
#define MPC_KDC_ENGINE_KEY_NAME_LEN MPC_PROTECTED_KEY_ENGINE_NAME_LEN

/* The engine key name of a handle's key id into out (NUL-terminated). */
void mpc_kdc_engine_key_name(const mpc_kdb_key_id *id, char out[MPC_KDC_ENGINE_KEY_NAME_LEN]);

/* The ticket key K enrolled for an existing key of the realm: keys/protected_key.h's
 * mpc_protected_key_ticket_key. */
#define mpc_kdc_ticket_key_from_existing mpc_protected_key_ticket_key

#ifdef __cplusplus
}
#endif

#endif /* MPC_KDC_PROTECTED_KEY_H */
