// tests/unit/engines/two_party/gc2_circuit_jobs_test.cpp: the Kerberos and GCM jobs of a two-server
// cluster, both servers' back ends in one process over an in-memory channel pair. A Kerberos
// job's two result shares XOR to what its circuit computes in the clear on the key material
// (the circuits are checked against the RFCs elsewhere); a GCM open accepts OpenSSL's tag,
// refuses a wrong one, and its keystream shares XOR to AES-CTR; a prefetch's two servers agree
// on fresh nonces; servers that got different requests refuse the job.
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <future>
#include <random>
#include <thread>

#include "circuits/evaluate.hpp"
#include "client/key_material.hpp"
#include "common/error.hpp"
#include "jobs/krb_jobs.hpp"
#include "jobs/nonce_pool.hpp"
#include "engines/two_party/gc2_backend.hpp"
#include "test_bytes.hpp"

namespace mpc::two_party_engine {
namespace {

using test::Bytes;
using test::random_bytes;
using test::xor_of;

struct Pair {
  Logger log{"test", LogLevel::Error};
  Gc2Backend garbler{0, log};
  Gc2Backend evaluator{1, log};
};

// Runs `first` on the garbler and `second` on the evaluator, each over its end of a channel pair.
template <typename R>
std::pair<R, R> both(const std::function<R(two_party::Channel&)>& first,
                     const std::function<R(two_party::Channel&)>& second) {
  auto [one, two] = two_party::make_memory_channel_pair(std::chrono::milliseconds(5000));
  auto garbled = std::async(std::launch::async, [&, channel = one.get()] { return first(*channel); });
  R evaluated = second(*two);
  return {garbled.get(), std::move(evaluated)};
}

// The result of a Kerberos job computed in the clear: its circuit on the secret rows and data.
// `data`: the record in clear; task.data carries it masked by `mask` (R).
Bytes clear_result(const KrbTask& task, const Bytes& material, const Bytes& data, const Bytes& mask) {
  const auto range = jobs::krb_secret_range(task.key.algorithm, task.operation, task.usage);
  const auto id = jobs::krb_circuit_id(task.operation, task.key.algorithm);
  const auto circuit =
      jobs::build_krb_circuit(id, static_cast<std::uint32_t>(task.data.size()), circuits::CircuitCost::FewestAnds);
  std::vector<std::uint8_t> bits;
  for (std::size_t i = 0; i < range.bytes * 8; ++i) bits.push_back((material[range.offset + i / 8] >> (i % 8)) & 1);
  bits.resize(bits.size() + 8 * mask.size(), 0);  // R = 0: the record as it is
  for (std::size_t i = 0; i < data.size() * 8; ++i) bits.push_back((data[i / 8] >> (i % 8)) & 1);
  const auto out = circuits::evaluate(circuit, bits);
  Bytes result(wire::krb_result_bytes(task.operation, task.key.algorithm, task.data.size()));
  for (std::size_t j = 0; j < out.size(); ++j) result[j / 8] |= static_cast<std::uint8_t>(out[j] << (j % 8));
  return result;
}

TEST(Gc2CircuitJobs, KerberosSharesOpenToTheCircuitsResult) {
  std::mt19937_64 rng(1);
  Pair pair;
  for (const auto algorithm : {wire::KeyAlgorithm::Aes256CtsHmacSha1, wire::KeyAlgorithm::Aes128CtsHmacSha256}) {
    // Any material will do: the job computes the circuit on the XOR of the shares.
    const Bytes material = random_bytes(rng, wire::material_bytes(algorithm));
    const Bytes first = random_bytes(rng, material.size());
    const Bytes second = xor_of(material, first);
    for (const auto& [operation, usage, length] :
         std::vector<std::tuple<wire::KrbOperation, std::uint32_t, std::size_t>>{
             {wire::KrbOperation::Checksum, 17, 0}, {wire::KrbOperation::Encrypt, 3, 37},
             {wire::KrbOperation::Decrypt, 1, 60}, {wire::KrbOperation::Checksum, 56, 100}}) {
      SCOPED_TRACE(std::string(wire::algorithm_name(algorithm)) + " operation " +
                   std::to_string(static_cast<int>(operation)) + " length " + std::to_string(length));
      const Bytes data = random_bytes(rng, length);
      // The record's secret bytes travel masked by R = first_mask ^ second_mask.
      const std::size_t masked = operation == wire::KrbOperation::Decrypt ? 0 : length;
      const Bytes first_mask = random_bytes(rng, masked);
      const Bytes second_mask = random_bytes(rng, masked);
      const Bytes mask = xor_of(first_mask, second_mask);
      Bytes sent = data;
      for (std::size_t i = 0; i < masked; ++i) sent[i] ^= mask[i];
      KrbTask task{1, wire::KeyId{"k", 1, algorithm}, operation, usage, first, sent, {}, std::nullopt, first_mask};
      KrbTask other = task;
      other.key_share = second;
      other.mask_share = second_mask;
      auto [x, y] = both<SecretBytes>([&](two_party::Channel& c) { return pair.garbler.krb(c, task).bytes; },
                                      [&](two_party::Channel& c) { return pair.evaluator.krb(c, other).bytes; });
      const Bytes opened = xor_of(x.span(), y.span());
      EXPECT_EQ(opened, clear_result(task, material, data, mask));
      if (masked != 0) {
        EXPECT_NE(sent, data);
      }
      EXPECT_NE(Bytes(x.span().begin(), x.span().end()), opened);  // a share alone is not the result
    }
  }
}

TEST(Gc2CircuitJobs, DifferentRequestsUnderOneIdAreRefused) {
  std::mt19937_64 rng(2);
  Pair pair;
  const auto algorithm = wire::KeyAlgorithm::Aes256CtsHmacSha1;
  const Bytes first = random_bytes(rng, wire::material_bytes(algorithm));
  const Bytes second = random_bytes(rng, first.size());
  const Bytes data(20, 1);
  const Bytes mask_share(data.size(), 7);
  KrbTask task{1, wire::KeyId{"k", 1, algorithm}, wire::KrbOperation::Checksum, 17, first, data, {}, std::nullopt,
               mask_share};
  KrbTask other = task;
  other.key_share = second;
  other.request_digest[0] = 1;  // the follower's copy of the request differs
  auto [one, two] = two_party::make_memory_channel_pair(std::chrono::milliseconds(500));
  auto garbled = std::async(std::launch::async, [&] {
    try {
      (void)pair.garbler.krb(*one, task);
    } catch (const Error&) {
    }
  });
  EXPECT_THROW(pair.evaluator.krb(*two, other), PeerError);
  garbled.get();
}

std::array<std::uint8_t, 16> aes256(const Bytes& key, const std::array<std::uint8_t, 16>& block) {
  std::array<std::uint8_t, 16> out{};
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  int length = 0;
  EVP_EncryptInit_ex(ctx, EVP_aes_256_ecb(), nullptr, key.data(), nullptr);
  EVP_CIPHER_CTX_set_padding(ctx, 0);
  EVP_EncryptUpdate(ctx, out.data(), &length, block.data(), 16);
  EVP_CIPHER_CTX_free(ctx);
  return out;
}

// OpenSSL's AES-256-GCM: ciphertext and tag.
std::pair<Bytes, wire::GcmTagBytes> seal(const Bytes& key, const wire::GcmNonce& nonce, const Bytes& aad,
                                         const Bytes& plaintext) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  int length = 0;
  Bytes out(plaintext.size() + 16);
  EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr, key.data(), nonce.data());
  EVP_EncryptUpdate(ctx, nullptr, &length, aad.data(), static_cast<int>(aad.size()));
  EVP_EncryptUpdate(ctx, out.data(), &length, plaintext.data(), static_cast<int>(plaintext.size()));
  EVP_EncryptFinal_ex(ctx, out.data(), &length);
  wire::GcmTagBytes tag{};
  EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, tag.data());
  EVP_CIPHER_CTX_free(ctx);
  out.resize(plaintext.size());
  return {out, tag};
}

