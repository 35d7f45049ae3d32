// tests/unit/cuda/three_parties.hpp: test support for the GPU back end: three parties in
// three threads over an rss3::MemoryRing with every outgoing message recorded, dealer
// helpers for AES inputs, and OpenSSL as the outside reference.
#pragma once

#include <openssl/evp.h>

#include <array>
#include <cstdlib>
#include <cstdint>
#include <exception>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "circuits/aes_options.hpp"
#include "protocol/rss3/correlated_randomness.hpp"
#include "protocol/rss3/evaluator.hpp"
#include "protocol/rss3/layer_exchange.hpp"
#include "protocol/rss3/local_three_party.hpp"
#include "protocol/rss3/memory_ring.hpp"
#include "protocol/rss3/shares.hpp"
#include "protocol/rss3/transpose.hpp"

namespace mpc::cuda::test {

// Forwards to another exchange and appends every outgoing message to a log.
class RecordingExchange final : public rss3::LayerExchange {
 public:
  RecordingExchange(rss3::LayerExchange& inner, std::vector<std::uint8_t>& log) : inner_(inner), log_(log) {}
  void exchange(std::uint32_t layer, std::span<const std::uint8_t> outgoing, std::span<std::uint8_t> incoming) override {
    log_.insert(log_.end(), outgoing.begin(), outgoing.end());
    inner_.exchange(layer, outgoing, incoming);
  }

