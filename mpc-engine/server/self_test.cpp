#include "server/self_test.hpp"

#include <openssl/evp.h>

#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "circuits/aes_reference.hpp"
#include "common/bytes.hpp"
#include "common/error.hpp"
#include "protocol/rss3/local_three_party.hpp"
#include "protocol/rss3/shares.hpp"

namespace mpc::server {
namespace {

struct AesVector {
  const char* key;
  const char* plaintext;
  const char* ciphertext;
};

// FIPS-197 Appendix C.1 and C.3.
constexpr AesVector kAes128{"000102030405060708090a0b0c0d0e0f", "00112233445566778899aabbccddeeff",
                            "69c4e0d86a7b0430d8cdb78070b4c55a"};
constexpr AesVector kAes256{"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
                            "00112233445566778899aabbccddeeff", "8ea2b7ca516745bfeafc49904b496089"};

std::vector<std::uint8_t> hex(const char* text) { return from_hex(text, Component::Server); }

void fail(const std::string& what) { throw Error(Component::Server, "self-test failed: " + what); }

std::vector<std::uint8_t> openssl_ecb(const std::vector<std::uint8_t>& key, const std::vector<std::uint8_t>& in,
                                      bool decrypt) {
  const EVP_CIPHER* cipher = key.size() == 16 ? EVP_aes_128_ecb() : EVP_aes_256_ecb();
  EVP_CIPHER_CTX* context = EVP_CIPHER_CTX_new();
  std::vector<std::uint8_t> out(in.size() + 16);
  int length = 0;
  const bool ok = context != nullptr && EVP_CipherInit_ex(context, cipher, nullptr, key.data(), nullptr, decrypt ? 0 : 1) == 1 &&
                  EVP_CIPHER_CTX_set_padding(context, 0) == 1 &&
                  EVP_CipherUpdate(context, out.data(), &length, in.data(), static_cast<int>(in.size())) == 1;
  EVP_CIPHER_CTX_free(context);
  if (!ok) fail("OpenSSL AES unavailable");
  out.resize(static_cast<std::size_t>(length));
  return out;
}

void test_openssl_aes() {
  for (const auto& vector : {kAes128, kAes256}) {
    if (openssl_ecb(hex(vector.key), hex(vector.plaintext), false) != hex(vector.ciphertext)) fail("AES encrypt KAT");
    if (openssl_ecb(hex(vector.key), hex(vector.ciphertext), true) != hex(vector.plaintext)) fail("AES decrypt KAT");
  }
}

void test_prf() {
  const rss3::PrfKey own = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  const rss3::PrfKey previous = {16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
  const rss3::BatchNonce nonce{0x0011223344556677ull, 0x8899aabbu};
  rss3::CorrelatedRandomness randomness(own, previous, nonce);
  std::array<std::uint8_t, 32> alpha{};
  randomness.next_alpha(alpha);
  // Expected: AES_own(id) ^ AES_previous(id) for the ids epoch || sequence || 0 and || 1.
  std::vector<std::uint8_t> ids = hex("00112233445566778899aabb0000000000112233445566778899aabb00000001");
  const auto first = openssl_ecb(std::vector<std::uint8_t>(own.begin(), own.end()), ids, false);
  const auto second = openssl_ecb(std::vector<std::uint8_t>(previous.begin(), previous.end()), ids, false);
  for (std::size_t i = 0; i < alpha.size(); ++i)
    if (alpha[i] != (first[i] ^ second[i])) fail("PRF known answer");
}

void test_evaluator(const CircuitSet& circuits, const std::function<std::unique_ptr<rss3::Evaluator>()>& make_evaluator) {
  const std::array<rss3::PrfKey, 3> keys = {rss3::PrfKey{1}, rss3::PrfKey{2}, rss3::PrfKey{3}};
  std::array<std::unique_ptr<rss3::Evaluator>, 3> evaluators;
  rss3::ThreePartyOptions options;
  options.timeout = std::chrono::seconds(10);
  for (std::size_t party = 0; party < 3; ++party) {
    evaluators[party] = make_evaluator();
    options.evaluators[party] = evaluators[party].get();
  }
  std::uint32_t sequence = 1;
  for (std::uint8_t value = 1; value <= 8; ++value) {
    const auto id = static_cast<wire::CircuitId>(value);
    const bool aes256 = value >= 5;
    const bool decrypt = value == 3 || value == 4 || value == 7 || value == 8;
    const AesVector& vector = aes256 ? kAes256 : kAes128;
    const auto round_keys = circuits::aes_expand_key(hex(vector.key));
    const auto in = hex(decrypt ? vector.ciphertext : vector.plaintext);
    const auto expected = hex(decrypt ? vector.plaintext : vector.ciphertext);
    const circuits::Program& program = circuits.program(id);
    // One instance: one word per row.
    std::vector<std::uint64_t> rows(program.num_inputs, 0);
    const std::size_t key_bits = round_keys.size() * 8;
    for (std::size_t bit = 0; bit < key_bits; ++bit) rows[bit] = (round_keys[bit / 8] >> (bit % 8)) & 1;
    for (std::size_t bit = 0; bit < 128; ++bit) rows[key_bits + bit] = (in[bit / 8] >> (bit % 8)) & 1;
    const auto shares = rss3::share_matrix(rows, program.num_inputs, 1);
    const auto outputs = rss3::evaluate_three_parties(program, shares, rss3::best_simd_level(),
                                                      {0x5e1f7e57ull, sequence++}, keys, options);
    const auto opened = rss3::open_matrix(outputs);
    for (std::size_t bit = 0; bit < 128; ++bit)
      if ((opened[bit] & 1) != static_cast<std::uint64_t>((expected[bit / 8] >> (bit % 8)) & 1))
        fail("three-party evaluation of circuit " + std::to_string(value));
  }
}

}  // namespace

void run_self_tests(const CircuitSet& circuits, const std::function<std::unique_ptr<rss3::Evaluator>()>& make_evaluator,
                    const Logger& log) {
  test_openssl_aes();
  test_prf();
  test_evaluator(circuits, make_evaluator);
  log.info("self-tests passed", {{"evaluator", make_evaluator()->name()}});
}

}  // namespace mpc::server
