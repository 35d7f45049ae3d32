// AES round transformations as circuits: FIPS-197 sections 5.1 and 5.3.
//
// MixColumns follows the xtime formulation of Daemen and Rijmen, "The Design of
// Rijndael" (section 4.1.1): with d_i = a_i ^ a_{i+1},
//   b_i = xtime(d_i) ^ a_{i+1} ^ d_{i+2},
// 108 XOR per column. InvMixColumns uses the factorisation of the same book
// (section 4.1.3): InvMixColumns = MixColumns o P, where P adds {04}(a_0 ^ a_2) to
// bytes 0 and 2 and {04}(a_1 ^ a_3) to bytes 1 and 3 (60 more XOR per column).
#include "circuits/aes_layers.hpp"

#include "common/error.hpp"

namespace mpc::circuits::detail {

AesState state_from_bits(std::span<const std::uint32_t> bits) {
  if (bits.size() != 128) throw FormatError(Component::Circuit, "AES state needs 128 wires");
  AesState state{};
  for (std::size_t byte = 0; byte < 16; ++byte) {
    for (std::size_t bit = 0; bit < 8; ++bit) state[byte][bit] = bits[byte * 8 + bit];
  }
  return state;
}

std::vector<std::uint32_t> bits_from_state(const AesState& state) {
  std::vector<std::uint32_t> bits;
  bits.reserve(128);
  for (const ByteWires& byte : state) bits.insert(bits.end(), byte.begin(), byte.end());
  return bits;
}

ByteWires xor_bytes(CircuitBuilder& builder, const ByteWires& a, const ByteWires& b) {
  ByteWires out{};
  for (std::size_t bit = 0; bit < 8; ++bit) out[bit] = builder.xor_(a[bit], b[bit]);
  return out;
}

ByteWires xtime(CircuitBuilder& builder, const ByteWires& in) {
  // (in << 1) ^ (in7 ? 0x1b : 0): the reduction feeds bits 0, 1, 3 and 4.
  return ByteWires{in[7],
                   builder.xor_(in[0], in[7]),
                   in[1],
                   builder.xor_(in[2], in[7]),
                   builder.xor_(in[3], in[7]),
                   in[4],
                   in[5],
                   in[6]};
}

void add_round_key(CircuitBuilder& builder, AesState& state, std::span<const std::uint32_t> round_keys,
                   std::size_t round) {
  if (round_keys.size() < (round + 1) * 128) throw FormatError(Component::Circuit, "round key out of range");
  for (std::size_t byte = 0; byte < 16; ++byte) {
    for (std::size_t bit = 0; bit < 8; ++bit) {
      state[byte][bit] = builder.xor_(state[byte][bit], round_keys[round * 128 + byte * 8 + bit]);
    }
  }
}

void sub_bytes(CircuitBuilder& builder, AesState& state, SboxVariant variant) {
  for (ByteWires& byte : state) byte = add_sbox(builder, byte, variant);
}

void inv_sub_bytes(CircuitBuilder& builder, AesState& state, SboxVariant variant) {
  for (ByteWires& byte : state) byte = add_inverse_sbox(builder, byte, variant);
}

void shift_rows(AesState& state) {
  // Row r moves left by r: new (r, c) = old (r, c + r).
  const AesState old = state;
  for (std::size_t column = 0; column < 4; ++column) {
    for (std::size_t row = 0; row < 4; ++row) state[row + 4 * column] = old[row + 4 * ((column + row) % 4)];
  }
}

void inv_shift_rows(AesState& state) {
  const AesState old = state;
  for (std::size_t column = 0; column < 4; ++column) {
    for (std::size_t row = 0; row < 4; ++row) state[row + 4 * ((column + row) % 4)] = old[row + 4 * column];
  }
}

namespace {

void mix_column(CircuitBuilder& builder, ByteWires* column) {
  std::array<ByteWires, 4> a{column[0], column[1], column[2], column[3]};
  std::array<ByteWires, 4> d{};
  for (std::size_t i = 0; i < 4; ++i) d[i] = xor_bytes(builder, a[i], a[(i + 1) % 4]);
  for (std::size_t i = 0; i < 4; ++i) {
    const ByteWires doubled = xtime(builder, d[i]);
    column[i] = xor_bytes(builder, xor_bytes(builder, doubled, a[(i + 1) % 4]), d[(i + 2) % 4]);
  }
}

}  // namespace

void mix_columns(CircuitBuilder& builder, AesState& state) {
  for (std::size_t column = 0; column < 4; ++column) mix_column(builder, &state[4 * column]);
}

void inv_mix_columns(CircuitBuilder& builder, AesState& state) {
  for (std::size_t column = 0; column < 4; ++column) {
    ByteWires* a = &state[4 * column];
    const ByteWires even = xtime(builder, xtime(builder, xor_bytes(builder, a[0], a[2])));
    const ByteWires odd = xtime(builder, xtime(builder, xor_bytes(builder, a[1], a[3])));
    a[0] = xor_bytes(builder, a[0], even);
    a[1] = xor_bytes(builder, a[1], odd);
    a[2] = xor_bytes(builder, a[2], even);
    a[3] = xor_bytes(builder, a[3], odd);
    mix_column(builder, a);
  }
}

void encrypt_rounds(CircuitBuilder& builder, AesState& state, std::span<const std::uint32_t> round_keys,
                    std::size_t rounds, SboxVariant variant) {
  add_round_key(builder, state, round_keys, 0);
  for (std::size_t round = 1; round < rounds; ++round) {
    sub_bytes(builder, state, variant);
    shift_rows(state);
    mix_columns(builder, state);
    add_round_key(builder, state, round_keys, round);
  }
  sub_bytes(builder, state, variant);
  shift_rows(state);
  add_round_key(builder, state, round_keys, rounds);
}

void decrypt_rounds(CircuitBuilder& builder, AesState& state, std::span<const std::uint32_t> round_keys,
                    std::size_t rounds, SboxVariant variant) {
  add_round_key(builder, state, round_keys, rounds);
  for (std::size_t round = rounds - 1; round >= 1; --round) {
    inv_shift_rows(state);
    inv_sub_bytes(builder, state, variant);
    add_round_key(builder, state, round_keys, round);
    inv_mix_columns(builder, state);
  }
  inv_shift_rows(state);
  inv_sub_bytes(builder, state, variant);
  add_round_key(builder, state, round_keys, 0);
}

}  // namespace mpc::circuits::detail
