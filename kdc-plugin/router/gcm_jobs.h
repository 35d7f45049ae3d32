/* kdc-plugin/router/gcm_jobs.h - tickets and checksums under the protected krbtgt key,
 * through the engine's AES-256-GCM jobs.
 *
 * Formats (kdb/protected_key.h, docs/ticket-format.md; enctype MPC_KDC_ENCTYPE_AES256_GCM,
 * checksum type MPC_KDC_CKSUMTYPE_GMAC):
 *
 *   encrypt:  N (12) || C = P xor keystream(N) || T (16),
 *             T = mpc_client_gcm_tag(N, AAD = 0x01 || u32be usage, C)
 *   checksum: N (12) || T (16),
 *             T = mpc_client_gcm_tag(N, AAD = 0x02 || u32be usage || data, empty text)
 *
 * and both are checked by mpc_client_gcm_open, which opens only the verdict and, for a
 * ciphertext, its keystream. A PAC's server checksum and its KDC checksum (over the first) are
 * made in one round trip, the second kept until krb5kdc asks for it and checked in the round
 * trip of the next seal, before that ticket leaves (checksum_chain.h). The engine key is mpc_kdc_engine_key_name() of the handle's key
 * id, version = kvno. Nonces come from nonces/supply.h; a tag answered MPC_ENONCE (the servers
 * forgot the nonce: a restart, eviction) drops the pool it came from and seals once more
 * with a fresh synchronous prefetch. Every copy of keystream is wiped after use.
 *
 * Conventions, for every function below (key_family.h): job->key is a verified handle of
 * enctype MPC_KDC_ENCTYPE_AES256_GCM (router_gcm_serves); returns 0 or a krb5_error_code and
 * then writes an English reason into job->why; out-parameters follow libk5crypto's own
 * contract for the same entry point (krb5 1.20.1): the caller's buffers for encrypt and
 * decrypt and the _iov calls, which hold no plaintext after a failure; malloc'd contents for
 * make_checksum, freed by the caller as libk5crypto documents. Answers about the data (a
 * wrong tag: KRB5KRB_AP_ERR_BAD_INTEGRITY, or valid = FALSE for a checksum; a malformed
 * length or type: KRB5_BAD_MSIZE, KRB5_BAD_ENCTYPE) are what libk5crypto answers in the same
 * case. The entry points krb5kdc never uses with the krbtgt key are refused with
 * KRB5_CRYPTO_INTERNAL, saying why (kdc-plugin/README.md).
 *
 * Version boundary: internal to mpc_crypto_router.so.
 */
#ifndef MPC_ROUTER_GCM_JOBS_H
#define MPC_ROUTER_GCM_JOBS_H

#include <stddef.h>

#include <krb5/krb5.h>

#include "handle.h"
#include "key_family.h"

#ifdef __cplusplus
extern "C" {
#endif

/* True for a handle of the protected krbtgt key's enctype. */
int router_gcm_serves(const mpc_kdb_key_id *key);

/* krb5_c_encrypt: output->ciphertext is the caller's buffer, at least krb5_c_encrypt_length()
 * of the input; on success it holds the ciphertext and its length, and output->enctype, kvno
 * (0) and magic are set. */
krb5_error_code router_gcm_encrypt(const router_job *job, krb5_keyusage usage,
                                   const krb5_data *cipher_state, const krb5_data *input,
                                   krb5_enc_data *output);

/* krb5_c_decrypt: output is the caller's buffer, at least the ciphertext length less the
 * overhead; on success it holds the plaintext and its length. */
krb5_error_code router_gcm_decrypt(const router_job *job, krb5_keyusage usage,
                                   const krb5_data *cipher_state, const krb5_enc_data *input,
                                   krb5_data *output);

/* krb5_c_make_checksum (cksumtype 0 or MPC_KDC_CKSUMTYPE_GMAC; cksum->contents allocated on
 * success) and krb5_c_verify_checksum (*valid written on success only). */
krb5_error_code router_gcm_make_checksum(const router_job *job, krb5_cksumtype cksumtype,
                                         krb5_keyusage usage, const krb5_data *input,
                                         krb5_checksum *cksum);
krb5_error_code router_gcm_verify_checksum(const router_job *job, krb5_keyusage usage,
                                           const krb5_data *data, const krb5_checksum *cksum,
                                           krb5_boolean *valid);

/* krb5_c_make_checksum_iov (into the caller's CHECKSUM buffer, whose length is set) and
 * krb5_c_verify_checksum_iov (*valid written on success only): the checksum covers HEADER,
 * DATA, PADDING and SIGN_ONLY, in order, as libk5crypto's. */
krb5_error_code router_gcm_make_checksum_iov(const router_job *job, krb5_cksumtype cksumtype,
                                             krb5_keyusage usage, krb5_crypto_iov *data,
                                             size_t num_data);
krb5_error_code router_gcm_verify_checksum_iov(const router_job *job, krb5_cksumtype cksumtype,
                                               krb5_keyusage usage,
                                               const krb5_crypto_iov *data, size_t num_data,
                                               krb5_boolean *valid);

/* krb5_c_init_state: the empty state (nothing chains between messages; krb5_c_free_state
 * frees it). */
krb5_error_code router_gcm_init_state(const router_job *job, krb5_keyusage usage,
                                      krb5_data *new_state);

/* The entry points refused with the krbtgt key, each saying why. */
krb5_error_code router_gcm_refuse(const router_job *job, enum router_refused what,
                                  krb5_keyusage usage);

#ifdef __cplusplus
}
#endif

#endif /* MPC_ROUTER_GCM_JOBS_H */
