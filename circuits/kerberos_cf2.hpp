// KRB-FX-CF2 (RFC 6113 section 5.1) with a protected key, and one use of the key it makes, in
// one circuit: FAST's encrypted challenge and strengthened reply key without the protected
// key's PRF output ever leaving the computation.
//
// A KDC combines a client's long-term key K2 with a key it holds in clear (the FAST armor key
// or its strengthen key) K1: KRB-FX-CF2(K1, pepper1, K2, pepper2) = random-to-key(PRF+(K1,
// pepper1) ^ PRF+(K2, pepper2)), both PRF+ outputs as long as a key of K1's enctype, which the
// result has. PRF+(K2, pepper2) is as good as a password for whoever learns it (it makes every
// future challenge key of that client), so it must stay secret-shared. The KDC computes its own
// half, the mask PRF+(K1, pepper1), and the circuit does the rest:
//
//   1. PRF+(K2, pepper2) from K2's PRF material. RFC 3962 keys: AES under the PRF key DK(K2,
//      "prf") of the blocks SHA-1(i || pepper2)[0..16), i = 1, 2, ... (the caller hashes the
//      public pepper); RFC 8009 keys: HMAC(K2, 00000001 | "prf" | 00 | 1 || pepper2 | k), one
//      block always covers a key.
//   2. The combined key K = PRF+ ^ mask (random-to-key is the identity for the AES enctypes).
//   3. K's derived keys for the usage: DK(K, usage | role) with n-fold, AES and K's key
//      schedule (RFC 3961, RFC 3962), or KDF-HMAC-SHA2(K, usage | role, bits) (RFC 8009); the
//      round keys of Ke and the HMAC states of Ki or Kc.
//   4. The encryption, decryption or checksum of the combined enctype (kerberos_parts.hpp),
//      whose outputs are exactly those of the circuits of kerberos.hpp / kerberos_sha2.hpp.
//
// Inputs, in order: group 0 the protected key's PRF material (RFC 3962: the PRF key's round
// keys; RFC 8009: the protocol key's HMAC state), group 1 the PRF inputs (public: RFC 3962:
// 16 bytes per PRF block; RFC 8009: 1 || pepper2), group 2 the mask (a key of the combined
// enctype, public to the KDC), then the data as for the plain circuit of the operation
// (message; ciphertext then received MAC; checksummed message, absent when empty).
#pragma once

#include <cstddef>
#include <cstdint>

#include "circuits/aes_options.hpp"
#include "circuits/circuit.hpp"
#include "circuits/kerberos_parts.hpp"

namespace mpc::circuits {

enum class KrbCf2Use { Encrypt, Decrypt, Checksum };

struct KrbCf2Shape {
  KrbEnctype protected_key = KrbEnctype::Aes256Sha1;  // K2, whose PRF material is secret
  KrbEnctype combined = KrbEnctype::Aes256Sha1;       // K1's enctype: the mask's and the result's
  KrbCf2Use use = KrbCf2Use::Encrypt;
  std::uint32_t usage = 0;          // the key usage the combined key is used with
  std::size_t prf_input_bytes = 0;  // group 1, krb_cf2_prf_input_bytes()
  std::size_t data_bytes = 0;       // message, ciphertext without its MAC, or checksummed message
};

// PRF blocks of the protected key that make one key of the combined enctype.
std::size_t krb_cf2_prf_blocks(KrbEnctype protected_key, KrbEnctype combined) noexcept;
// Bytes of group 1 for a pepper of `pepper_bytes`: 16 per PRF block (RFC 3962), or
// 1 + pepper_bytes (RFC 8009).
std::size_t krb_cf2_prf_input_bytes(KrbEnctype protected_key, KrbEnctype combined, std::size_t pepper_bytes) noexcept;

// Throws FormatError(Component::Circuit) for data an operation cannot take (an encryption or
// decryption of fewer than 16 bytes) or PRF inputs of the wrong length.
Circuit build_krb_cf2_circuit(const KrbCf2Shape& shape, CircuitCost cost = CircuitCost::FewestLayers);

}  // namespace mpc::circuits