 private:
  rss3::LayerExchange& inner_;
  std::vector<std::uint8_t>& log_;
};

struct ThreePartyResult {
  std::array<rss3::ShareMatrix, rss3::kParties> outputs;
  std::array<std::vector<std::uint8_t>, rss3::kParties> transcripts;
  std::array<rss3::EvaluationStats, rss3::kParties> stats{};
};

// party(i, inputs[i], outputs[i], exchange) runs party i; the first failure aborts the
// ring and is rethrown.
using PartyBody = std::function<rss3::EvaluationStats(int, const rss3::ShareMatrix&, rss3::ShareMatrix&,
                                                      rss3::LayerExchange&)>;

inline ThreePartyResult run_three_parties(const std::array<rss3::ShareMatrix, rss3::kParties>& inputs,
                                          const PartyBody& party) {
  rss3::MemoryRing ring(std::chrono::seconds(120));
  ThreePartyResult result;
  std::array<std::exception_ptr, rss3::kParties> errors;
  std::vector<std::thread> threads;
  for (int i = 0; i < rss3::kParties; ++i) {
    threads.emplace_back([&, i] {
      const auto index = static_cast<std::size_t>(i);
      try {
        RecordingExchange recording(ring.endpoint(i), result.transcripts[index]);
        result.stats[index] = party(i, inputs[index], result.outputs[index], recording);
      } catch (...) {
        errors[index] = std::current_exception();
        ring.abort();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  return result;
}

// The CPU reference: CorrelatedRandomness(keys[i], keys[i-1], nonce) per party.
inline ThreePartyResult run_cpu_reference(const circuits::Program& program,
                                          const std::array<rss3::ShareMatrix, rss3::kParties>& inputs,
                                          rss3::BatchNonce nonce, const std::array<rss3::PrfKey, rss3::kParties>& keys) {
  return run_three_parties(inputs, [&](int i, const rss3::ShareMatrix& in, rss3::ShareMatrix& out,
                                       rss3::LayerExchange& exchange) {
    rss3::CorrelatedRandomness randomness(keys[static_cast<std::size_t>(i)],
                                          keys[static_cast<std::size_t>(rss3::previous_party(i))], nonce);
    auto evaluator = rss3::make_cpu_evaluator(rss3::best_simd_level());
    return evaluator->evaluate(program, in, out, randomness, exchange);
  });
}

inline std::array<rss3::PrfKey, rss3::kParties> random_keys(std::mt19937_64& rng) {
  std::array<rss3::PrfKey, rss3::kParties> keys{};
  for (auto& key : keys)
    for (auto& b : key) b = static_cast<std::uint8_t>(rng());
  return keys;
}

inline std::vector<std::uint8_t> random_bytes(std::mt19937_64& rng, std::size_t count) {
  std::vector<std::uint8_t> v(count);
  for (auto& b : v) b = static_cast<std::uint8_t>(rng());
  return v;
}

// AES-128/256 ECB of one block with OpenSSL (the outside reference).
inline std::vector<std::uint8_t> openssl_aes(circuits::AesKeySize size, circuits::AesDirection direction,
                                             std::span<const std::uint8_t> key, std::span<const std::uint8_t> block) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  const EVP_CIPHER* cipher = size == circuits::AesKeySize::Aes128 ? EVP_aes_128_ecb() : EVP_aes_256_ecb();
  std::vector<std::uint8_t> out(16);
  int len = 0;
  const bool encrypt = direction == circuits::AesDirection::Encrypt;
  EVP_CipherInit_ex(ctx, cipher, nullptr, key.data(), nullptr, encrypt ? 1 : 0);
  EVP_CIPHER_CTX_set_padding(ctx, 0);
  EVP_CipherUpdate(ctx, out.data(), &len, block.data(), 16);
  EVP_CIPHER_CTX_free(ctx);
  return out;
}

// AES-128-CTR keystream (OpenSSL) of `bytes` bytes from the 16-byte counter block `iv`.
inline std::vector<std::uint8_t> openssl_ctr(std::span<const std::uint8_t> key, std::span<const std::uint8_t> iv,
                                             std::size_t bytes) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  EVP_EncryptInit_ex(ctx, EVP_aes_128_ctr(), nullptr, key.data(), iv.data());
  std::vector<std::uint8_t> out(bytes, 0);
  int len = 0;
  if (bytes != 0) EVP_EncryptUpdate(ctx, out.data(), &len, out.data(), static_cast<int>(bytes));
  EVP_CIPHER_CTX_free(ctx);
  return out;
}

// FIPS-197 key expansion (16- or 32-byte key -> 176 or 240 bytes), table-driven: fast
// enough for a million test keys (circuits::aes_expand_key is constant-time and slow).
// Checked against circuits::aes_expand_key by the tests that use it.
inline std::vector<std::uint8_t> fast_expand_key(std::span<const std::uint8_t> key, const std::uint8_t sbox[256]) {
  const std::size_t nk = key.size() / 4;
  const std::size_t words = nk == 4 ? 44 : 60;
  std::vector<std::uint8_t> w(4 * words);
  std::copy(key.begin(), key.end(), w.begin());
  std::uint8_t rcon = 1;
  for (std::size_t i = nk; i < words; ++i) {
    std::uint8_t t[4] = {w[4 * i - 4], w[4 * i - 3], w[4 * i - 2], w[4 * i - 1]};
    if (i % nk == 0) {
      const std::uint8_t first = t[0];
      t[0] = static_cast<std::uint8_t>(sbox[t[1]] ^ rcon);
      t[1] = sbox[t[2]];
      t[2] = sbox[t[3]];
      t[3] = sbox[first];
      rcon = static_cast<std::uint8_t>((rcon << 1) ^ ((rcon & 0x80) ? 0x1b : 0));
    } else if (nk == 8 && i % nk == 4) {
      for (auto& b : t) b = sbox[b];
    }
    for (int b = 0; b < 4; ++b) w[4 * i + b] = w[4 * (i - nk) + b] ^ t[b];
  }
  return w;
}

// Batch sizes from `sizes` up to MPC_GPU_TEST_MAX_INSTANCES (when set): compute-sanitizer
// runs (cuda/run_on_gpu.sh) keep to small batches.
inline std::vector<std::uint64_t> sizes_within_limit(const std::vector<std::uint64_t>& sizes) {
  const char* limit = std::getenv("MPC_GPU_TEST_MAX_INSTANCES");
  if (limit == nullptr || *limit == '\0') return sizes;
  const std::uint64_t max = std::strtoull(limit, nullptr, 10);
  std::vector<std::uint64_t> kept;
  for (std::uint64_t n : sizes)
    if (n <= max) kept.push_back(n);
  return kept;
}

// Where two large vectors first differ, for readable failures ("" when equal).
template <class T>
std::string first_difference(const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size())
    return "sizes differ: " + std::to_string(got.size()) + " vs " + std::to_string(want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i])
      return "first difference at element " + std::to_string(i) + " of " + std::to_string(got.size());
  return "";
}

}  // namespace mpc::cuda::test
