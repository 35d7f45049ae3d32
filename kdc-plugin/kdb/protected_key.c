/* kdc-plugin/kdb/protected_key.c - engine key names and the enrolled ticket key.
 *
 * Format and rationale: protected_key.h.
 */

#include "protected_key.h"

#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

static const char ticket_key_label[] = "mpc-kdc aes256-gcm ticket key v1";

void
mpc_kdc_engine_key_name(const mpc_kdb_key_id *id, char out[MPC_KDC_ENGINE_KEY_NAME_LEN])
{
    static const char hex[] = "0123456789abcdef";
    size_t i;

    memcpy(out, "kdc/", 4);
    for (i = 0; i < MPC_KDB_NAME_HASH_LEN; i++) {
        out[4 + 2 * i] = hex[id->name_hash[i] >> 4];
        out[5 + 2 * i] = hex[id->name_hash[i] & 0x0f];
    }
    out[MPC_KDC_ENGINE_KEY_NAME_LEN - 1] = '\0';
}

int
mpc_kdc_ticket_key_from_existing(const uint8_t *existing, size_t existing_len, uint8_t out[32])
{
    unsigned int out_len = 0;

    if (existing == NULL || existing_len == 0 ||
        HMAC(EVP_sha256(), existing, (int)existing_len, (const uint8_t *)ticket_key_label,
             sizeof(ticket_key_label) - 1, out, &out_len) == NULL ||
        out_len != 32) {
        OPENSSL_cleanse(out, 32);
        return -1;
    }
    return 0;
}
