/* kdc-plugin/kdb/protected_key.c - a handle's key id as the engine names its key.
 *
 * Format and rationale: protected_key.h and mpc-engine/keys/protected_key.h.
 */

#include "protected_key.h"

_Static_assert(MPC_KDB_NAME_HASH_LEN == MPC_PROTECTED_KEY_NAME_HASH_LEN,
               "a handle carries the engine's name hash whole");

void
mpc_kdc_engine_key_name(const mpc_kdb_key_id *id, char out[MPC_KDC_ENGINE_KEY_NAME_LEN])
{
    mpc_protected_key_engine_name(id->name_hash, out);
}
