// Cleartext AES (FIPS-197) for tests and for the key-import dealer, which runs it on
// real keys: no secret-dependent table lookups or branches (the S-box is computed by
// inversion in GF(2^8)), and internal temporaries are wiped. The caller owns and wipes
// what it gets back.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace mpc::circuits {

constexpr std::size_t kAesBlockBytes = 16;

// 16- or 32-byte key -> 176 or 240 bytes of round keys in FIPS-197 order (round key r is
// bytes 16r..16r+15). Throws FormatError for any other key size.
std::vector<std::uint8_t> aes_expand_key(std::span<const std::uint8_t> key);

// One block with round keys from aes_expand_key (176 or 240 bytes; FormatError otherwise).
std::array<std::uint8_t, kAesBlockBytes> aes_encrypt_block(std::span<const std::uint8_t> round_keys,
                                                           std::span<const std::uint8_t, kAesBlockBytes> block);
std::array<std::uint8_t, kAesBlockBytes> aes_decrypt_block(std::span<const std::uint8_t> round_keys,
                                                           std::span<const std::uint8_t, kAesBlockBytes> block);

// The linear layers, in place. They are linear over GF(2), so each holder of an XOR share
// of the state may apply them to its share alone (the two-server lookup-table back end does).
void aes_shift_rows(std::array<std::uint8_t, kAesBlockBytes>& state, bool inverse);
void aes_mix_columns(std::array<std::uint8_t, kAesBlockBytes>& state);
void aes_inv_mix_columns(std::array<std::uint8_t, kAesBlockBytes>& state);

// Single S-box values, constant time.
std::uint8_t aes_sbox(std::uint8_t value);
std::uint8_t aes_inverse_sbox(std::uint8_t value);

}  // namespace mpc::circuits
