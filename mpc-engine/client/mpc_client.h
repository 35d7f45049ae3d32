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
 * marked "since 2" (the AES-256-GCM jobs for tickets under a protected krbtgt key),
 * "since 3" (key import and deletion, and the Kerberos enctype jobs for users' keys),
 * "since 4" (the RFC 8009 enctypes 19 and 20 through the same calls; no new symbols) and
 * "since 5" (jobs under KRB-FX-CF2 of a stored key, mpc_client_krb_cf2_*; the PRF call of
 * versions 3 and 4, mpc_client_krb_prf, is gone: a stored key's PRF output is as good as
 * the key for FAST and is never opened), "since 6" (MPC_EDIVERGED; no new symbols),
 * "since 7" (MPC_EABORT; no new symbols) and "since 8" (chained and checked GCM tags).
 */
#ifndef MPC_CLIENT_H
#define MPC_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MPC_CLIENT_INTERFACE_VERSION 9

enum mpc_status {
  MPC_OK = 0,
  MPC_EINVAL = -1,        /* bad argument */
  MPC_ECONFIG = -2,       /* configuration or key file unusable */
  MPC_EUNREACHABLE = -3,  /* a server could not be reached or did not answer in time */
  MPC_EREFUSED = -4,      /* a server answered with an error (unknown key, too large, ...) */
  MPC_EMISMATCH = -5,     /* the servers' output shares disagree: result refused */
  MPC_EINTERNAL = -6,
  MPC_EBADTAG = -7,       /* since 2: the authentication tag is wrong (forged or damaged data) */
  MPC_ENONCE = -8,        /* since 2: a server does not know the prefetched nonce (used, expired,
                             evicted, or the server restarted): take another, prefetch again */
  MPC_EDIVERGED = -9,     /* since 6: the servers received different copies of the request;
                             they refused it before computing anything with it */
  MPC_EABORT = -10        /* since 7: a server's messages failed verification (a deviating
                             server, or a link that altered them): the servers refused the
                             job before any output left them; the message names the check */
};

/* MPC_AES256_GCM (since 2): an AES-256 key K whose servers also hold shares of the GHASH
 * key powers H^1..H^MPC_GCM_MAX_HASH_BLOCKS, H = AES_K(0^128). Keys of this algorithm
 * serve only the mpc_client_gcm_* calls. */
/* MPC_AES128_CTS_HMAC_SHA1_96 and MPC_AES256_CTS_HMAC_SHA1_96 (since 3): a Kerberos key of
 * enctype 17 or 18 (RFC 3962). The servers hold shares of its derived keys for the usages
 * 1, 2, 3, 17 and 56 and of its PRF key, never of the key itself; such keys serve only the
 * mpc_client_krb_* calls. */
/* MPC_AES128_CTS_HMAC_SHA256_128 and MPC_AES256_CTS_HMAC_SHA384_192 (since 4): a Kerberos key
 * of enctype 19 or 20 (RFC 8009), held and served the same way: the servers hold shares of
 * its KDF-HMAC-SHA2 derived keys for the same usages and of the HMAC state of the key (for
 * the PRF), never of the key itself. */
enum mpc_key_algorithm {
  MPC_AES128 = 1,
  MPC_AES256 = 2,
  MPC_AES256_GCM = 3,
  MPC_AES128_CTS_HMAC_SHA1_96 = 4,
  MPC_AES256_CTS_HMAC_SHA1_96 = 5,
  MPC_AES128_CTS_HMAC_SHA256_128 = 6,
  MPC_AES256_CTS_HMAC_SHA384_192 = 7
};

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
 * (1..600000 ms); the cluster configuration's timeout_ms applies until then. The
 * mpc_client_krb_* calls, mpc_client_gcm_prefetch and mpc_client_gcm_open wait the longer of
 * this and the configuration's krb_timeout_ms. */
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

/* Prefetch with local masks (since 9): as mpc_client_gcm_prefetch, but AES_K(N || j) above is
 * replaced by M(N || j), a pseudo-random function of the key that each server computes from
 * its own share with no computation between the servers (docs/ticket-format.md, "Local
 * masks"): keystream block j of N = M(N || j+2), tag = GHASH_H(aad, c) ^ M(N || 1). M is not
 * AES-GCM under K, so only this engine opens such a tag (mpc_client_gcm_open recognises the
 * nonce), from the shares alone: after a server restart too, and with one server down. The
 * nonces are marked (bit 7 of byte 8) and never equal a nonce of mpc_client_gcm_prefetch. */
int mpc_client_gcm_prefetch_local(mpc_client *client, const char *key_name, uint32_t key_version,
                                  uint32_t count, uint32_t blocks_per_nonce, uint8_t *nonces,
                                  uint8_t *keystream);

/* Tag: tag = GHASH_H(aad, ciphertext) ^ AES_K(N || 1) for a nonce this client key
 * prefetched; consumes the nonce at every server (a second call with it fails with
 * MPC_ENONCE). The caller has already encrypted with the nonce's keystream. One round trip,
 * no computation between servers: each answers at once, so a tag asked while a server is
 * down or the servers regroup has spent its nonce at the others and fails with MPC_ENONCE
 * (prefetch a fresh one). aad or ciphertext may be NULL when its length is 0. */
int mpc_client_gcm_tag(mpc_client *client, const char *key_name, uint32_t key_version,
                       const uint8_t nonce[MPC_GCM_NONCE_BYTES], const uint8_t *aad,
                       size_t aad_length, const uint8_t *ciphertext, size_t ciphertext_length,
                       uint8_t tag[MPC_GCM_TAG_BYTES]);

/* Chained tag (since 8): in one round trip, tag = GHASH_H(aad, empty) ^ AES_K(N || 1) as
 * mpc_client_gcm_tag, and chained_tag = GHASH_H(prefix || N || tag, empty) ^ AES_K(N' || 1)
 * under chained_nonce N' (another prefetched nonce; both are consumed), prefix at most 32
 * bytes: a checksum over a checksum (a PAC's KDC checksum over its server checksum) without
 * waiting for the first. tag is opened and checked three ways as always; chained_tag is made
 * from additive shares, which one deviating server can alter unnoticed here, so it is
 * UNCHECKED: check it with mpc_client_gcm_tag_checked (or mpc_client_gcm_open) before
 * anything that carries it leaves. Three-server clusters only: elsewhere MPC_EREFUSED,
 * with nothing consumed. */
int mpc_client_gcm_tag_chained(mpc_client *client, const char *key_name, uint32_t key_version,
                               const uint8_t nonce[MPC_GCM_NONCE_BYTES], const uint8_t *aad,
                               size_t aad_length, const uint8_t chained_nonce[MPC_GCM_NONCE_BYTES],
                               const uint8_t *prefix, size_t prefix_length,
                               uint8_t tag[MPC_GCM_TAG_BYTES],
                               uint8_t chained_tag[MPC_GCM_TAG_BYTES]);

/* Checked tag (since 8): mpc_client_gcm_tag, and in the same round trip the check of an
 * earlier tag (check_tag over check_aad under check_nonce, a nonce these servers tagged: a
 * chained tag), by the zero test of a reopen. When the check fails: MPC_EABORT, and tag is
 * left as it was (the new tag's nonce is spent). MPC_ENONCE when a server no longer holds
 * either nonce (restart, expiry): check the earlier tag with mpc_client_gcm_open instead.
 * Three-server clusters only: elsewhere MPC_EREFUSED. */
int mpc_client_gcm_tag_checked(mpc_client *client, const char *key_name, uint32_t key_version,
                               const uint8_t nonce[MPC_GCM_NONCE_BYTES], const uint8_t *aad,
                               size_t aad_length, const uint8_t *ciphertext,
                               size_t ciphertext_length,
                               const uint8_t check_nonce[MPC_GCM_NONCE_BYTES],
                               const uint8_t *check_aad, size_t check_aad_length,
                               const uint8_t check_tag[MPC_GCM_TAG_BYTES],
                               uint8_t tag[MPC_GCM_TAG_BYTES]);

/* Open: the servers compute AES_K(N || 1) and the keystream of ciphertext_length bytes
 * for any nonce, compare GHASH_H(aad, ciphertext) ^ AES_K(N || 1) with tag inside the
 * computation and open only the verdict and the keystream. On MPC_OK, plaintext
 * (ciphertext_length bytes, caller-owned, may be NULL when the length is 0) holds the
 * decryption; on MPC_EBADTAG it is zeroed; on any other failure it is left as it was.
 * plaintext may be ciphertext itself (decryption in place) but may not otherwise overlap it.
 * ciphertext_length may be 0 (a GMAC check). A nonce the three servers tagged and still
 * hold is reopened without AES (one round trip: docs/ticket-format.md); any other opens in
 * full, transparently. A nonce with the mark of mpc_client_gcm_prefetch_local is reopened by
 * its local masks (one round trip, three servers or two); a tag that fails there is then
 * checked as AES-GCM under K in full. */
int mpc_client_gcm_open(mpc_client *client, const char *key_name, uint32_t key_version,
                        const uint8_t nonce[MPC_GCM_NONCE_BYTES], const uint8_t *aad,
                        size_t aad_length, const uint8_t *ciphertext, size_t ciphertext_length,
                        const uint8_t tag[MPC_GCM_TAG_BYTES], uint8_t *plaintext);

/* Key administration (since 3). */

/* Imports a key under (key_name, key_version, algorithm) into every server: the library
 * derives the algorithm's share material from key (16 or 32 bytes: the AES key, or the
 * Kerberos protocol key), splits it into fresh replicated shares and sends each server only
 * its own, sealed to that server's public key before ZeroMQ sees it; every copy it made is
 * wiped before returning. The process is not dumpable during the call (prctl
 * PR_SET_DUMPABLE), and gets its earlier setting back afterwards. Fails with MPC_EREFUSED when a
 * server already holds that key id. A failure may leave the key on some servers: delete it
 * before importing again. */
int mpc_client_import_key(mpc_client *client, const char *key_name, uint32_t key_version, int algorithm,
                          const uint8_t *key, size_t key_length);

/* Deletes (key_name, key_version, algorithm) from every server that holds it. Succeeds when
 * no server holds it any more, including when none did. */
int mpc_client_delete_key(mpc_client *client, const char *key_name, uint32_t key_version, int algorithm);

/* Kerberos enctype jobs (since 3), for keys of MPC_AES128_CTS_HMAC_SHA1_96 and
 * MPC_AES256_CTS_HMAC_SHA1_96, and since 4 of MPC_AES128_CTS_HMAC_SHA256_128 and
 * MPC_AES256_CTS_HMAC_SHA384_192, with exactly the results of libk5crypto's krb5_c_encrypt,
 * krb5_c_decrypt and krb5_c_make_checksum under the key. Only the values these calls return
 * are opened: the derived keys, HMAC states and intermediate hashes stay shared. The usage
 * must be one a KDC uses for the operation (MPC_EINVAL otherwise): 1 decrypt only (an
 * encrypted timestamp is a client's preauthentication), 2 encrypt and decrypt, 3 encrypt
 * only, 17 and 56 checksums.
 *
 * The MAC of an encryption and the checksum are M bytes:
 *   RFC 3962 keys: M = MPC_KRB_MAC_BYTES (12, HMAC-SHA1-96);
 *   MPC_AES128_CTS_HMAC_SHA256_128: M = MPC_KRB_SHA256_MAC_BYTES (16);
 *   MPC_AES256_CTS_HMAC_SHA384_192: M = MPC_KRB_SHA384_MAC_BYTES (24).
 * A buffer of MPC_KRB_MAX_MAC_BYTES fits every algorithm. */
#define MPC_KRB_CONFOUNDER_BYTES 16
#define MPC_KRB_MAC_BYTES 12
#define MPC_KRB_SHA256_MAC_BYTES 16
#define MPC_KRB_SHA384_MAC_BYTES 24
#define MPC_KRB_MAX_MAC_BYTES 24
/* Longest data of one call: confounder + plaintext, ciphertext or checksummed message
 * (MPC_EINVAL beyond). Inputs are read before any output is written, so the buffers of one
 * call may overlap (decryption in place included). */
#define MPC_KRB_MAX_DATA_BYTES 4096

/* ciphertext receives MPC_KRB_CONFOUNDER_BYTES + plaintext_length + M bytes: CBC-CTS of
 * confounder || plaintext under Ke_usage, then the MAC under Ki_usage (RFC 3962: HMAC-SHA1-96
 * of confounder || plaintext; RFC 8009: HMAC-SHA256/384 of 16 zero bytes || the CBC-CTS
 * ciphertext, truncated to M). The caller picks the confounder (krb5_c_random_make_octets).
 * plaintext may be NULL when plaintext_length is 0. */
int mpc_client_krb_encrypt(mpc_client *client, const char *key_name, uint32_t key_version, int algorithm,
                           uint32_t usage, const uint8_t confounder[MPC_KRB_CONFOUNDER_BYTES],
                           const uint8_t *plaintext, size_t plaintext_length, uint8_t *ciphertext);

/* Decrypts what krb5_c_encrypt wrote (ciphertext_length at least MPC_KRB_CONFOUNDER_BYTES +
 * M) and checks its MAC inside the computation. On MPC_OK plaintext receives
 * ciphertext_length - MPC_KRB_CONFOUNDER_BYTES - M bytes (may be NULL when that
 * is 0). On MPC_EBADTAG (wrong key, forged or damaged data) nothing but the verdict was
 * opened and plaintext is left as it was. */
int mpc_client_krb_decrypt(mpc_client *client, const char *key_name, uint32_t key_version, int algorithm,
                           uint32_t usage, const uint8_t *ciphertext, size_t ciphertext_length,
                           uint8_t *plaintext);

/* checksum (M bytes) receives the HMAC of data under Kc_usage: HMAC-SHA1-96 (checksum types
 * 15 and 16, RFC 3962), HMAC-SHA256-128 (19) or HMAC-SHA384-192 (20, RFC 8009); data may be
 * NULL when length is 0. */
int mpc_client_krb_checksum(mpc_client *client, const char *key_name, uint32_t key_version, int algorithm,
                            uint32_t usage, const uint8_t *data, size_t length, uint8_t *checksum);

/* Since 5: the same three jobs under KRB-FX-CF2(K1, pepper1, key, pepper) (RFC 6113 5.1)
 * instead of the stored key: FAST's challenge keys and strengthened reply key, where K1 is a
 * key the caller holds (the armor key, the strengthen key). The caller computes its own half,
 * mask = PRF+(K1, pepper1) of the combined key's length (krb5_c_prfplus); the servers compute
 * PRF+(key, pepper), the combined key and its derived keys inside the computation and open
 * only the job's result, byte for byte what libk5crypto gives under
 * krb5_c_fx_cf2_simple(K1, pepper1, key, pepper). The combined key has K1's enctype, so M
 * and the lengths above follow combined_algorithm. Served, as krb5kdc uses them (MPC_EINVAL
 * otherwise): pepper "challengelongterm" with decrypt usage 54 and encrypt usage 55 (the
 * encrypted challenge), pepper "replykey" with encrypt usage 3 and checksum usage 56. */
typedef struct mpc_krb_combine {
  int combined_algorithm; /* K1's: one of the four Kerberos algorithms above */
  const char *pepper;     /* the stored key's pepper, NUL-terminated */
  const uint8_t *mask;    /* PRF+(K1, pepper1) */
  size_t mask_length;     /* the combined algorithm's key length: 16 or 32 */
} mpc_krb_combine;

int mpc_client_krb_cf2_encrypt(mpc_client *client, const char *key_name, uint32_t key_version, int algorithm,
                               const mpc_krb_combine *combine, uint32_t usage,
                               const uint8_t confounder[MPC_KRB_CONFOUNDER_BYTES], const uint8_t *plaintext,
                               size_t plaintext_length, uint8_t *ciphertext);
int mpc_client_krb_cf2_decrypt(mpc_client *client, const char *key_name, uint32_t key_version, int algorithm,
                               const mpc_krb_combine *combine, uint32_t usage, const uint8_t *ciphertext,
                               size_t ciphertext_length, uint8_t *plaintext);
int mpc_client_krb_cf2_checksum(mpc_client *client, const char *key_name, uint32_t key_version, int algorithm,
                                const mpc_krb_combine *combine, uint32_t usage, const uint8_t *data, size_t length,
                                uint8_t *checksum);

#ifdef __cplusplus
}
#endif

#endif /* MPC_CLIENT_H */
