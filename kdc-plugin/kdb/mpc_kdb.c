/* kdc-plugin/kdb/mpc_kdb.c - KDB module that wraps the stock back end and gives
 * krb5kdc authenticated key handles instead of the keys of protected principals.
 *
 * Every KDB method is forwarded to the real back end (db2 by default, klmdb or
 * any other DAL 9 module selectable), so krb5kdc, kadmind, kadmin.local and
 * kdb5_util (whose dump and load are what kprop/kpropd propagate) work
 * unchanged. One thing differs, and only in KDC mode
 * (the database was opened with KRB5_KDB_SRV_TYPE_KDC, as krb5kdc does) and
 * only for a principal that carries the protection marker: the key bytes of
 * each of its key_data are replaced by a handle (handle.h) that names the key
 * and is authenticated under a per-KDC handle key. decrypt_key_data turns a
 * valid handle into a keyblock whose contents are the handle (64 bytes: no
 * enctype has that key length, so real libk5crypto refuses it) and rejects a
 * forged or tampered one. Admin tools (kadmind, kadmin.local, kdb5_util) open
 * the database in ADMIN mode and keep seeing the real data.
 *
 * Configuration (krb5 profile, read where kdc.conf is: KRB5_KDC_PROFILE):
 *
 *   [realms]
 *     REALM = {
 *       database_module = SECTION      read by libkdb5 (default: REALM)
 *     }
 *   [dbmodules]
 *     db_module_dir = DIR              read by libkdb5 and by this module: the
 *                                      directories searched for modules, this
 *                                      one and the back end, before the
 *                                      installed krb5's own KDB module
 *                                      directory; may be repeated
 *     SECTION = {
 *       db_library = mpc_kdb           read by libkdb5: loads this module
 *       mpc_backend = db2              this module: the real back end, a
 *                                      module name (db2, klmdb, ...);
 *                                      default db2
 *       mpc_handle_key_file = PATH     this module, KDC mode only: the handle
 *                                      key, exactly 32 raw bytes, a regular
 *                                      file owned by the KDC's user or root
 *                                      with no group or other permission bits
 *                                      (0600 or 0400). Optional while no
 *                                      principal is marked; a marked principal
 *                                      then fails its lookup (fails closed)
 *       mpc_cluster_config = PATH      this module, admin tools only (kadmind,
 *                                      kadmin.local, kdb5_util, mpcctl): the
 *                                      engine cluster configuration, with an
 *                                      admin client key, used to enrol the
 *                                      keys of protected users when they are
 *                                      stored (user_enroll.h). Unset: entries
 *                                      are stored as given (a mark beside
 *                                      real keys, as for tests, which
 *                                      `mpcctl kdc status` reports)
 *       database_name = ...            and every other key of the section:
 *                                      read by the back end itself
 *     }
 *
 * Marker: the principal string attribute "mpc-protected" (kadmin setstr /
 * delstr). A principal is protected when the attribute is present and its
 * value is not one of 0, false, no, off (any case). Do not mark K/M: the KDC
 * itself must decrypt the other keys with the master key.
 *
 * Which slots are forwarded: all of DAL 9, minor version 0. Five "optional
 * with default" slots (rename_principal, fetch_master_key,
 * fetch_master_key_list, dbe_search_enctype, change_pwd) are NULL here because
 * their libkdb5 defaults are not exported; libkdb5 then runs its default on top
 * of this wrapper, exactly as for db2 and klmdb (which leave them NULL too),
 * and a back end that overrides one of them is refused at open (backend.c).
 *
 * Per-database state: kept by krb5_context (module_state.h), since libkdb5's
 * one database slot per context belongs to the wrapped back end.
 *
 * Enrolment (admin tools with mpc_cluster_config, user_enroll.h): put_principal
 * moves the real aes128/aes256-cts-hmac-sha1-96 keys of a marked user into the
 * engine and stores markers in their place; other enctypes on a marked user,
 * K/M, kadmin/ * and kiprop/ * are refused; krbtgt/ * keeps its own path
 * (mpcctl kdc protect). Engine keys of kvnos an entry loses (cpw, unprotect,
 * delete) are deleted after the write.
 *
 * Safety of writes: a handle is never stored. put_principal and
 * encrypt_key_data refuse one; audit_as_req, whose back-end implementation
 * writes the entry it is given (db2 lockout), gets freshly read real entries
 * instead of the KDC's handle-bearing copies.
 *
 * Lockout during an engine outage: a preauth failure the engine never decided
 * is no wrong password. audit_as_req asks the crypto router, preloaded in the
 * same krb5kdc, through the one function of kdc-plugin/shared/
 * router_kdb_interface.h, and hands the back end KRB5KDC_ERR_SVC_UNAVAILABLE
 * (which no lockout counts) instead of PREAUTH_FAILED for such a request.
 */

