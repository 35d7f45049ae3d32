/* tests/integration/kdc/audit_writing_backend.c - a KDB back end that stores the server entry
 * audit_as_req hands it, as a back end other than MIT's db2 and klmdb may.
 *
 * It is db2 (DB2_MODULE, whose table it copies when loaded) but for audit_as_req, which runs
 * db2's and then stores the server's entry as given, its last_success set to the request's
 * time so that a test sees it was stored. mpc_kdb must hand such a back end the real entry,
 * read afresh, never the KDC's copy with handles in its keys: those would be stored over the
 * keys. Built by the tests (conftest.py, audit_writing_backend).
 */
#include <dlfcn.h>
#include <kdb.h>
#include <stdlib.h>

kdb_vftabl kdb_function_table;

static void (*db2_audit_as_req)(krb5_context, krb5_kdc_req *, const krb5_address *,
                                const krb5_address *, krb5_db_entry *, krb5_db_entry *,
                                krb5_timestamp, krb5_error_code);

static void
audit_and_store_server(krb5_context context, krb5_kdc_req *request,
                       const krb5_address *local_addr, const krb5_address *remote_addr,
                       krb5_db_entry *client, krb5_db_entry *server, krb5_timestamp authtime,
                       krb5_error_code error_code)
{
    if (db2_audit_as_req != NULL)
        db2_audit_as_req(context, request, local_addr, remote_addr, client, server, authtime,
                         error_code);
    if (server == NULL)
        return;
    server->last_success = authtime != 0 ? authtime : 1;
    (void)kdb_function_table.put_principal(context, server, NULL);
}

__attribute__((constructor)) static void
load_db2(void)
{
    void *dl = dlopen(DB2_MODULE, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    const kdb_vftabl *db2 = dl != NULL ? dlsym(dl, "kdb_function_table") : NULL;

    if (db2 == NULL)
        abort();
    kdb_function_table = *db2;
    db2_audit_as_req = db2->audit_as_req;
    kdb_function_table.audit_as_req = audit_and_store_server;
}
