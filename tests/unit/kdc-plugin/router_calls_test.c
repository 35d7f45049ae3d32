/* tests/unit/kdc-plugin/router_calls_test.c - calls every entry point that
 * mpc_crypto_router.so interposes, with a real key, with key handles, and with the
 * private enctype and checksum type of the protected krbtgt key.
 *
 * Run with LD_PRELOAD=mpc_crypto_router.so (CMake sets it; without it the test
 * fails, saying so). It writes its own router configuration, handle key and engine
 * cluster configuration into a temporary directory and points MPC_ROUTER_CONFIG at it.
 * The cluster configuration is valid but names no running server (loopback port 1):
 * the engine's own round trips are tested against a real cluster in
 * tests/integration/kdc/test_router_engine.py.
 *
 * Per function: with a real AES-256 key the result equals libk5crypto's own
 * definition called directly (dlvsym on libk5crypto.so.3, bypassing the router), or
 * round-trips where the output is randomised; with a valid handle of an enctype the
 * engine does not serve (camellia256-cts-cmac) the call fails with KRB5_CRYPTO_INTERNAL and the
 * router's message; with a forged handle (one tag bit flipped) it fails with "failed
 * authentication". With valid handles of enctypes 18 and 17 (users' and services' keys):
 * lengths, checksum types and ciphertext enctypes are checked as libk5crypto does, usages
 * other than 1, 2, 3, 17, 56, cipher states and the entry points krb5kdc never uses with
 * them are refused naming the call, usage and key, and engine calls fail with the
 * engine's "unreachable" (then at once, "next try in") leaving no plaintext. With a valid
 * handle of the private enctype:
 * checks made before any engine call (lengths, types, cipher state) answer as
 * libk5crypto does, engine calls fail with the engine's "unreachable" message, and the
 * entry points never served with the krbtgt key are refused with their reason. Every
 * keyless entry point (and libkrb5's krb5_is_permitted_enctype) gives libk5crypto's
 * (libkrb5's) answer for real types, including unknown ones, and the private format's
 * for the private types; krb5_decrypt_tkt_part, inside libkrb5, reaches the engine with
 * a ticket of the private enctype. Exit status 0 on success.
 */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <krb5/krb5.h>

#include "handle.h"
#include "protected_key.h"

#include "router_calls.h"

/* A throwaway CurveZMQ key pair (mpcctl keygen) for the engine client: it is never used
 * to talk to anything, the servers named with it do not exist. */
static const char client_key_file[] =
    "secret-key =qm)s)Q#w@=IV8TLxVwlpuN0iTHX-f&)sXM72>v]\n"
    "public-key K.z+fF7TF}FKUvLjS-/R/D^m6*rFMe4Z%meJ4A)Z\n";
#define SERVER_PUBLIC_KEY "K.z+fF7TF}FKUvLjS-/R/D^m6*rFMe4Z%meJ4A)Z"