#include "module_state.h"
#include "router_kdb_interface.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include <kdb.h>
#include <profile.h>

#if KRB5_KDB_DAL_MAJOR_VERSION != 9
#error "mpc_kdb forwards the slots of KDB DAL major version 9 only"
#endif

/* A slot the back end leaves NULL answers as libkdb5 answers for a NULL slot. */
#define NOTSUPP KRB5_PLUGIN_OP_NOTSUPP

/* ---- markers and handles ------------------------------------------------- */

static krb5_boolean
key_data_is_handle(const krb5_key_data *kd)
{
    return kd != NULL && mpc_kdb_handle_is_candidate(kd->key_data_contents[0],
                                                     kd->key_data_length[0]);
}

static krb5_boolean
entry_has_handle(const krb5_db_entry *entry)
{
    int i;

    if (entry == NULL || entry->key_data == NULL)
        return FALSE;
    for (i = 0; i < entry->n_key_data; i++) {
        if (key_data_is_handle(&entry->key_data[i]))
            return TRUE;
    }
    return FALSE;
}

/* In KDC mode, replaces the key bytes of a marked entry by handles. */
static krb5_error_code
substitute_handles(krb5_context context, const mpc_db *db, krb5_db_entry *entry)
{
    krb5_boolean protected = FALSE;
    krb5_key_data *kd;
    mpc_kdb_key_id id;
    uint8_t *blob = NULL;
    char *name = NULL;
    krb5_error_code ret = 0;
    int i;

    if (!db->kdc_mode || entry == NULL || entry->princ == NULL || entry->n_key_data <= 0)
        goto cleanup;
    ret = mpc_entry_is_marked(context, entry, &protected);
    if (ret || !protected)
        goto cleanup;
    ret = krb5_unparse_name(context, entry->princ, &name);
    if (ret)
        goto cleanup;
    if (!db->have_handle_key) {
        ret = KRB5_KDB_SERVER_INTERNAL_ERR;
        krb5_set_error_message(context, ret,
                               "mpc_kdb: %s is marked %s but no mpc_handle_key_file is "
                               "configured; refusing to hand out its keys", name, MPC_KDB_MARKER);
        goto cleanup;
    }
    memset(&id, 0, sizeof(id));
    if (mpc_kdb_name_hash(name, strlen(name), id.name_hash) != 0) {
        ret = KRB5_CRYPTO_INTERNAL;
        krb5_set_error_message(context, ret, "mpc_kdb: cannot hash the name %s", name);
        goto cleanup;
    }
    for (i = 0; i < entry->n_key_data; i++) {
        kd = &entry->key_data[i];
        blob = malloc(MPC_KDB_HANDLE_LEN);
        if (blob == NULL) {
            ret = ENOMEM;
            goto cleanup;
        }
        id.kvno = kd->key_data_kvno;
        id.enctype = kd->key_data_type[0];
        if (mpc_kdb_handle_encode(db->handle_key, &id, blob) != 0) {
            ret = KRB5_CRYPTO_INTERNAL;
            krb5_set_error_message(context, ret, "mpc_kdb: cannot compute a key handle for %s",
                                   name);
            goto cleanup;
        }
        if (kd->key_data_contents[0] != NULL) {
            OPENSSL_cleanse(kd->key_data_contents[0], kd->key_data_length[0]);
            free(kd->key_data_contents[0]);
        }
        kd->key_data_contents[0] = blob;
        kd->key_data_length[0] = MPC_KDB_HANDLE_LEN;
        blob = NULL;
    }

cleanup:
    free(blob);
    krb5_free_unparsed_name(context, name);
    return ret;
}

