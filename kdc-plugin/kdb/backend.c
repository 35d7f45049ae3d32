/* kdc-plugin/kdb/backend.c - find, load and reference-count the wrapped KDB module.
 *
 * Configuration read: [dbmodules] db_module_dir (every value, in order), as
 * libkdb5 reads it. The back-end name itself comes from mpc_kdb.c
 * (mpc_backend). Search order and sharing: backend.h.
 *
 * The registry of loaded back ends is process-wide because the libraries are:
 * a back end's init_library/fini_library manage its own process-wide state and
 * must run once per load, whatever number of realms or contexts use it.
 */

#include "backend.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef MPC_KDB_DEFAULT_MODULE_DIR
#error "MPC_KDB_DEFAULT_MODULE_DIR must name the installed krb5 KDB module directory"
#endif

static pthread_mutex_t backends_lock = PTHREAD_MUTEX_INITIALIZER;
static mpc_backend *backends;

/* Module names are plain file names: letters, digits, '_' and '-'. */
static krb5_boolean
valid_name(const char *name)
{
    size_t i, len = strlen(name);

    if (len == 0 || len >= MPC_KDB_BACKEND_NAME_MAX)
        return FALSE;
    for (i = 0; i < len; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-'))
            return FALSE;
    }
    return TRUE;
}

/* Sets *path_out to the first existing NAME or NAME.so in dirs then the
 * default directory, or NULL if there is none. */
static krb5_error_code
find_module_file(profile_t profile, const char *name, char **path_out)
{
    static const char *const dir_names[] = { "dbmodules", "db_module_dir", NULL };
    static const char *const exts[] = { "", ".so", NULL };
    char **dirs = NULL, *path = NULL;
    const char *dir;
    krb5_error_code ret;
    long pret;
    size_t i, j, n_dirs = 0;
    struct stat st;

    *path_out = NULL;
    pret = profile_get_values(profile, dir_names, &dirs);
    if (pret != 0 && pret != PROF_NO_RELATION && pret != PROF_NO_SECTION) {
        ret = (krb5_error_code)pret;
        goto cleanup;
    }
    while (dirs != NULL && dirs[n_dirs] != NULL)
        n_dirs++;
    for (i = 0; i <= n_dirs; i++) {
        dir = (i < n_dirs) ? dirs[i] : MPC_KDB_DEFAULT_MODULE_DIR;
        for (j = 0; exts[j] != NULL; j++) {
            if (asprintf(&path, "%s/%s%s", dir, name, exts[j]) < 0) {
                path = NULL;
                ret = ENOMEM;
                goto cleanup;
            }
            if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
                *path_out = path;
                path = NULL;
                ret = 0;
                goto cleanup;
            }
            free(path);
            path = NULL;
        }
    }
    ret = 0;

cleanup:
    free(path);
    profile_free_list(dirs);
    return ret;
}

/*
 * Slots whose libkdb5 default is not exported: the wrapper leaves them NULL so
 * that libkdb5 applies its default on top of the wrapper, exactly as it does
 * for db2 and klmdb, which leave them NULL too. A back end that overrides one
 * cannot be wrapped faithfully and is refused.
 */
static const char *
unforwardable_slot(const kdb_vftabl *vt)
{
    if (vt->rename_principal != NULL)
        return "rename_principal";
    if (vt->fetch_master_key != NULL)
        return "fetch_master_key";
    if (vt->fetch_master_key_list != NULL)
        return "fetch_master_key_list";
    if (vt->dbe_search_enctype != NULL)
        return "dbe_search_enctype";
    if (vt->change_pwd != NULL)
        return "change_pwd";
    return NULL;
}

