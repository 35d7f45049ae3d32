/* kdc-plugin/router/router_engine.h - what the crypto router asks the engine to do
 * with a protected key.
 *
 * The router (mpc_crypto_router.c) recognises a verified key handle and calls one
 * of these functions instead of libk5crypto. Each mirrors one krb5 crypto entry
 * point with the krb5_context and the key replaced by the engine and the key's id
 * (kdc-plugin/kdb/handle.h: name hash, kvno, enctype). A cf2 may mix a handle with
 * a clear key (the FAST armor key), hence router_key.
 *
 * The implementation (over mpc-engine/client/mpc_client.h) serves keys of enctype
 * MPC_KDC_ENCTYPE_AES256_GCM (router_engine_gcm.c; kdc-plugin/kdb/protected_key.h: the
 * protected krbtgt key, tickets and checksums in the KDC-private GCM format) and, since
 * 3, keys of enctypes 17 and 18 (router_engine_krb.c: protected users' and services' keys,
 * results identical to libk5crypto's, for the usages krb5kdc uses with them), and refuses
 * every other enctype (fail closed).
 *
 * Conventions, for every function below:
 *   - returns 0 or a krb5_error_code; on failure writes a NUL-terminated English
 *     reason into why[0..why_len) (truncated), which the router hands to
 *     krb5_set_error_message and its log;
 *   - out-parameters follow libk5crypto's own contract for the same entry point
 *     (krb5 1.20.1, lib/crypto/krb): where libk5crypto writes into caller-allocated
 *     buffers (encrypt, decrypt, prf, the _iov calls), so does the engine, and on
 *     failure it leaves no plaintext there; where libk5crypto allocates (make_checksum,
 *     derive_prfplus, cf2, init_state), the engine allocates with malloc and the caller
 *     frees as libk5crypto documents (krb5_free_checksum_contents, krb5_free_keyblock,
 *     krb5_c_free_state); the router has cleared those before the call and they stay
 *     cleared on failure;
 *   - key ids and input buffers are borrowed for the call only.
 *
 * Threads and processes: one router_engine per process (the router opens it after
 * fork, in the child, on first use); calls on it may come from any thread. An engine
 * inherited across fork is never used by the child: router_engine_close() in the child
 * only abandons it (it touches none of the parent's connections, threads or locks).
 *
 * Version boundary: everything below exists since router interface version 1, except
 * what is marked "since 2"; version 3 serves more enctypes with the same functions; version 4
 * never opens a protected key's PRF: router_engine_cf2 describes the combined key instead of
 * returning it, and the jobs under it take combined handles (kdb/handle.h).
 */
#ifndef MPC_ROUTER_ENGINE_H
#define MPC_ROUTER_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include <krb5/krb5.h>

#include "handle.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MPC_ROUTER_ENGINE_INTERFACE_VERSION 4

typedef struct router_engine router_engine;

/* A key that is either a verified handle (id != NULL) or a clear key (clear). */
typedef struct router_key {
    const mpc_kdb_key_id *id;
    const krb5_keyblock *clear;
} router_key;

/* Since 2. Nonce pools (kdc-plugin/README.md, "Nonce pools"). A field of 0 takes the
 * default below. */
typedef struct router_engine_options {
    uint32_t pool_ttl_s;        /* drop prefetched nonces older than this; below the
                                   servers' nonce TTL */
    uint32_t pool_low;          /* refill a pool that holds fewer nonces ... */
    uint32_t pool_high;         /* ... up to this many (its capacity) */
    uint32_t ticket_blocks;     /* keystream blocks (16 bytes) per ticket nonce */
    uint32_t unreachable_retry_ms; /* after a call found the engine unreachable, calls fail
                                      at once for this long, then one tries again */
    /* Where background failures are reported (the router's log: stderr and syslog);
     * may be NULL. Called without any engine lock held, from any thread. */
    void (*log)(int syslog_priority, const char *message);
} router_engine_options;

