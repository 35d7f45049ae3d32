/* kdc-plugin/router/key_family.h - a family of protected keys as one row of operations, as
 * krb5's etypes.c gives each enctype a row: the router finds the row a verified handle belongs
 * to and calls its operation, with no branch on the kind of key (key_families.h has the rows).
 *
 * Every operation follows the conventions of the job files that define it (gcm_jobs.h,
 * krb_jobs.h): returns 0, or a krb5_error_code with an English reason written into
 * job->why[0..job->why_len); its out-parameters follow libk5crypto's own contract for the same
 * entry point (krb5 1.20.1).
 *
 * Version boundary: internal to mpc_crypto_router.so.
 */
#ifndef MPC_ROUTER_KEY_FAMILY_H
#define MPC_ROUTER_KEY_FAMILY_H

#include <stddef.h>

#include <krb5/krb5.h>

#include "checksum_chain.h"
#include "engine_conn.h"
#include "handle.h"
#include "nonces/supply.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One call under a verified handle: this process's engine, the handle's key, and where the
 * reason of a refusal goes. */
typedef struct router_job {
    engine_conn *conn;
    nonce_supply *nonces;
    checksum_chain *chain;
    const mpc_kdb_key_id *key;
    char *why;
    size_t why_len;
} router_job;

/* Entry points a family may refuse, each with its own reason. */
enum router_refused {
    ROUTER_REFUSED_ENCRYPT_IOV,
    ROUTER_REFUSED_DECRYPT_IOV,
    ROUTER_REFUSED_PRF,
    ROUTER_REFUSED_PRFPLUS,
    ROUTER_REFUSED_DERIVE_PRFPLUS,
    ROUTER_REFUSED_INIT_STATE,
    ROUTER_REFUSED_CF2
};

typedef struct router_family {
    /* True for a handle of this family (and, for a combined handle, its combined key). */
    int (*serves)(const mpc_kdb_key_id *key);
    krb5_error_code (*encrypt)(const router_job *job, krb5_keyusage usage,
                               const krb5_data *cipher_state, const krb5_data *input,
                               krb5_enc_data *output);
    krb5_error_code (*decrypt)(const router_job *job, krb5_keyusage usage,
                               const krb5_data *cipher_state, const krb5_enc_data *input,
                               krb5_data *output);
    krb5_error_code (*make_checksum)(const router_job *job, krb5_cksumtype cksumtype,
                                     krb5_keyusage usage, const krb5_data *input,
                                     krb5_checksum *cksum);
    krb5_error_code (*verify_checksum)(const router_job *job, krb5_keyusage usage,
                                       const krb5_data *data, const krb5_checksum *cksum,
                                       krb5_boolean *valid);
    krb5_error_code (*make_checksum_iov)(const router_job *job, krb5_cksumtype cksumtype,
                                         krb5_keyusage usage, krb5_crypto_iov *data,
                                         size_t num_data);
    krb5_error_code (*verify_checksum_iov)(const router_job *job, krb5_cksumtype cksumtype,
                                           krb5_keyusage usage, const krb5_crypto_iov *data,
                                           size_t num_data, krb5_boolean *valid);
    krb5_error_code (*init_state)(const router_job *job, krb5_keyusage usage,
                                  krb5_data *new_state);
    /* usage: that of the call, or 0 for a call without one. */
    krb5_error_code (*refuse)(const router_job *job, enum router_refused what,
                              krb5_keyusage usage);
} router_family;

#ifdef __cplusplus
}
#endif

#endif /* MPC_ROUTER_KEY_FAMILY_H */
