/* mpc-engine/keys/protected_key.h - how a protected Kerberos key is named in the engine and
 * marked in the KDC's database: what the KDB module, the crypto router and `mpcctl kdc` must
 * agree on, in one place that none of them owns.
 *
 * Mark: a principal is protected when its string attribute MPC_PROTECTED_KEY_ATTRIBUTE is
 *   present and its value is not one of 0, false, no, off (any case), the spellings of "off"
 *   that kadmin's setstr users reach for (mpc_protected_key_is_marked).
 *
 * Engine key name of a principal: "kdc/" + 32 lowercase hex digits of its name hash,
 *   SHA-256("mpc-kdc principal v1" || 0x00 || name)[0..16), name = krb5_unparse_name() of
 *   the canonical principal. The same hash names the key inside a key handle
 *   (kdc-plugin/kdb/handle.h), so the handle and the engine key always meet. Version = kvno.
 *
 * krbtgt (ticket) key: an aes256-gcm engine key (key_algorithms.h). In the database each kvno
 *   keeps one key_data of enctype MPC_KEY_GCM_ENCTYPE holding, encrypted under the master key
 *   as any key, the MPC_PROTECTED_KEY_MARKER_LEN bytes of MPC_PROTECTED_KEY_MARKER. When an
 *   existing realm key is protected, the ticket key is derived from it
 *   (mpc_protected_key_ticket_key) so that nothing of the old key stays usable as it was.
 *
 * Users' and services' keys (the Kerberos rows of key_algorithms.h): each key_data keeps its
 *   enctype, kvno and salt (the KDC still sends the salt in ETYPE-INFO2) and holds, encrypted
 *   under the master key, the MPC_PROTECTED_KEY_USER_MARKER_LEN bytes of
 *   MPC_PROTECTED_KEY_USER_MARKER in place of the key: public text, never used as a key,
 *   because the KDB module hands krb5kdc a handle instead.
 *
 * The markers and labels end in a format number: a new format gets new text, so an old marker
 * is never mistaken for a new one.
 *
 * Version boundary: everything below is format version 1 of protected keys.
 */
#ifndef MPC_PROTECTED_KEY_H
#define MPC_PROTECTED_KEY_H

#include <stddef.h>
#include <stdint.h>

#include "keys/key_algorithms.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The names krb5 tools print for the KDC-private enctype and checksum type. */
#define MPC_PROTECTED_KEY_ENCTYPE_NAME "mpc-aes256-gcm"
#define MPC_PROTECTED_KEY_CKSUMTYPE_NAME "mpc-gmac-aes256"

#define MPC_PROTECTED_KEY_ATTRIBUTE "mpc-protected"

#define MPC_PROTECTED_KEY_MARKER "mpc-kdc engine key, format 1\0\0\0"
#define MPC_PROTECTED_KEY_MARKER_LEN 32
#define MPC_PROTECTED_KEY_USER_MARKER "mpc-kdc user key in engine, v1\0"
#define MPC_PROTECTED_KEY_USER_MARKER_LEN 32

#define MPC_PROTECTED_KEY_NAME_HASH_LEN 16
/* "kdc/" + 32 hex digits + NUL */
#define MPC_PROTECTED_KEY_ENGINE_NAME_LEN 37
#define MPC_PROTECTED_KEY_TICKET_KEY_LEN 32

/* Whether the value of a principal's MPC_PROTECTED_KEY_ATTRIBUTE marks it protected: 1 or 0.
 * value is NULL when the attribute is absent. */
int mpc_protected_key_is_marked(const char *value);

/* The name hash of a principal's canonical name (name may be NULL when len is 0). Returns 0,
 * or -1 if OpenSSL failed or name is NULL with a length (out zeroed). */
int mpc_protected_key_name_hash(const char *name, size_t len, uint8_t out[MPC_PROTECTED_KEY_NAME_HASH_LEN]);

/* The engine key name of a name hash into out, NUL-terminated. */
void mpc_protected_key_engine_name(const uint8_t hash[MPC_PROTECTED_KEY_NAME_HASH_LEN],
                                   char out[MPC_PROTECTED_KEY_ENGINE_NAME_LEN]);

/* The ticket key enrolled for an existing key of the realm (the AES-256 krbtgt key, read once
 * when it is protected): HMAC-SHA256(existing key, "mpc-kdc aes256-gcm ticket key v1").
 * Returns 0, or -1 if existing is empty or OpenSSL failed (out zeroed). The caller wipes out. */
int mpc_protected_key_ticket_key(const uint8_t *existing, size_t existing_len,
                                 uint8_t out[MPC_PROTECTED_KEY_TICKET_KEY_LEN]);

#ifdef __cplusplus
}
#endif

#endif /* MPC_PROTECTED_KEY_H */