#define ROUTER_ENGINE_DEFAULT_POOL_TTL_S 1800
#define ROUTER_ENGINE_DEFAULT_POOL_LOW 64
#define ROUTER_ENGINE_DEFAULT_POOL_HIGH 512
#define ROUTER_ENGINE_DEFAULT_TICKET_BLOCKS 40
#define ROUTER_ENGINE_DEFAULT_UNREACHABLE_RETRY_MS 3000

/* Opens the engine for the cluster described by cluster_config (a path, may not be
 * NULL; parsed now, connections are made on first use). options may be NULL (all
 * defaults). On success *out is an engine the caller frees with router_engine_close();
 * on failure *out is NULL and why says why. Since 2: options. */
krb5_error_code router_engine_open(const char *cluster_config,
                                   const router_engine_options *options,
                                   router_engine **out, char *why, size_t why_len);

/* Frees the engine; NULL is ignored. In the process that opened it: stops its
 * background thread, wipes its pools and closes its connections. In any other (a
 * forked child): abandons it without touching it. */
void router_engine_close(router_engine *engine);

/* krb5_c_encrypt: output->ciphertext.data is the caller's buffer of
 * output->ciphertext.length bytes, at least krb5_c_encrypt_length() of the input; on
 * success the ciphertext is written there, output->ciphertext.length set to its length
 * and output->enctype / kvno (0) / magic set. */
krb5_error_code router_engine_encrypt(router_engine *engine, const mpc_kdb_key_id *key,
                                      krb5_keyusage usage, const krb5_data *cipher_state,
                                      const krb5_data *input, krb5_enc_data *output,
                                      char *why, size_t why_len);

/* krb5_c_decrypt: output->data is the caller's buffer of output->length bytes, at least
 * the plaintext length (the ciphertext length less the overhead); on success the
 * plaintext is written there and output->length set to its length. A wrong tag gives
 * KRB5KRB_AP_ERR_BAD_INTEGRITY, a malformed length KRB5_BAD_MSIZE. */
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

/* krb5_c_make_checksum (cksumtype 0: the enctype's mandatory type; cksum->contents
 * allocated on success) and krb5_c_verify_checksum (*valid written on success only). */
krb5_error_code router_engine_make_checksum(router_engine *engine, const mpc_kdb_key_id *key,
                                            krb5_cksumtype cksumtype, krb5_keyusage usage,
                                            const krb5_data *input, krb5_checksum *cksum,
                                            char *why, size_t why_len);
krb5_error_code router_engine_verify_checksum(router_engine *engine, const mpc_kdb_key_id *key,
                                              krb5_keyusage usage, const krb5_data *data,
                                              const krb5_checksum *cksum, krb5_boolean *valid,
                                              char *why, size_t why_len);

/* krb5_c_make_checksum_iov (into the caller's CHECKSUM buffer, whose length is set) /
 * krb5_c_verify_checksum_iov (*valid written on success only). */
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

/* krb5_c_fx_cf2_simple: at least one of k1, k2 is a handle. Since 4: the combined key never
 * exists in clear: on success *combined names the handle's stored key with its KRB-FX-CF2
 * part set (the result's enctype, the stored key's pepper and the mask PRF+ of the clear
 * key), which the router wraps in a combined handle (handle.h); the engine computes the
 * combined key inside each job under that handle. */
krb5_error_code router_engine_cf2(router_engine *engine, const router_key *k1,
                                  const char *pepper1, const router_key *k2,
                                  const char *pepper2, mpc_kdb_key_id *combined,
                                  char *why, size_t why_len);

/* krb5_c_init_state (new_state allocated on success; krb5_c_free_state frees it). */
krb5_error_code router_engine_init_state(router_engine *engine, const mpc_kdb_key_id *key,
                                         krb5_keyusage usage, krb5_data *new_state,
                                         char *why, size_t why_len);

#ifdef __cplusplus
}
#endif

#endif /* MPC_ROUTER_ENGINE_H */
