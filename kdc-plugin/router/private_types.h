/* kdc-plugin/router/private_types.h - what the protected krbtgt key's private enctype and
 * checksum type look like to the callers of libk5crypto, which does not know them.
 *
 * Tickets under a protected krbtgt key use the KDC-private enctype
 * MPC_KDC_ENCTYPE_AES256_GCM and checksum type MPC_KDC_CKSUMTYPE_GMAC (kdb/protected_key.h:
 * nonce || ciphertext || tag; checksum nonce || tag). krb5kdc's ticket path asks libk5crypto
 * about them without a key: krb5_encrypt_tkt_part (encrypt_length), krb5_decrypt_tkt_part
 * (valid_enctype, is_permitted_enctype), libkdb5's key search (is_permitted_enctype),
 * kdc_get_server_key (enctype_compare), PAC signing (mandatory_cksumtype, checksum_length)
 * and verification (is_keyed_cksum, checksum_length), and the KDC's log (enctype_to_name,
 * deprecated_enctype). The interposers of those functions (interposers.h, KEYLESS and
 * KEYLESS_BOOL) call private_<function> with the caller's arguments when a private type is
 * asked about, and the original otherwise. Each answers as libk5crypto would for an enctype
 * it knew. Not traced: they see no key.
 *
 * Version boundary: internal to mpc_crypto_router.so.
 */
#ifndef MPC_ROUTER_PRIVATE_TYPES_H
#define MPC_ROUTER_PRIVATE_TYPES_H

#include <stddef.h>

#include <krb5/krb5.h>

#ifdef __cplusplus
extern "C" {
#endif

int router_is_private_enctype(krb5_enctype enctype);
int router_is_private_cksumtype(krb5_cksumtype cksumtype);

krb5_boolean private_krb5_c_valid_enctype(krb5_enctype ktype);
krb5_error_code private_krb5_c_enctype_compare(krb5_context ctx, krb5_enctype e1,
                                               krb5_enctype e2, krb5_boolean *similar);
krb5_error_code private_krb5_c_encrypt_length(krb5_context ctx, krb5_enctype enctype,
                                              size_t inputlen, size_t *length);
krb5_error_code private_krb5_c_crypto_length(krb5_context ctx, krb5_enctype enctype,
                                             krb5_cryptotype type, unsigned int *size);
krb5_error_code private_krb5_c_padding_length(krb5_context ctx, krb5_enctype enctype,
                                              size_t data_length, unsigned int *size);
krb5_error_code private_krb5_c_block_size(krb5_context ctx, krb5_enctype enctype,
                                          size_t *blocksize);
krb5_error_code private_krb5_c_keylengths(krb5_context ctx, krb5_enctype enctype,
                                          size_t *keybytes, size_t *keylength);
krb5_error_code private_krb5int_c_mandatory_cksumtype(krb5_context ctx, krb5_enctype etype,
                                                      krb5_cksumtype *cksumtype);
krb5_error_code private_krb5_c_checksum_length(krb5_context ctx, krb5_cksumtype cksumtype,
                                               size_t *length);
krb5_boolean private_krb5_c_is_keyed_cksum(krb5_cksumtype ctype);
krb5_boolean private_krb5_c_is_coll_proof_cksum(krb5_cksumtype ctype);
krb5_boolean private_krb5_c_valid_cksumtype(krb5_cksumtype ctype);
krb5_error_code private_krb5_enctype_to_name(krb5_enctype enctype, krb5_boolean shortest,
                                             char *buffer, size_t buflen);
krb5_error_code private_krb5_cksumtype_to_string(krb5_cksumtype cksumtype, char *buffer,
                                                 size_t buflen);
krb5_boolean private_krb5int_c_deprecated_enctype(krb5_enctype etype);
krb5_boolean private_krb5int_c_weak_enctype(krb5_enctype etype);
krb5_boolean private_krb5_is_permitted_enctype(krb5_context ctx, krb5_enctype etype);

#ifdef __cplusplus
}
#endif

#endif /* MPC_ROUTER_PRIVATE_TYPES_H */
