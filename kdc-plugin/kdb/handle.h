/* kdc-plugin/kdb/handle.h - authenticated opaque key handles for protected principals.
 *
 * When krb5kdc reads a principal that carries the protection marker, the KDB
 * module replaces the key bytes of each key_data with a handle: a fixed-size
 * blob that names the key (principal, kvno, enctype) and is authenticated under
 * a per-KDC handle key. The crypto router recognises a handle and
 * sends the computation to the engine; real libk5crypto given a handle as a key
 * fails (the length matches no enctype's key length).
 *
 * Layout (MPC_KDB_HANDLE_LEN = 64 bytes, integers big-endian):
 *
 *   offset  size  field
 *        0     4  magic 0x8A 0xF7 'M' 'H' (read as the 2-byte little-endian
 *                 length prefix of libkdb5's stored-key format it is negative,
 *                 so the stock key decryption rejects a handle before any crypto)
 *        4     1  version (MPC_KDB_HANDLE_VERSION)
 *        5     3  reserved, zero
 *        8     4  kvno (uint32)
 *       12     4  enctype (int32)
 *       16    16  name hash: SHA-256("mpc-kdc principal v1" || 0x00 || name)[0..16),
 *                 name = krb5_unparse_name() of the canonical principal
 *       32    32  tag: HMAC-SHA256(handle key, bytes 0..32)
 *
 * The tag makes a handle unforgeable without the handle key (32 bytes, read
 * from a file only krb5kdc can read) and binds every field above it.
 *
 * Combined handles (MPC_KDB_COMBINED_HANDLE_LEN = 136 bytes): what the crypto router
 * hands krb5kdc for KRB-FX-CF2(K1, pepper1, K2, pepper2) when K2 (or K1) is a protected
 * key: FAST's challenge keys and strengthened reply key. The combined key must not exist in
 * clear (it gives PRF+(K2, pepper2), as good as the password for FAST), so the handle names
 * the stored key, the enctype of the combined key, the stored key's pepper and the mask
 * PRF+(K1, pepper1) (computable from K1, which krb5kdc holds anyway); the engine computes
 * the rest inside each job. Layout, integers big-endian:
 *
 *   offset  size  field
 *        0     4  magic 0x8A 0xF7 'M' 'C'
 *        4     1  version (MPC_KDB_HANDLE_VERSION)
 *        5     3  reserved, zero
 *        8     4  kvno of the stored key (uint32)
 *       12     4  enctype of the stored key (int32)
 *       16    16  name hash of the stored key, as above
 *       32     4  enctype of the combined key (int32)
 *       36     1  pepper length (1..MPC_KDB_PEPPER_MAX)
 *       37     1  mask length (16 or 32)
 *       38     2  reserved, zero
 *       40    32  pepper, zero-padded
 *       72    32  mask, zero-padded
 *      104    32  tag: HMAC-SHA256(handle key, bytes 0..104)
 *
 * Pure functions: no allocation, no krb5 dependency, no global state. Secrets
 * are compared in constant time and intermediate buffers are wiped.
 *
 * Version boundary: both layouts are handle version 1 (MPC_KDB_HANDLE_VERSION); the magic
 * tells them apart. A combined handle never reaches the database: only the crypto router
 * makes and reads one, within one krb5kdc process.
 */
#ifndef MPC_KDB_HANDLE_H
#define MPC_KDB_HANDLE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define MPC_KDB_NODISCARD __attribute__((warn_unused_result))
#else
#define MPC_KDB_NODISCARD
#endif

#define MPC_KDB_HANDLE_LEN 64
#define MPC_KDB_HANDLE_KEY_LEN 32
#define MPC_KDB_HANDLE_VERSION 1
#define MPC_KDB_NAME_HASH_LEN 16
#define MPC_KDB_HANDLE_TAG_OFFSET 32
#define MPC_KDB_HANDLE_TAG_LEN 32
#define MPC_KDB_COMBINED_HANDLE_LEN 136
#define MPC_KDB_COMBINED_TAG_OFFSET 104
#define MPC_KDB_PEPPER_MAX 32
#define MPC_KDB_MASK_MAX 32

