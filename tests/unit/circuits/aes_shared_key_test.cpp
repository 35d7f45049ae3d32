// The shared-key AES circuit: several blocks under round keys given as two XOR shares match
// OpenSSL for both key sizes and directions; its AND gates are those of the blocks' ciphers.
#include <gtest/gtest.h>

#include "circuits/aes.hpp"
#include "circuits/aes_reference.hpp"
#include "circuits/aes_shared_key.hpp"
#include "circuits/evaluate.hpp"
#include "common/error.hpp"
#include "support.hpp"

namespace mpc::circuits {
namespace {

using test::Bytes;

std::size_t ands(const Circuit& circuit) {
  std::size_t count = 0;
  for (const auto& gate : circuit.gates) count += gate.kind == GateKind::And ? 1 : 0;
  return count;
}

TEST(SharedKeyAes, BlocksUnderXorSharedRoundKeysMatchOpenSsl) {
  std::mt19937_64 rng(41);
  for (const AesKeySize size : {AesKeySize::Aes128, AesKeySize::Aes256})
    for (const AesDirection direction : {AesDirection::Encrypt, AesDirection::Decrypt}) {
      const std::uint32_t blocks = 3;
      const Circuit circuit = build_shared_key_aes_circuit(size, direction, SboxVariant::And32, blocks);
      const Bytes key = test::random_bytes(rng, aes_key_bits(size) / 8);
      const Bytes round_keys = aes_expand_key(key);
      const Bytes first = test::random_bytes(rng, round_keys.size());
      Bytes second(round_keys.size());
      for (std::size_t i = 0; i < second.size(); ++i) second[i] = round_keys[i] ^ first[i];
      const Bytes data = test::random_bytes(rng, 16 * blocks);
      const Bytes input = test::concat({&first, &second, &data});
      const Bytes output = test::bits_to_bytes(evaluate(circuit, test::bytes_to_bits(input)));
      ASSERT_EQ(output.size(), 16u * blocks);
      for (std::uint32_t e = 0; e < blocks; ++e) {
        const Bytes block(data.begin() + 16 * e, data.begin() + 16 * (e + 1));
        const Bytes expected =
            direction == AesDirection::Encrypt ? test::openssl_encrypt(key, block) : test::openssl_decrypt(key, block);
        EXPECT_EQ(Bytes(output.begin() + 16 * e, output.begin() + 16 * (e + 1)), expected) << e;
      }
      EXPECT_EQ(ands(circuit), blocks * ands(build_aes_circuit(size, direction, SboxVariant::And32)));
    }
  EXPECT_THROW(build_shared_key_aes_circuit(AesKeySize::Aes128, AesDirection::Encrypt, SboxVariant::And32, 0),
               FormatError);
}

}  // namespace
}  // namespace mpc::circuits