/* decrypt_key_data for a key_data that carries a handle. */
static krb5_error_code
handle_to_keyblock(krb5_context context, const mpc_db *db, const krb5_key_data *kd,
                   krb5_keyblock *dbkey, krb5_keysalt *keysalt)
{
    enum mpc_kdb_handle_status status;
    krb5_octet *contents = NULL;
    char *salt = NULL;
    mpc_kdb_key_id id;
    krb5_error_code ret;

    if (db == NULL || !db->kdc_mode || !db->have_handle_key) {
        ret = KRB5_KDB_INTERNAL_ERROR;
        krb5_set_error_message(context, ret,
                               "mpc_kdb: a key handle reached decrypt_key_data outside KDC mode "
                               "or without a handle key");
        goto cleanup;
    }
    status = mpc_kdb_handle_verify(db->handle_key, kd->key_data_contents[0],
                                   kd->key_data_length[0], &id);
    if (status != MPC_KDB_HANDLE_OK) {
        ret = KRB5_KDB_INTERNAL_ERROR;
        krb5_set_error_message(context, ret, "mpc_kdb: kvno %u enctype %d: %s",
                               (unsigned int)kd->key_data_kvno, (int)kd->key_data_type[0],
                               mpc_kdb_handle_status_string(status));
        goto cleanup;
    }
    if (id.kvno != kd->key_data_kvno || id.enctype != kd->key_data_type[0]) {
        ret = KRB5_KDB_INTERNAL_ERROR;
        krb5_set_error_message(context, ret,
                               "mpc_kdb: key handle names kvno %u enctype %d but sits in key "
                               "data for kvno %u enctype %d", (unsigned int)id.kvno,
                               (int)id.enctype, (unsigned int)kd->key_data_kvno,
                               (int)kd->key_data_type[0]);
        goto cleanup;
    }
    contents = malloc(MPC_KDB_HANDLE_LEN);
    if (contents == NULL) {
        ret = ENOMEM;
        goto cleanup;
    }
    memcpy(contents, kd->key_data_contents[0], MPC_KDB_HANDLE_LEN);
    if (keysalt != NULL) {
        /* Same salt semantics as the stored-key format: version 2 key data
         * carries its salt in the second slot. */
        if (kd->key_data_ver >= 2 && kd->key_data_length[1] > 0) {
            salt = malloc(kd->key_data_length[1]);
            if (salt == NULL) {
                ret = ENOMEM;
                goto cleanup;
            }
            memcpy(salt, kd->key_data_contents[1], kd->key_data_length[1]);
        }
        keysalt->type = (kd->key_data_ver >= 2) ? kd->key_data_type[1]
                                                : KRB5_KDB_SALTTYPE_NORMAL;
        keysalt->data.magic = KV5M_DATA;
        keysalt->data.length = (salt != NULL) ? kd->key_data_length[1] : 0;
        keysalt->data.data = salt;
        salt = NULL;
    }
    dbkey->magic = KV5M_KEYBLOCK;
    dbkey->enctype = kd->key_data_type[0];
    dbkey->length = MPC_KDB_HANDLE_LEN;
    dbkey->contents = contents;
    contents = NULL;
    ret = 0;

cleanup:
    free(salt);
    free(contents);
    return ret;
}

/* For audit_as_req: the real entry behind a handle-bearing one, read afresh
 * from the back end (NULL if it cannot be read); entry itself otherwise. */
static krb5_db_entry *
real_entry(krb5_context context, const mpc_db *db, krb5_db_entry *entry,
           krb5_db_entry **fetched)
{
    krb5_db_entry *real = entry;

    *fetched = NULL;
    if (entry_has_handle(entry)) {
        if (db->backend->vt.get_principal(context, entry->princ, 0, fetched) != 0)
            *fetched = NULL;
        real = *fetched;
    }
    return real;
}

