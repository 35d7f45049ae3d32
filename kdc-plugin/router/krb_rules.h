/* kdc-plugin/router/krb_rules.h - what the crypto router accepts for a protected user or
 * service key of a standard enctype, before any engine call.
 *
 * The engine holds, for a key of enctype 17 (aes128-cts-hmac-sha1-96) or 18
 * (aes256-cts-hmac-sha1-96), the derived keys of the usages krb5kdc 1.20.1 uses with such
 * a key (DESIGN.md section 4: 1 preauth decrypt, 2 ticket encrypt, 3 AS-REP encrypt, 17
 * PAC checksum, 56 PA-REQ-ENC-PA-REP checksum) and its PRF key, never the key itself
 * (mpc-engine/client/mpc_client.h, MPC_AES*_CTS_HMAC_SHA1_96). These rules say which
 * calls that is, and the lengths and types libk5crypto would use (RFC 3962: a 16-byte
 * confounder, an HMAC-SHA1-96 of 12 bytes, a PRF of 16 bytes; checksum types 15 and 16).
 *
 * Pure functions: no allocation, no engine, no krb5 library calls (krb5.h for its types
 * and constants only), no global state. router_engine_krb.c applies them;
 * tests/unit/kdc-plugin/router_krb_rules_test.cpp checks them.
 *
 * Version boundary: everything below exists since router interface version 3.
 */
#ifndef MPC_ROUTER_KRB_RULES_H
#define MPC_ROUTER_KRB_RULES_H

#include <stddef.h>
#include <stdint.h>

#include <krb5/krb5.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ROUTER_KRB_CONFOUNDER_LEN 16
#define ROUTER_KRB_MAC_LEN 12
#define ROUTER_KRB_OVERHEAD (ROUTER_KRB_CONFOUNDER_LEN + ROUTER_KRB_MAC_LEN)
#define ROUTER_KRB_PRF_LEN 16
/* Longest data of one engine call (mpc_client.h MPC_KRB_MAX_DATA_BYTES): confounder +
 * plaintext for an encryption, the whole ciphertext for a decryption, the message for a
 * checksum. */
#define ROUTER_KRB_MAX_DATA 4096
/* PRF+ (RFC 6113 5.1) counts its blocks in one byte. */
#define ROUTER_KRB_PRFPLUS_MAX_BLOCKS 255

/* The engine's key algorithm for a handle's enctype: MPC_AES128_CTS_HMAC_SHA1_96 (4) for
 * 17, MPC_AES256_CTS_HMAC_SHA1_96 (5) for 18, 0 for every other enctype (not served). */
int router_krb_algorithm(krb5_enctype enctype);

/* The RFC 3962 name of a served enctype ("aes128-cts-hmac-sha1-96"), "unknown" otherwise. */
const char *router_krb_enctype_name(krb5_enctype enctype);

/* The enctype's mandatory checksum type: 15 (hmac-sha1-96-aes128) for 17, 16
 * (hmac-sha1-96-aes256) for 18, 0 for any other enctype. */
krb5_cksumtype router_krb_cksumtype(krb5_enctype enctype);

/* True for the usages whose derived keys the engine holds: 1, 2, 3, 17, 56. */
int router_krb_usage_served(krb5_keyusage usage);

/* The checksum type a call with requested (0: the enctype's mandatory type) computes
 * under a key of enctype into *resolved: 0, or KRB5_BAD_ENCTYPE (libk5crypto's answer
 * for a checksum type that does not go with the key) with *resolved 0. */
krb5_error_code router_krb_resolve_cksumtype(krb5_enctype enctype, krb5_cksumtype requested,
                                             krb5_cksumtype *resolved);

/* The ciphertext length of a plaintext of plain_len bytes (confounder + plaintext + MAC,
 * what krb5_c_encrypt_length answers) into *total: 0, or KRB5_BAD_MSIZE when confounder
 * and plaintext exceed ROUTER_KRB_MAX_DATA (*total 0). */
krb5_error_code router_krb_encrypt_length(size_t plain_len, size_t *total);

/* The plaintext length of a ciphertext of cipher_len bytes into *plain_len: 0, or
 * KRB5_BAD_MSIZE when it is shorter than confounder and MAC (as libk5crypto) or longer
 * than ROUTER_KRB_MAX_DATA (*plain_len 0). */
krb5_error_code router_krb_plain_length(size_t cipher_len, size_t *plain_len);

/* The PRF calls of a PRF+ output of out_len bytes into *blocks: 0, or E2BIG above
 * ROUTER_KRB_PRFPLUS_MAX_BLOCKS (libk5crypto's answer; *blocks 0). */
krb5_error_code router_krb_prfplus_blocks(size_t out_len, size_t *blocks);

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
