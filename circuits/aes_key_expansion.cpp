// AES-128/256 key expansion circuit.
//
// Implements KeyExpansion of FIPS-197, "Advanced Encryption Standard (AES)", NIST 2001
// (updated 2023), section 5.2: w[i] = w[i - Nk] ^ temp, with temp = SubWord(RotWord(
// w[i - 1])) ^ Rcon[i / Nk] when i % Nk == 0 and, for AES-256, SubWord(w[i - 1]) when
// i % Nk == 4. AES-128 needs 40 S-boxes, AES-256 52.
#include <array>

#include "circuits/aes.hpp"
#include "circuits/aes_layers.hpp"
#include "circuits/builder.hpp"
#include "common/error.hpp"

namespace mpc::circuits {
namespace {

using Word = std::array<ByteWires, 4>;

constexpr std::array<std::uint8_t, 10> kRoundConstants = {0x01, 0x02, 0x04, 0x08, 0x10,
                                                          0x20, 0x40, 0x80, 0x1b, 0x36};

}  // namespace

namespace detail {

std::vector<std::uint32_t> expand_aes_key(CircuitBuilder& builder, AesKeySize size, SboxVariant sbox,
                                          std::span<const std::uint32_t> key) {
  if (key.size() != aes_key_bits(size)) throw FormatError(Component::Circuit, "AES key of the wrong width");
  const std::size_t key_words = aes_key_bits(size) / 32;
  const std::size_t total_words = 4 * (aes_rounds(size) + 1);
  std::vector<Word> words(total_words);
  for (std::size_t word = 0; word < key_words; ++word) {
    for (std::size_t byte = 0; byte < 4; ++byte) {
      for (std::size_t bit = 0; bit < 8; ++bit) words[word][byte][bit] = key[(4 * word + byte) * 8 + bit];
    }
  }
  for (std::size_t word = key_words; word < total_words; ++word) {
    Word temp = words[word - 1];
    if (word % key_words == 0) {
      temp = Word{temp[1], temp[2], temp[3], temp[0]};  // RotWord
      for (ByteWires& byte : temp) byte = add_sbox(builder, byte, sbox);
      // XOR with a public constant is an INV gate on each bit where the constant is 1.
      const std::uint8_t round_constant = kRoundConstants[word / key_words - 1];
      for (std::size_t bit = 0; bit < 8; ++bit) {
        if ((round_constant >> bit) & 1U) temp[0][bit] = builder.inv(temp[0][bit]);
      }
    } else if (key_words > 6 && word % key_words == 4) {
      for (ByteWires& byte : temp) byte = add_sbox(builder, byte, sbox);
    }
    for (std::size_t byte = 0; byte < 4; ++byte) {
      words[word][byte] = detail::xor_bytes(builder, words[word - key_words][byte], temp[byte]);
    }
  }

  std::vector<std::uint32_t> round_key_bits;
  round_key_bits.reserve(total_words * 32);
  for (const Word& word : words) {
    for (const ByteWires& byte : word) round_key_bits.insert(round_key_bits.end(), byte.begin(), byte.end());
  }
  return round_key_bits;
}

}  // namespace detail

Circuit build_aes_key_expansion_circuit(AesKeySize size, SboxVariant sbox) {
  CircuitBuilder builder;
  const std::vector<std::uint32_t> key = builder.add_input_group(aes_key_bits(size));
  return builder.finish({detail::expand_aes_key(builder, size, sbox, key)});
}

}  // namespace mpc::circuits