/* Whether the back end's audit_as_req reads and writes the client's entry alone. MIT's db2
 * and klmdb do (krb5 1.20: krb5_db2_audit_as_req and klmdb_audit_as_req pass only the client
 * to their lockout code), so the server's entry, the protected krbtgt's in every AS exchange,
 * need not be read afresh for them: a database read per request saved. Any other back end
 * might write what it is handed, so it gets the real entry. */
static int
audits_client_only(const mpc_db *db)
{
    return strcmp(db->backend->name, "db2") == 0 || strcmp(db->backend->name, "klmdb") == 0;
}

static void
copy_lockout_state(krb5_db_entry *to, const krb5_db_entry *from)
{
    to->fail_auth_count = from->fail_auth_count;
    to->last_success = from->last_success;
    to->last_failed = from->last_failed;
}

/* ---- vtable: library and database lifetime ------------------------------- */

static krb5_error_code
mpc_init_library(void)
{
    return 0;
}

static krb5_error_code
mpc_fini_library(void)
{
    return 0;
}

static krb5_error_code
mpc_init_module(krb5_context context, char *conf_section, char **db_args, int mode)
{
    return mpc_db_open(context, conf_section, db_args, mode, FALSE);
}

static krb5_error_code
mpc_create(krb5_context context, char *conf_section, char **db_args)
{
    return mpc_db_open(context, conf_section, db_args, 0, TRUE);
}

static krb5_error_code
mpc_fini_module(krb5_context context)
{
    mpc_db *db = mpc_db_find(context);
    krb5_error_code ret = 0;

    /* libkdb5 also calls this after an open that failed before any state was
     * registered: no state is no error. After promote_db or destroy the back
     * end has finalized its own database object; its fini_module allows that. */
    if (db != NULL) {
        ret = db->backend->vt.fini_module(context);
        if (ret == 0) {
            mpc_db_close(db);
        }
    }
    return ret;
}

static krb5_error_code
mpc_destroy(krb5_context context, char *conf_section, char **db_args)
{
    mpc_backend *backend = NULL;
    profile_t profile = NULL;
    char *backend_name = NULL;
    mpc_db *db = mpc_db_find(context);
    krb5_error_code ret;

    if (db != NULL) {
        ret = (db->backend->vt.destroy != NULL)
                  ? db->backend->vt.destroy(context, conf_section, db_args)
                  : KRB5_PLUGIN_OP_NOTSUPP;
        goto cleanup;
    }
    /* Not open on this context: load the back end just for the call. */
    ret = krb5_get_profile(context, &profile);
    if (ret)
        goto cleanup;
    ret = mpc_db_section_string(profile, conf_section, "mpc_backend", MPC_KDB_DEFAULT_BACKEND,
                         &backend_name);
    if (ret)
        goto cleanup;
    ret = mpc_backend_acquire(context, profile, backend_name, &kdb_function_table, &backend);
    if (ret)
        goto cleanup;
    ret = (backend->vt.destroy != NULL) ? backend->vt.destroy(context, conf_section, db_args)
                                        : KRB5_PLUGIN_OP_NOTSUPP;

cleanup:
    mpc_backend_release(backend);
    free(backend_name);
    if (profile != NULL)
        profile_release(profile);
    return ret;
}

/* ---- vtable: plain forwarding -------------------------------------------- */

/* The slots the module forwards to the back end unchanged: one row X(name, (parameters),
 * (arguments)) each. The list defines both the wrappers and their places in the exported
 * table; every other slot has a wrapper of its own. */
