/* kdc-plugin/kdb/handle.c - encode and verify authenticated key handles.
 *
 * Format and rationale: handle.h. Reads no configuration.
 */

#include "handle.h"

#include "keys/protected_key.h"

#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

static const uint8_t handle_magic[4] = { 0x8A, 0xF7, 'M', 'H' };
static const uint8_t combined_magic[4] = { 0x8A, 0xF7, 'M', 'C' };

#define OFF_MAGIC 0
#define OFF_VERSION 4
#define OFF_RESERVED 5
#define RESERVED_LEN 3
#define OFF_KVNO 8
#define OFF_ENCTYPE 12
#define OFF_NAME_HASH 16

_Static_assert(OFF_NAME_HASH + MPC_KDB_NAME_HASH_LEN == MPC_KDB_HANDLE_TAG_OFFSET,
               "handle fields must end where the tag starts");
_Static_assert(MPC_KDB_HANDLE_TAG_OFFSET + MPC_KDB_HANDLE_TAG_LEN == MPC_KDB_HANDLE_LEN,
               "the tag must end the handle");

/* Combined handles: the handle's first 32 bytes, then these. */
#define OFF_COMBINED_ENCTYPE 32
#define OFF_PEPPER_LEN 36
#define OFF_MASK_LEN 37
#define OFF_COMBINED_RESERVED 38
#define COMBINED_RESERVED_LEN 2
#define OFF_PEPPER 40
#define OFF_MASK 72

_Static_assert(OFF_MASK + MPC_KDB_MASK_MAX == MPC_KDB_COMBINED_TAG_OFFSET,
               "combined handle fields must end where the tag starts");
_Static_assert(MPC_KDB_COMBINED_TAG_OFFSET + MPC_KDB_HANDLE_TAG_LEN == MPC_KDB_COMBINED_HANDLE_LEN,
               "the tag must end the combined handle");

size_t
mpc_kdb_handle_len(void)
{
    return MPC_KDB_HANDLE_LEN;
}

size_t
mpc_kdb_handle_key_len(void)
{
    return MPC_KDB_HANDLE_KEY_LEN;
}

static void
store_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uint32_t
load_be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) |
           (uint32_t)p[3];
}

int
mpc_kdb_name_hash(const char *name, size_t len, uint8_t out[MPC_KDB_NAME_HASH_LEN])
{
    return mpc_protected_key_name_hash(name, len, out);
}

/* tag = HMAC-SHA256(key, body[0..body_len)). */
static int
compute_tag(const uint8_t key[MPC_KDB_HANDLE_KEY_LEN], const uint8_t *body, size_t body_len,
            uint8_t tag[MPC_KDB_HANDLE_TAG_LEN])
{
    uint8_t mac[EVP_MAX_MD_SIZE];
    unsigned int mac_len = 0;
    int ret = -1;

    if (HMAC(EVP_sha256(), key, MPC_KDB_HANDLE_KEY_LEN, body, body_len, mac, &mac_len) == NULL ||
        mac_len != MPC_KDB_HANDLE_TAG_LEN)
        goto cleanup;
    memcpy(tag, mac, MPC_KDB_HANDLE_TAG_LEN);
    ret = 0;

cleanup:
    OPENSSL_cleanse(mac, sizeof(mac));
    return ret;
}

int
mpc_kdb_handle_encode(const uint8_t key[MPC_KDB_HANDLE_KEY_LEN], const mpc_kdb_key_id *id,
                      uint8_t out[MPC_KDB_HANDLE_LEN])
{
    memset(out, 0, MPC_KDB_HANDLE_LEN);
    if (key == NULL || id == NULL)
        return -1;
    memcpy(out + OFF_MAGIC, handle_magic, sizeof(handle_magic));
    out[OFF_VERSION] = MPC_KDB_HANDLE_VERSION;
    /* OFF_RESERVED..OFF_KVNO stays zero. */
    store_be32(out + OFF_KVNO, id->kvno);
    store_be32(out + OFF_ENCTYPE, (uint32_t)id->enctype);
    memcpy(out + OFF_NAME_HASH, id->name_hash, MPC_KDB_NAME_HASH_LEN);
    if (compute_tag(key, out, MPC_KDB_HANDLE_TAG_OFFSET, out + MPC_KDB_HANDLE_TAG_OFFSET) != 0) {
        OPENSSL_cleanse(out, MPC_KDB_HANDLE_LEN);
        return -1;
    }
    return 0;
}

