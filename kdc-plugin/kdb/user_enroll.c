/* kdc-plugin/kdb/user_enroll.c - enrolment of protected users' keys into the engine.
 *
 * What and when: user_enroll.h. Formats: protected_key.h, handle.h.
 *
 * The engine client library is loaded with dlopen() on first use (found through this
 * module's run path: the build tree's client directory, or PREFIX/lib when installed), so
 * that processes which never enrol (krb5kdc, kdb5_util load, realms without
 * mpc_cluster_config) do not load it, and the module builds and loads without it.
 */

#include "user_enroll.h"

#include "handle.h"
#include "mpc_client.h"
#include "protected_key.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <syslog.h>

#include <openssl/crypto.h>

#define MPC_CLIENT_LIBRARY "libmpcclient.so.1"

_Static_assert(sizeof(MPC_KDC_USER_MARKER) == MPC_KDC_USER_MARKER_LEN,
               "the user marker is MPC_KDC_USER_MARKER_LEN bytes");

struct mpc_engine {
    char *config_path;
    void *library;   /* dlopen() handle, NULL until first use */
    mpc_client *client;
    __typeof__(&mpc_client_open) open;
    __typeof__(&mpc_client_close) close;
    __typeof__(&mpc_client_last_error) last_error;
    __typeof__(&mpc_client_import_key) import_key;
    __typeof__(&mpc_client_delete_key) delete_key;
};

/* ---- the engine ---------------------------------------------------------- */

krb5_error_code
mpc_engine_create(krb5_context context, const char *config_path, mpc_engine **out)
{
    mpc_engine *engine = NULL;
    krb5_error_code ret = 0;

    *out = NULL;
    engine = calloc(1, sizeof(*engine));
    if (engine == NULL || (engine->config_path = strdup(config_path)) == NULL) {
        ret = ENOMEM;
        krb5_set_error_message(context, ret, "mpc_kdb: out of memory");
        goto cleanup;
    }
    *out = engine;
    engine = NULL;

cleanup:
    mpc_engine_free(engine);
    return ret;
}

void
mpc_engine_free(mpc_engine *engine)
{
    if (engine == NULL)
        return;
    if (engine->client != NULL)
        engine->close(engine->client);
    if (engine->library != NULL)
        dlclose(engine->library);
    free(engine->config_path);
    free(engine);
}

/* Loads the library and opens the client, once. */
static krb5_error_code
engine_open(krb5_context context, mpc_engine *engine)
{
    char message[512] = "";
    krb5_error_code ret = 0;

    if (engine->client != NULL)
        goto cleanup;
    if (engine->library == NULL) {
        engine->library = dlopen(MPC_CLIENT_LIBRARY, RTLD_NOW | RTLD_LOCAL);
        if (engine->library == NULL) {
            ret = KRB5_KDB_SERVER_INTERNAL_ERR;
            krb5_set_error_message(context, ret,
                                   "mpc_kdb: cannot load the engine client library %s, needed to "
                                   "enrol protected keys (mpc_cluster_config): %s",
                                   MPC_CLIENT_LIBRARY, dlerror());
            goto cleanup;
        }
        engine->open = (__typeof__(engine->open))dlsym(engine->library, "mpc_client_open");
        engine->close = (__typeof__(engine->close))dlsym(engine->library, "mpc_client_close");
        engine->last_error =
            (__typeof__(engine->last_error))dlsym(engine->library, "mpc_client_last_error");
        engine->import_key =
            (__typeof__(engine->import_key))dlsym(engine->library, "mpc_client_import_key");
        engine->delete_key =
            (__typeof__(engine->delete_key))dlsym(engine->library, "mpc_client_delete_key");
        if (engine->open == NULL || engine->close == NULL || engine->last_error == NULL ||
            engine->import_key == NULL || engine->delete_key == NULL) {
            ret = KRB5_KDB_SERVER_INTERNAL_ERR;
            krb5_set_error_message(context, ret,
                                   "mpc_kdb: %s lacks key import and deletion (client interface "
                                   "version %d is needed)", MPC_CLIENT_LIBRARY,
                                   MPC_CLIENT_INTERFACE_VERSION);
            dlclose(engine->library);
            engine->library = NULL;
            goto cleanup;
        }
    }
    if (engine->open(engine->config_path, &engine->client, message, sizeof(message)) != MPC_OK) {
        engine->client = NULL;
        ret = KRB5_KDB_SERVER_INTERNAL_ERR;
        krb5_set_error_message(context, ret,
                               "mpc_kdb: cannot use the engine cluster configuration %s "
                               "(mpc_cluster_config): %s", engine->config_path, message);
        goto cleanup;
    }

cleanup:
    return ret;
}