int
main(void)
{
    char dir[] = "/tmp/router-calls-XXXXXX", path[512], conf[2048], keyfile[512], cluster[512];
    char clientkey[512];
    uint8_t hkey[MPC_KDB_HANDLE_KEY_LEN], handle[MPC_KDB_HANDLE_LEN];
    mpc_kdb_key_id id;
    krb5_keyblock real, hk, forged;
    Dl_info info;
    void *sym;
    size_t i;

    sym = dlsym(RTLD_DEFAULT, "krb5_c_encrypt");
    if (sym == NULL || dladdr(sym, &info) == 0 || info.dli_fname == NULL ||
        strstr(info.dli_fname, "mpc_crypto_router") == NULL) {
        fprintf(stderr, "krb5_c_encrypt is not the router's: run with "
                "LD_PRELOAD=mpc_crypto_router.so\n");
        return 2;
    }
    k5crypto = dlopen("libk5crypto.so.3", RTLD_LAZY | RTLD_NOLOAD);
    k5krb5 = dlopen("libkrb5.so.3", RTLD_LAZY | RTLD_NOLOAD);
    if (k5crypto == NULL || k5krb5 == NULL || mkdtemp(dir) == NULL ||
        krb5_init_context(&ctx) != 0)
        return 2;
    for (i = 0; i < sizeof(hkey); i++)
        hkey[i] = (uint8_t)(i * 7 + 1);
    snprintf(keyfile, sizeof(keyfile), "%s/handle.key", dir);
    snprintf(cluster, sizeof(cluster), "%s/cluster.toml", dir);
    write_file(keyfile, hkey, sizeof(hkey), 0600);
    snprintf(clientkey, sizeof(clientkey), "%s/client.key", dir);
    write_file(clientkey, client_key_file, strlen(client_key_file), 0600);
    /* Port 1 on loopback: nothing listens, every engine call ends as unreachable. */
    snprintf(conf, sizeof(conf),
             "protocol = \"rss3\"\ntimeout_ms = 400\nsecret_key_file = \"%s\"\n"
             "[[servers]]\nparty = 1\nendpoint = \"tcp://127.0.0.1:1\"\n"
             "public_key = \"%s\"\n"
             "[[servers]]\nparty = 2\nendpoint = \"tcp://127.0.0.2:1\"\n"
             "public_key = \"%s\"\n"
             "[[servers]]\nparty = 3\nendpoint = \"tcp://127.0.0.3:1\"\n"
             "public_key = \"%s\"\n", clientkey, SERVER_PUBLIC_KEY, SERVER_PUBLIC_KEY,
             SERVER_PUBLIC_KEY);
    write_file(cluster, conf, strlen(conf), 0600);
    snprintf(conf, sizeof(conf), "# test\nhandle_key_file = %s\nengine_config = %s\n"
             "pool_low = 2\npool_high = 8\n", keyfile, cluster);
    snprintf(path, sizeof(path), "%s/router.conf", dir);
    write_file(path, conf, strlen(conf), 0600);
    setenv("MPC_ROUTER_CONFIG", path, 1);

    memset(&real, 0, sizeof(real));
    CHECK(krb5_c_make_random_key(ctx, ENCTYPE_AES256_CTS_HMAC_SHA1_96, &real) == 0, "key");
    real_key(&real);

    /* A valid handle of an enctype the engine does not serve (camellia256-cts-cmac): refused. */
    memset(&id, 0, sizeof(id));
    id.kvno = 1;
    id.enctype = ENCTYPE_CAMELLIA256_CTS_CMAC;
    if (mpc_kdb_name_hash("svc/host@MPC.TEST", 17, id.name_hash) != 0 ||
        mpc_kdb_handle_encode(hkey, &id, handle) != 0)
        return 2;
    memset(&hk, 0, sizeof(hk));
    hk.enctype = ENCTYPE_CAMELLIA256_CTS_CMAC;
    hk.length = MPC_KDB_HANDLE_LEN;
    hk.contents = handle;
    one_handle(&hk, "the engine serves only keys of enctypes " MPC_KDC_ENCTYPE_NAME);

    /* A forged handle of a served enctype: refused before any engine call. */
    id.enctype = ENCTYPE_AES256_CTS_HMAC_SHA1_96;
    if (mpc_kdb_handle_encode(hkey, &id, handle) != 0)
        return 2;
    hk.enctype = ENCTYPE_AES256_CTS_HMAC_SHA1_96;
    forged = hk;
    forged.contents = malloc(MPC_KDB_HANDLE_LEN);
    memcpy(forged.contents, handle, MPC_KDB_HANDLE_LEN);
    forged.contents[MPC_KDB_HANDLE_LEN - 1] ^= 0x01;
    one_handle(&forged, "failed authentication");
    free(forged.contents);

    keyless();

    /* Protected users' and services' keys: valid handles of enctypes 18 and 17. */
    user_handle(&hk, &real);
    id.enctype = ENCTYPE_AES128_CTS_HMAC_SHA1_96;
    if (mpc_kdb_name_hash("alice@MPC.TEST", 14, id.name_hash) != 0 ||
        mpc_kdb_handle_encode(hkey, &id, handle) != 0)
        return 2;
    hk.enctype = ENCTYPE_AES128_CTS_HMAC_SHA1_96;
    user_handle(&hk, &real);

    /* The protected krbtgt key: a handle of the private enctype. */
    id.enctype = MPC_KDC_ENCTYPE_AES256_GCM;
    if (mpc_kdb_name_hash("krbtgt/MPC.TEST@MPC.TEST", 24, id.name_hash) != 0 ||
        mpc_kdb_handle_encode(hkey, &id, handle) != 0)
        return 2;
    hk.enctype = MPC_KDC_ENCTYPE_AES256_GCM;
    private_handle(&hk);

    krb5_free_keyblock_contents(ctx, &real);
    krb5_free_context(ctx);
    unlink(keyfile);
    unlink(clientkey);
    unlink(cluster);
    unlink(path);
    rmdir(dir);
    printf("%d checks, %d failures\n", checks, failures);
    return failures == 0 ? 0 : 1;
}
