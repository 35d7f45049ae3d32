/* kdc-plugin/shared/router_kdb_interface.h - what the crypto router tells the KDB module when
 * both run in one krb5kdc process.
 *
 * Why there is an interface: krb5kdc 1.20.1's preauth verifiers turn every decrypt error
 * into PREAUTH_FAILED, which the database back end counts against the user's lockout when
 * the KDB module's audit_as_req passes it on. A preauth decryption under a protected key that
 * ended without a verdict on the data (the engine down, unreachable or failing, or the router
 * refusing the handle) says nothing about the password: counting it would lock users out
 * during an engine outage. Only the router sees the decryption; only the KDB module audits
 * the request.
 *
 * How: the router (mpc_crypto_router.so, LD_PRELOADed into krb5kdc) exports one function of
 * its own, mpc_router_undecided_decrypts, under the symbol version node MPC_ROUTER_KDB_1
 * (its linker version script includes this file). mpc_kdb.so resolves it once per process
 * with dlvsym(RTLD_DEFAULT, MPC_ROUTER_KDB_FUNCTION_NAME, MPC_ROUTER_KDB_NODE_NAME). Not
 * found (kadmind, kdb5_util, a krb5kdc without the router, a router without this version):
 * nothing is ever undecided, and every preauth failure counts as it would without the
 * engine.
 *
 * Version boundary: node MPC_ROUTER_KDB_1 holds mpc_router_undecided_decrypts with the
 * meaning below. A function added later goes under a new node MPC_ROUTER_KDB_2 that inherits
 * MPC_ROUTER_KDB_1; a changed meaning takes a new name under a new node, so that a KDB
 * module and a router from different builds never misread each other.
 */
#ifndef MPC_ROUTER_KDB_INTERFACE_H
#define MPC_ROUTER_KDB_INTERFACE_H

/* The version node and the function, as tokens (the linker version script) and strings
 * (dlvsym). */
#define MPC_ROUTER_KDB_NODE MPC_ROUTER_KDB_1
#define MPC_ROUTER_KDB_FUNCTION mpc_router_undecided_decrypts
#define MPC_ROUTER_KDB_NODE_NAME "MPC_ROUTER_KDB_1"
#define MPC_ROUTER_KDB_FUNCTION_NAME "mpc_router_undecided_decrypts"

#ifndef MPC_ROUTER_VERSION_SCRIPT

#ifdef __cplusplus
extern "C" {
#endif

/* The number of preauth decryptions (key usages 1, PA-ENC-TIMESTAMP, and 54, the encrypted
 * challenge) under a handle that ended without a verdict on the data, since the process
 * started. It only grows (modulo ULONG_MAX + 1); a caller compares it with what it saw
 * before. Any thread may call it; it takes no lock. Preauth decryptions happen only in AS
 * requests and a krb5kdc process handles one request at a time, so a count that moved
 * between two audits moved in the request being audited. */
unsigned long mpc_router_undecided_decrypts(void);

typedef unsigned long (*mpc_router_undecided_decrypts_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* MPC_ROUTER_VERSION_SCRIPT */

#endif /* MPC_ROUTER_KDB_INTERFACE_H */
