// The AES round transformations (FIPS-197 section 5) on a state of wires, for the
// AES generators. State byte b is row b % 4, column b / 4, as in FIPS-197 (3.4).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "circuits/aes_options.hpp"
#include "circuits/sbox.hpp"

namespace mpc::circuits::detail {

using AesState = std::array<ByteWires, 16>;

// Byte b bit k of the state is wire bits[b * 8 + k].
AesState state_from_bits(std::span<const std::uint32_t> bits);
std::vector<std::uint32_t> bits_from_state(const AesState& state);

// state ^= round key r, whose byte b bit k is round_keys[r * 128 + b * 8 + k].
void add_round_key(CircuitBuilder& builder, AesState& state, std::span<const std::uint32_t> round_keys,
                   std::size_t round);
void sub_bytes(CircuitBuilder& builder, AesState& state, SboxVariant variant);
void inv_sub_bytes(CircuitBuilder& builder, AesState& state, SboxVariant variant);
// Pure rewiring: no gates.
void shift_rows(AesState& state);
void inv_shift_rows(AesState& state);
void mix_columns(CircuitBuilder& builder, AesState& state);
void inv_mix_columns(CircuitBuilder& builder, AesState& state);

// The whole Cipher (FIPS-197 5.1) on `state`, round keys laid out as for add_round_key.
void encrypt_rounds(CircuitBuilder& builder, AesState& state, std::span<const std::uint32_t> round_keys,
                    std::size_t rounds, SboxVariant variant);
// FIPS-197 5.3 InvCipher with the encryption round keys, on `state` in place.
void decrypt_rounds(CircuitBuilder& builder, AesState& state, std::span<const std::uint32_t> round_keys,
                    std::size_t rounds, SboxVariant variant);

// Multiplication by x (that is {02}) in GF(2^8): three XOR gates.
ByteWires xtime(CircuitBuilder& builder, const ByteWires& in);
ByteWires xor_bytes(CircuitBuilder& builder, const ByteWires& a, const ByteWires& b);

// KeyExpansion (FIPS-197 5.2) of a key on wires (128 or 256 of them, byte b bit k at b * 8 + k):
// the round keys in add_round_key's layout (aes_key_expansion.cpp). For keys that are
// themselves computed inside a circuit (kerberos_cf2.hpp). Throws FormatError for a key of the
// wrong width.
std::vector<std::uint32_t> expand_aes_key(CircuitBuilder& builder, AesKeySize size, SboxVariant sbox,
                                          std::span<const std::uint32_t> key);

}  // namespace mpc::circuits::detail
