/* kdc-plugin/router/router_engine_internal.h - what the files implementing router_engine.h
 * share: the engine's foreground client and its fail-fast state.
 *
 * router_engine_gcm.c owns the router_engine (open, close, the krbtgt key's GCM jobs and
 * nonce pools) and hands every call with a key of a standard enctype to
 * router_engine_krb.c (the router_krb_* functions below, the same contracts as the
 * router_engine_* functions of router_engine.h they serve).
 *
 * A foreground engine call goes:
 *
 *     if (router_engine_down(engine, why, why_len))
 *         fail at once (why says why);
 *     client = router_engine_client_lock(engine);
 *     rc = mpc_client_...(client, ...);   read mpc_client_last_error(client) here
 *     router_engine_client_unlock(engine);
 *     router_engine_note(engine, rc, why);
 *
 * Not part of the router's interface: nothing outside kdc-plugin/router includes this.
 */
#ifndef MPC_ROUTER_ENGINE_INTERNAL_H
#define MPC_ROUTER_ENGINE_INTERNAL_H

#include <stddef.h>

#include "mpc_client.h"
#include "router_engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Nonzero while a recent call found the engine unreachable (unreachable_retry_ms): why
 * then says so and the caller fails with KRB5_CRYPTO_INTERNAL without calling. */
int router_engine_down(router_engine *engine, char *why, size_t why_len);

/* The foreground client, held under the engine's call lock (one call and its
 * mpc_client_last_error at a time) until router_engine_client_unlock. */
mpc_client *router_engine_client_lock(router_engine *engine);
void router_engine_client_unlock(router_engine *engine);

/* Records a foreground call's mpc_status for router_engine_down(): MPC_EUNREACHABLE marks
 * the engine down for unreachable_retry_ms with why as the reason, MPC_OK clears the mark;
 * any other status (an answer) changes nothing. */
void router_engine_note(router_engine *engine, int rc, const char *why);

/* Small helpers both files use. router_set_why formats into why (ignored when why is NULL or
 * why_len 0); router_overlaps tells whether two buffers share a byte; router_wipe_free wipes
 * a secret buffer of len bytes and frees it (NULL ignored). */
void router_set_why(char *why, size_t why_len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int router_overlaps(const void *a, size_t alen, const void *b, size_t blen);
void router_wipe_free(void *p, size_t len);

/* A static English phrase for an mpc_status ("unreachable", "refused", ...). */
const char *router_engine_status_text(int rc);

/* ---- router_engine_krb.c: keys of enctypes 17 and 18 -------------------------------- */

/* True when key's enctype is one of the standard enctypes router_engine_krb.c serves. */
int router_krb_serves(const mpc_kdb_key_id *key);

krb5_error_code router_krb_encrypt(router_engine *engine, const mpc_kdb_key_id *key,
                                   krb5_keyusage usage, const krb5_data *cipher_state,
                                   const krb5_data *input, krb5_enc_data *output,
                                   char *why, size_t why_len);
krb5_error_code router_krb_decrypt(router_engine *engine, const mpc_kdb_key_id *key,
                                   krb5_keyusage usage, const krb5_data *cipher_state,
                                   const krb5_enc_data *input, krb5_data *output,
                                   char *why, size_t why_len);
krb5_error_code router_krb_encrypt_iov(router_engine *engine, const mpc_kdb_key_id *key,
                                       krb5_keyusage usage, char *why, size_t why_len);
krb5_error_code router_krb_decrypt_iov(router_engine *engine, const mpc_kdb_key_id *key,
                                       krb5_keyusage usage, char *why, size_t why_len);
krb5_error_code router_krb_make_checksum(router_engine *engine, const mpc_kdb_key_id *key,
                                         krb5_cksumtype cksumtype, krb5_keyusage usage,
                                         const krb5_data *input, krb5_checksum *cksum,
                                         char *why, size_t why_len);
krb5_error_code router_krb_verify_checksum(router_engine *engine, const mpc_kdb_key_id *key,
                                           krb5_keyusage usage, const krb5_data *data,
                                           const krb5_checksum *cksum, krb5_boolean *valid,
                                           char *why, size_t why_len);
krb5_error_code router_krb_make_checksum_iov(router_engine *engine, const mpc_kdb_key_id *key,
                                             krb5_cksumtype cksumtype, krb5_keyusage usage,
                                             krb5_crypto_iov *data, size_t num_data,
                                             char *why, size_t why_len);
krb5_error_code router_krb_verify_checksum_iov(router_engine *engine,
                                               const mpc_kdb_key_id *key,
                                               krb5_cksumtype cksumtype, krb5_keyusage usage,
                                               const krb5_crypto_iov *data, size_t num_data,
                                               krb5_boolean *valid, char *why,
                                               size_t why_len);
krb5_error_code router_krb_prf(router_engine *engine, const mpc_kdb_key_id *key,
                               const krb5_data *input, krb5_data *output, char *why,
                               size_t why_len);
krb5_error_code router_krb_prfplus(router_engine *engine, const mpc_kdb_key_id *key,
                                   const krb5_data *input, krb5_data *output, char *why,
                                   size_t why_len);
krb5_error_code router_krb_derive_prfplus(router_engine *engine, const mpc_kdb_key_id *key,
                                          char *why, size_t why_len);
/* k1 and k2: each a handle of a served enctype or a clear key, at least one a handle. */
krb5_error_code router_krb_cf2(router_engine *engine, const router_key *k1,
                               const char *pepper1, const router_key *k2,
                               const char *pepper2, mpc_kdb_key_id *combined, char *why,
                               size_t why_len);
krb5_error_code router_krb_init_state(router_engine *engine, const mpc_kdb_key_id *key,
                                      krb5_keyusage usage, char *why, size_t why_len);

#ifdef __cplusplus
}
#endif

#endif /* MPC_ROUTER_ENGINE_INTERNAL_H */