#define MPC_KDB_FORWARDED(X)                                                                      \
    X(promote_db,                                                                                 \
      (krb5_context context, char *conf_section, char **db_args),                                 \
      (context, conf_section, db_args))                                                           \
    X(get_age,                                                                                    \
      (krb5_context context, char *db_name, time_t *age),                                         \
      (context, db_name, age))                                                                    \
    X(lock,                                                                                       \
      (krb5_context context, int mode),                                                           \
      (context, mode))                                                                            \
    X(unlock,                                                                                     \
      (krb5_context context),                                                                     \
      (context))                                                                                  \
    X(iterate,                                                                                    \
      (krb5_context context, char *match_entry, int (*func)(krb5_pointer, krb5_db_entry *),       \
      krb5_pointer func_arg, krb5_flags iterflags),                                               \
      (context, match_entry, func, func_arg, iterflags))                                          \
    X(create_policy,                                                                              \
      (krb5_context context, osa_policy_ent_t policy),                                            \
      (context, policy))                                                                          \
    X(put_policy,                                                                                 \
      (krb5_context context, osa_policy_ent_t policy),                                            \
      (context, policy))                                                                          \
    X(iter_policy,                                                                                \
      (krb5_context context, char *match_entry, osa_adb_iter_policy_func func, void *data),       \
      (context, match_entry, func, data))                                                         \
    X(delete_policy,                                                                              \
      (krb5_context context, char *policy),                                                       \
      (context, policy))                                                                          \
    X(check_transited_realms,                                                                     \
      (krb5_context context, const krb5_data *tr_contents, const krb5_data *client_realm,         \
      const krb5_data *server_realm),                                                             \
      (context, tr_contents, client_realm, server_realm))                                         \
    X(check_policy_as,                                                                            \
      (krb5_context context, krb5_kdc_req *request, krb5_db_entry *client,                        \
      krb5_db_entry *server, krb5_timestamp kdc_time, const char **status,                        \
      krb5_pa_data ***e_data),                                                                    \
      (context, request, client, server, kdc_time, status, e_data))                               \
    X(check_policy_tgs,                                                                           \
      (krb5_context context, krb5_kdc_req *request, krb5_db_entry *server,                        \
      krb5_ticket *ticket, const char **status, krb5_pa_data ***e_data),                          \
      (context, request, server, ticket, status, e_data))                                         \
    X(check_allowed_to_delegate,                                                                  \
      (krb5_context context, krb5_const_principal client, const krb5_db_entry *server,            \
      krb5_const_principal proxy),                                                                \
      (context, client, server, proxy))                                                           \
    X(allowed_to_delegate_from,                                                                   \
      (krb5_context context, krb5_const_principal client, krb5_const_principal server,            \
      krb5_pac server_pac, const krb5_db_entry *proxy),                                           \
      (context, client, server, server_pac, proxy))                                               \
    X(issue_pac,                                                                                  \
      (krb5_context context, unsigned int flags, krb5_db_entry *client,                           \
      krb5_keyblock *replaced_reply_key, krb5_db_entry *server, krb5_db_entry *signing_krbtgt,    \
      krb5_timestamp authtime, krb5_pac old_pac, krb5_pac new_pac,                                \
      krb5_data ***auth_indicators),                                                              \
      (context, flags, client, replaced_reply_key, server, signing_krbtgt, authtime, old_pac,     \
      new_pac, auth_indicators))

/* Forwards slot `name` to the back end: KRB5_PLUGIN_OP_NOTSUPP when the back end leaves the
 * slot NULL, as libkdb5 answers for a NULL slot. */
#define DEFINE_FORWARD(name, params, args)                                                \
    static krb5_error_code mpc_##name params                                              \
    {                                                                                     \
        const kdb_vftabl *vt;                                                             \
        krb5_error_code ret = mpc_db_backend_of(context, &vt);                            \
                                                                                          \
        if (ret == 0)                                                                     \
            ret = vt->name ? vt->name args : NOTSUPP;                                     \
        return ret;                                                                       \
    }

MPC_KDB_FORWARDED(DEFINE_FORWARD)

#undef DEFINE_FORWARD

