#include "engines/three_party/self_test.hpp"

#include <openssl/evp.h>

#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "circuits/aes_reference.hpp"
#include "common/bytes.hpp"
#include "common/error.hpp"
#include "common/secret.hpp"
#include "protocol/rss3/ghash.hpp"
#include "protocol/rss3/local_three_party.hpp"
#include "protocol/rss3/shares.hpp"

namespace mpc::three_party_engine {
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

// The GCM specification's test case 16 (McGrew, Viega 2005): AES-256, 96-bit IV, 60-byte
// plaintext, 20-byte AAD.
struct GcmVector {
  const char* key;
  const char* iv;
  const char* plaintext;
  const char* aad;
  const char* ciphertext;
  const char* tag;
};
constexpr GcmVector kGcm{"feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888",
                         "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e24"
                         "49a6b525b16aedf5aa0de657ba637b39",
                         "feedfacedeadbeeffeedfacedeadbeefabaddad2",
                         "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b10"
                         "56828838c5f61e6393ba7a0abcc9f662",
                         "76fc6ece0f4e1768cddf8853bb2d551b"};

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

// Sets rows [row, row + 128) of instance n to the bits of `block` (rows of `words` words).
void set_block(std::vector<std::uint64_t>& rows, std::size_t words, std::size_t row, std::size_t n,
               std::span<const std::uint8_t> block) {
  for (std::size_t bit = 0; bit < 128; ++bit)
    rows[(row + bit) * words + n / 64] |= static_cast<std::uint64_t>((block[bit / 8] >> (bit % 8)) & 1) << (n % 64);
}

// The open job's computation on a known answer: GHASH on replicated shares of the hash key
// powers (as the servers hold them), then the AES-and-compare circuit on the counter blocks.
// Instance 0 checks the right tag, instance 5 a wrong one, 1..4 give the keystream.
void test_gcm_open(const CircuitSet& circuits,
                   const std::function<std::unique_ptr<rss3::Evaluator>()>& make_evaluator) {
  const auto key = hex(kGcm.key);
  const auto iv = hex(kGcm.iv);
  const auto plaintext = hex(kGcm.plaintext);
  const auto aad = hex(kGcm.aad);
  const auto ciphertext = hex(kGcm.ciphertext);
  const auto tag = hex(kGcm.tag);
  const auto round_keys = circuits::aes_expand_key(key);
  const auto h_bytes = openssl_ecb(key, std::vector<std::uint8_t>(16, 0), false);
  rss3::GhashBlock h{};
  std::copy(h_bytes.begin(), h_bytes.end(), h.begin());
  const std::size_t m = rss3::ghash_blocks(aad.size(), ciphertext.size());
  std::vector<rss3::GhashBlock> powers = rss3::hash_key_powers(h, m);
  std::array<std::vector<rss3::ByteShare>, 3> power_shares;
  for (const auto& power : powers) {
    auto shares = rss3::share_bytes(power);
    for (std::size_t party = 0; party < 3; ++party) power_shares[party].push_back(std::move(shares[party]));
  }
  wipe(powers.data(), powers.size() * sizeof(rss3::GhashBlock));
  std::array<rss3::ByteShare, 3> hash;
  for (std::size_t party = 0; party < 3; ++party) hash[party] = rss3::ghash_share(power_shares[party], aad, ciphertext);
  const auto ghash = rss3::reconstruct_bytes(hash);
  std::vector<std::uint8_t> check(16);
  for (std::size_t i = 0; i < 16; ++i) check[i] = ghash[i] ^ tag[i];

  constexpr std::size_t kInstances = 6;
  const std::size_t text_blocks = (ciphertext.size() + 15) / 16;
  for (const auto id : {wire::CircuitId::Aes256EncryptEqAnd32, wire::CircuitId::Aes256EncryptEqDepth4}) {
    const circuits::Program& program = circuits.program(id);
    const std::size_t key_rows = CircuitSet::key_rows(id);
    if (program.num_inputs != key_rows + 256 || program.num_outputs != 129) fail("GCM tag check circuit shape");
    std::vector<std::uint64_t> rows(program.num_inputs, 0);  // one word per row
    for (std::size_t bit = 0; bit < key_rows; ++bit)
      if ((round_keys[bit / 8] >> (bit % 8)) & 1) rows[bit] = (1ull << kInstances) - 1;
    for (std::size_t n = 0; n < kInstances; ++n) {
      std::array<std::uint8_t, 16> counter{};
      std::copy(iv.begin(), iv.end(), counter.begin());
      counter[15] = static_cast<std::uint8_t>(n == kInstances - 1 ? 1 : n + 1);
      set_block(rows, 1, key_rows, n, counter);
    }
    set_block(rows, 1, key_rows + 128, 0, check);
    auto wrong = check;
    wrong[15] ^= 1;
    set_block(rows, 1, key_rows + 128, kInstances - 1, wrong);
    const std::array<rss3::PrfKey, 3> keys = {rss3::PrfKey{4}, rss3::PrfKey{5}, rss3::PrfKey{6}};
    std::array<std::unique_ptr<rss3::Evaluator>, 3> evaluators;
    rss3::ThreePartyOptions options;
    options.timeout = std::chrono::seconds(10);
    for (std::size_t party = 0; party < 3; ++party) {
      evaluators[party] = make_evaluator();
      options.evaluators[party] = evaluators[party].get();
    }
    const auto shares = rss3::share_matrix(rows, program.num_inputs, kInstances);
    const auto opened = rss3::open_matrix(rss3::evaluate_three_parties(
        program, shares, rss3::best_simd_level(), {0x5e1f7e57ull, 0x6c6d0000u + static_cast<std::uint32_t>(id)}, keys,
        options));
    if ((opened[128] & 1) != 1) fail("GCM tag check accepts the right tag");
    if (((opened[128] >> (kInstances - 1)) & 1) != 0) fail("GCM tag check refuses a wrong tag");
    for (std::size_t b = 0; b < text_blocks; ++b)
      for (std::size_t byte = 0; byte < 16 && b * 16 + byte < ciphertext.size(); ++byte) {
        std::uint8_t value = 0;
        for (std::size_t bit = 0; bit < 8; ++bit)
          value |= static_cast<std::uint8_t>(((opened[byte * 8 + bit] >> (b + 1)) & 1) << bit);
        if ((value ^ ciphertext[b * 16 + byte]) != plaintext[b * 16 + byte]) fail("GCM keystream");
      }
  }
  for (auto& party : power_shares)
    for (auto& share : party) share.wipe();
}

// The AND check of active security on FIPS-197's AES-128 vector: an honest evaluation passes,
// and one in which a party flips one bit of one AND layer's r, in place, is refused.
void test_and_check(const CircuitSet& circuits) {
  const std::array<rss3::PrfKey, 3> keys = {rss3::PrfKey{4}, rss3::PrfKey{5}, rss3::PrfKey{6}};
  const circuits::Program& program = circuits.program(static_cast<wire::CircuitId>(1));
  const auto round_keys = circuits::aes_expand_key(hex(kAes128.key));
  const auto in = hex(kAes128.plaintext);
  const auto expected = hex(kAes128.ciphertext);
  std::vector<std::uint64_t> rows(program.num_inputs, 0);
  const std::size_t key_bits = round_keys.size() * 8;
  for (std::size_t bit = 0; bit < key_bits; ++bit) rows[bit] = (round_keys[bit / 8] >> (bit % 8)) & 1;
  for (std::size_t bit = 0; bit < 128; ++bit) rows[key_bits + bit] = (in[bit / 8] >> (bit % 8)) & 1;
  const auto shares = rss3::share_matrix(rows, program.num_inputs, 1);
  rss3::ThreePartyOptions options;
  options.timeout = std::chrono::seconds(10);
  options.check_ands = true;
  const auto opened = rss3::open_matrix(
      rss3::evaluate_three_parties(program, shares, rss3::best_simd_level(), {0xc4ec4ull, 1}, keys, options));
  for (std::size_t bit = 0; bit < 128; ++bit)
    if ((opened[bit] & 1) != static_cast<std::uint64_t>((expected[bit / 8] >> (bit % 8)) & 1))
      fail("AND check of an honest evaluation");
  options.deviate = [](int party, std::uint32_t layer, std::span<std::uint8_t> outgoing) {
    if (party == 1 && layer == 2 && !outgoing.empty()) outgoing[0] ^= 1;
  };
  try {
    rss3::evaluate_three_parties(program, shares, rss3::best_simd_level(), {0xc4ec4ull, 2}, keys, options);
  } catch (const VerificationError&) {
    return;
  }
  fail("AND check: a flipped AND share was not caught");
}

}  // namespace

void run_self_tests(const CircuitSet& circuits, const std::function<std::unique_ptr<rss3::Evaluator>()>& make_evaluator,
                    const Logger& log) {
  test_openssl_aes();
  test_prf();
  test_evaluator(circuits, make_evaluator);
  test_gcm_open(circuits, make_evaluator);
  test_and_check(circuits);
  log.info("self-tests passed", {{"evaluator", make_evaluator()->name()}});
}

}  // namespace mpc::three_party_engine
