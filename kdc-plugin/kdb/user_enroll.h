/* kdc-plugin/kdb/user_enroll.h - enrolment of protected users' keys into the engine, done by
 * mpc_kdb's put_principal in the admin tools (kadmind, kadmin.local, kdb5_util, mpcctl).
 *
 * When an entry marked mpc-protected reaches put_principal with real keys (kadmin addprinc,
 * cpw, cpw -randkey, setstr of the mark on an existing principal), each key of enctype 17,
 * 18, 19 or 20 (the last two need engine interface 4) is decrypted with the master key, imported into the engine (mpc_client_import_key: the
 * client library derives and splits the share material), and replaced in the entry by the
 * user marker (protected_key.h) encrypted under the same master key, keeping enctype, kvno
 * and salt; the key is wiped. Only then is the entry stored. Refused, with a message on the
 * context and the stored entry unchanged: another enctype on a protected principal, K/M,
 * kadmin/ *, kiprop/ * (the admin tools need those keys themselves), a failed import (the
 * keys imported so far are deleted again), a kvno already enrolled for another key, and an
 * unmarked entry that still holds user markers (krb5kdc would take them for keys).
 * krbtgt/ * is never enrolled here: its own path (mpcctl kdc protect) uses a private enctype.
 *
 * After the store, the engine keys of kvnos the entry no longer has are deleted (best
 * effort, logged to stderr and syslog); a failed store deletes what was imported for it.
 *
 * Without a master key list (kdb5_util load, which copies stored data without reading it)
 * entries are stored as given.
 *
 * Version boundary: internal to mpc_kdb.so.
 */
#ifndef MPC_KDB_USER_ENROLL_H
#define MPC_KDB_USER_ENROLL_H

#include <stdint.h>

#include <kdb.h>

/* The engine as the KDB module uses it: libmpcclient.so.1 loaded on first use and one
 * client handle for the cluster configuration (which must name an admin client key). */
typedef struct mpc_engine mpc_engine;

/* *out = an engine for config_path (copied; nothing is opened yet). Free with
 * mpc_engine_free(). */
/* The protection marker: a principal string attribute; the principal is protected when it is
 * present and its value is not 0, false, no or off (any case). */
#define MPC_KDB_MARKER "mpc-protected"

/* *out = whether entry carries the marker. */
krb5_error_code mpc_entry_is_marked(krb5_context context, krb5_db_entry *entry, krb5_boolean *out);

krb5_error_code mpc_engine_create(krb5_context context, const char *config_path, mpc_engine **out);

/* Closes the client and unloads the library; NULL is ignored. */
void mpc_engine_free(mpc_engine *engine);

/* What one write did and must still do in the engine; caller-owned, zero-initialised,
 * released with mpc_enrollment_release(). */
typedef struct mpc_enrollment {
    char *principal;          /* for messages */
    char key_name[40];        /* engine key name of the principal */
    struct mpc_engine_key {
        uint32_t kvno;
        int algorithm;
    } *imported, *retire;     /* keys imported for this write; keys to delete after it */
    int n_imported, n_retire;
} mpc_enrollment;

/*
 * Before put_principal: enrols entry's real keys if it is marked (see above) and fills *out.
 * get_old reads the stored entry (the back end's get_principal, real data). On failure the
 * message is set on context, entry may have been partly rewritten (the caller must not store
 * it) and whatever was imported has been deleted again.
 */
krb5_error_code mpc_enroll_before_put(krb5_context context, mpc_engine *engine,
                                      krb5_error_code (*get_old)(krb5_context,
                                                                 krb5_const_principal,
                                                                 unsigned int, krb5_db_entry **),
                                      krb5_db_entry *entry, mpc_enrollment *out);

/*
 * Before delete_principal: fills *out with the engine keys of the stored entry, if it is a
 * protected user, to be deleted after the deletion succeeded.
 */
krb5_error_code mpc_enroll_before_delete(krb5_context context,
                                         krb5_error_code (*get_old)(krb5_context,
                                                                    krb5_const_principal,
                                                                    unsigned int,
                                                                    krb5_db_entry **),
                                         krb5_const_principal principal, mpc_enrollment *out);

/* After the write: stored != 0 deletes the keys to retire (best effort, logged); stored == 0
 * deletes the keys imported for it. Then releases *enrollment. */
void mpc_enroll_finish(krb5_context context, mpc_engine *engine, mpc_enrollment *enrollment,
                       int stored);

void mpc_enrollment_release(mpc_enrollment *enrollment);

#endif /* MPC_KDB_USER_ENROLL_H */