/* Loads name; called with backends_lock held. */
static krb5_error_code
load_backend(krb5_context context, profile_t profile, const char *name,
             const kdb_vftabl *self, mpc_backend **out)
{
    mpc_backend *backend = NULL;
    const kdb_vftabl *table;
    const char *slot;
    krb5_error_code ret;

    *out = NULL;
    backend = calloc(1, sizeof(*backend));
    if (backend == NULL) {
        ret = ENOMEM;
        goto cleanup;
    }
    snprintf(backend->name, sizeof(backend->name), "%s", name);
    ret = find_module_file(profile, name, &backend->path);
    if (ret)
        goto cleanup;
    if (backend->path == NULL) {
        ret = KRB5_KDB_DBTYPE_NOTFOUND;
        krb5_set_error_message(context, ret,
                               "mpc_kdb: back end '%s' not found in any db_module_dir nor in %s",
                               name, MPC_KDB_DEFAULT_MODULE_DIR);
        goto cleanup;
    }
    backend->dl = dlopen(backend->path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (backend->dl == NULL) {
        ret = KRB5_KDB_DBTYPE_INIT;
        krb5_set_error_message(context, ret, "mpc_kdb: cannot load back end %s: %s",
                               backend->path, dlerror());
        goto cleanup;
    }
    table = dlsym(backend->dl, "kdb_function_table");
    if (table == NULL) {
        ret = KRB5_KDB_DBTYPE_INIT;
        krb5_set_error_message(context, ret,
                               "mpc_kdb: %s exports no kdb_function_table", backend->path);
        goto cleanup;
    }
    if (table == self) {
        ret = KRB5_KDB_DBTYPE_INIT;
        krb5_set_error_message(context, ret,
                               "mpc_kdb: mpc_backend names the wrapper itself (%s); it must "
                               "name the real back end, e.g. db2", backend->path);
        goto cleanup;
    }
    if (table->maj_ver != KRB5_KDB_DAL_MAJOR_VERSION) {
        ret = KRB5_PLUGIN_VER_NOTSUPP;
        krb5_set_error_message(context, ret,
                               "mpc_kdb: back end %s has KDB DAL major version %d, "
                               "this wrapper supports only %d", backend->path,
                               (int)table->maj_ver, KRB5_KDB_DAL_MAJOR_VERSION);
        goto cleanup;
    }
    slot = unforwardable_slot(table);
    if (slot != NULL) {
        ret = KRB5_PLUGIN_OP_NOTSUPP;
        krb5_set_error_message(context, ret,
                               "mpc_kdb: back end %s implements %s, which this wrapper "
                               "cannot forward", backend->path, slot);
        goto cleanup;
    }
    if (table->init_library == NULL || table->fini_library == NULL ||
        table->init_module == NULL || table->fini_module == NULL ||
        table->get_principal == NULL) {
        ret = KRB5_KDB_DBTYPE_INIT;
        krb5_set_error_message(context, ret,
                               "mpc_kdb: back end %s lacks a mandatory KDB method", backend->path);
        goto cleanup;
    }
    backend->vt = *table;
    ret = backend->vt.init_library();
    if (ret) {
        krb5_prepend_error_message(context, ret, "mpc_kdb: back end %s failed to initialise",
                                   backend->path);
        goto cleanup;
    }
    *out = backend;
    backend = NULL;

cleanup:
    if (backend != NULL) {
        if (backend->dl != NULL)
            dlclose(backend->dl);
        free(backend->path);
        free(backend);
    }
    return ret;
}

krb5_error_code
mpc_backend_acquire(krb5_context context, profile_t profile, const char *name,
                    const kdb_vftabl *self, mpc_backend **out)
{
    mpc_backend *backend;
    krb5_error_code ret = 0;

    *out = NULL;
    if (name == NULL || !valid_name(name)) {
        ret = EINVAL;
        krb5_set_error_message(context, ret,
                               "mpc_kdb: mpc_backend '%s' is not a module name "
                               "(letters, digits, '_' and '-')", name ? name : "");
        return ret;
    }
    pthread_mutex_lock(&backends_lock);
    for (backend = backends; backend != NULL; backend = backend->next) {
        if (strcmp(backend->name, name) == 0)
            break;
    }
    if (backend == NULL) {
        ret = load_backend(context, profile, name, self, &backend);
        if (ret == 0) {
            backend->next = backends;
            backends = backend;
        }
    }
    if (ret == 0) {
        backend->refs++;
        *out = backend;
    }
    pthread_mutex_unlock(&backends_lock);
    return ret;
}

void
mpc_backend_release(mpc_backend *backend)
{
    mpc_backend **link;

    if (backend == NULL)
        return;
    pthread_mutex_lock(&backends_lock);
    if (--backend->refs > 0) {
        pthread_mutex_unlock(&backends_lock);
        return;
    }
    for (link = &backends; *link != NULL; link = &(*link)->next) {
        if (*link == backend) {
            *link = backend->next;
            break;
        }
    }
    /* Still under the lock: a concurrent acquire of the same name must not run
     * the library's init_library while its fini_library runs. */
    (void)backend->vt.fini_library();
    dlclose(backend->dl);
    pthread_mutex_unlock(&backends_lock);
    free(backend->path);
    free(backend);
}
