// tests/unit/protocol/gc2/ghash_labels_test.cpp: GHASH over wire labels. With the hash key's powers as
// zero labels (garbler) and active labels (evaluator), the two results differ by delta exactly
// where the bits of GHASH_H(aad, text) are 1; GHASH_H ^ AES_K(J0) is OpenSSL's AES-256-GCM tag.
// Also: the output labels garble() and evaluate() hand out are the zero and active labels of
// the outputs.
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <array>
#include <random>
#include <thread>
#include <vector>

#include "circuits/aes.hpp"
#include "common/error.hpp"
#include "protocol/gc2/ghash_labels.hpp"
#include "protocol/gc2/half_gates.hpp"
#include "protocol/rss3/ghash.hpp"

namespace {

using namespace mpc::gc2;
using Bytes = std::vector<std::uint8_t>;

Bytes random_bytes(std::mt19937_64& rng, std::size_t n) {
  Bytes out(n);
  for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  return out;
}

std::array<std::uint8_t, 16> aes256_block(const Bytes& key, const std::array<std::uint8_t, 16>& in) {
  std::array<std::uint8_t, 16> out{};
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  int length = 0;
  EXPECT_EQ(EVP_EncryptInit_ex(ctx, EVP_aes_256_ecb(), nullptr, key.data(), nullptr), 1);
  EVP_CIPHER_CTX_set_padding(ctx, 0);
  EXPECT_EQ(EVP_EncryptUpdate(ctx, out.data(), &length, in.data(), 16), 1);
  EVP_CIPHER_CTX_free(ctx);
  return out;
}

// OpenSSL's AES-256-GCM encryption of `plaintext`: the tag, and the ciphertext into `ciphertext`
// (GHASH covers the ciphertext).
std::array<std::uint8_t, 16> openssl_gcm_tag(const Bytes& key, const Bytes& nonce, const Bytes& aad,
                                             const Bytes& plaintext, Bytes& ciphertext) {
  const Bytes& text = plaintext;
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  int length = 0;
  Bytes out(text.size() + 16);
  EXPECT_EQ(EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr, key.data(), nonce.data()), 1);
  if (!aad.empty()) {
    EXPECT_EQ(EVP_EncryptUpdate(ctx, nullptr, &length, aad.data(), static_cast<int>(aad.size())), 1);
  }
  if (!text.empty()) {
    EXPECT_EQ(EVP_EncryptUpdate(ctx, out.data(), &length, text.data(), static_cast<int>(text.size())), 1);
  }
  EXPECT_EQ(EVP_EncryptFinal_ex(ctx, out.data(), &length), 1);
  std::array<std::uint8_t, 16> tag{};
  EXPECT_EQ(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, tag.data()), 1);
  EVP_CIPHER_CTX_free(ctx);
  ciphertext.assign(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(text.size()));
  return tag;
}

std::uint8_t bit_of(std::span<const std::uint8_t> bytes, std::size_t row) { return (bytes[row / 8] >> (row % 8)) & 1; }

TEST(GhashLabels, GarblerAndEvaluatorLabelsOpenToOpensslsTag) {
  std::mt19937_64 rng(20261121);
  const Garbler garbler;
  for (const auto& [aad_bytes, text_bytes] :
       std::vector<std::pair<std::size_t, std::size_t>>{{0, 0}, {0, 1}, {13, 0}, {16, 16}, {20, 100}, {7, 333}}) {
    const Bytes key = random_bytes(rng, 32);
    const Bytes nonce = random_bytes(rng, 12);
    const Bytes aad = random_bytes(rng, aad_bytes);
    Bytes text;
    const auto tag = openssl_gcm_tag(key, nonce, aad, random_bytes(rng, text_bytes), text);
    const std::size_t count = mpc::rss3::ghash_blocks(aad.size(), text.size());
    const auto h = aes256_block(key, {});
    const auto powers = mpc::rss3::hash_key_powers(h, count);
    // The powers' bits as wires: zero labels, and active labels under the garbler's delta.
    const Labels zero = zero_labels(128 * count);
    std::vector<std::uint8_t> bits(128 * count);
    for (std::size_t k = 0; k < count; ++k)
      for (std::size_t r = 0; r < 128; ++r) bits[128 * k + r] = bit_of(powers[k], r);
    const Labels active = garbler_input_labels(garbler, bits, zero);
    const Labels ghash_zero = ghash_labels(zero, aad, text);
    const Labels ghash_active = ghash_labels(active, aad, text);

    std::array<std::uint8_t, 16> j0{};
    std::copy(nonce.begin(), nonce.end(), j0.begin());
    j0[15] = 1;
    const auto mask = aes256_block(key, j0);
    for (std::size_t j = 0; j < 128; ++j) {
      const std::uint8_t ghash_bit = bit_of(tag, j) ^ bit_of(mask, j);
      const Block difference = ghash_zero[j] ^ ghash_active[j];
      EXPECT_EQ(difference, ghash_bit ? garbler.delta() : Block{}) << aad_bytes << "/" << text_bytes << " bit " << j;
    }
  }
}

TEST(GhashLabels, RefusesInputsLongerThanThePowers) {
  const Labels zero = zero_labels(128 * 2);
  const Bytes text(17);  // two text blocks and the length block: three powers
  EXPECT_THROW(ghash_labels(zero, {}, text), mpc::Error);
  EXPECT_NO_THROW(ghash_labels(zero, {}, Bytes(16)));
}

TEST(GarbledOutputLabels, AreTheOutputsZeroAndActiveLabels) {
  const auto program = mpc::circuits::compile(mpc::circuits::build_aes_circuit(
      mpc::circuits::AesKeySize::Aes128, mpc::circuits::AesDirection::Encrypt, mpc::circuits::SboxVariant::And32));
  std::mt19937_64 rng(7);
  constexpr std::size_t kInstances = 3;
  Garbler garbler;
  const Labels zero = zero_labels(static_cast<std::size_t>(program.num_inputs) * kInstances);
  std::vector<std::uint8_t> inputs(zero.size());
  for (auto& bit : inputs) bit = rng() & 1;
  const Labels active = garbler_input_labels(garbler, inputs, zero);
  auto [garbler_end, evaluator_end] = mpc::two_party::make_memory_channel_pair();
  Labels output_zero, output_active;
  std::vector<std::uint8_t> decoding, colours;
  std::thread garbling([&] { decoding = garbler.garble(program, kInstances, zero, *garbler_end, output_zero); });
  colours = evaluate(program, kInstances, active, *evaluator_end, output_active);
  garbling.join();
  ASSERT_EQ(output_zero.size(), static_cast<std::size_t>(program.num_outputs) * kInstances);
  ASSERT_EQ(output_active.size(), output_zero.size());
  for (std::size_t i = 0; i < output_zero.size(); ++i) {
    const std::uint8_t value = decoding[i] ^ colours[i];
    EXPECT_EQ(output_zero[i] ^ output_active[i], value ? garbler.delta() : Block{}) << i;
    EXPECT_EQ(output_zero[i].lsb(), decoding[i] != 0);
  }
}

}  // namespace