static krb5_error_code
mpc_delete_principal(krb5_context context, krb5_const_principal search_for)
{
    mpc_enrollment enrollment;
    mpc_db *db = mpc_db_find(context);
    krb5_error_code ret;

    memset(&enrollment, 0, sizeof(enrollment));
    if (db == NULL) {
        ret = KRB5_KDB_DBNOTINITED;
        goto cleanup;
    }
    if (db->backend->vt.delete_principal == NULL) {
        ret = NOTSUPP;
        goto cleanup;
    }
    if (!db->kdc_mode && db->engine != NULL) {
        ret = mpc_enroll_before_delete(context, db->backend->vt.get_principal, search_for,
                                       &enrollment);
        if (ret)
            goto cleanup;
    }
    ret = db->backend->vt.delete_principal(context, search_for);
    if (db->engine != NULL)
        mpc_enroll_finish(context, db->engine, &enrollment, ret == 0);

cleanup:
    mpc_enrollment_release(&enrollment);
    return ret;
}

static krb5_error_code
mpc_get_policy(krb5_context context, char *name, osa_policy_ent_t *policy)
{
    const kdb_vftabl *vt;
    krb5_error_code ret;

    *policy = NULL;
    ret = mpc_db_backend_of(context, &vt);
    if (ret == 0)
        ret = vt->get_policy ? vt->get_policy(context, name, policy) : NOTSUPP;
    return ret;
}

static void
mpc_refresh_config(krb5_context context)
{
    const kdb_vftabl *vt;

    if (mpc_db_backend_of(context, &vt) == 0 && vt->refresh_config != NULL)
        vt->refresh_config(context);
}

static void
mpc_free_principal_e_data(krb5_context context, krb5_octet *e_data)
{
    const kdb_vftabl *vt;

    if (mpc_db_backend_of(context, &vt) == 0 && vt->free_principal_e_data != NULL)
        vt->free_principal_e_data(context, e_data);
    else
        free(e_data);
}

static krb5_error_code
mpc_store_master_key_list(krb5_context context, char *db_arg, krb5_principal mname,
                          krb5_keylist_node *keylist, char *master_pwd)
{
    const kdb_vftabl *vt;
    krb5_error_code ret;

    if (mpc_db_backend_of(context, &vt) == 0 && vt->store_master_key_list != NULL)
        ret = vt->store_master_key_list(context, db_arg, mname, keylist, master_pwd);
    else
        ret = krb5_def_store_mkey_list(context, db_arg, mname, keylist, master_pwd);
    return ret;
}

/* ---- vtable: where handles appear or must not go ------------------------- */

static krb5_error_code
mpc_get_principal(krb5_context context, krb5_const_principal search_for, unsigned int flags,
                  krb5_db_entry **entry)
{
    krb5_db_entry *found = NULL;
    mpc_db *db;
    krb5_error_code ret;

    *entry = NULL;
    db = mpc_db_find(context);
    if (db == NULL) {
        ret = KRB5_KDB_DBNOTINITED;
        goto cleanup;
    }
    ret = db->backend->vt.get_principal(context, search_for, flags, &found);
    if (ret)
        goto cleanup;
    ret = substitute_handles(context, db, found);
    if (ret)
        goto cleanup;
    *entry = found;
    found = NULL;

cleanup:
    krb5_db_free_principal(context, found);
    return ret;
}

static krb5_error_code
mpc_get_s4u_x509_principal(krb5_context context, const krb5_data *client_cert,
                           krb5_const_principal princ, unsigned int flags,
                           krb5_db_entry **entry_out)
{
    krb5_db_entry *found = NULL;
    mpc_db *db;
    krb5_error_code ret;

    *entry_out = NULL;
    db = mpc_db_find(context);
    if (db == NULL) {
        ret = KRB5_KDB_DBNOTINITED;
        goto cleanup;
    }
    if (db->backend->vt.get_s4u_x509_principal == NULL) {
        ret = KRB5_PLUGIN_OP_NOTSUPP;
        goto cleanup;
    }
    ret = db->backend->vt.get_s4u_x509_principal(context, client_cert, princ, flags, &found);
    if (ret)
        goto cleanup;
    ret = substitute_handles(context, db, found);
    if (ret)
        goto cleanup;
    *entry_out = found;
    found = NULL;

cleanup:
    krb5_db_free_principal(context, found);
    return ret;
}

