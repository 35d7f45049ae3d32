/* kdc-plugin/router/router_engine.h - what the crypto router asks the engine to do
 * with a protected key.
 *
 * The router (mpc_crypto_router.c) recognises a verified key handle and calls one
 * of these functions instead of libk5crypto. Each mirrors one krb5 crypto entry
 * point with the krb5_context and the key replaced by the engine and the key's id
 * (kdc-plugin/kdb/handle.h: name hash, kvno, enctype). A cf2 may mix a handle with
 * a clear key (the FAST armor key), hence router_key.
 *
 * Today's implementation (router_engine_fail_closed.c) has no engine jobs for tickets and
 * refuses every call: the router fails closed. The engine-backed implementation
 * (next step: jobs through mpc-engine/client/mpc_client.h) replaces that file and
 * keeps these declarations.
 *
 * Conventions, for every function below:
 *   - returns 0 or a krb5_error_code; on failure writes a NUL-terminated English
 *     reason into why[0..why_len) (truncated), which the router hands to
 *     krb5_set_error_message and its log;
 *   - the router has already cleared the out-parameters; on failure they stay
 *     cleared; on success the caller of the krb5 function owns them exactly as
 *     libk5crypto documents (krb5_free_data_contents, krb5_free_keyblock, ...);
 *   - key ids and input buffers are borrowed for the call only.
 *
 * Threads and processes: one router_engine per process (the router opens it after
 * fork, in the child, on first use); calls on it may come from any thread.
 *
 * Version boundary: everything below exists since router interface version 1.
 */
#ifndef MPC_ROUTER_ENGINE_H
#define MPC_ROUTER_ENGINE_H

#include <stddef.h>

#include <krb5/krb5.h>

#include "handle.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MPC_ROUTER_ENGINE_INTERFACE_VERSION 1

typedef struct router_engine router_engine;

/* A key that is either a verified handle (id != NULL) or a clear key (clear). */
typedef struct router_key {
    const mpc_kdb_key_id *id;
    const krb5_keyblock *clear;
} router_key;

/* Opens the engine for the cluster described by cluster_config (a path, may not be
 * NULL). On success *out is an engine the caller frees with router_engine_close();
 * on failure *out is NULL and why says why. */
krb5_error_code router_engine_open(const char *cluster_config, router_engine **out,
                                   char *why, size_t why_len);

/* Frees the engine; NULL is ignored. */
void router_engine_close(router_engine *engine);

/* krb5_c_encrypt / krb5_c_decrypt; output->ciphertext.data and output->data are
 * allocated by the engine implementation on success. */
krb5_error_code router_engine_encrypt(router_engine *engine, const mpc_kdb_key_id *key,
                                      krb5_keyusage usage, const krb5_data *cipher_state,
                                      const krb5_data *input, krb5_enc_data *output,
                                      char *why, size_t why_len);
krb5_error_code router_engine_decrypt(router_engine *engine, const mpc_kdb_key_id *key,
                                      krb5_keyusage usage, const krb5_data *cipher_state,
                                      const krb5_enc_data *input, krb5_data *output,
                                      char *why, size_t why_len);

/* krb5_c_encrypt_iov / krb5_c_decrypt_iov: in place, in the caller's buffers. */
krb5_error_code router_engine_encrypt_iov(router_engine *engine, const mpc_kdb_key_id *key,
                                          krb5_keyusage usage, const krb5_data *cipher_state,
                                          krb5_crypto_iov *data, size_t num_data,
                                          char *why, size_t why_len);
krb5_error_code router_engine_decrypt_iov(router_engine *engine, const mpc_kdb_key_id *key,
                                          krb5_keyusage usage, const krb5_data *cipher_state,
                                          krb5_crypto_iov *data, size_t num_data,
                                          char *why, size_t why_len);

/* krb5_c_make_checksum (cksumtype 0: the enctype's mandatory type) and
 * krb5_c_verify_checksum (*valid written on success only). */
krb5_error_code router_engine_make_checksum(router_engine *engine, const mpc_kdb_key_id *key,
                                            krb5_cksumtype cksumtype, krb5_keyusage usage,
                                            const krb5_data *input, krb5_checksum *cksum,
                                            char *why, size_t why_len);
krb5_error_code router_engine_verify_checksum(router_engine *engine, const mpc_kdb_key_id *key,
                                              krb5_keyusage usage, const krb5_data *data,
                                              const krb5_checksum *cksum, krb5_boolean *valid,
                                              char *why, size_t why_len);

/* krb5_c_make_checksum_iov / krb5_c_verify_checksum_iov. */
krb5_error_code router_engine_make_checksum_iov(router_engine *engine,
                                                const mpc_kdb_key_id *key,
                                                krb5_cksumtype cksumtype, krb5_keyusage usage,
                                                krb5_crypto_iov *data, size_t num_data,
                                                char *why, size_t why_len);
krb5_error_code router_engine_verify_checksum_iov(router_engine *engine,
                                                  const mpc_kdb_key_id *key,
                                                  krb5_cksumtype cksumtype,
                                                  krb5_keyusage usage,
                                                  const krb5_crypto_iov *data, size_t num_data,
                                                  krb5_boolean *valid, char *why,
                                                  size_t why_len);

/* krb5_c_prf (output->length set by the caller), krb5_c_prfplus, and
 * krb5_c_derive_prfplus (*out allocated on success). A derived key that must stay
 * secret (the FAST cookie key) is to come back as a new handle, never in clear. */
krb5_error_code router_engine_prf(router_engine *engine, const mpc_kdb_key_id *key,
                                  const krb5_data *input, krb5_data *output,
                                  char *why, size_t why_len);
krb5_error_code router_engine_prfplus(router_engine *engine, const mpc_kdb_key_id *key,
                                      const krb5_data *input, krb5_data *output,
                                      char *why, size_t why_len);
krb5_error_code router_engine_derive_prfplus(router_engine *engine, const mpc_kdb_key_id *key,
                                             const krb5_data *input, krb5_enctype enctype,
                                             krb5_keyblock **out, char *why, size_t why_len);

/* krb5_c_fx_cf2_simple: at least one of k1, k2 is a handle (*out allocated on success). */
krb5_error_code router_engine_cf2(router_engine *engine, const router_key *k1,
                                  const char *pepper1, const router_key *k2,
                                  const char *pepper2, krb5_keyblock **out,
                                  char *why, size_t why_len);

/* krb5_c_init_state (new_state allocated on success). */
krb5_error_code router_engine_init_state(router_engine *engine, const mpc_kdb_key_id *key,
                                         krb5_keyusage usage, krb5_data *new_state,
                                         char *why, size_t why_len);

#ifdef __cplusplus
}
#endif

#endif /* MPC_ROUTER_ENGINE_H */
