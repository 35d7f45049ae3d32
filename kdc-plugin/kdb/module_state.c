/* kdc-plugin/kdb/module_state.c - the module's state per krb5_context (module_state.h):
 * the registry, and opening a database through its back end with the module's settings. */

#include "module_state.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static mpc_db *registry;

/* ---- registry ------------------------------------------------------------ */

mpc_db *
mpc_db_find(krb5_context context)
{
    mpc_db *db;

    pthread_mutex_lock(&registry_lock);
    for (db = registry; db != NULL && db->context != context; db = db->next)
        ;
    pthread_mutex_unlock(&registry_lock);
    return db;
}

static void
register_db(mpc_db *db)
{
    pthread_mutex_lock(&registry_lock);
    db->next = registry;
    registry = db;
    pthread_mutex_unlock(&registry_lock);
}

static void
unregister_db(mpc_db *db)
{
    mpc_db **link;

    pthread_mutex_lock(&registry_lock);
    for (link = &registry; *link != NULL; link = &(*link)->next) {
        if (*link == db) {
            *link = db->next;
            break;
        }
    }
    pthread_mutex_unlock(&registry_lock);
}

static void
free_db(mpc_db *db)
{
    if (db != NULL) {
        OPENSSL_cleanse(db->handle_key, sizeof(db->handle_key));
        mpc_engine_free(db->engine);
        mpc_backend_release(db->backend);
        free(db);
    }
}

/* *vt_out = the back end's table for context, or KRB5_KDB_DBNOTINITED. */
krb5_error_code
mpc_db_backend_of(krb5_context context, const kdb_vftabl **vt_out)
{
    mpc_db *db = mpc_db_find(context);

    *vt_out = (db != NULL) ? &db->backend->vt : NULL;
    return (db != NULL) ? 0 : KRB5_KDB_DBNOTINITED;
}

/* ---- configuration ------------------------------------------------------- */

/* *out = [dbmodules] section name, or a copy of def (NULL allowed). */
krb5_error_code
mpc_db_section_string(profile_t profile, const char *section, const char *name, const char *def,
               char **out)
{
    char *value = NULL;
    krb5_error_code ret;

    *out = NULL;
    ret = (krb5_error_code)profile_get_string(profile, "dbmodules", section, name, def, &value);
    if (ret)
        goto cleanup;
    if (value != NULL) {
        *out = strdup(value);
        if (*out == NULL)
            ret = ENOMEM;
    }

cleanup:
    profile_release_string(value);
    return ret;
}

/* Reads exactly MPC_KDB_HANDLE_KEY_LEN bytes from a file only its owner can
 * use. On failure key is zeroed and a message is set. */