static krb5_error_code
mpc_put_principal(krb5_context context, krb5_db_entry *entry, char **db_args)
{
    mpc_enrollment enrollment;
    const kdb_vftabl *vt;
    mpc_db *db = mpc_db_find(context);
    char *name = NULL;
    krb5_error_code ret;

    memset(&enrollment, 0, sizeof(enrollment));
    if (db == NULL) {
        ret = KRB5_KDB_DBNOTINITED;
        goto cleanup;
    }
    vt = &db->backend->vt;
    if (entry_has_handle(entry)) {
        ret = KRB5_KDB_CONSTRAINT_VIOLATION;
        if (krb5_unparse_name(context, entry->princ, &name) != 0)
            name = NULL;
        krb5_set_error_message(context, ret,
                               "mpc_kdb: refusing to store key handles as the keys of %s",
                               name ? name : "a principal");
        goto cleanup;
    }
    if (vt->put_principal == NULL) {
        ret = NOTSUPP;
        goto cleanup;
    }
    if (!db->kdc_mode && db->engine != NULL) {
        ret = mpc_enroll_before_put(context, db->engine, vt->get_principal, entry, &enrollment);
        if (ret)
            goto cleanup;
    }
    ret = vt->put_principal(context, entry, db_args);
    if (db->engine != NULL)
        mpc_enroll_finish(context, db->engine, &enrollment, ret == 0);

cleanup:
    mpc_enrollment_release(&enrollment);
    krb5_free_unparsed_name(context, name);
    return ret;
}

static krb5_error_code
mpc_decrypt_key_data(krb5_context context, const krb5_keyblock *mkey,
                     const krb5_key_data *key_data, krb5_keyblock *dbkey,
                     krb5_keysalt *keysalt)
{
    const kdb_vftabl *vt = NULL;
    krb5_error_code ret;

    if (key_data_is_handle(key_data))
        ret = handle_to_keyblock(context, mpc_db_find(context), key_data, dbkey, keysalt);
    else if (mpc_db_backend_of(context, &vt) == 0 && vt->decrypt_key_data != NULL)
        ret = vt->decrypt_key_data(context, mkey, key_data, dbkey, keysalt);
    else
        ret = krb5_dbe_def_decrypt_key_data(context, mkey, key_data, dbkey, keysalt);
    return ret;
}

static krb5_error_code
mpc_encrypt_key_data(krb5_context context, const krb5_keyblock *mkey,
                     const krb5_keyblock *dbkey, const krb5_keysalt *keysalt, int keyver,
                     krb5_key_data *key_data)
{
    const kdb_vftabl *vt = NULL;
    krb5_error_code ret;

    if (dbkey != NULL && mpc_kdb_handle_is_candidate(dbkey->contents, dbkey->length)) {
        ret = KRB5_KDB_CONSTRAINT_VIOLATION;
        krb5_set_error_message(context, ret,
                               "mpc_kdb: refusing to encrypt a key handle as a stored key");
    } else if (mpc_db_backend_of(context, &vt) == 0 && vt->encrypt_key_data != NULL) {
        ret = vt->encrypt_key_data(context, mkey, dbkey, keysalt, keyver, key_data);
    } else {
        ret = krb5_dbe_def_encrypt_key_data(context, mkey, dbkey, keysalt, keyver, key_data);
    }
    return ret;
}

/* The crypto router's count of undecided preauth decryptions (router_kdb_interface.h),
 * resolved once per process; NULL without the router (kadmind, kdb5_util). */
static pthread_once_t router_once = PTHREAD_ONCE_INIT;
static mpc_router_undecided_decrypts_fn router_undecided_decrypts;

static void
resolve_router(void)
{
    void *sym = dlvsym(RTLD_DEFAULT, MPC_ROUTER_KDB_FUNCTION_NAME, MPC_ROUTER_KDB_NODE_NAME);

    memcpy(&router_undecided_decrypts, &sym, sizeof(sym));
}

