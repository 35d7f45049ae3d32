/* mpc-engine/keys/protected_key.c - engine key names and the enrolled ticket key of protected
 * keys.
 *
 * Format and rationale: protected_key.h. Reads no configuration.
 */

#include "keys/protected_key.h"

#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

static const char name_hash_prefix[] = "mpc-kdc principal v1"; /* hashed with its NUL */
static const char ticket_key_label[] = "mpc-kdc aes256-gcm ticket key v1"; /* without its NUL */
static const char engine_name_prefix[] = "kdc/";

_Static_assert(sizeof(engine_name_prefix) - 1 + 2 * MPC_PROTECTED_KEY_NAME_HASH_LEN + 1 ==
                   MPC_PROTECTED_KEY_ENGINE_NAME_LEN,
               "the engine name is the prefix, the hash in hex and a NUL");
_Static_assert(sizeof(MPC_PROTECTED_KEY_MARKER) == MPC_PROTECTED_KEY_MARKER_LEN,
               "the marker's length counts its padding NULs");
_Static_assert(sizeof(MPC_PROTECTED_KEY_USER_MARKER) == MPC_PROTECTED_KEY_USER_MARKER_LEN,
               "the user marker's length counts its padding NUL");

int
mpc_protected_key_is_marked(const char *value)
{
    static const char *const off[] = { "0", "false", "no", "off" };
    size_t i;

    if (value == NULL)
        return 0;
    for (i = 0; i < sizeof(off) / sizeof(off[0]); i++) {
        if (strcasecmp(value, off[i]) == 0)
            return 0;
    }
    return 1;
}

int
mpc_protected_key_name_hash(const char *name, size_t len, uint8_t out[MPC_PROTECTED_KEY_NAME_HASH_LEN])
{
    uint8_t digest[EVP_MAX_MD_SIZE];
    unsigned int digest_len = 0;
    EVP_MD_CTX *md = NULL;
    int ret = -1;

    memset(out, 0, MPC_PROTECTED_KEY_NAME_HASH_LEN);
    if (name == NULL && len != 0)
        goto cleanup;
    md = EVP_MD_CTX_new();
    if (md == NULL)
        goto cleanup;
    if (EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1 ||
        EVP_DigestUpdate(md, name_hash_prefix, sizeof(name_hash_prefix)) != 1 ||
        (len != 0 && EVP_DigestUpdate(md, name, len) != 1) ||
        EVP_DigestFinal_ex(md, digest, &digest_len) != 1 ||
        digest_len < MPC_PROTECTED_KEY_NAME_HASH_LEN)
        goto cleanup;
    memcpy(out, digest, MPC_PROTECTED_KEY_NAME_HASH_LEN);
    ret = 0;

cleanup:
    EVP_MD_CTX_free(md);
    OPENSSL_cleanse(digest, sizeof(digest));
    return ret;
}

void
mpc_protected_key_engine_name(const uint8_t hash[MPC_PROTECTED_KEY_NAME_HASH_LEN],
                              char out[MPC_PROTECTED_KEY_ENGINE_NAME_LEN])
{
    static const char hex[] = "0123456789abcdef";
    const size_t prefix_len = sizeof(engine_name_prefix) - 1;
    size_t i;

    memcpy(out, engine_name_prefix, prefix_len);
    for (i = 0; i < MPC_PROTECTED_KEY_NAME_HASH_LEN; i++) {
        out[prefix_len + 2 * i] = hex[hash[i] >> 4];
        out[prefix_len + 2 * i + 1] = hex[hash[i] & 0x0f];
    }
    out[MPC_PROTECTED_KEY_ENGINE_NAME_LEN - 1] = '\0';
}

int
mpc_protected_key_ticket_key(const uint8_t *existing, size_t existing_len,
                             uint8_t out[MPC_PROTECTED_KEY_TICKET_KEY_LEN])
{
    unsigned int out_len = 0;

    if (existing == NULL || existing_len == 0 || existing_len > (size_t)0x7fffffff ||
        HMAC(EVP_sha256(), existing, (int)existing_len, (const uint8_t *)ticket_key_label,
             sizeof(ticket_key_label) - 1, out, &out_len) == NULL ||
        out_len != MPC_PROTECTED_KEY_TICKET_KEY_LEN) {
        OPENSSL_cleanse(out, MPC_PROTECTED_KEY_TICKET_KEY_LEN);
        return -1;
    }
    return 0;
}
