// Cleartext AES after FIPS-197, "Advanced Encryption Standard (AES)", NIST 2001
// (updated 2023): KeyExpansion (5.2), Cipher (5.1), InvCipher (5.3). Written for
// constant time rather than speed; the dealer expands a handful of keys.
#include "circuits/aes_reference.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "common/secret.hpp"

namespace mpc::circuits {
namespace {

using Block = std::array<std::uint8_t, kAesBlockBytes>;

std::uint8_t mask_from_bit(unsigned bit) { return static_cast<std::uint8_t>(0U - (bit & 1U)); }

std::uint8_t gf_multiply(std::uint8_t a, std::uint8_t b) {
  std::uint8_t product = 0;
  for (int i = 0; i < 8; ++i) {
    product ^= static_cast<std::uint8_t>(a & mask_from_bit(b));
    a = static_cast<std::uint8_t>((a << 1) ^ (0x1b & mask_from_bit(a >> 7)));
    b = static_cast<std::uint8_t>(b >> 1);
  }
  return product;
}

// x^254 = x^-1 (and 0 -> 0); the exponent is public, so the square-and-multiply is fixed.
std::uint8_t gf_inverse(std::uint8_t x) {
  std::uint8_t result = 1;
  for (int bit = 7; bit >= 0; --bit) {
    result = gf_multiply(result, result);
    if ((254 >> bit) & 1) result = gf_multiply(result, x);
  }
  return result;
}

std::uint8_t rotate_left(std::uint8_t value, unsigned count) {
  return static_cast<std::uint8_t>((value << count) | (value >> (8 - count)));
}

std::uint8_t xtime(std::uint8_t value) {
  return static_cast<std::uint8_t>((value << 1) ^ (0x1b & mask_from_bit(value >> 7)));
}

std::size_t rounds_for(std::size_t round_key_bytes) {
  if (round_key_bytes == 176) return 10;
  if (round_key_bytes == 240) return 14;
  throw FormatError(Component::Circuit, "AES round keys must be 176 or 240 bytes");
}

void add_round_key(Block& state, std::span<const std::uint8_t> round_keys, std::size_t round) {
  for (std::size_t i = 0; i < kAesBlockBytes; ++i) state[i] ^= round_keys[round * kAesBlockBytes + i];
}

}  // namespace

void aes_shift_rows(std::array<std::uint8_t, kAesBlockBytes>& state, bool inverse) {
  const auto old = state;
  for (std::size_t column = 0; column < 4; ++column) {
    for (std::size_t row = 0; row < 4; ++row) {
      const std::size_t shifted = row + 4 * ((column + row) % 4);
      if (inverse) {
        state[shifted] = old[row + 4 * column];
      } else {
        state[row + 4 * column] = old[shifted];
      }
    }
  }
}

void aes_mix_columns(std::array<std::uint8_t, kAesBlockBytes>& state) {
  for (std::size_t column = 0; column < 4; ++column) {
    std::uint8_t* a = &state[4 * column];
    const std::uint8_t all = a[0] ^ a[1] ^ a[2] ^ a[3];
    const std::uint8_t first = a[0];
    for (std::size_t i = 0; i < 4; ++i) {
      const std::uint8_t next = i == 3 ? first : a[i + 1];
      a[i] ^= all ^ xtime(a[i] ^ next);
    }
  }
}

void aes_inv_mix_columns(std::array<std::uint8_t, kAesBlockBytes>& state) {
  for (std::size_t column = 0; column < 4; ++column) {
    std::uint8_t* a = &state[4 * column];
    const std::uint8_t even = xtime(xtime(a[0] ^ a[2]));
    const std::uint8_t odd = xtime(xtime(a[1] ^ a[3]));
    a[0] ^= even;
    a[1] ^= odd;
    a[2] ^= even;
    a[3] ^= odd;
  }
  aes_mix_columns(state);
}


std::uint8_t aes_sbox(std::uint8_t value) {
  const std::uint8_t inverse = gf_inverse(value);
  return static_cast<std::uint8_t>(inverse ^ rotate_left(inverse, 1) ^ rotate_left(inverse, 2) ^
                                   rotate_left(inverse, 3) ^ rotate_left(inverse, 4) ^ 0x63);
}

std::uint8_t aes_inverse_sbox(std::uint8_t value) {
  const std::uint8_t unmapped =
      static_cast<std::uint8_t>(rotate_left(value, 1) ^ rotate_left(value, 3) ^ rotate_left(value, 6) ^ 0x05);
  return gf_inverse(unmapped);
}

std::vector<std::uint8_t> aes_expand_key(std::span<const std::uint8_t> key) {
  if (key.size() != 16 && key.size() != 32) throw FormatError(Component::Circuit, "AES key must be 16 or 32 bytes");
  const std::size_t key_words = key.size() / 4;
  const std::size_t rounds = key_words + 6;
  const std::size_t total_words = 4 * (rounds + 1);
  std::vector<std::uint8_t> expanded(total_words * 4);
  std::copy(key.begin(), key.end(), expanded.begin());
  std::uint8_t round_constant = 0x01;
  std::array<std::uint8_t, 4> temp{};
  for (std::size_t word = key_words; word < total_words; ++word) {
    for (std::size_t byte = 0; byte < 4; ++byte) temp[byte] = expanded[(word - 1) * 4 + byte];
    if (word % key_words == 0) {
      const std::uint8_t first = temp[0];
      temp = {aes_sbox(temp[1]), aes_sbox(temp[2]), aes_sbox(temp[3]), aes_sbox(first)};
      temp[0] ^= round_constant;
      round_constant = xtime(round_constant);
    } else if (key_words > 6 && word % key_words == 4) {
      for (auto& byte : temp) byte = aes_sbox(byte);
    }
    for (std::size_t byte = 0; byte < 4; ++byte) {
      expanded[word * 4 + byte] = expanded[(word - key_words) * 4 + byte] ^ temp[byte];
    }
  }
  wipe(temp.data(), temp.size());
  return expanded;
}

Block aes_encrypt_block(std::span<const std::uint8_t> round_keys, std::span<const std::uint8_t, kAesBlockBytes> block) {
  const std::size_t rounds = rounds_for(round_keys.size());
  Block state{};
  std::copy(block.begin(), block.end(), state.begin());
  add_round_key(state, round_keys, 0);
  for (std::size_t round = 1; round <= rounds; ++round) {
    for (auto& byte : state) byte = aes_sbox(byte);
    aes_shift_rows(state, false);
    if (round != rounds) aes_mix_columns(state);
    add_round_key(state, round_keys, round);
  }
  return state;
}

Block aes_decrypt_block(std::span<const std::uint8_t> round_keys, std::span<const std::uint8_t, kAesBlockBytes> block) {
  const std::size_t rounds = rounds_for(round_keys.size());
  Block state{};
  std::copy(block.begin(), block.end(), state.begin());
  add_round_key(state, round_keys, rounds);
  for (std::size_t round = rounds; round-- > 0;) {
    aes_shift_rows(state, true);
    for (auto& byte : state) byte = aes_inverse_sbox(byte);
    add_round_key(state, round_keys, round);
    if (round != 0) aes_inv_mix_columns(state);
  }
  return state;
}

}  // namespace mpc::circuits
