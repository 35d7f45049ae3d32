/* kdc-plugin/router/checksum_chain.c - a PAC's KDC checksum made ahead (checksum_chain.h). */

#include "checksum_chain.h"

#include <string.h>

#include <openssl/crypto.h>

static int
same_key(const mpc_kdb_key_id *a, const mpc_kdb_key_id *b)
{
    return memcmp(a->name_hash, b->name_hash, sizeof(a->name_hash)) == 0 && a->kvno == b->kvno &&
           a->enctype == b->enctype;
}

int
checksum_chain_can_hold(const checksum_chain *chain, uint64_t now_ms)
{
    return now_ms >= chain->paused_until_ms && chain->state != CHAIN_SERVED;
}

void
checksum_chain_hold(checksum_chain *chain, const mpc_kdb_key_id *key,
                    const uint8_t server_checksum[MPC_KDC_CHECKSUM_LEN],
                    const uint8_t kdc_checksum[MPC_KDC_CHECKSUM_LEN])
{
    chain->state = CHAIN_HELD;
    chain->key = *key;
    memcpy(chain->server_checksum, server_checksum, MPC_KDC_CHECKSUM_LEN);
    memcpy(chain->kdc_checksum, kdc_checksum, MPC_KDC_CHECKSUM_LEN);
}

int
checksum_chain_serve(checksum_chain *chain, const mpc_kdb_key_id *key, krb5_keyusage usage,
                     const uint8_t *data, size_t len, uint8_t out[MPC_KDC_CHECKSUM_LEN])
{
    if (chain->state != CHAIN_HELD || usage != KRB5_KEYUSAGE_APP_DATA_CKSUM ||
        len != MPC_KDC_CHECKSUM_LEN || !same_key(&chain->key, key) ||
        CRYPTO_memcmp(data, chain->server_checksum, MPC_KDC_CHECKSUM_LEN) != 0)
        return 0;
    memcpy(out, chain->kdc_checksum, MPC_KDC_CHECKSUM_LEN);
    chain->state = CHAIN_SERVED;
    return 1;
}

int
checksum_chain_awaits_check(const checksum_chain *chain, const mpc_kdb_key_id *key)
{
    return chain->state == CHAIN_SERVED && same_key(&chain->key, key);
}

void
checksum_chain_clear(checksum_chain *chain)
{
    const uint64_t paused_until_ms = chain->paused_until_ms;

    OPENSSL_cleanse(chain, sizeof(*chain));
    chain->state = CHAIN_EMPTY;
    chain->paused_until_ms = paused_until_ms;
}
