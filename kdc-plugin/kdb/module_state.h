/* kdc-plugin/kdb/module_state.h - the KDB module's state per krb5_context.
 *
 * libkdb5 keeps one database object per krb5_context in a single slot
 * (krb5_db_set_context), which the wrapped back end owns and uses directly (db2 even swaps it
 * internally). The module therefore keys its own state by the krb5_context in a small
 * registry under a mutex; the state lives from the first init_module/create on a context
 * until its fini_module.
 *
 * Version boundary: internal to mpc_kdb.so.
 */
#ifndef MPC_KDB_MODULE_STATE_H
#define MPC_KDB_MODULE_STATE_H

#include <stdint.h>

#include <kdb.h>
#include <profile.h>

#include "backend.h"
#include "handle.h"
#include "user_enroll.h"

#define MPC_KDB_DEFAULT_BACKEND "db2"

typedef struct mpc_db {
    krb5_context context;        /* registry key; not owned */
    mpc_backend *backend;        /* owned reference */
    krb5_boolean kdc_mode;       /* opened with KRB5_KDB_SRV_TYPE_KDC */
    krb5_boolean have_handle_key;
    uint8_t handle_key[MPC_KDB_HANDLE_KEY_LEN];
    mpc_engine *engine;          /* admin modes with mpc_cluster_config: enrolment; owned */
    struct mpc_db *next;
} mpc_db;

/* The module's own table (mpc_kdb.c); the back-end loader compares against it. */
extern kdb_vftabl kdb_function_table;

/* The state of context, or NULL. */
mpc_db *mpc_db_find(krb5_context context);

/* *vt_out = the back end's table for context, or KRB5_KDB_DBNOTINITED. */
krb5_error_code mpc_db_backend_of(krb5_context context, const kdb_vftabl **vt_out);

/* Opens (init_module) or creates (create) the database of context through the back end named
 * in conf_section ([dbmodules] mpc_backend, default db2), registering the state for context:
 * in KDC mode with the handle key of mpc_handle_key_file, in the admin modes with enrolment
 * when mpc_cluster_config is set. */
krb5_error_code mpc_db_open(krb5_context context, char *conf_section, char **db_args, int mode,
                            krb5_boolean creating);

/* Unregisters db and frees it (its handle key wiped). */
void mpc_db_close(mpc_db *db);

/* *out = the [dbmodules] section's value of name, or a copy of def (NULL allowed). */
krb5_error_code mpc_db_section_string(profile_t profile, const char *section, const char *name,
                                      const char *def, char **out);

#endif