int
mpc_kdb_combined_handle_encode(const uint8_t key[MPC_KDB_HANDLE_KEY_LEN], const mpc_kdb_key_id *id,
                               uint8_t out[MPC_KDB_COMBINED_HANDLE_LEN])
{
    size_t pepper_len;

    memset(out, 0, MPC_KDB_COMBINED_HANDLE_LEN);
    if (key == NULL || id == NULL || id->combine.enctype == 0 ||
        (id->combine.mask_len != 16 && id->combine.mask_len != 32))
        return -1;
    pepper_len = strnlen(id->combine.pepper, sizeof(id->combine.pepper));
    if (pepper_len == 0 || pepper_len > MPC_KDB_PEPPER_MAX)
        return -1;
    memcpy(out + OFF_MAGIC, combined_magic, sizeof(combined_magic));
    out[OFF_VERSION] = MPC_KDB_HANDLE_VERSION;
    store_be32(out + OFF_KVNO, id->kvno);
    store_be32(out + OFF_ENCTYPE, (uint32_t)id->enctype);
    memcpy(out + OFF_NAME_HASH, id->name_hash, MPC_KDB_NAME_HASH_LEN);
    store_be32(out + OFF_COMBINED_ENCTYPE, (uint32_t)id->combine.enctype);
    out[OFF_PEPPER_LEN] = (uint8_t)pepper_len;
    out[OFF_MASK_LEN] = (uint8_t)id->combine.mask_len;
    memcpy(out + OFF_PEPPER, id->combine.pepper, pepper_len);
    memcpy(out + OFF_MASK, id->combine.mask, id->combine.mask_len);
    if (compute_tag(key, out, MPC_KDB_COMBINED_TAG_OFFSET, out + MPC_KDB_COMBINED_TAG_OFFSET) != 0) {
        OPENSSL_cleanse(out, MPC_KDB_COMBINED_HANDLE_LEN);
        return -1;
    }
    return 0;
}

int
mpc_kdb_handle_is_candidate(const uint8_t *buf, size_t len)
{
    if (buf == NULL)
        return 0;
    if (len == MPC_KDB_HANDLE_LEN)
        return memcmp(buf + OFF_MAGIC, handle_magic, sizeof(handle_magic)) == 0;
    if (len == MPC_KDB_COMBINED_HANDLE_LEN)
        return memcmp(buf + OFF_MAGIC, combined_magic, sizeof(combined_magic)) == 0;
    return 0;
}

/* The fields after a combined handle's first 32 bytes; MPC_KDB_HANDLE_OK or BAD_FIELD. */
static enum mpc_kdb_handle_status
read_combine(const uint8_t *buf, mpc_kdb_combine *out)
{
    size_t pepper_len = buf[OFF_PEPPER_LEN], mask_len = buf[OFF_MASK_LEN], i;
    uint8_t padding = 0;

    if (pepper_len == 0 || pepper_len > MPC_KDB_PEPPER_MAX || (mask_len != 16 && mask_len != 32) ||
        buf[OFF_COMBINED_RESERVED] != 0 || buf[OFF_COMBINED_RESERVED + 1] != 0)
        return MPC_KDB_HANDLE_BAD_FIELD;
    for (i = pepper_len; i < MPC_KDB_PEPPER_MAX; i++)
        padding |= buf[OFF_PEPPER + i];
    for (i = mask_len; i < MPC_KDB_MASK_MAX; i++)
        padding |= buf[OFF_MASK + i];
    if (padding != 0 || memchr(buf + OFF_PEPPER, 0, pepper_len) != NULL)
        return MPC_KDB_HANDLE_BAD_FIELD;
    if (out != NULL) {
        out->enctype = (int32_t)load_be32(buf + OFF_COMBINED_ENCTYPE);
        memcpy(out->pepper, buf + OFF_PEPPER, pepper_len);
        out->pepper[pepper_len] = '\0';
        memcpy(out->mask, buf + OFF_MASK, mask_len);
        out->mask_len = (uint32_t)mask_len;
    }
    return out == NULL || out->enctype != 0 ? MPC_KDB_HANDLE_OK : MPC_KDB_HANDLE_BAD_FIELD;
}

