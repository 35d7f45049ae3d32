// The pieces the Kerberos circuits are made of, on builder wires: the HMAC of each enctype
// from a state group, the state group of a key that is itself computed inside the circuit,
// and the encryption, decryption and checksum of an enctype given its keys' wires.
// kerberos.hpp and kerberos_sha2.hpp build circuits whose keys are inputs; kerberos_cf2.hpp
// builds circuits that compute the keys first (KRB-FX-CF2 and key derivation) and then use
// them, with the same pieces, so both give the same outputs for the same keys.
//
// Bit order, state groups and round keys as in kerberos.hpp and kerberos_sha2.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "circuits/adder.hpp"
#include "circuits/aes_options.hpp"
#include "circuits/kerberos_sha2.hpp"

namespace mpc::circuits {

// The four Kerberos AES enctypes: RFC 3962 (17, 18) and RFC 8009 (19, 20).
enum class KrbEnctype { Aes128Sha1, Aes256Sha1, Aes128Sha256, Aes256Sha384 };

AesKeySize krb_aes_size(KrbEnctype enctype) noexcept;
bool krb_is_sha2(KrbEnctype enctype) noexcept;
// Protocol key bytes: 16 or 32.
std::size_t krb_key_bytes(KrbEnctype enctype) noexcept;
// MAC bytes of an encryption or checksum: 12, 12, 16, 24.
std::size_t krb_enctype_mac_bytes(KrbEnctype enctype) noexcept;
// Bits of an HMAC state group: 320, 320, 512, 1024.
std::size_t krb_enctype_state_bits(KrbEnctype enctype) noexcept;
// PRF output bytes: 16, 16, 32, 48.
std::size_t krb_enctype_prf_bytes(KrbEnctype enctype) noexcept;

namespace detail {

using KrbBits = std::vector<std::uint32_t>;

// Throws FormatError(Component::Circuit) past what a circuit group can hold.
std::uint32_t krb_checked_width(std::size_t bytes);
void append_constant_byte(const WordGates& gates, std::uint8_t value, KrbBits& bits);

// The first `out_bytes` of HMAC(key, message) of the enctype's hash (SHA-1, SHA-256 or
// SHA-384), from the key's state group.
KrbBits krb_hmac(WordGates& gates, KrbEnctype enctype, std::span<const std::uint32_t> state_bits,
                 const KrbBits& message_bits, std::size_t out_bytes);

// The state group of a key on wires (at most one hash block): the chaining values after
// (key || zeros) ^ 0x36.. and after (key || zeros) ^ 0x5c.., as the dealer stores them.
KrbBits krb_hmac_key_state(WordGates& gates, KrbEnctype enctype, const KrbBits& key_bits);

// Encryption of confounder || plaintext (>= 16 bytes) under Ke's round keys and Ki's state:
// group 0 the ciphertext, group 1 the MAC (RFC 3962: of the message; RFC 8009: of 16 zero
// bytes || ciphertext).
std::vector<KrbBits> krb_encrypt_outputs(WordGates& gates, KrbEnctype enctype, SboxVariant sbox,
                                         std::span<const std::uint32_t> round_keys,
                                         std::span<const std::uint32_t> state, const KrbBits& message);
// Decryption of the ciphertext (without its MAC, >= 16 bytes) and the check of the received
// MAC: group 0 the plaintext ANDed bit by bit with the verdict, group 1 the verdict.
std::vector<KrbBits> krb_decrypt_outputs(WordGates& gates, KrbEnctype enctype, SboxVariant sbox,
                                         std::span<const std::uint32_t> round_keys,
                                         std::span<const std::uint32_t> state, const KrbBits& ciphertext,
                                         const KrbBits& received_mac);
// 00000001 | "prf" | 00 | input | k (k = the digest's bits as 4 big-endian bytes): the
// message RFC 8009's PRF MACs under the protocol key (kerberos_sha2.cpp).
KrbBits krb_sha2_prf_message(const WordGates& gates, KrbSha2Hash hash, std::span<const std::uint32_t> input);

// The keyed checksum: the MAC of the message under Kc's state.
KrbBits krb_checksum_output(WordGates& gates, KrbEnctype enctype, std::span<const std::uint32_t> state,
                            const KrbBits& message);

}  // namespace detail
}  // namespace mpc::circuits
