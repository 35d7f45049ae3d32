// Circuits rewired for two parties: AES-128 whose round keys are drawn as the XOR of two shares
// placed anywhere among new inputs (with_input_wiring) matches OpenSSL, extra input groups no
// gate reads (with_extra_inputs) leave the function as it was, and sources past the inputs or
// of the wrong count are refused.
#include <gtest/gtest.h>

#include "circuits/aes.hpp"
#include "circuits/aes_reference.hpp"
#include "circuits/evaluate.hpp"
#include "circuits/extra_inputs.hpp"
#include "circuits/input_wiring.hpp"
#include "common/error.hpp"
#include "support.hpp"

namespace mpc::circuits {
namespace {

using test::Bytes;

TEST(InputWiring, RoundKeysAsTwoSharesAmongOtherInputsMatchOpenSsl) {
  std::mt19937_64 rng(51);
  const Circuit aes = build_aes_circuit(AesKeySize::Aes128, AesDirection::Encrypt, SboxVariant::And32);
  const std::uint32_t key_bits = aes.input_widths[0], block_bits = aes.input_widths[1];
  // New inputs: 8 unused bits, the first share, the block, the second share.
  const std::vector<std::uint32_t> widths{8, key_bits, block_bits, key_bits};
  std::vector<InputSource> sources;
  for (std::uint32_t i = 0; i < key_bits; ++i) sources.push_back({8 + i, 8 + key_bits + block_bits + i});
  for (std::uint32_t i = 0; i < block_bits; ++i) sources.push_back({8 + key_bits + i, std::nullopt});
  const Circuit wired = with_input_wiring(aes, widths, sources);
  EXPECT_EQ(wired.input_widths, widths);
  EXPECT_EQ(wired.output_widths, aes.output_widths);

  const Bytes key = test::random_bytes(rng, 16), block = test::random_bytes(rng, 16);
  const Bytes round_keys = aes_expand_key(key);
  const Bytes first = test::random_bytes(rng, round_keys.size());
  Bytes second(first.size());
  for (std::size_t i = 0; i < second.size(); ++i) second[i] = round_keys[i] ^ first[i];
  const Bytes unused = test::random_bytes(rng, 1);
  const Bytes input = test::concat({&unused, &first, &block, &second});
  EXPECT_EQ(test::bits_to_bytes(evaluate(wired, test::bytes_to_bits(input))), test::openssl_encrypt(key, block));

  // Extra groups read by nothing: the same function of the first inputs.
  const std::uint32_t extra[] = {64, 3};
  const Circuit more = with_extra_inputs(aes, extra);
  EXPECT_EQ(more.input_widths.size(), aes.input_widths.size() + 2);
  const Bytes filler = test::random_bytes(rng, 9);
  const Bytes more_input = test::concat({&round_keys, &block, &filler});
  std::vector<std::uint8_t> bits = test::bytes_to_bits(more_input);
  bits.resize(aes.total_inputs() + 67);
  EXPECT_EQ(test::bits_to_bytes(evaluate(more, bits)), test::openssl_encrypt(key, block));

  std::vector<InputSource> past = sources;
  past.back().first = 8 + 2 * key_bits + block_bits;
  EXPECT_THROW(with_input_wiring(aes, widths, past), FormatError);
  sources.pop_back();
  EXPECT_THROW(with_input_wiring(aes, widths, sources), FormatError);
}

}  // namespace
}  // namespace mpc::circuits