enum mpc_kdb_handle_status
mpc_kdb_handle_verify(const uint8_t key[MPC_KDB_HANDLE_KEY_LEN], const uint8_t *buf, size_t len,
                      mpc_kdb_key_id *id_out)
{
    uint8_t expected[MPC_KDB_HANDLE_TAG_LEN];
    enum mpc_kdb_handle_status status;
    size_t i, tag_offset;
    uint8_t reserved = 0;
    int combined;

    if (id_out != NULL)
        memset(id_out, 0, sizeof(*id_out));
    if (buf == NULL || (len != MPC_KDB_HANDLE_LEN && len != MPC_KDB_COMBINED_HANDLE_LEN)) {
        status = MPC_KDB_HANDLE_BAD_LENGTH;
        goto cleanup;
    }
    combined = len == MPC_KDB_COMBINED_HANDLE_LEN;
    tag_offset = combined ? MPC_KDB_COMBINED_TAG_OFFSET : MPC_KDB_HANDLE_TAG_OFFSET;
    if (memcmp(buf + OFF_MAGIC, combined ? combined_magic : handle_magic, sizeof(handle_magic)) != 0) {
        status = MPC_KDB_HANDLE_BAD_MAGIC;
        goto cleanup;
    }
    if (buf[OFF_VERSION] != MPC_KDB_HANDLE_VERSION) {
        status = MPC_KDB_HANDLE_BAD_VERSION;
        goto cleanup;
    }
    if (key == NULL || compute_tag(key, buf, tag_offset, expected) != 0) {
        status = MPC_KDB_HANDLE_CRYPTO;
        goto cleanup;
    }
    if (CRYPTO_memcmp(expected, buf + tag_offset, MPC_KDB_HANDLE_TAG_LEN) != 0) {
        status = MPC_KDB_HANDLE_BAD_TAG;
        goto cleanup;
    }
    for (i = 0; i < RESERVED_LEN; i++)
        reserved |= buf[OFF_RESERVED + i];
    if (reserved != 0) {
        status = MPC_KDB_HANDLE_BAD_FIELD;
        goto cleanup;
    }
    if (combined) {
        status = read_combine(buf, id_out != NULL ? &id_out->combine : NULL);
        if (status != MPC_KDB_HANDLE_OK)
            goto cleanup;
    }
    if (id_out != NULL) {
        id_out->kvno = load_be32(buf + OFF_KVNO);
        id_out->enctype = (int32_t)load_be32(buf + OFF_ENCTYPE);
        memcpy(id_out->name_hash, buf + OFF_NAME_HASH, MPC_KDB_NAME_HASH_LEN);
    }
    status = MPC_KDB_HANDLE_OK;

cleanup:
    if (status != MPC_KDB_HANDLE_OK && id_out != NULL)
        OPENSSL_cleanse(id_out, sizeof(*id_out));
    OPENSSL_cleanse(expected, sizeof(expected));
    return status;
}

const char *
mpc_kdb_handle_status_string(enum mpc_kdb_handle_status status)
{
    switch (status) {
    case MPC_KDB_HANDLE_OK:
        return "valid key handle";
    case MPC_KDB_HANDLE_BAD_LENGTH:
        return "key handle has the wrong length";
    case MPC_KDB_HANDLE_BAD_MAGIC:
        return "not a key handle";
    case MPC_KDB_HANDLE_BAD_VERSION:
        return "key handle of an unsupported version";
    case MPC_KDB_HANDLE_BAD_TAG:
        return "key handle failed authentication";
    case MPC_KDB_HANDLE_BAD_FIELD:
        return "key handle has reserved bytes set";
    case MPC_KDB_HANDLE_CRYPTO:
        return "key handle could not be computed (OpenSSL failure)";
    }
    return "unknown key handle status";
}
