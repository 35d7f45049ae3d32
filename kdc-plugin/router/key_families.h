/* kdc-plugin/router/key_families.h - the families of protected keys the engine's jobs serve
 * (key_family.h), one row each.
 *
 * Version boundary: internal to mpc_crypto_router.so.
 */
#ifndef MPC_ROUTER_KEY_FAMILIES_H
#define MPC_ROUTER_KEY_FAMILIES_H

#include "key_family.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The row serving key, or NULL for a verified handle of an enctype no job serves. */
const router_family *router_family_of(const mpc_kdb_key_id *key);

/* The rows: the protected krbtgt key's tickets and checksums (AES-256-GCM, gcm_jobs.h), and
 * users' and services' keys of the standard enctypes (krb_jobs.h). */
extern const router_family router_gcm_family;
extern const router_family router_krb_family;

#ifdef __cplusplus
}
#endif

#endif /* MPC_ROUTER_KEY_FAMILIES_H */