/* The KRB-FX-CF2 part of a combined handle; enctype 0 for a stored key's handle. */
typedef struct mpc_kdb_combine {
    int32_t enctype;                       /* the combined key's (the caller's key's) */
    char pepper[MPC_KDB_PEPPER_MAX + 1];   /* the stored key's pepper, NUL-terminated */
    uint8_t mask[MPC_KDB_MASK_MAX];        /* PRF+(K1, pepper1) */
    uint32_t mask_len;
} mpc_kdb_combine;

/* What a handle names: a stored key, and for a combined handle the KRB-FX-CF2 of it. */
typedef struct mpc_kdb_key_id {
    uint8_t name_hash[MPC_KDB_NAME_HASH_LEN];
    uint32_t kvno;
    int32_t enctype;
    mpc_kdb_combine combine;  /* all zero unless combined */
} mpc_kdb_key_id;

enum mpc_kdb_handle_status {
    MPC_KDB_HANDLE_OK = 0,
    MPC_KDB_HANDLE_BAD_LENGTH = 1,  /* not MPC_KDB_HANDLE_LEN bytes */
    MPC_KDB_HANDLE_BAD_MAGIC = 2,   /* not a handle at all */
    MPC_KDB_HANDLE_BAD_VERSION = 3, /* a handle of another version */
    MPC_KDB_HANDLE_BAD_TAG = 4,     /* forged, tampered or under another key */
    MPC_KDB_HANDLE_BAD_FIELD = 5,   /* authenticated but reserved bytes set */
    MPC_KDB_HANDLE_CRYPTO = 6       /* OpenSSL failed */
};

/* Size functions for callers that cannot use the macros (a C ABI). */
size_t mpc_kdb_handle_len(void);
size_t mpc_kdb_handle_key_len(void);

/* Writes the name hash of the principal name (len bytes, need not be
 * NUL-terminated) into out. Returns 0, or -1 if OpenSSL failed (out is then
 * zeroed). */
MPC_KDB_NODISCARD int mpc_kdb_name_hash(const char *name, size_t len,
                                        uint8_t out[MPC_KDB_NAME_HASH_LEN]);

/* Writes the handle for id under key into out (caller-owned,
 * MPC_KDB_HANDLE_LEN bytes). Returns 0, or -1 if OpenSSL failed (out is then
 * zeroed). */
MPC_KDB_NODISCARD int mpc_kdb_handle_encode(const uint8_t key[MPC_KDB_HANDLE_KEY_LEN],
                                            const mpc_kdb_key_id *id,
                                            uint8_t out[MPC_KDB_HANDLE_LEN]);

/* Writes the combined handle for id (id->combine.enctype set, a pepper of
 * 1..MPC_KDB_PEPPER_MAX bytes, a mask of 16 or 32 bytes) under key into out
 * (MPC_KDB_COMBINED_HANDLE_LEN bytes). Returns 0, or -1 for such an id or if OpenSSL
 * failed (out is then zeroed). */
MPC_KDB_NODISCARD int mpc_kdb_combined_handle_encode(const uint8_t key[MPC_KDB_HANDLE_KEY_LEN],
                                                     const mpc_kdb_key_id *id,
                                                     uint8_t out[MPC_KDB_COMBINED_HANDLE_LEN]);

/* True when buf has the length and magic of a handle or a combined handle. Says nothing
 * about authenticity: use it to route, never to trust. */
int mpc_kdb_handle_is_candidate(const uint8_t *buf, size_t len);

/* Checks length, magic, version and tag (constant time) of buf, a handle or a combined
 * handle, and, on MPC_KDB_HANDLE_OK, fills *id_out (may be NULL; combine is all zero for
 * a handle). On any other status *id_out is zeroed. */
MPC_KDB_NODISCARD enum mpc_kdb_handle_status
mpc_kdb_handle_verify(const uint8_t key[MPC_KDB_HANDLE_KEY_LEN], const uint8_t *buf,
                      size_t len, mpc_kdb_key_id *id_out);

/* A static English description of a status. */
const char *mpc_kdb_handle_status_string(enum mpc_kdb_handle_status status);

#ifdef __cplusplus
}
#endif

#endif /* MPC_KDB_HANDLE_H */
