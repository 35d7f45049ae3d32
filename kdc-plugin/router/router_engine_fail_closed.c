/* kdc-plugin/router/router_engine_fail_closed.c - the engine side of the crypto
 * router in a build without engine operations for protected keys: every operation
 * on a protected key is refused (fails closed).
 *
 * Interface: router_engine.h. Reads: the cluster configuration path only, to check
 * that it names a readable regular file (mpc_client_open will parse it once there
 * are jobs to send). Refusing is the designed fail-closed behaviour: a handle never
 * reaches libk5crypto, and the request that needed it fails with
 * KRB5_CRYPTO_INTERNAL (the reasoning is in mpc_crypto_router.c).
 */

#include "router_engine.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct router_engine {
    char *cluster_config;
};

static krb5_error_code
refuse(const char *op, char *why, size_t why_len)
{
    if (why != NULL && why_len > 0)
        snprintf(why, why_len,
                 "%s with a protected key refused: this build has no engine "
                 "operations for protected keys (fail closed)", op);
    return KRB5_CRYPTO_INTERNAL;
}

krb5_error_code
router_engine_open(const char *cluster_config, router_engine **out, char *why, size_t why_len)
{
    router_engine *engine = NULL;
    krb5_error_code ret;
    struct stat st;
    int fd = -1;

    *out = NULL;
    if (why != NULL && why_len > 0)
        why[0] = '\0';
    if (cluster_config == NULL || cluster_config[0] == '\0') {
        snprintf(why, why_len, "no engine cluster configuration named");
        ret = EINVAL;
        goto cleanup;
    }
    fd = open(cluster_config, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        ret = errno;
        snprintf(why, why_len, "cannot open engine cluster configuration %s: %s",
                 cluster_config, strerror(ret));
        goto cleanup;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, why_len, "engine cluster configuration %s is not a regular file",
                 cluster_config);
        ret = EINVAL;
        goto cleanup;
    }
    engine = calloc(1, sizeof(*engine));
    if (engine == NULL || (engine->cluster_config = strdup(cluster_config)) == NULL) {
        snprintf(why, why_len, "out of memory");
        ret = ENOMEM;
        goto cleanup;
    }
    *out = engine;
    engine = NULL;
    ret = 0;

cleanup:
    if (fd >= 0)
        close(fd);
    router_engine_close(engine);
    return ret;
}

void
router_engine_close(router_engine *engine)
{
    if (engine == NULL)
        return;
    free(engine->cluster_config);
    free(engine);
}

krb5_error_code
router_engine_encrypt(router_engine *engine, const mpc_kdb_key_id *key, krb5_keyusage usage,
                      const krb5_data *cipher_state, const krb5_data *input,
                      krb5_enc_data *output, char *why, size_t why_len)
{
    (void)engine; (void)key; (void)usage; (void)cipher_state; (void)input; (void)output;
    return refuse("encrypt", why, why_len);
}

krb5_error_code
router_engine_decrypt(router_engine *engine, const mpc_kdb_key_id *key, krb5_keyusage usage,
                      const krb5_data *cipher_state, const krb5_enc_data *input,
                      krb5_data *output, char *why, size_t why_len)
{
    (void)engine; (void)key; (void)usage; (void)cipher_state; (void)input; (void)output;
    return refuse("decrypt", why, why_len);
}

krb5_error_code
router_engine_encrypt_iov(router_engine *engine, const mpc_kdb_key_id *key, krb5_keyusage usage,
                          const krb5_data *cipher_state, krb5_crypto_iov *data,
                          size_t num_data, char *why, size_t why_len)
{
    (void)engine; (void)key; (void)usage; (void)cipher_state; (void)data; (void)num_data;
    return refuse("encrypt_iov", why, why_len);
}

krb5_error_code
router_engine_decrypt_iov(router_engine *engine, const mpc_kdb_key_id *key, krb5_keyusage usage,
                          const krb5_data *cipher_state, krb5_crypto_iov *data,
                          size_t num_data, char *why, size_t why_len)
{
    (void)engine; (void)key; (void)usage; (void)cipher_state; (void)data; (void)num_data;
    return refuse("decrypt_iov", why, why_len);
}

krb5_error_code
router_engine_make_checksum(router_engine *engine, const mpc_kdb_key_id *key,
                            krb5_cksumtype cksumtype, krb5_keyusage usage,
                            const krb5_data *input, krb5_checksum *cksum,
                            char *why, size_t why_len)
{
    (void)engine; (void)key; (void)cksumtype; (void)usage; (void)input; (void)cksum;
    return refuse("make_checksum", why, why_len);
}

krb5_error_code
router_engine_verify_checksum(router_engine *engine, const mpc_kdb_key_id *key,
                              krb5_keyusage usage, const krb5_data *data,
                              const krb5_checksum *cksum, krb5_boolean *valid,
                              char *why, size_t why_len)
{
    (void)engine; (void)key; (void)usage; (void)data; (void)cksum; (void)valid;
    return refuse("verify_checksum", why, why_len);
}

krb5_error_code
router_engine_make_checksum_iov(router_engine *engine, const mpc_kdb_key_id *key,
                                krb5_cksumtype cksumtype, krb5_keyusage usage,
                                krb5_crypto_iov *data, size_t num_data,
                                char *why, size_t why_len)
{
    (void)engine; (void)key; (void)cksumtype; (void)usage; (void)data; (void)num_data;
    return refuse("make_checksum_iov", why, why_len);
}

krb5_error_code
router_engine_verify_checksum_iov(router_engine *engine, const mpc_kdb_key_id *key,
                                  krb5_cksumtype cksumtype, krb5_keyusage usage,
                                  const krb5_crypto_iov *data, size_t num_data,
                                  krb5_boolean *valid, char *why, size_t why_len)
{
    (void)engine; (void)key; (void)cksumtype; (void)usage; (void)data; (void)num_data;
    (void)valid;
    return refuse("verify_checksum_iov", why, why_len);
}

krb5_error_code
router_engine_prf(router_engine *engine, const mpc_kdb_key_id *key, const krb5_data *input,
                  krb5_data *output, char *why, size_t why_len)
{
    (void)engine; (void)key; (void)input; (void)output;
    return refuse("prf", why, why_len);
}

krb5_error_code
router_engine_prfplus(router_engine *engine, const mpc_kdb_key_id *key, const krb5_data *input,
                      krb5_data *output, char *why, size_t why_len)
{
    (void)engine; (void)key; (void)input; (void)output;
    return refuse("prfplus", why, why_len);
}

krb5_error_code
router_engine_derive_prfplus(router_engine *engine, const mpc_kdb_key_id *key,
                             const krb5_data *input, krb5_enctype enctype, krb5_keyblock **out,
                             char *why, size_t why_len)
{
    (void)engine; (void)key; (void)input; (void)enctype; (void)out;
    return refuse("derive_prfplus", why, why_len);
}

krb5_error_code
router_engine_cf2(router_engine *engine, const router_key *k1, const char *pepper1,
                  const router_key *k2, const char *pepper2, krb5_keyblock **out,
                  char *why, size_t why_len)
{
    (void)engine; (void)k1; (void)pepper1; (void)k2; (void)pepper2; (void)out;
    return refuse("fx_cf2_simple", why, why_len);
}

krb5_error_code
router_engine_init_state(router_engine *engine, const mpc_kdb_key_id *key, krb5_keyusage usage,
                         krb5_data *new_state, char *why, size_t why_len)
{
    (void)engine; (void)key; (void)usage; (void)new_state;
    return refuse("init_state", why, why_len);
}