static krb5_error_code
load_handle_key(krb5_context context, const char *path, uint8_t key[MPC_KDB_HANDLE_KEY_LEN])
{
    struct stat st;
    krb5_error_code ret;
    size_t got = 0;
    ssize_t n;
    uint8_t extra;
    int fd;

    memset(key, 0, MPC_KDB_HANDLE_KEY_LEN);
    fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        ret = errno;
        krb5_set_error_message(context, ret, "mpc_kdb: cannot open mpc_handle_key_file %s: %s",
                               path, strerror(ret));
        goto cleanup;
    }
    if (fstat(fd, &st) != 0) {
        ret = errno;
        krb5_set_error_message(context, ret, "mpc_kdb: cannot stat %s: %s", path, strerror(ret));
        goto cleanup;
    }
    if (!S_ISREG(st.st_mode)) {
        ret = EINVAL;
        krb5_set_error_message(context, ret, "mpc_kdb: mpc_handle_key_file %s is not a regular file",
                               path);
        goto cleanup;
    }
    if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
        ret = EACCES;
        krb5_set_error_message(context, ret,
                               "mpc_kdb: mpc_handle_key_file %s has mode %04o; it must not be "
                               "accessible by group or others (0600 or 0400)", path,
                               (unsigned int)(st.st_mode & 07777));
        goto cleanup;
    }
    if (st.st_uid != geteuid() && st.st_uid != 0) {
        ret = EACCES;
        krb5_set_error_message(context, ret,
                               "mpc_kdb: mpc_handle_key_file %s must be owned by root or uid %u",
                               path, (unsigned int)geteuid());
        goto cleanup;
    }
    while (got < MPC_KDB_HANDLE_KEY_LEN) {
        n = read(fd, key + got, MPC_KDB_HANDLE_KEY_LEN - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    do {
        n = read(fd, &extra, 1);
    } while (n < 0 && errno == EINTR);
    if (got != MPC_KDB_HANDLE_KEY_LEN || n != 0) {
        ret = EINVAL;
        krb5_set_error_message(context, ret,
                               "mpc_kdb: mpc_handle_key_file %s must hold exactly %d bytes",
                               path, MPC_KDB_HANDLE_KEY_LEN);
        goto cleanup;
    }
    ret = 0;

cleanup:
    if (ret)
        OPENSSL_cleanse(key, MPC_KDB_HANDLE_KEY_LEN);
    if (fd >= 0)
        close(fd);
    return ret;
}

/* Sets the mode of db and, in KDC mode, loads the handle key if configured; in the other
 * modes (the admin tools) prepares enrolment if mpc_cluster_config is set. */
static krb5_error_code
configure_db(krb5_context context, profile_t profile, const char *section, int mode, mpc_db *db)
{
    char *key_file = NULL, *cluster_config = NULL;
    krb5_error_code ret = 0;

    OPENSSL_cleanse(db->handle_key, sizeof(db->handle_key));
    db->have_handle_key = FALSE;
    mpc_engine_free(db->engine);
    db->engine = NULL;
    db->kdc_mode = (mode & KRB5_KDB_SRV_TYPE_KDC) != 0;
    if (!db->kdc_mode) {
        /* Admin tools never read the handle key; krb5kdc never enrols. */
        ret = mpc_db_section_string(profile, section, "mpc_cluster_config", NULL, &cluster_config);
        if (ret == 0 && cluster_config != NULL)
            ret = mpc_engine_create(context, cluster_config, &db->engine);
        goto cleanup;
    }
    ret = mpc_db_section_string(profile, section, "mpc_handle_key_file", NULL, &key_file);
    if (ret || key_file == NULL)
        goto cleanup;
    ret = load_handle_key(context, key_file, db->handle_key);
    if (ret)
        goto cleanup;
    db->have_handle_key = TRUE;

cleanup:
    free(key_file);
    free(cluster_config);
    return ret;
}

/* Opens (init_module) or creates (create) the database of context through the
 * back end named in section, registering the wrapper's state for context. */
krb5_error_code
mpc_db_open(krb5_context context, char *conf_section, char **db_args, int mode,
        krb5_boolean creating)
{
    profile_t profile = NULL;
    char *backend_name = NULL;
    mpc_db *db, *fresh = NULL;
    kdb_vftabl *vt;
    krb5_error_code ret;

    if (conf_section == NULL) {
        ret = EINVAL;
        krb5_set_error_message(context, ret, "mpc_kdb: no [dbmodules] section given");
        goto cleanup;
    }
    ret = krb5_get_profile(context, &profile);
    if (ret)
        goto cleanup;
    db = mpc_db_find(context);
    if (db == NULL) {
        ret = mpc_db_section_string(profile, conf_section, "mpc_backend", MPC_KDB_DEFAULT_BACKEND,
                             &backend_name);
        if (ret)
            goto cleanup;
        fresh = calloc(1, sizeof(*fresh));
        if (fresh == NULL) {
            ret = ENOMEM;
            goto cleanup;
        }
        fresh->context = context;
        ret = mpc_backend_acquire(context, profile, backend_name, &kdb_function_table,
                                  &fresh->backend);
        if (ret)
            goto cleanup;
        db = fresh;
    }
    ret = configure_db(context, profile, conf_section, creating ? 0 : mode, db);
    if (ret)
        goto cleanup;
    if (fresh != NULL) {
        /* From here the state stays registered until fini_module, which
         * libkdb5 calls even when the open below fails. */
        register_db(fresh);
        fresh = NULL;
    }
    vt = &db->backend->vt;
    if (creating) {
        if (vt->create == NULL) {
            ret = KRB5_PLUGIN_OP_NOTSUPP;
            goto cleanup;
        }
        ret = vt->create(context, conf_section, db_args);
    } else {
        ret = vt->init_module(context, conf_section, db_args, mode);
    }

cleanup:
    free_db(fresh);
    free(backend_name);
    if (profile != NULL)
        profile_release(profile);
    return ret;
}

void
mpc_db_close(mpc_db *db)
{
    unregister_db(db);
    free_db(db);
}
