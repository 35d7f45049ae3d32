/* mpc-engine/keys/key_algorithms.h - every key algorithm the engine holds shares of, one row
 * each, in the manner of MIT krb5's lib/crypto/krb/etypes.c: what its number, name, Kerberos
 * enctype and checksum type are, its AES key and round counts, its hash and MAC lengths, and
 * how many bytes of share material a key of it has. The wire formats, both engines, mpcctl,
 * the client library and the KDC's crypto router read these rows; nothing else spells these
 * facts out again.
 *
 * Plain C (C99 and C++20 both include it): static data and static look-ups, no allocation, no
 * library calls; in C++ all of it is constexpr, so C++ code can static_assert on the rows.
 *
 * Share material of a key (what the dealer splits; each server holds a share of it):
 *   aes128, aes256: the AES key's expanded round keys, 16 * (rounds + 1) bytes.
 *   aes256-gcm: the 15 round keys of K, then the GHASH key powers H^1..H^MPC_KEY_GCM_HASH_POWERS
 *     (H = AES_K(0^128)), 16 bytes each in GCM's bit order.
 *   RFC 3962 and RFC 8009 Kerberos keys: for each usage of mpc_key_usages, in order, a block of
 *     Ke's round keys, then Ki's and Kc's HMAC states (hmac_state_bytes each: the hash's
 *     chaining value after one block of key ^ ipad, then after one of key ^ opad); then, for
 *     RFC 3962, the PRF key's round keys, for RFC 8009 the HMAC state of the protocol key
 *     itself (from which its PRF and every KDF-HMAC-SHA2 derivation follow). The protocol key
 *     itself is never stored.
 * Offsets into it follow from the row alone: mpc-engine/wire/key_id.hpp computes them.
 *
 * Version boundary: ids 1-2 exist since client interface 1, 3 since 2, 4-5 since 3, 6-7
 * since 4 (mpc-engine/client/mpc_client.h, enum mpc_key_algorithm, has the same numbers).
 */
