/* kdc-plugin/router/krb_jobs.h - protected users' and services' keys of the standard
 * enctypes through the engine's Kerberos jobs, with results byte for byte libk5crypto's.
 *
 * Serves handles of the enctypes of the Kerberos rows of the key-algorithm table
 * (mpc-engine/keys/key_algorithms.h: 17 and 18, aes128/aes256-cts-hmac-sha1-96, RFC 3962;
 * 19 and 20, aes128-cts-hmac-sha256-128 and aes256-cts-hmac-sha384-192, RFC 8009), and
 * combined handles of a KRB-FX-CF2 with one of them (kdb/handle.h). What is served and what
 * is refused, and why: krb_jobs.c and kdc-plugin/README.md.
 *
 * Conventions, for every function below (key_family.h): job->key is a verified handle for
 * which router_krb_serves() holds; returns 0 or a krb5_error_code and then writes an English
 * reason into job->why naming the call, the usage and the key; out-parameters follow
 * libk5crypto's own contract for the same entry point (krb5 1.20.1): the caller's buffers
 * for encrypt, decrypt and the _iov checksums (no plaintext left there after a failure),
 * malloc'd contents for make_checksum, freed by the caller as libk5crypto documents.
 *
 * Version boundary: internal to mpc_crypto_router.so.
 */
#ifndef MPC_ROUTER_KRB_JOBS_H
#define MPC_ROUTER_KRB_JOBS_H

#include <stddef.h>

#include <krb5/krb5.h>

#include "handle.h"
#include "key_family.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A key of a KRB-FX-CF2: a verified handle (id != NULL) or a clear key (clear). */
typedef struct router_key {
    const mpc_kdb_key_id *id;
    const krb5_keyblock *clear;
} router_key;

/* True when key's enctype (and, for a combined handle, the combined key's) is one the
 * engine's Kerberos jobs serve. */
int router_krb_serves(const mpc_kdb_key_id *key);

krb5_error_code router_krb_encrypt(const router_job *job, krb5_keyusage usage,
                                   const krb5_data *cipher_state, const krb5_data *input,
                                   krb5_enc_data *output);
krb5_error_code router_krb_decrypt(const router_job *job, krb5_keyusage usage,
                                   const krb5_data *cipher_state, const krb5_enc_data *input,
                                   krb5_data *output);
krb5_error_code router_krb_make_checksum(const router_job *job, krb5_cksumtype cksumtype,
                                         krb5_keyusage usage, const krb5_data *input,
                                         krb5_checksum *cksum);
krb5_error_code router_krb_verify_checksum(const router_job *job, krb5_keyusage usage,
                                           const krb5_data *data, const krb5_checksum *cksum,
                                           krb5_boolean *valid);
krb5_error_code router_krb_make_checksum_iov(const router_job *job, krb5_cksumtype cksumtype,
                                             krb5_keyusage usage, krb5_crypto_iov *data,
                                             size_t num_data);
krb5_error_code router_krb_verify_checksum_iov(const router_job *job, krb5_cksumtype cksumtype,
                                               krb5_keyusage usage,
                                               const krb5_crypto_iov *data, size_t num_data,
                                               krb5_boolean *valid);

/* KRB-FX-CF2 of k1 and k2 (each a handle of a served enctype or a clear key, exactly one
 * a handle): on success *combined names the handle's stored key with its KRB-FX-CF2 part
 * set (the result's enctype, the stored key's pepper and the mask PRF+ of the clear key),
 * which the router wraps in a combined handle; the combined key never exists in clear. */
krb5_error_code router_krb_cf2(const router_key *k1, const char *pepper1,
                               const router_key *k2, const char *pepper2,
                               mpc_kdb_key_id *combined, char *why, size_t why_len);

/* The entry points refused with these keys, each saying why and naming the key; init_state
 * is one of them. */
krb5_error_code router_krb_refuse(const router_job *job, enum router_refused what,
                                  krb5_keyusage usage);
krb5_error_code router_krb_init_state(const router_job *job, krb5_keyusage usage,
                                      krb5_data *new_state);

#ifdef __cplusplus
}
#endif

#endif /* MPC_ROUTER_KRB_JOBS_H */
