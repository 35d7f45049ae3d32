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
 * Pure functions: no allocation, no krb5 dependency, no global state. Secrets
 * are compared in constant time and intermediate buffers are wiped.
 *
 * Version boundary: everything below exists since handle version 1.
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

/* What a handle names. */
typedef struct mpc_kdb_key_id {
    uint8_t name_hash[MPC_KDB_NAME_HASH_LEN];
    uint32_t kvno;
    int32_t enctype;
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

/* True when buf has the handle length and magic. Says nothing about
 * authenticity: use it to route, never to trust. */
int mpc_kdb_handle_is_candidate(const uint8_t *buf, size_t len);

/* Checks length, magic, version and tag (constant time) of buf and, on
 * MPC_KDB_HANDLE_OK, fills *id_out (may be NULL). On any other status *id_out
 * is zeroed. */
MPC_KDB_NODISCARD enum mpc_kdb_handle_status
mpc_kdb_handle_verify(const uint8_t key[MPC_KDB_HANDLE_KEY_LEN], const uint8_t *buf,
                      size_t len, mpc_kdb_key_id *id_out);

/* A static English description of a status. */
const char *mpc_kdb_handle_status_string(enum mpc_kdb_handle_status status);

#ifdef __cplusplus
}
#endif

#endif /* MPC_KDB_HANDLE_H */