#ifndef MPC_KEY_ALGORITHMS_H
#define MPC_KEY_ALGORITHMS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define MPC_KEY_CONST constexpr
#define MPC_KEY_FUNCTION static constexpr
extern "C" {
#else
#define MPC_KEY_CONST const
#define MPC_KEY_FUNCTION static inline
#endif

/* What a key serves. */
enum mpc_key_family {
  MPC_KEY_FAMILY_AES = 1,      /* the plain AES jobs: keystream, ECB */
  MPC_KEY_FAMILY_GCM = 2,      /* the AES-256-GCM ticket jobs of a protected krbtgt key */
  MPC_KEY_FAMILY_RFC3962 = 3,  /* Kerberos jobs, aes*-cts-hmac-sha1-96 */
  MPC_KEY_FAMILY_RFC8009 = 4   /* Kerberos jobs, aes*-cts-hmac-sha2 */
};

enum mpc_key_hash { MPC_KEY_HASH_NONE = 0, MPC_KEY_HASH_SHA1 = 1, MPC_KEY_HASH_SHA256 = 2, MPC_KEY_HASH_SHA384 = 3 };

/* The KDC-private enctype and checksum type of tickets under a protected krbtgt key
 * (docs/ticket-format.md): negative numbers are for local use. */
#define MPC_KEY_GCM_ENCTYPE (-19792)
#define MPC_KEY_GCM_CKSUMTYPE (-19792)
/* GHASH key powers stored with an aes256-gcm key: the most GHASH input blocks one request may
 * need. */
#define MPC_KEY_GCM_HASH_POWERS 1024
/* Key usages whose derived keys a Kerberos key's material holds: preauth timestamp (1),
 * tickets (2), AS-REP (3), PAC checksums (17), PA-REQ-ENC-PA-REP checksum (56). */
#define MPC_KEY_USAGE_COUNT 5
static MPC_KEY_CONST uint32_t mpc_key_usages[MPC_KEY_USAGE_COUNT] = {1, 2, 3, 17, 56};
/* What a KDC does under each of those usages, and nothing else (MPC_KEY_OP_* bits): 1
 * (PA-ENC-TIMESTAMP) decrypt only, since encrypting one would forge a client's
 * preauthentication for later; 2 (tickets) encrypt and decrypt; 3 (AS-REP) encrypt only; 17
 * and 56 checksums. Every check of a usage (the router, the client library, the servers)
 * reads these rows. */
#define MPC_KEY_OP_ENCRYPT 1u
#define MPC_KEY_OP_DECRYPT 2u
#define MPC_KEY_OP_CHECKSUM 4u
static MPC_KEY_CONST uint32_t mpc_key_usage_operations[MPC_KEY_USAGE_COUNT] = {
    MPC_KEY_OP_DECRYPT, MPC_KEY_OP_ENCRYPT | MPC_KEY_OP_DECRYPT, MPC_KEY_OP_ENCRYPT, MPC_KEY_OP_CHECKSUM,
    MPC_KEY_OP_CHECKSUM};
#define MPC_KEY_CONFOUNDER_BYTES 16
#define MPC_KEY_MAX_MAC_BYTES 24

struct mpc_key_algorithm_info {
  int id;                   /* the algorithm's number on the wire and in the C interface */
  const char *name;         /* as mpcctl --alg and the logs spell it */
  enum mpc_key_family family;
  int32_t enctype;          /* Kerberos enctype; 0 for the plain AES keys */
  int32_t cksumtype;        /* the enctype's mandatory checksum type; 0 for the plain AES keys */
  uint32_t key_bytes;       /* of the AES key (or protocol key) the material is made from */
  uint32_t aes_rounds;
  enum mpc_key_hash hash;   /* of the HMACs; NONE for the plain AES and GCM keys */
  uint32_t hmac_state_bytes;
  uint32_t mac_bytes;       /* of an encryption's or checksum's MAC, or the GCM tag */
  uint32_t prf_bytes;       /* of the Kerberos PRF's output */
  uint32_t material_bytes;  /* of one copy of the share material (layout above) */
};

static MPC_KEY_CONST struct mpc_key_algorithm_info mpc_key_algorithms[] = {
    /* id  name                          family                  enctype              cksumtype
       key rounds hash                  state mac prf material */
    {1, "aes128", MPC_KEY_FAMILY_AES, 0, 0, 16, 10, MPC_KEY_HASH_NONE, 0, 0, 0, 176},
    {2, "aes256", MPC_KEY_FAMILY_AES, 0, 0, 32, 14, MPC_KEY_HASH_NONE, 0, 0, 0, 240},
    {3, "aes256-gcm", MPC_KEY_FAMILY_GCM, MPC_KEY_GCM_ENCTYPE, MPC_KEY_GCM_CKSUMTYPE, 32, 14, MPC_KEY_HASH_NONE, 0,
     16, 0, 16624},
    {4, "aes128-cts-hmac-sha1-96", MPC_KEY_FAMILY_RFC3962, 17, 15, 16, 10, MPC_KEY_HASH_SHA1, 40, 12, 16, 1456},
    {5, "aes256-cts-hmac-sha1-96", MPC_KEY_FAMILY_RFC3962, 18, 16, 32, 14, MPC_KEY_HASH_SHA1, 40, 12, 16, 1840},
    {6, "aes128-cts-hmac-sha256-128", MPC_KEY_FAMILY_RFC8009, 19, 19, 16, 10, MPC_KEY_HASH_SHA256, 64, 16, 32, 1584},
    {7, "aes256-cts-hmac-sha384-192", MPC_KEY_FAMILY_RFC8009, 20, 20, 32, 14, MPC_KEY_HASH_SHA384, 128, 24, 48, 2608},
};
#define MPC_KEY_ALGORITHM_COUNT (sizeof mpc_key_algorithms / sizeof mpc_key_algorithms[0])

/* The row of algorithm `id`, or NULL for a number that names none. */
MPC_KEY_FUNCTION const struct mpc_key_algorithm_info *mpc_key_algorithm_by_id(int id) {
  size_t i;
  for (i = 0; i < MPC_KEY_ALGORITHM_COUNT; ++i)
    if (mpc_key_algorithms[i].id == id) return &mpc_key_algorithms[i];
  return NULL;
}

/* The row of a Kerberos key of `enctype` (17, 18, 19, 20 or the local GCM enctype), or NULL. */
MPC_KEY_FUNCTION const struct mpc_key_algorithm_info *mpc_key_algorithm_by_enctype(int32_t enctype) {
  size_t i;
  if (enctype == 0) return NULL;
  for (i = 0; i < MPC_KEY_ALGORITHM_COUNT; ++i)
    if (mpc_key_algorithms[i].enctype == enctype) return &mpc_key_algorithms[i];
  return NULL;
}

/* The row named `name`, or NULL. */
MPC_KEY_FUNCTION const struct mpc_key_algorithm_info *mpc_key_algorithm_by_name(const char *name) {
  size_t i, k;
  if (name == NULL) return NULL;
  for (i = 0; i < MPC_KEY_ALGORITHM_COUNT; ++i) {
    const char *known = mpc_key_algorithms[i].name;
    for (k = 0; known[k] != '\0' && known[k] == name[k]; ++k) {
    }
    if (known[k] == '\0' && name[k] == '\0') return &mpc_key_algorithms[i];
  }
  return NULL;
}

/* True for the algorithms of the Kerberos enctypes (RFC 3962 and RFC 8009). */
MPC_KEY_FUNCTION int mpc_key_is_kerberos(const struct mpc_key_algorithm_info *row) {
  return row != NULL && (row->family == MPC_KEY_FAMILY_RFC3962 || row->family == MPC_KEY_FAMILY_RFC8009);
}

/* Bytes of one expanded AES key schedule: 16 * (rounds + 1). */
MPC_KEY_FUNCTION uint32_t mpc_key_round_key_bytes(const struct mpc_key_algorithm_info *row) {
  return 16u * (row->aes_rounds + 1u);
}

/* The index of `usage` in mpc_key_usages, or -1 when the material holds no keys for it. */
MPC_KEY_FUNCTION int mpc_key_usage_index(uint32_t usage) {
  int i;
  for (i = 0; i < MPC_KEY_USAGE_COUNT; ++i)
    if (mpc_key_usages[i] == usage) return i;
  return -1;
}

/* Whether a KDC does `operation` (one MPC_KEY_OP_* bit) under `usage` (the rows above). */
MPC_KEY_FUNCTION int mpc_key_usage_allows(uint32_t usage, uint32_t operation) {
  const int i = mpc_key_usage_index(usage);
  return i >= 0 && (mpc_key_usage_operations[i] & operation) != 0;
}

#ifdef __cplusplus
}
#endif
#undef MPC_KEY_CONST
#undef MPC_KEY_FUNCTION

#endif /* MPC_KEY_ALGORITHMS_H */
