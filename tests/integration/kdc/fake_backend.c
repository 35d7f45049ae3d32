/* tests/integration/kdc/fake_backend.c - KDB back ends that mpc_kdb must refuse to wrap.
 *
 * Built twice by the tests: -DFAKE_MAJ_VER=8 (a module of another DAL major version) and
 * -DFAKE_MAJ_VER=9 -DFAKE_CHANGE_PWD (a module overriding change_pwd, a slot whose
 * libkdb5 default the wrapper relies on). Neither may ever be initialised: every method
 * fails loudly.
 */
#include <kdb.h>

static krb5_error_code
fake_init_library(void)
{
    return KRB5_KDB_DBTYPE_INIT;
}

static krb5_error_code
fake_fini_library(void)
{
    return 0;
}

static krb5_error_code
fake_init_module(krb5_context context, char *conf_section, char **db_args, int mode)
{
    return KRB5_KDB_DBTYPE_INIT;
}

static krb5_error_code
fake_fini_module(krb5_context context)
{
    return 0;
}

static krb5_error_code
fake_get_principal(krb5_context context, krb5_const_principal search_for,
                   unsigned int flags, krb5_db_entry **entry)
{
    *entry = NULL;
    return KRB5_KDB_NOENTRY;
}

#ifdef FAKE_CHANGE_PWD
static krb5_error_code
fake_change_pwd(krb5_context context, krb5_keyblock *master_key,
                krb5_key_salt_tuple *ks_tuple, int ks_tuple_count, char *passwd,
                int new_kvno, krb5_boolean keepold, krb5_db_entry *db_entry)
{
    return KRB5_KDB_DBTYPE_INIT;
}
#endif

kdb_vftabl kdb_function_table = {
    .maj_ver = FAKE_MAJ_VER,
    .min_ver = 0,
    .init_library = fake_init_library,
    .fini_library = fake_fini_library,
    .init_module = fake_init_module,
    .fini_module = fake_fini_module,
    .get_principal = fake_get_principal,
#ifdef FAKE_CHANGE_PWD
    .change_pwd = fake_change_pwd,
#endif
};