static void
log_note(const char *format, ...)
{
    va_list args;

    va_start(args, format);
    fputs("mpc_kdb: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
    va_start(args, format);
    vsyslog(LOG_WARNING, format, args);
    va_end(args);
}

/* The key-algorithm table's name of an engine algorithm. */
static const char *
algorithm_name(int algorithm)
{
    const struct mpc_key_algorithm_info *row = mpc_key_algorithm_by_id(algorithm);

    return row != NULL ? row->name : "unknown";
}

/* Deletes one engine key (best effort): a failure is logged with the command that finishes
 * the job. */
static void
delete_logged(krb5_context context, mpc_engine *engine, const mpc_enrollment *enrollment,
              const struct mpc_engine_key *key)
{
    const char *why = NULL;
    char *open_failure = NULL;

    if (engine_open(context, engine) != 0) {
        open_failure = (char *)krb5_get_error_message(context, KRB5_KDB_SERVER_INTERNAL_ERR);
        why = open_failure;
    } else if (engine->delete_key(engine->client, enrollment->key_name, key->kvno,
                                  key->algorithm) != MPC_OK) {
        why = engine->last_error(engine->client);
    }
    if (why != NULL) {
        log_note("%s: deleting engine key %s kvno %u %s failed (%s); remove it with `mpcctl key "
                 "delete --name %s --kvno %u --alg %s`", enrollment->principal,
                 enrollment->key_name, (unsigned int)key->kvno, algorithm_name(key->algorithm),
                 why, enrollment->key_name, (unsigned int)key->kvno,
                 algorithm_name(key->algorithm));
    }
    if (open_failure != NULL)
        krb5_free_error_message(context, open_failure);
}

/* ---- principals ---------------------------------------------------------- */

static krb5_boolean
component_is(krb5_const_principal principal, int index, const char *text)
{
    size_t length = strlen(text);

    return principal->length > index && principal->data[index].length == length &&
           memcmp(principal->data[index].data, text, length) == 0;
}

static krb5_boolean
is_tgs(krb5_const_principal principal)
{
    return principal->length == 2 && component_is(principal, 0, "krbtgt");
}

/* kadmin/ * and kiprop/ *: kadmind and kpropd use their keys from the database themselves. */
static krb5_boolean
is_admin_service(krb5_const_principal principal)
{
    return component_is(principal, 0, "kadmin") || component_is(principal, 0, "kiprop");
}

/* The master key principal carries the master key list's records (whatever its name). */
static krb5_boolean
is_master_key_entry(const krb5_db_entry *entry)
{
    const krb5_tl_data *tl;

    for (tl = entry->tl_data; tl != NULL; tl = tl->tl_data_next) {
        if (tl->tl_data_type == KRB5_TL_ACTKVNO || tl->tl_data_type == KRB5_TL_MKEY_AUX)
            return TRUE;
    }
    return entry->princ->length == 2 && component_is(entry->princ, 0, "K") &&
           component_is(entry->princ, 1, "M");
}

krb5_error_code
mpc_entry_is_marked(krb5_context context, krb5_db_entry *entry, krb5_boolean *out)
{
    char *value = NULL;
    krb5_error_code ret;

    *out = FALSE;
    ret = krb5_dbe_get_string(context, entry, MPC_KDB_MARKER, &value);
    if (ret || value == NULL)
        goto cleanup;
    *out = !(strcasecmp(value, "0") == 0 || strcasecmp(value, "false") == 0 ||
             strcasecmp(value, "no") == 0 || strcasecmp(value, "off") == 0);

cleanup:
    krb5_dbe_free_string(context, value);
    return ret;
}

/* ---- keys ---------------------------------------------------------------- */

static krb5_boolean
holds_user_marker(const krb5_keyblock *key)
{
    return key->length == MPC_KDC_USER_MARKER_LEN &&
           CRYPTO_memcmp(key->contents, MPC_KDC_USER_MARKER, MPC_KDC_USER_MARKER_LEN) == 0;
}

static void
free_keysalt(krb5_keysalt *keysalt)
{
    if (keysalt->data.data != NULL) {
        OPENSSL_cleanse(keysalt->data.data, keysalt->data.length);
        free(keysalt->data.data);
    }
    memset(keysalt, 0, sizeof(*keysalt));
}

/* key_data decrypts (with any master key) to the user marker. */
static krb5_boolean
is_user_marker(krb5_context context, const krb5_key_data *kd)
{
    krb5_keyblock key = { 0 };
    krb5_boolean marker = FALSE;

    if (krb5_dbe_decrypt_key_data(context, NULL, kd, &key, NULL) == 0)
        marker = holds_user_marker(&key);
    krb5_free_keyblock_contents(context, &key);
    return marker;
}

static krb5_boolean
entry_holds_markers(krb5_context context, const krb5_db_entry *entry)
{
    int i;

    for (i = 0; i < entry->n_key_data; i++) {
        if (MPC_KDC_USER_ALGORITHM(entry->key_data[i].key_data_type[0]) != 0 &&
            is_user_marker(context, &entry->key_data[i]))
            return TRUE;
    }
    return FALSE;
}

static krb5_error_code
add_key(struct mpc_engine_key **list, int *count, uint32_t kvno, int algorithm)
{
    struct mpc_engine_key *grown;
    int i;

    for (i = 0; i < *count; i++) {
        if ((*list)[i].kvno == kvno && (*list)[i].algorithm == algorithm)
            return 0;
    }
    grown = realloc(*list, (size_t)(*count + 1) * sizeof(**list));
    if (grown == NULL)
        return ENOMEM;
    grown[*count].kvno = kvno;
    grown[*count].algorithm = algorithm;
    *list = grown;
    (*count)++;
    return 0;
}

static krb5_boolean
entry_has_key(const krb5_db_entry *entry, uint32_t kvno, int algorithm)
{
    int i;

    for (i = 0; entry != NULL && i < entry->n_key_data; i++) {
        if (entry->key_data[i].key_data_kvno == kvno &&
            MPC_KDC_USER_ALGORITHM(entry->key_data[i].key_data_type[0]) == algorithm)
            return TRUE;
    }
    return FALSE;
}

/* The key_data of entry at (kvno, algorithm), or NULL. */
static const krb5_key_data *
find_key(const krb5_db_entry *entry, uint32_t kvno, int algorithm)
{
    int i;

    for (i = 0; entry != NULL && i < entry->n_key_data; i++) {
        if (entry->key_data[i].key_data_kvno == kvno &&
            MPC_KDC_USER_ALGORITHM(entry->key_data[i].key_data_type[0]) == algorithm)
            return &entry->key_data[i];
    }
    return NULL;
}

/* Every user-enctype key of old that entry (NULL: none) no longer has goes to retire. */
static krb5_error_code
plan_retirement(const krb5_db_entry *old, const krb5_db_entry *entry, mpc_enrollment *out)
{
    krb5_error_code ret = 0;
    int i, algorithm;

    for (i = 0; old != NULL && i < old->n_key_data && ret == 0; i++) {
        algorithm = MPC_KDC_USER_ALGORITHM(old->key_data[i].key_data_type[0]);
        if (algorithm != 0 && !entry_has_key(entry, old->key_data[i].key_data_kvno, algorithm))
            ret = add_key(&out->retire, &out->n_retire, old->key_data[i].key_data_kvno,
                          algorithm);
    }
    return ret;
}

/* Imports key as (key name, kvno, algorithm), removing what an earlier failed attempt may
 * have left under that id first. */
static krb5_error_code
import_key(krb5_context context, mpc_engine *engine, mpc_enrollment *out, uint32_t kvno,
           int algorithm, const krb5_keyblock *key)
{
    krb5_error_code ret;

    ret = engine_open(context, engine);
    if (ret)
        goto cleanup;
    (void)engine->delete_key(engine->client, out->key_name, kvno, algorithm);
    ret = add_key(&out->imported, &out->n_imported, kvno, algorithm);
    if (ret)
        goto cleanup;
    if (engine->import_key(engine->client, out->key_name, kvno, algorithm, key->contents,
                           key->length) != MPC_OK) {
        ret = KRB5_KDB_SERVER_INTERNAL_ERR;
        krb5_set_error_message(context, ret,
                               "mpc_kdb: cannot enrol the key of %s (kvno %u, %s) in the engine: "
                               "%s; the database is unchanged", out->principal,
                               (unsigned int)kvno, algorithm_name(algorithm),
                               engine->last_error(engine->client));
        goto cleanup;
    }

cleanup:
    return ret;
}

/* Replaces the key of kd by the user marker, encrypted under the master key of entry,
 * keeping enctype, kvno and salt. */
static krb5_error_code
replace_by_marker(krb5_context context, krb5_db_entry *entry, krb5_key_data *kd,
                  const krb5_keysalt *keysalt)
{
    uint8_t marker[MPC_KDC_USER_MARKER_LEN];
    krb5_keyblock *mkey = NULL;   /* owned by the context's master key list */
    krb5_keyblock block = { 0 };
    krb5_key_data fresh;
    krb5_error_code ret;

    memset(&fresh, 0, sizeof(fresh));
    memcpy(marker, MPC_KDC_USER_MARKER, sizeof(marker));
    ret = krb5_dbe_find_mkey(context, entry, &mkey);
    if (ret) {
        krb5_set_error_message(context, ret, "mpc_kdb: no master key for the keys of the entry");
        goto cleanup;
    }
    block.magic = KV5M_KEYBLOCK;
    block.enctype = kd->key_data_type[0];
    block.length = sizeof(marker);
    block.contents = marker;
    ret = krb5_dbe_encrypt_key_data(context, mkey, &block, keysalt, kd->key_data_kvno, &fresh);
    if (ret)
        goto cleanup;
    krb5_dbe_free_key_data_contents(context, kd);
    *kd = fresh;
    memset(&fresh, 0, sizeof(fresh));

cleanup:
    krb5_dbe_free_key_data_contents(context, &fresh);
    return ret;
}

/* The process is not dumpable while a user's key is in clear here (no core file; other
 * processes of the same user can neither ptrace it nor read /proc/PID/mem). Returns the
 * earlier setting, which end_key_window() restores once the key is wiped: kadmind enrols now
 * and then and keeps its own setting otherwise. The client library's import nests its own
 * guard inside (it restores what it found: not dumpable). */
static int
begin_key_window(void)
{
    int earlier = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);

    (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    return earlier < 0 ? 0 : earlier;
}

static void
end_key_window(int earlier)
{
    if (earlier > 0)
        (void)prctl(PR_SET_DUMPABLE, earlier, 0, 0, 0);
}

/* Enrols every real key of a marked entry; see user_enroll.h. */
static krb5_error_code
enrol_marked(krb5_context context, mpc_engine *engine, const krb5_db_entry *old,
             krb5_db_entry *entry, mpc_enrollment *out)
{
    krb5_keyblock key = { 0 };
    krb5_keysalt keysalt = { 0 };
    const krb5_key_data *previous;
    krb5_key_data *kd;
    char enctype_name[64];
    krb5_error_code ret = 0;
    int i, algorithm, dumpable = -1;
    uint32_t kvno;

    if (is_master_key_entry(entry) || is_admin_service(entry->princ)) {
        ret = KRB5_KDB_CONSTRAINT_VIOLATION;
        krb5_set_error_message(context, ret,
                               "mpc_kdb: %s cannot be marked %s: the KDC and the admin tools "
                               "use its keys themselves", out->principal, MPC_KDB_MARKER);
        goto cleanup;
    }
    for (i = 0; i < entry->n_key_data; i++) {
        kd = &entry->key_data[i];
        if (kd->key_data_type[0] == MPC_KDC_ENCTYPE_AES256_GCM ||
            MPC_KDC_USER_ALGORITHM(kd->key_data_type[0]) != 0)
            continue;
        if (krb5_enctype_to_name(kd->key_data_type[0], FALSE, enctype_name,
                                 sizeof(enctype_name)) != 0)
            snprintf(enctype_name, sizeof(enctype_name), "enctype %d", kd->key_data_type[0]);
        ret = KRB5_KDB_CONSTRAINT_VIOLATION;
        krb5_set_error_message(context, ret,
                               "mpc_kdb: %s is marked %s but has a key of %s (kvno %u): only "
                               "aes256-cts-hmac-sha1-96, aes128-cts-hmac-sha1-96, "
                               "aes128-cts-hmac-sha256-128 and aes256-cts-hmac-sha384-192 keys can "
                               "be protected (change its keys with -e aes256-cts-hmac-sha1-96:normal)",
                               out->principal, MPC_KDB_MARKER, enctype_name,
                               (unsigned int)kd->key_data_kvno);
        goto cleanup;
    }
    dumpable = begin_key_window();
    for (i = 0; i < entry->n_key_data; i++) {
        kd = &entry->key_data[i];
        algorithm = MPC_KDC_USER_ALGORITHM(kd->key_data_type[0]);
        if (algorithm == 0)
            continue;
        kvno = kd->key_data_kvno;
        ret = krb5_dbe_decrypt_key_data(context, NULL, kd, &key, &keysalt);
        if (ret) {
            krb5_prepend_error_message(context, ret, "mpc_kdb: cannot read the %s key of %s "
                                       "(kvno %u) to enrol it", algorithm_name(algorithm),
                                       out->principal, (unsigned int)kvno);
            goto cleanup;
        }
        if (holds_user_marker(&key))
            goto next;   /* enrolled before */
        if (key.length != mpc_key_algorithm_by_id(algorithm)->key_bytes) {
            ret = KRB5_KDB_CONSTRAINT_VIOLATION;
            krb5_set_error_message(context, ret, "mpc_kdb: the %s key of %s (kvno %u) has %u "
                                   "bytes", algorithm_name(algorithm), out->principal,
                                   (unsigned int)kvno, key.length);
            goto cleanup;
        }
        /* The same id already enrolled for another key would be overwritten in the engine
         * while the stored entry still refers to it. */
        previous = find_key(old, kvno, algorithm);
        if (previous != NULL && is_user_marker(context, previous)) {
            ret = KRB5_KDB_CONSTRAINT_VIOLATION;
            krb5_set_error_message(context, ret,
                                   "mpc_kdb: kvno %u of %s (%s) is already enrolled in the "
                                   "engine for another key; give the new key a new kvno",
                                   (unsigned int)kvno, out->principal,
                                   algorithm_name(algorithm));
            goto cleanup;
        }
        ret = import_key(context, engine, out, kvno, algorithm, &key);
        if (ret)
            goto cleanup;
        ret = replace_by_marker(context, entry, kd, &keysalt);
        if (ret)
            goto cleanup;
    next:
        krb5_free_keyblock_contents(context, &key);
        memset(&key, 0, sizeof(key));
        free_keysalt(&keysalt);
    }
    ret = plan_retirement(old, entry, out);

cleanup:
    krb5_free_keyblock_contents(context, &key);
    free_keysalt(&keysalt);
    if (dumpable >= 0)
        end_key_window(dumpable);
    return ret;
}

/* An unmarked entry: refuse stored user markers, retire the old entry's engine keys. */
static krb5_error_code
check_unmarked(krb5_context context, const krb5_db_entry *old, krb5_db_entry *entry,
               mpc_enrollment *out)
{
    krb5_error_code ret = 0;

    if (entry_holds_markers(context, entry)) {
        ret = KRB5_KDB_CONSTRAINT_VIOLATION;
        krb5_set_error_message(context, ret,
                               "mpc_kdb: %s holds engine key markers but would no longer be "
                               "marked %s (krb5kdc would take the markers for keys); unprotect "
                               "it with `mpcctl kdc unprotect %s --randkey`", out->principal,
                               MPC_KDB_MARKER, out->principal);
        goto cleanup;
    }
    ret = plan_retirement(old, entry, out);

cleanup:
    return ret;
}

static krb5_error_code
name_enrollment(krb5_context context, krb5_const_principal principal, mpc_enrollment *out)
{
    mpc_kdb_key_id id;
    krb5_error_code ret;

    ret = krb5_unparse_name(context, principal, &out->principal);
    if (ret)
        return ret;
    memset(&id, 0, sizeof(id));
    if (mpc_kdb_name_hash(out->principal, strlen(out->principal), id.name_hash) != 0) {
        ret = KRB5_CRYPTO_INTERNAL;
        krb5_set_error_message(context, ret, "mpc_kdb: cannot hash the name %s", out->principal);
        return ret;
    }
    mpc_kdc_engine_key_name(&id, out->key_name);
    return 0;
}

krb5_error_code
mpc_enroll_before_put(krb5_context context, mpc_engine *engine,
                      krb5_error_code (*get_old)(krb5_context, krb5_const_principal,
                                                 unsigned int, krb5_db_entry **),
                      krb5_db_entry *entry, mpc_enrollment *out)
{
    krb5_boolean marked = FALSE, old_marked = FALSE;
    krb5_db_entry *old = NULL;
    krb5_error_code ret = 0;

    memset(out, 0, sizeof(*out));
    /* Without the master key nothing can be read or enrolled (kdb5_util load copies). */
    if (entry == NULL || entry->princ == NULL || is_tgs(entry->princ) ||
        krb5_db_mkey_list_alias(context) == NULL)
        goto cleanup;
    ret = mpc_entry_is_marked(context, entry, &marked);
    if (ret)
        goto cleanup;
    ret = get_old(context, entry->princ, 0, &old);
    if (ret == KRB5_KDB_NOENTRY) {
        old = NULL;
        ret = 0;
    }
    if (ret)
        goto cleanup;
    if (old != NULL) {
        ret = mpc_entry_is_marked(context, old, &old_marked);
        if (ret)
            goto cleanup;
    }
    if (!marked && !old_marked)
        goto cleanup;
    ret = name_enrollment(context, entry->princ, out);
    if (ret)
        goto cleanup;
    if (marked && old == NULL && entry_holds_markers(context, entry)) {
        /* libkdb5 renames by storing the entry under the new name, then deleting the old
         * one: the engine keys would stay under the old name. */
        ret = KRB5_KDB_CONSTRAINT_VIOLATION;
        krb5_set_error_message(context, ret,
                               "mpc_kdb: %s would be a new principal holding engine key markers "
                               "(a protected principal cannot be renamed: unprotect it first)",
                               out->principal);
        goto cleanup;
    }
    if (marked)
        ret = enrol_marked(context, engine, old_marked ? old : NULL, entry, out);
    else
        ret = check_unmarked(context, old, entry, out);
    if (ret) {
        mpc_enroll_finish(context, engine, out, 0);
        goto cleanup;
    }

cleanup:
    if (old != NULL)
        krb5_db_free_principal(context, old);
    return ret;
}

krb5_error_code
mpc_enroll_before_delete(krb5_context context,
                         krb5_error_code (*get_old)(krb5_context, krb5_const_principal,
                                                    unsigned int, krb5_db_entry **),
                         krb5_const_principal principal, mpc_enrollment *out)
{
    krb5_boolean marked = FALSE;
    krb5_db_entry *old = NULL;
    krb5_error_code ret = 0;

    memset(out, 0, sizeof(*out));
    if (principal == NULL || is_tgs(principal))
        goto cleanup;
    ret = get_old(context, principal, 0, &old);
    if (ret) {
        ret = 0;   /* the deletion itself reports a missing entry */
        goto cleanup;
    }
    ret = mpc_entry_is_marked(context, old, &marked);
    if (ret || !marked)
        goto cleanup;
    ret = name_enrollment(context, old->princ, out);
    if (ret == 0)
        ret = plan_retirement(old, NULL, out);

cleanup:
    if (old != NULL)
        krb5_db_free_principal(context, old);
    return ret;
}

void
mpc_enroll_finish(krb5_context context, mpc_engine *engine, mpc_enrollment *enrollment,
                  int stored)
{
    int i;

    if (engine != NULL && enrollment->principal != NULL) {
        if (stored) {
            for (i = 0; i < enrollment->n_retire; i++)
                delete_logged(context, engine, enrollment, &enrollment->retire[i]);
        } else {
            for (i = 0; i < enrollment->n_imported; i++)
                delete_logged(context, engine, enrollment, &enrollment->imported[i]);
        }
    }
    mpc_enrollment_release(enrollment);
}

void
mpc_enrollment_release(mpc_enrollment *enrollment)
{
    free(enrollment->principal);
    free(enrollment->imported);
    free(enrollment->retire);
    memset(enrollment, 0, sizeof(*enrollment));
}
