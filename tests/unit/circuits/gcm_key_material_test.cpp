// GF(2^128) on wires and the aes256-gcm key material circuit: products and squares against
// SP 800-38D's Algorithm 1 written out here, the material against OpenSSL (the round keys'
// cipher, H = AES_K(0), and a GMAC tag of AES-256-GCM computed from the powers).
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <memory>

#include "circuits/aes.hpp"
#include "circuits/aes_reference.hpp"
#include "circuits/builder.hpp"
#include "circuits/evaluate.hpp"
#include "circuits/gcm_key_material.hpp"
#include "circuits/gf128.hpp"
#include "circuits/stats.hpp"
#include "support.hpp"

namespace mpc::circuits {
namespace {

using test::Bytes;

// SP 800-38D 6.3, Algorithm 1: X * Y in GCM's bit order (bit 0 the most significant of byte 0).
Bytes reference_multiply(const Bytes& x, const Bytes& y) {
  Bytes z(16, 0), v = y;
  for (int i = 0; i < 128; ++i) {
    if ((x[i / 8] >> (7 - i % 8)) & 1)
      for (int b = 0; b < 16; ++b) z[b] ^= v[b];
    const bool low = v[15] & 1;
    for (int b = 15; b > 0; --b) v[b] = static_cast<std::uint8_t>((v[b] >> 1) | (v[b - 1] << 7));
    v[0] >>= 1;
    if (low) v[0] ^= 0xe1;
  }
  return z;
}

// a, b -> a * b and a^2, each in GCM's byte order.
Circuit product_and_square_circuit() {
  CircuitBuilder builder;
  const auto a = detail::from_gcm_bytes(builder.add_input_group(128));
  const auto b = detail::from_gcm_bytes(builder.add_input_group(128));
  const auto product =
      detail::gf128_multiply(builder, detail::gf128_spread(builder, a), detail::gf128_spread(builder, b));
  return builder.finish({detail::to_gcm_bytes(product), detail::to_gcm_bytes(detail::gf128_square(builder, a))});
}

TEST(Gf128Circuit, ProductsAndSquaresMatchTheStandardsAlgorithm) {
  const Circuit circuit = product_and_square_circuit();
  const CircuitStats stats = compute_stats(circuit);
  EXPECT_EQ(stats.and_gates, 2187u);
  EXPECT_EQ(stats.and_depth, 1u);
  std::mt19937_64 rng(0x6766313238);
  std::vector<Bytes> inputs, products, squares;
  for (int lane = 0; lane < 64; ++lane) {
    Bytes a = test::random_bytes(rng, 16), b = test::random_bytes(rng, 16);
    if (lane == 0) a.assign(16, 0);            // zero
    if (lane == 1) a = Bytes{0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};  // the field's one
    if (lane == 2) a.assign(16, 0xff);         // every coefficient, so every reduction term
    products.push_back(reference_multiply(a, b));
    squares.push_back(reference_multiply(a, a));
    inputs.push_back(test::concat({&a, &b}));
  }
  const auto out = evaluate_packed(circuit, test::pack_lanes(inputs));
  for (int lane = 0; lane < 64; ++lane) {
    const Bytes got = test::unpack_lane(out, static_cast<std::size_t>(lane));
    EXPECT_EQ(Bytes(got.begin(), got.begin() + 16), products[lane]) << lane;
    EXPECT_EQ(Bytes(got.begin() + 16, got.end()), squares[lane]) << lane;
  }
  EXPECT_EQ(products[1], Bytes(inputs[1].begin() + 16, inputs[1].end())) << "one times b is b";
}

// AES-256-GCM through OpenSSL: the tag of empty text under `aad`.
Bytes openssl_gmac(const Bytes& key, const Bytes& iv, const Bytes& aad) {
  std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)> context(EVP_CIPHER_CTX_new(), EVP_CIPHER_CTX_free);
  Bytes tag(16);
  int length = 0;
  if (!context || EVP_EncryptInit_ex(context.get(), EVP_aes_256_gcm(), nullptr, key.data(), iv.data()) != 1 ||
      EVP_EncryptUpdate(context.get(), nullptr, &length, aad.data(), static_cast<int>(aad.size())) != 1 ||
      EVP_EncryptFinal_ex(context.get(), nullptr, &length) != 1 ||
      EVP_CIPHER_CTX_ctrl(context.get(), EVP_CTRL_GCM_GET_TAG, 16, tag.data()) != 1)
    ADD_FAILURE() << "OpenSSL AES-256-GCM failed";
  return tag;
}

// The tag from the material alone: GHASH_H(A1, A2) = A1 H^3 ^ A2 H^2 ^ L H, L = 256-bit AAD and
// no text, masked with E_K(IV || 1) from the material's round keys.
Bytes tag_from_material(const Bytes& material, const Bytes& iv, const Bytes& aad) {
  const auto power = [&](int k) { return Bytes(material.begin() + 240 + 16 * (k - 1), material.begin() + 240 + 16 * k); };
  Bytes length(16, 0);
  length[6] = 1;  // len(A) = 256 bits, big-endian in the first 8 bytes
  const Bytes a1(aad.begin(), aad.begin() + 16), a2(aad.begin() + 16, aad.end());
  Bytes hash = reference_multiply(a1, power(3));
  for (const Bytes& term : {reference_multiply(a2, power(2)), reference_multiply(length, power(1))})
    for (int b = 0; b < 16; ++b) hash[b] ^= term[b];
  Bytes counter = iv;
  counter.insert(counter.end(), {0, 0, 0, 1});
  const auto mask = aes_encrypt_block(std::span<const std::uint8_t>(material).first(240),
                                      std::span<const std::uint8_t, 16>(counter.data(), 16));
  for (int b = 0; b < 16; ++b) hash[b] ^= mask[b];
  return hash;
}

TEST(GcmKeyMaterialCircuit, MaterialMatchesOpenSsl) {
  constexpr std::size_t kPowers = 8;
  const Circuit circuit = build_gcm_key_material_circuit(kPowers, SboxVariant::Depth4);
  std::mt19937_64 rng(0x67636d6b6579);
  std::vector<Bytes> keys;
  for (int lane = 0; lane < 64; ++lane) keys.push_back(test::random_bytes(rng, 32));
  const auto out = evaluate_packed(circuit, test::pack_lanes(keys));
  for (int lane = 0; lane < 64; ++lane) {
    const Bytes material = test::unpack_lane(out, static_cast<std::size_t>(lane));
    ASSERT_EQ(material.size(), 240 + 16 * kPowers);
    EXPECT_EQ(Bytes(material.begin(), material.begin() + 240), aes_expand_key(keys[lane])) << lane;
    Bytes h = test::openssl_encrypt(keys[lane], Bytes(16, 0)), expected = h;
    for (std::size_t k = 1; k <= kPowers; ++k) {
      EXPECT_EQ(Bytes(material.begin() + 240 + 16 * (k - 1), material.begin() + 240 + 16 * k), expected)
          << "H^" << k << " lane " << lane;
      expected = reference_multiply(expected, h);
    }
    const Bytes iv = test::random_bytes(rng, 12), aad = test::random_bytes(rng, 32);
    EXPECT_EQ(tag_from_material(material, iv, aad), openssl_gmac(keys[lane], iv, aad)) << lane;
  }
}

TEST(GcmKeyMaterialCircuit, TheStoredFormHasItsCost) {
  // 1024 powers (keys/key_algorithms.h): the key schedule and cipher, then 511 products.
  const Circuit circuit = build_gcm_key_material_circuit(1024, SboxVariant::Depth4);
  const CircuitStats stats = compute_stats(circuit);
  EXPECT_EQ(stats.input_widths, std::vector<std::uint32_t>{256});
  EXPECT_EQ(stats.output_widths, std::vector<std::uint32_t>{8 * (240 + 16 * 1024)});
  const CircuitStats schedule = compute_stats(build_aes_key_expansion_circuit(AesKeySize::Aes256, SboxVariant::Depth4));
  const CircuitStats cipher =
      compute_stats(build_aes_circuit(AesKeySize::Aes256, AesDirection::Encrypt, SboxVariant::Depth4));
  EXPECT_EQ(stats.and_gates, schedule.and_gates + cipher.and_gates + 511u * 2187);
  // The powers add one product at a time on the longest chain: H^3, H^7, ..., H^1023.
  EXPECT_EQ(stats.and_depth, cipher.and_depth + 9u);
  // One key through the whole circuit: H^1024 as the reference has it.
  std::mt19937_64 rng(0x31303234);
  const Bytes key = test::random_bytes(rng, 32);
  const Bytes material = test::bits_to_bytes(evaluate(circuit, test::bytes_to_bits(key)));
  const Bytes h = test::openssl_encrypt(key, Bytes(16, 0));
  Bytes power = h;
  for (int k = 2; k <= 1024; ++k) power = reference_multiply(power, h);
  EXPECT_EQ(Bytes(material.end() - 16, material.end()), power);
}

}  // namespace
}  // namespace mpc::circuits
