/* kdc-plugin/router/route.h - handle routing: which calls with a key handle go to the engine,
 * and which are refused.
 *
 * The interposers (interpose.c) call route_<op> for a key that is a handle candidate
 * (route_is_candidate: the length and magic of a handle, kdb/handle.h; no enctype has a key
 * of that length, so a candidate is never a real key). route_<op> verifies the candidate
 * under the handle key (route_state.h) and sends it by its enctype: the protected krbtgt
 * key's private enctype to the GCM ticket jobs (gcm_jobs.h), the standard enctypes the
 * engine's Kerberos jobs serve to those (krb_jobs.h); every other candidate is refused
 * (fail closed). A candidate is never passed to a libk5crypto function that computes with
 * it.
 *
 * Error codes. An answer of the engine about the data (a wrong tag:
 * KRB5KRB_AP_ERR_BAD_INTEGRITY, or valid = FALSE for a checksum; a malformed length or type:
 * KRB5_BAD_MSIZE, KRB5_BAD_ENCTYPE) is what libk5crypto answers in the same case: the message
 * is set, nothing is counted as a refusal (a forged ticket is the client's doing, not the
 * router's). Every other failure is a refusal (router_log.h): KRB5_CRYPTO_INTERNAL, with the
 * reason on the context. Not KRB5KDC_ERR_ETYPE_NOSUPP, which tells the KDC and clients
 * that the enctype is unsupported (they may pick another key or enctype); not
 * KRB5KRB_AP_ERR_BAD_INTEGRITY, which means "wrong key" (a bad password, a forged ticket).
 * KRB5_CRYPTO_INTERNAL is what libk5crypto itself answers for a malformed key, so the KDC
 * treats the request as a server-side failure and logs the message (TGS:
 * "mpc_crypto_router: krb5_c_..."). Exception seen in krb5kdc 1.20.1: the
 * encrypted_timestamp preauth verifier tries each key and drops every decrypt error, so an
 * AS request of a protected user ends as PREAUTH_FAILED whatever the code (the client says
 * "Password incorrect"); the router's own log still names the cause, and such a decryption
 * is counted for the KDB module (kdc-plugin/shared/router_kdb_interface.h).
 *
 * Conventions: each route_<op> takes the arguments of the krb5 entry point of the same
 * name, with the keyblock of the handle in place of the key, and keeps its contract for
 * out-parameters (kdc-plugin/README.md); outputs that libk5crypto allocates are cleared
 * before anything can fail.
 *
 * Version boundary: internal to mpc_crypto_router.so.
 */
#ifndef MPC_ROUTER_ROUTE_H
#define MPC_ROUTER_ROUTE_H

#include <stddef.h>

#include <krb5/krb5.h>

#include "originals.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Who is calling: the krb5 context (may be NULL), the interposed function, and its caller's
 * return address (for the trace). */
typedef struct route_call {
    krb5_context ctx;
    enum router_fn fn;
    const void *caller;
} route_call;

/* Once per process image, at the first intercepted call. */
void route_init(void);

/* True when kb has the length and magic of a handle or a combined handle. Says nothing
 * about authenticity: it decides the route, never trust. */
int route_is_candidate(const krb5_keyblock *kb);

krb5_error_code route_encrypt(const route_call *call, const krb5_keyblock *key,
                              krb5_keyusage usage, const krb5_data *cipher_state,
                              const krb5_data *input, krb5_enc_data *output);
krb5_error_code route_decrypt(const route_call *call, const krb5_keyblock *key,
                              krb5_keyusage usage, const krb5_data *cipher_state,
                              const krb5_enc_data *input, krb5_data *output);
krb5_error_code route_encrypt_iov(const route_call *call, const krb5_keyblock *key,
                                  krb5_keyusage usage, const krb5_data *cipher_state,
                                  krb5_crypto_iov *data, size_t num_data);
krb5_error_code route_decrypt_iov(const route_call *call, const krb5_keyblock *key,
                                  krb5_keyusage usage, const krb5_data *cipher_state,
                                  krb5_crypto_iov *data, size_t num_data);
krb5_error_code route_make_checksum(const route_call *call, const krb5_keyblock *key,
                                    krb5_cksumtype cksumtype, krb5_keyusage usage,
                                    const krb5_data *input, krb5_checksum *cksum);
krb5_error_code route_verify_checksum(const route_call *call, const krb5_keyblock *key,
                                      krb5_keyusage usage, const krb5_data *data,
                                      const krb5_checksum *cksum, krb5_boolean *valid);
krb5_error_code route_make_checksum_iov(const route_call *call, const krb5_keyblock *key,
                                        krb5_cksumtype cksumtype, krb5_keyusage usage,
                                        krb5_crypto_iov *data, size_t num_data);
krb5_error_code route_verify_checksum_iov(const route_call *call, const krb5_keyblock *key,
                                          krb5_cksumtype cksumtype, krb5_keyusage usage,
                                          const krb5_crypto_iov *data, size_t num_data,
                                          krb5_boolean *valid);
krb5_error_code route_prf(const route_call *call, const krb5_keyblock *key,
                          krb5_data *input, krb5_data *output);
krb5_error_code route_prfplus(const route_call *call, const krb5_keyblock *key,
                              const krb5_data *input, krb5_data *output);
krb5_error_code route_derive_prfplus(const route_call *call, const krb5_keyblock *key,
                                     const krb5_data *input, krb5_enctype enctype,
                                     krb5_keyblock **out);
krb5_error_code route_init_state(const route_call *call, const krb5_keyblock *key,
                                 krb5_keyusage usage, krb5_data *new_state);

/* A handle's cipher state: libk5crypto frees it given a keyblock with the handle's enctype
 * and no contents, never the handle bytes; a state of the private enctype (plain data) is
 * freed here. */
krb5_error_code route_free_state(const route_call *call, const krb5_keyblock *key,
                                 krb5_data *state);

/* A krb5_key is a container: libk5crypto copies the bytes and computes nothing, so a handle
 * may be held in one (every krb5_k_* computation looks at the key's keyblock). */
krb5_error_code route_create_key(const route_call *call, const krb5_keyblock *key,
                                 krb5_key *out);

/* KRB-FX-CF2 with at least one handle: a combined handle (kdb/handle.h) of the first key's
 * enctype, authenticated under the handle key, naming the protected key, its pepper and the
 * clear key's half; krb5kdc holds it as the challenge or reply key, and every use of it
 * comes back here. Two protected keys, or a combined handle, are refused. */
krb5_error_code route_cf2(const route_call *call, const krb5_keyblock *k1,
                          const char *pepper1, const krb5_keyblock *k2, const char *pepper2,
                          krb5_keyblock **out);

#ifdef __cplusplus
}
#endif

#endif /* MPC_ROUTER_ROUTE_H */
