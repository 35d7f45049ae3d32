// AES-128/256 encryption and decryption circuits with pre-expanded round keys.
//
// Implements FIPS-197, "Advanced Encryption Standard (AES)", NIST 2001 (updated 2023):
// the Cipher of section 5.1 and the straightforward InvCipher of section 5.3. S-boxes
// are the Boyar-Peralta circuits (see sbox.cpp), so AES-128 costs 160 S-boxes:
// 5,120 AND at AND-depth 60 (And32) or 5,440 AND at AND-depth 40 (Depth4).
#include "circuits/aes.hpp"

#include <utility>

#include "circuits/aes_layers.hpp"
#include "circuits/builder.hpp"
#include "circuits/equality.hpp"

namespace mpc::circuits {

Circuit build_aes_circuit(AesKeySize size, AesDirection direction, SboxVariant sbox) {
  using namespace detail;
  const std::size_t rounds = aes_rounds(size);
  CircuitBuilder builder;
  const std::vector<std::uint32_t> round_keys = builder.add_input_group(aes_round_key_bits(size));
  AesState state = state_from_bits(builder.add_input_group(128));

  if (direction == AesDirection::Encrypt) {
    encrypt_rounds(builder, state, round_keys, rounds, sbox);
  } else {
    decrypt_rounds(builder, state, round_keys, rounds, sbox);
  }
  return builder.finish({bits_from_state(state)});
}

Circuit build_aes_encrypt_equal_circuit(AesKeySize size, SboxVariant sbox) {
  using namespace detail;
  CircuitBuilder builder;
  const std::vector<std::uint32_t> round_keys = builder.add_input_group(aes_round_key_bits(size));
  AesState state = state_from_bits(builder.add_input_group(128));
  const std::vector<std::uint32_t> expected = builder.add_input_group(128);
  encrypt_rounds(builder, state, round_keys, aes_rounds(size), sbox);
  std::vector<std::uint32_t> output = bits_from_state(state);
  const std::uint32_t equal = equal_bits(builder, output, expected);
  return builder.finish({std::move(output), {equal}});
}

}  // namespace mpc::circuits