TEST(Gc2CircuitJobs, GcmOpenChecksTheTagAndPrefetchAgreesOnNonces) {
  std::mt19937_64 rng(3);
  Pair pair;
  const Bytes key = random_bytes(rng, 32);
  const SecretBytes material = client::build_key_material(wire::KeyAlgorithm::Aes256Gcm, key);
  const Bytes first = random_bytes(rng, material.size());
  const Bytes second = xor_of(material.span(), first);
  const wire::KeyId id{"tgt", 1, wire::KeyAlgorithm::Aes256Gcm};
  wire::GcmNonce nonce{};
  for (auto& b : nonce) b = static_cast<std::uint8_t>(rng());
  const Bytes aad = random_bytes(rng, 13);
  const Bytes plaintext = random_bytes(rng, 40);
  const auto [ciphertext, tag] = seal(key, nonce, aad, plaintext);
  for (const bool right : {true, false}) {
    GcmOpenTask task{1, id, first, nonce, aad, ciphertext, tag, {}};
    if (!right) task.tag[5] ^= 4;
    GcmOpenTask other = task;
    other.key_share = second;
    auto [x, y] = both<GcmOpened>([&](two_party::Channel& c) { return pair.garbler.gcm_open(c, task); },
                                  [&](two_party::Channel& c) { return pair.evaluator.gcm_open(c, other); });
    EXPECT_EQ(x.verdict ^ y.verdict, right ? 1 : 0);
    const Bytes keystream = xor_of(x.keystream.span(), y.keystream.span());
    ASSERT_EQ(keystream.size(), 48u);
    for (std::size_t i = 0; i < plaintext.size(); ++i) EXPECT_EQ(ciphertext[i] ^ keystream[i], plaintext[i]) << i;
  }

  GcmPrefetchTask prefetch{2, id, first, 3, 2, {}};
  GcmPrefetchTask other = prefetch;
  other.key_share = second;
  auto [x, y] = both<GcmPrefetched>([&](two_party::Channel& c) { return pair.garbler.gcm_prefetch(c, prefetch); },
                                    [&](two_party::Channel& c) { return pair.evaluator.gcm_prefetch(c, other); });
  ASSERT_EQ(x.nonces, y.nonces);
  ASSERT_EQ(x.nonces.size(), 3u);
  for (std::size_t n = 0; n < 3; ++n) {
    const Bytes mask = xor_of(x.mask_shares.span().subspan(16 * n, 16), y.mask_shares.span().subspan(16 * n, 16));
    const auto expected = aes256(key, jobs::gcm_counter_block(x.nonces[n], 1));
    EXPECT_EQ(mask, Bytes(expected.begin(), expected.end()));
    const Bytes stream = xor_of(x.keystream.span().subspan(32 * n, 32), y.keystream.span().subspan(32 * n, 32));
    const auto second_block = aes256(key, jobs::gcm_counter_block(x.nonces[n], 3));
    EXPECT_EQ(Bytes(stream.begin() + 16, stream.end()), Bytes(second_block.begin(), second_block.end()));
  }
  // The next prefetch gets fresh nonces; the evaluator refuses a repeated range.
  auto [x2, y2] = both<GcmPrefetched>([&](two_party::Channel& c) { return pair.garbler.gcm_prefetch(c, prefetch); },
                                      [&](two_party::Channel& c) { return pair.evaluator.gcm_prefetch(c, other); });
  EXPECT_NE(x2.nonces.front(), x.nonces.front());
  EXPECT_EQ(x2.nonces, y2.nonces);
}

}  // namespace
}  // namespace mpc::two_party_engine

