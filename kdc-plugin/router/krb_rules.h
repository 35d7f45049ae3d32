/* kdc-plugin/router/krb_rules.h - what the crypto router accepts for a protected user or
 * service key of a standard enctype, before any engine call.
 *
 * The engine holds, for a key of a Kerberos row of the key-algorithm table
 * (mpc-engine/keys/key_algorithms.h: enctypes 17, aes128-cts-hmac-sha1-96; 18,
 * aes256-cts-hmac-sha1-96; 19, aes128-cts-hmac-sha256-128; 20, aes256-cts-hmac-sha384-192),
 * the derived keys of the usages krb5kdc 1.20.1 uses with such a key (mpc_key_usages: 1
 * preauth decrypt, 2 ticket encrypt, 3 AS-REP encrypt, 17 PAC checksum, 56
 * PA-REQ-ENC-PA-REP checksum) and its PRF key (RFC 8009: the key's HMAC state, used only
 * inside KRB-FX-CF2 jobs), never the key itself. These rules say which calls that is, and
 * the lengths and types libk5crypto would use, all read from the table's rows: a 16-byte
 * confounder everywhere; RFC 3962: an HMAC-SHA1-96 of 12 bytes, checksum types 15 and 16;
 * RFC 8009: HMAC-SHA256-128 (16 bytes) and HMAC-SHA384-192 (24 bytes), checksum types 19 and
 * 20.
 *
 * Pure functions: no allocation, no engine, no krb5 library calls (krb5.h for its types
 * and constants only), no global state. krb_jobs.c applies them;
 * tests/unit/kdc-plugin/router_krb_rules_test.cpp checks them against libk5crypto.
 *
 * Version boundary: internal to mpc_crypto_router.so and its unit tests.
 */
#ifndef MPC_ROUTER_KRB_RULES_H
#define MPC_ROUTER_KRB_RULES_H

#include <stddef.h>
#include <stdint.h>

#include <krb5/krb5.h>

#include "keys/key_algorithms.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ROUTER_KRB_CONFOUNDER_LEN MPC_KEY_CONFOUNDER_BYTES
/* The longest MAC of a served enctype (enctype 20's). */
#define ROUTER_KRB_MAX_MAC_LEN MPC_KEY_MAX_MAC_BYTES
/* Longest data of one engine call (mpc_client.h MPC_KRB_MAX_DATA_BYTES): confounder +
 * plaintext for an encryption, the whole ciphertext for a decryption, the message for a
 * checksum. */
#define ROUTER_KRB_MAX_DATA 4096

/* The engine's key algorithm for a handle's enctype (the id of its row: 4 for 17, 5 for 18,
 * 6 for 19, 7 for 20), 0 for every other enctype (not served). */
int router_krb_algorithm(krb5_enctype enctype);

/* The RFC 3962 / RFC 8009 name of a served enctype ("aes128-cts-hmac-sha1-96"), "unknown"
 * otherwise. */
const char *router_krb_enctype_name(krb5_enctype enctype);

/* The enctype's mandatory checksum type: 15 (hmac-sha1-96-aes128) for 17, 16
 * (hmac-sha1-96-aes256) for 18, 19 (hmac-sha256-128-aes128) for 19, 20
 * (hmac-sha384-192-aes256) for 20, 0 for any other enctype. */
krb5_cksumtype router_krb_cksumtype(krb5_enctype enctype);

/* The MAC length of a served enctype's encryptions and checksums (12, 12, 16, 24); 0 for
 * any other enctype. */
size_t router_krb_mac_len(krb5_enctype enctype);

/* True for the usages whose derived keys the engine holds (mpc_key_usages of the key table). */
int router_krb_usage_served(krb5_keyusage usage);

/* Those usages for a message, "1, 2, 3, 17 and 56", into buf (NUL-terminated, truncated to
 * len). */
void router_krb_usage_names(char *buf, size_t len);

/* The served enctypes for a message, "aes128-cts-hmac-sha1-96 (17), ... and
 * aes256-cts-hmac-sha384-192 (20)", into buf (NUL-terminated, truncated to len). */
void router_krb_served_names(char *buf, size_t len);

/* The checksum type a call with requested (0: the enctype's mandatory type) computes
 * under a key of enctype into *resolved: 0, or KRB5_BAD_ENCTYPE (libk5crypto's answer
 * for a checksum type that does not go with the key) with *resolved 0. */
krb5_error_code router_krb_resolve_cksumtype(krb5_enctype enctype, krb5_cksumtype requested,
                                             krb5_cksumtype *resolved);

/* The ciphertext length of a plaintext of plain_len bytes under a served enctype
 * (confounder + plaintext + MAC, what krb5_c_encrypt_length answers) into *total: 0, or
 * KRB5_BAD_MSIZE when confounder and plaintext exceed ROUTER_KRB_MAX_DATA, KRB5_BAD_ENCTYPE
 * for an enctype not served (*total 0). */
krb5_error_code router_krb_encrypt_length(krb5_enctype enctype, size_t plain_len, size_t *total);

/* The plaintext length of a ciphertext of cipher_len bytes under a served enctype into
 * *plain_len: 0, or KRB5_BAD_MSIZE when it is shorter than confounder and MAC (as
 * libk5crypto) or longer than ROUTER_KRB_MAX_DATA, KRB5_BAD_ENCTYPE for an enctype not
 * served (*plain_len 0). */
krb5_error_code router_krb_plain_length(krb5_enctype enctype, size_t cipher_len,
                                        size_t *plain_len);

/* True for the iov buffers a checksum covers: HEADER, DATA, PADDING and SIGN_ONLY (what
 * libk5crypto's HMAC reads, in iov order). */
int router_krb_iov_signed(const krb5_crypto_iov *iov);

/* Total length of the signed buffers of data[0..num_data) (SIZE_MAX if it overflows). */
size_t router_krb_signed_length(const krb5_crypto_iov *data, size_t num_data);

/* Copies the signed buffers of data[0..num_data), in order, to out (caller-owned, at
 * least router_krb_signed_length() bytes; may be NULL when that is 0). */
void router_krb_gather_signed(const krb5_crypto_iov *data, size_t num_data, uint8_t *out);

/* The first CHECKSUM buffer of data[0..num_data), or NULL. */
krb5_crypto_iov *router_krb_checksum_iov(const krb5_crypto_iov *data, size_t num_data);

#ifdef __cplusplus
}
#endif

#endif /* MPC_ROUTER_KRB_RULES_H */
