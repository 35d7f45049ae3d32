/* mpc-engine/client/mpc_client.h - C interface of the engine client library.
 *
 * For the KDC plugin and any C program. A handle talks to one cluster, described
 * by a cluster configuration file (see config/cluster.example.toml). Calls on one
 * handle are serialised internally; a handle may be used after fork(): the child
 * opens its own connections on first use and leaves the parent's alone.
 *
 * Every function returns MPC_OK (0) or a negative MPC_E* code; the message of the
 * last failure on a handle is returned by mpc_client_last_error().
 *
 * Version boundary: functions below exist since interface version 1, except those
 * marked "since 2" (the AES-256-GCM jobs for tickets under a protected krbtgt key).
 */
#ifndef MPC_CLIENT_H
#define MPC_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MPC_CLIENT_INTERFACE_VERSION 2

enum mpc_status {
  MPC_OK = 0,
  MPC_EINVAL = -1,        /* bad argument */
  MPC_ECONFIG = -2,       /* configuration or key file unusable */
  MPC_EUNREACHABLE = -3,  /* a server could not be reached or did not answer in time */
  MPC_EREFUSED = -4,      /* a server answered with an error (unknown key, too large, ...) */
  MPC_EMISMATCH = -5,     /* the servers' output shares disagree: result refused */
  MPC_EINTERNAL = -6,
  MPC_EBADTAG = -7,       /* since 2: the authentication tag is wrong (forged or damaged data) */
  MPC_ENONCE = -8         /* since 2: a server does not know the prefetched nonce (used, expired,
                             evicted, or the server restarted): take another, prefetch again */
};

/* MPC_AES256_GCM (since 2): an AES-256 key K whose servers also hold shares of the GHASH
 * key powers H^1..H^MPC_GCM_MAX_HASH_BLOCKS, H = AES_K(0^128). Keys of this algorithm
 * serve only the mpc_client_gcm_* calls. */
enum mpc_key_algorithm { MPC_AES128 = 1, MPC_AES256 = 2, MPC_AES256_GCM = 3 };

#define MPC_GCM_NONCE_BYTES 12
#define MPC_GCM_TAG_BYTES 16
/* GHASH input blocks of one call at most: zero-padded AAD + zero-padded text + the
 * length block (NIST SP 800-38D). */
#define MPC_GCM_MAX_HASH_BLOCKS 1024

typedef struct mpc_client mpc_client;

/* Opens a handle for the cluster described by config_path. On success *out owns a
 * handle the caller frees with mpc_client_close(); on failure *out is NULL and, if
 * error_buffer is not NULL, a message is written there (NUL-terminated, truncated). */
int mpc_client_open(const char *config_path, mpc_client **out, char *error_buffer, size_t error_buffer_size);

/* Sets how long each later call on this handle may take, all servers together
 * (1..600000 ms); the cluster configuration's timeout_ms applies until then. */
int mpc_client_set_timeout(mpc_client *client, uint32_t milliseconds);

/* Frees the handle; NULL is ignored. */
void mpc_client_close(mpc_client *client);

/* Message of the last failed call on this handle; owned by the handle, valid until the
 * next call on it. Never NULL. */
const char *mpc_client_last_error(const mpc_client *client);

/* out (blocks * 16 bytes, caller-owned) = AES_k(counter + i), i = 0..blocks-1, with the
 * 16-byte counter a big-endian integer as in OpenSSL's CTR mode. */
int mpc_client_keystream(mpc_client *client, const char *key_name, uint32_t key_version, int algorithm,
                         const uint8_t counter[16], uint32_t blocks, uint8_t *out);

/* out (length bytes, caller-owned, may not overlap in) = AES_k / AES_k^-1 of each
 * 16-byte block of in; length must be a positive multiple of 16. */
int mpc_client_ecb_encrypt(mpc_client *client, const char *key_name, uint32_t key_version, int algorithm,
                           const uint8_t *in, size_t length, uint8_t *out);
int mpc_client_ecb_decrypt(mpc_client *client, const char *key_name, uint32_t key_version, int algorithm,
                           const uint8_t *in, size_t length, uint8_t *out);

/* AES-256-GCM (NIST SP 800-38D, 96-bit nonces, 32-bit block counter) split in jobs so
 * that sealing waits on no computation between the servers:
 *
 *   keystream block j of nonce N = AES_K(N || j+2),  tag = GHASH_H(aad, c) ^ AES_K(N || 1)
 *
 * Since 2. Nonces are chosen by the servers, never by the caller, and never repeat for
 * a key. AES_K(N || 1) and H are never opened to anyone. */

/* Prefetch: the servers pick `count` (1..65536) fresh nonces and compute for each one
 * blocks_per_nonce (0..4096) keystream blocks, count * blocks_per_nonce at most 4194304 (one
 * request's ceiling; the servers may refuse less). nonces receives count * 12 bytes; keystream
 * (may be NULL when blocks_per_nonce is 0) receives count * blocks_per_nonce * 16 bytes,
 * nonce by nonce. Each server keeps its share of AES_K(N || 1) for one later
 * mpc_client_gcm_tag by this same client key, for a bounded time (the servers'
 * nonce_ttl_s) and within a bounded number per client key (oldest evicted first). */
int mpc_client_gcm_prefetch(mpc_client *client, const char *key_name, uint32_t key_version,
                            uint32_t count, uint32_t blocks_per_nonce, uint8_t *nonces,
                            uint8_t *keystream);

/* Tag: tag = GHASH_H(aad, ciphertext) ^ AES_K(N || 1) for a nonce this client key
 * prefetched; consumes the nonce at every server (a second call with it fails with
 * MPC_ENONCE). The caller has already encrypted with the nonce's keystream. One round trip,
 * no computation between servers. aad or ciphertext may be NULL when its length is 0. */
int mpc_client_gcm_tag(mpc_client *client, const char *key_name, uint32_t key_version,
                       const uint8_t nonce[MPC_GCM_NONCE_BYTES], const uint8_t *aad,
                       size_t aad_length, const uint8_t *ciphertext, size_t ciphertext_length,
                       uint8_t tag[MPC_GCM_TAG_BYTES]);

/* Open: the servers compute AES_K(N || 1) and the keystream of ciphertext_length bytes
 * for any nonce, compare GHASH_H(aad, ciphertext) ^ AES_K(N || 1) with tag inside the
 * computation and open only the verdict and the keystream. On MPC_OK, plaintext
 * (ciphertext_length bytes, caller-owned, may be NULL when the length is 0) holds the
 * decryption; on MPC_EBADTAG it is zeroed; on any other failure it is left as it was.
 * plaintext may be ciphertext itself (decryption in place) but may not otherwise overlap it.
 * ciphertext_length may be 0 (a GMAC check). */
int mpc_client_gcm_open(mpc_client *client, const char *key_name, uint32_t key_version,
                        const uint8_t nonce[MPC_GCM_NONCE_BYTES], const uint8_t *aad,
                        size_t aad_length, const uint8_t *ciphertext, size_t ciphertext_length,
                        const uint8_t tag[MPC_GCM_TAG_BYTES], uint8_t *plaintext);

#ifdef __cplusplus
}
#endif

#endif /* MPC_CLIENT_H */
