/* kdc-plugin/kdb/backend.h - load the real KDB module (db2, klmdb) that mpc_kdb wraps.
 *
 * A back end is found the way libkdb5 finds a db_library: NAME or NAME.so in
 * each [dbmodules] db_module_dir of the profile, then in the directory the
 * installed krb5 loads its own KDB modules from (MPC_KDB_DEFAULT_MODULE_DIR, set
 * at build time from pkg-config krb5: LIBDIR/krb5/plugins/kdb). The first file
 * that exists is dlopen()ed and its exported kdb_function_table is used.
 *
 * Loaded back ends are shared by every database object of the process and
 * reference-counted: init_library runs on first use and fini_library after the
 * last release, as libkdb5 does for its own modules.
 *
 * Version boundary: this interface is internal to mpc_kdb.so (nothing here is
 * exported from the module).
 */
#ifndef MPC_KDB_BACKEND_H
#define MPC_KDB_BACKEND_H

#include <kdb.h>
#include <profile.h>

#define MPC_KDB_BACKEND_NAME_MAX 64

typedef struct mpc_backend {
    char name[MPC_KDB_BACKEND_NAME_MAX];
    char *path;          /* the file loaded; owned */
    void *dl;            /* dlopen() handle; owned */
    kdb_vftabl vt;       /* copy of the back end's table */
    int refs;
    struct mpc_backend *next;
} mpc_backend;

/*
 * Sets *out to the back end called name, loading it if needed, and takes a
 * reference the caller gives back with mpc_backend_release(). profile is used
 * for db_module_dir and is not retained; self is the wrapper's own table (a
 * back end that resolves to it is refused). On failure *out is NULL and an
 * error message is set on context.
 */
krb5_error_code mpc_backend_acquire(krb5_context context, profile_t profile,
                                    const char *name, const kdb_vftabl *self,
                                    mpc_backend **out);

/* Gives back a reference taken by mpc_backend_acquire(); NULL is ignored. */
void mpc_backend_release(mpc_backend *backend);

#endif /* MPC_KDB_BACKEND_H */
