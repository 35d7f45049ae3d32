// Shared helpers for the circuit tests: bit packing, OpenSSL AES, an independent
// S-box table.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <random>
#include <span>
#include <vector>

namespace mpc::circuits::test {

using Bytes = std::vector<std::uint8_t>;

Bytes from_hex(const char* hex);

// Bit j of a byte string is bit j % 8 of byte j / 8.
std::vector<std::uint8_t> bytes_to_bits(std::span<const std::uint8_t> bytes);
Bytes bits_to_bytes(std::span<const std::uint8_t> bits);

// Packs up to 64 instances (each a concatenation of its input byte strings) into one word
// per wire, lane i = instance i; and takes lane i back out as bytes.
std::vector<std::uint64_t> pack_lanes(const std::vector<Bytes>& instances);
Bytes unpack_lane(const std::vector<std::uint64_t>& words, std::size_t lane);

Bytes random_bytes(std::mt19937_64& rng, std::size_t count);

// AES-ECB without padding through OpenSSL EVP, one block.
Bytes openssl_encrypt(const Bytes& key, const Bytes& block);
Bytes openssl_decrypt(const Bytes& key, const Bytes& block);

// RFC 3962 CBC-CTS with a zero IV through OpenSSL (also RFC 8009's cipher): AES-CBC over the
// zero-padded message, then the last two blocks swapped and the result truncated to the
// message length; a single block is plain CBC. key is 16 or 32 bytes.
Bytes openssl_cts_encrypt(const Bytes& key, const Bytes& message);

// The parts one after the other.
Bytes concat(std::initializer_list<const Bytes*> parts);

// The AES S-box derived here from its definition (FIPS-197 5.1.1): multiplicative
// inverse in GF(2^8) found by search, then the affine map. Independent of the library.
std::array<std::uint8_t, 256> definition_sbox_table();

}  // namespace mpc::circuits::test