namespace mpc::two_party_engine {
namespace {

// Under security = "active" a Kerberos job's circuit is built for its shape the first time the
// shell counts its AND material: in the background, the count coming once it is built, and
// then the same as the count that waits for the build.
TEST(Gc2CircuitJobs, ANewKerberosShapeIsBuiltInTheBackground) {
  Logger log{"test", LogLevel::Error};
  Gc2Backend backend{0, log, true};
  wire::KrbRequest request;
  request.key = wire::KeyId{"k", 1, wire::KeyAlgorithm::Aes256CtsHmacSha1};
  request.operation = wire::KrbOperation::Encrypt;
  request.usage = 3;
  request.data.assign(41, 0);
  EXPECT_FALSE(backend.circuit_pool_entries_if_built(request).has_value());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  std::optional<std::uint64_t> built;
  while (!(built = backend.circuit_pool_entries_if_built(request)) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(built.has_value()) << "the shape was never built";
  EXPECT_GT(*built, 0u);
  EXPECT_EQ(*built, backend.circuit_pool_entries(request));
  // Another length is another shape, built anew.
  request.data.assign(57, 0);
  EXPECT_FALSE(backend.circuit_pool_entries_if_built(request).has_value());
  EXPECT_GT(backend.circuit_pool_entries(request), *built);
}

}  // namespace
}  // namespace mpc::two_party_engine