/* Whether a preauth decryption under a handle went undecided since the last AS request
 * this process audited: krb5kdc answers such a login PREAUTH_FAILED whatever the password.
 * Without the router nothing is ever undecided. */
static int
engine_left_undecided(void)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static unsigned long seen;
    unsigned long now;
    int moved;

    pthread_once(&router_once, resolve_router);
    pthread_mutex_lock(&lock);
    now = router_undecided_decrypts != NULL ? router_undecided_decrypts() : 0;
    moved = now != seen;
    seen = now;
    pthread_mutex_unlock(&lock);
    return moved;
}

static void
mpc_audit_as_req(krb5_context context, krb5_kdc_req *request, const krb5_address *local_addr,
                 const krb5_address *remote_addr, krb5_db_entry *client,
                 krb5_db_entry *server, krb5_timestamp authtime, krb5_error_code error_code)
{
    krb5_db_entry *fetched_client = NULL, *fetched_server = NULL;
    krb5_db_entry *real_client, *real_server;
    mpc_db *db = mpc_db_find(context);

    if (db == NULL || db->backend->vt.audit_as_req == NULL)
        return;
    /* A preauth failure the engine never decided (down, unreachable) is no wrong
     * password: it must not lock users out during an outage. The back end sees it as the
     * service being unavailable, which no lockout counts. */
    if (engine_left_undecided() &&
        (error_code == KRB5KDC_ERR_PREAUTH_FAILED || error_code == KRB5KRB_AP_ERR_BAD_INTEGRITY))
        error_code = KRB5KDC_ERR_SVC_UNAVAILABLE;
    real_client = real_entry(context, db, client, &fetched_client);
    real_server = audits_client_only(db) ? server : real_entry(context, db, server, &fetched_server);
    db->backend->vt.audit_as_req(context, request, local_addr, remote_addr, real_client,
                                 real_server, authtime, error_code);
    /* The back end may have updated lockout fields on what it was given; keep
     * the KDC's copies in step, as they would be without the wrapper. */
    if (fetched_client != NULL)
        copy_lockout_state(client, fetched_client);
    if (fetched_server != NULL)
        copy_lockout_state(server, fetched_server);
    krb5_db_free_principal(context, fetched_client);
    krb5_db_free_principal(context, fetched_server);
}

/* ---- the exported table -------------------------------------------------- */

/* The one symbol the module exports (built with hidden visibility; see also
 * mpc_kdb.exports). */
#define FORWARDED_SLOT(name, params, args) .name = mpc_##name,

__attribute__((visibility("default"))) kdb_vftabl kdb_function_table = {
    .maj_ver = KRB5_KDB_DAL_MAJOR_VERSION,
    .min_ver = 0,
    MPC_KDB_FORWARDED(FORWARDED_SLOT)
    .init_library = mpc_init_library,
    .fini_library = mpc_fini_library,
    .init_module = mpc_init_module,
    .fini_module = mpc_fini_module,
    .create = mpc_create,
    .destroy = mpc_destroy,
    .get_principal = mpc_get_principal,
    .put_principal = mpc_put_principal,
    .delete_principal = mpc_delete_principal,
    .rename_principal = NULL,           /* libkdb5 default, over this wrapper */
    .get_policy = mpc_get_policy,
    .fetch_master_key = NULL,           /* libkdb5 default */
    .fetch_master_key_list = NULL,      /* libkdb5 default, over this wrapper */
    .store_master_key_list = mpc_store_master_key_list,
    .dbe_search_enctype = NULL,         /* libkdb5 default */
    .change_pwd = NULL,                 /* libkdb5 default, over this wrapper */
    .decrypt_key_data = mpc_decrypt_key_data,
    .encrypt_key_data = mpc_encrypt_key_data,
    .audit_as_req = mpc_audit_as_req,
    .refresh_config = mpc_refresh_config,
    .free_principal_e_data = mpc_free_principal_e_data,
    .get_s4u_x509_principal = mpc_get_s4u_x509_principal,
};

#undef FORWARDED_SLOT
