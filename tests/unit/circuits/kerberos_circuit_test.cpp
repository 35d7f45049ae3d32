// The RFC 3962 circuits against the RFC's Appendix B vectors and OpenSSL (AES-CBC with the
// ciphertext-stealing swap done here, HMAC-SHA1), with HMAC states made by sha1_reference.
#include <gtest/gtest.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <memory>
#include <random>
#include <stdexcept>

#include "circuits/aes_reference.hpp"
#include "circuits/catalogue.hpp"
#include "circuits/evaluate.hpp"
#include "circuits/kerberos.hpp"
#include "circuits/program.hpp"
#include "circuits/sha1_reference.hpp"
#include "circuits/stats.hpp"
#include "common/error.hpp"
#include "support.hpp"

namespace mpc::circuits {
namespace {

using test::Bytes;
using test::concat;
using test::openssl_cts_encrypt;

std::size_t key_bytes(AesKeySize size) { return size == AesKeySize::Aes128 ? 16 : 32; }

// The 320-bit HMAC state: SHA-1 chaining values after (key ^ ipad) and after (key ^ opad).
Bytes hmac_state(const Bytes& key) {
  Bytes out;
  for (std::uint8_t pad : {std::uint8_t{0x36}, std::uint8_t{0x5c}}) {
    std::array<std::uint8_t, kSha1BlockBytes> block{};
    for (std::size_t i = 0; i < block.size(); ++i) block[i] = static_cast<std::uint8_t>((i < key.size() ? key[i] : 0) ^ pad);
    Sha1State state = sha1_initial_state();
    sha1_compress(state, block);
    const auto bytes = sha1_state_bytes(state);
    out.insert(out.end(), bytes.begin(), bytes.end());
  }
  return out;
}

Bytes openssl_hmac96(const Bytes& key, const Bytes& message) {
  std::uint8_t digest[EVP_MAX_MD_SIZE];
  unsigned length = 0;
  if (HMAC(EVP_sha1(), key.data(), static_cast<int>(key.size()), message.data(), message.size(), digest, &length) ==
      nullptr) {
    throw std::runtime_error("OpenSSL HMAC failed");
  }
  return Bytes(digest, digest + kKrbMacBytes);
}

struct EncryptCase {
  Bytes ke;
  Bytes ki;
  Bytes message;
};

EncryptCase random_case(std::mt19937_64& rng, AesKeySize size, std::size_t length) {
  return {test::random_bytes(rng, key_bytes(size)), test::random_bytes(rng, key_bytes(size)), test::random_bytes(rng, length)};
}

Bytes encrypt_input(const EncryptCase& c) {
  const Bytes round_keys = aes_expand_key(c.ke);
  const Bytes state = hmac_state(c.ki);
  return concat({&round_keys, &state, &c.message});
}

std::vector<std::size_t> test_lengths() {
  std::vector<std::size_t> lengths;
  for (std::size_t length = 16; length <= 80; ++length) lengths.push_back(length);
  for (std::size_t length : {95, 96, 97, 119, 120, 127, 128, 129, 183, 200, 255, 256, 301, 512, 1000}) lengths.push_back(length);
  return lengths;
}

constexpr std::size_t kLanes = 8;

TEST(KerberosCircuit, Rfc3962AppendixBVectors) {
  const Bytes key = test::from_hex("636869636b656e207465726979616b69");  // "chicken teriyaki"
  const std::string text = "I would like the General Gau's Chicken, please, and wonton soup.";
  const struct {
    std::size_t length;
    const char* ciphertext;
  } vectors[] = {
      {17, "c6353568f2bf8cb4d8a580362da7ff7f97"},
      {31, "fc00783e0efdb2c1d445d4c8eff7ed2297687268d6ecccc0c07b25e25ecfe5"},
      {32, "39312523a78662d5be7fcbcc98ebf5a897687268d6ecccc0c07b25e25ecfe584"},
      {47, "97687268d6ecccc0c07b25e25ecfe584b3fffd940c16a18c1b5549d2f838029e39312523a78662d5be7fcbcc98ebf5"},
      {48, "97687268d6ecccc0c07b25e25ecfe5849dad8bbb96c4cdc03bc103e1a194bbd839312523a78662d5be7fcbcc98ebf5a8"},
      {64, "97687268d6ecccc0c07b25e25ecfe58439312523a78662d5be7fcbcc98ebf5a84807efe836ee89a526730dbc2f7bc8409dad8bbb96c4cdc03bc103e1a194bbd8"},
  };
  std::mt19937_64 rng(3962);
  for (const auto& vector : vectors) {
    const EncryptCase c{key, test::random_bytes(rng, 16), Bytes(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(vector.length))};
    const Bytes output =
        test::bits_to_bytes(evaluate(build_krb_encrypt_circuit(AesKeySize::Aes128, vector.length), test::bytes_to_bits(encrypt_input(c))));
    ASSERT_EQ(output.size(), vector.length + kKrbMacBytes);
    EXPECT_EQ(Bytes(output.begin(), output.begin() + static_cast<std::ptrdiff_t>(vector.length)), test::from_hex(vector.ciphertext))
        << vector.length;
    EXPECT_EQ(Bytes(output.begin() + static_cast<std::ptrdiff_t>(vector.length), output.end()), openssl_hmac96(c.ki, c.message))
        << vector.length;
    // The reference used below agrees with the RFC too.
    EXPECT_EQ(openssl_cts_encrypt(key, c.message), test::from_hex(vector.ciphertext)) << vector.length;
  }
}

class KerberosSizeTest : public ::testing::TestWithParam<AesKeySize> {};

TEST_P(KerberosSizeTest, EncryptMatchesOpenSsl) {
  const AesKeySize size = GetParam();
  std::mt19937_64 rng(size == AesKeySize::Aes128 ? 1 : 2);
  for (std::size_t length : test_lengths()) {
    const Circuit circuit = build_krb_encrypt_circuit(size, length);
    ASSERT_EQ(circuit.input_widths, (std::vector<std::uint32_t>{(size == AesKeySize::Aes128 ? 11U : 15U) * 128U, 320U,
                                                                 static_cast<std::uint32_t>(8 * length)}));
    ASSERT_EQ(circuit.output_widths, (std::vector<std::uint32_t>{static_cast<std::uint32_t>(8 * length), 96U}));
    std::vector<EncryptCase> cases;
    std::vector<Bytes> inputs;
    for (std::size_t lane = 0; lane < kLanes; ++lane) {
      cases.push_back(random_case(rng, size, length));
      inputs.push_back(encrypt_input(cases.back()));
    }
    const auto words = test::pack_lanes(inputs);
    const auto outputs = evaluate_packed(circuit, words);
    const bool check_program = length == 47;
    const auto program_outputs = check_program ? evaluate_program_packed(compile(circuit), words) : outputs;
    for (std::size_t lane = 0; lane < kLanes; ++lane) {
      const Bytes ciphertext = openssl_cts_encrypt(cases[lane].ke, cases[lane].message);
      const Bytes mac = openssl_hmac96(cases[lane].ki, cases[lane].message);
      const Bytes expected = concat({&ciphertext, &mac});
      ASSERT_EQ(test::unpack_lane(outputs, lane), expected) << "length " << length << " lane " << lane;
      ASSERT_EQ(test::unpack_lane(program_outputs, lane), expected) << "length " << length << " lane " << lane;
    }
  }
}

// Lane kinds: 0 genuine, 1 one MAC bit flipped, 2 one ciphertext bit flipped, 3 random MAC.
TEST_P(KerberosSizeTest, DecryptRoundTripsAndRejectsTampering) {
  const AesKeySize size = GetParam();
  std::mt19937_64 rng(size == AesKeySize::Aes128 ? 3 : 4);
  for (std::size_t length : test_lengths()) {
    const Circuit circuit = build_krb_decrypt_circuit(size, length);
    ASSERT_EQ(circuit.input_widths.size(), 4U);
    ASSERT_EQ(circuit.input_widths[2], 8 * length);
    ASSERT_EQ(circuit.input_widths[3], 96U);
    ASSERT_EQ(circuit.output_widths, (std::vector<std::uint32_t>{static_cast<std::uint32_t>(8 * length), 1U}));
    std::vector<EncryptCase> cases;
    std::vector<Bytes> inputs;
    for (std::size_t lane = 0; lane < kLanes; ++lane) {
      cases.push_back(random_case(rng, size, length));
      const EncryptCase& c = cases.back();
      Bytes ciphertext = openssl_cts_encrypt(c.ke, c.message);
      Bytes mac = openssl_hmac96(c.ki, c.message);
      switch (lane % 4) {
        case 1: mac[rng() % mac.size()] ^= static_cast<std::uint8_t>(1U << (rng() % 8)); break;
        case 2: ciphertext[rng() % ciphertext.size()] ^= static_cast<std::uint8_t>(1U << (rng() % 8)); break;
        case 3: mac = test::random_bytes(rng, kKrbMacBytes); break;
        default: break;
      }
      const Bytes round_keys = aes_expand_key(c.ke);
      const Bytes state = hmac_state(c.ki);
      inputs.push_back(concat({&round_keys, &state, &ciphertext, &mac}));
    }
    const auto words = test::pack_lanes(inputs);
    const auto outputs = evaluate_packed(circuit, words);
    const auto program_outputs = length == 33 ? evaluate_program_packed(compile(circuit), words) : outputs;
    for (std::size_t lane = 0; lane < kLanes; ++lane) {
      const bool genuine = lane % 4 == 0;
      // Output bits: the plaintext, then the verdict bit (its own byte when unpacked would be
      // partial, so read it from the word directly).
      const std::uint64_t verdict_word = outputs[8 * length];
      EXPECT_EQ((verdict_word >> lane) & 1U, genuine ? 1U : 0U) << "length " << length << " lane " << lane;
      std::vector<std::uint64_t> plaintext_words(outputs.begin(), outputs.begin() + static_cast<std::ptrdiff_t>(8 * length));
      const Bytes plaintext = test::unpack_lane(plaintext_words, lane);
      ASSERT_EQ(plaintext, genuine ? cases[lane].message : Bytes(length, 0)) << "length " << length << " lane " << lane;
      ASSERT_EQ(program_outputs, outputs) << "length " << length;
    }
  }
}

TEST_P(KerberosSizeTest, DecryptOpensTheEncryptCircuitsOutput) {
  const AesKeySize size = GetParam();
  std::mt19937_64 rng(5);
  for (std::size_t length : {16, 17, 32, 33, 100}) {
    const EncryptCase c = random_case(rng, size, length);
    const Bytes encrypted = test::bits_to_bytes(evaluate(build_krb_encrypt_circuit(size, length), test::bytes_to_bits(encrypt_input(c))));
    const Bytes round_keys = aes_expand_key(c.ke);
    const Bytes state = hmac_state(c.ki);
    const Bytes input = concat({&round_keys, &state, &encrypted});  // ciphertext || MAC
    const auto bits = evaluate(build_krb_decrypt_circuit(size, length), test::bytes_to_bits(input));
    ASSERT_EQ(bits.size(), 8 * length + 1);
    EXPECT_EQ(bits.back(), 1U) << length;
    EXPECT_EQ(test::bits_to_bytes(std::span<const std::uint8_t>(bits).first(8 * length)), c.message) << length;
  }
}

INSTANTIATE_TEST_SUITE_P(Both, KerberosSizeTest, ::testing::Values(AesKeySize::Aes128, AesKeySize::Aes256),
                         [](const auto& info) { return std::string(info.param == AesKeySize::Aes128 ? "Aes128" : "Aes256"); });

TEST(KerberosCircuit, ChecksumMatchesOpenSslHmac) {
  std::mt19937_64 rng(6);
  std::vector<std::size_t> lengths;
  for (std::size_t length = 0; length <= 200; ++length) lengths.push_back(length);
  for (std::size_t length : {247, 311, 1000, 4096}) lengths.push_back(length);
  for (std::size_t length : lengths) {
    const Circuit circuit = build_krb_checksum_circuit(length);
    ASSERT_EQ(circuit.input_widths.size(), length == 0 ? 1U : 2U);
    ASSERT_EQ(circuit.output_widths, std::vector<std::uint32_t>{96U});
    std::vector<Bytes> keys;
    std::vector<Bytes> messages;
    std::vector<Bytes> inputs;
    for (std::size_t lane = 0; lane < kLanes; ++lane) {
      keys.push_back(test::random_bytes(rng, lane % 2 == 0 ? 16 : 32));
      messages.push_back(test::random_bytes(rng, length));
      const Bytes state = hmac_state(keys.back());
      inputs.push_back(concat({&state, &messages.back()}));
    }
    const auto words = test::pack_lanes(inputs);
    const auto outputs = evaluate_packed(circuit, words);
    const auto program_outputs = length == 0 || length == 60 ? evaluate_program_packed(compile(circuit), words) : outputs;
    for (std::size_t lane = 0; lane < kLanes; ++lane) {
      const Bytes expected = openssl_hmac96(keys[lane], messages[lane]);
      ASSERT_EQ(test::unpack_lane(outputs, lane), expected) << "length " << length << " lane " << lane;
      ASSERT_EQ(test::unpack_lane(program_outputs, lane), expected) << "length " << length << " lane " << lane;
    }
  }
}

TEST(KerberosCircuit, RejectsMessagesShorterThanABlock) {
  for (std::size_t length : {0, 1, 15}) {
    EXPECT_THROW(build_krb_encrypt_circuit(AesKeySize::Aes128, length), FormatError) << length;
    EXPECT_THROW(build_krb_decrypt_circuit(AesKeySize::Aes256, length), FormatError) << length;
  }
}

TEST(KerberosCircuit, CipherAndMacRunSideBySide) {
  // Encryption costs no AND layer beyond the longer of its two chains: for 300 bytes the HMAC
  // (the checksum circuit over the same length) is longer than 19 chained AES blocks.
  const std::uint32_t mac_depth = compute_stats(build_krb_checksum_circuit(300)).and_depth;
  EXPECT_EQ(compute_stats(build_krb_encrypt_circuit(AesKeySize::Aes256, 300)).and_depth, mac_depth);
  // Decryption: the HMAC starts after the first AES decryptions, then the 96-bit comparison
  // (7 layers) and the release AND (1) follow.
  const std::uint32_t decrypt_depth = compute_stats(build_krb_decrypt_circuit(AesKeySize::Aes256, 300)).and_depth;
  EXPECT_GT(decrypt_depth, mac_depth + 8);
  EXPECT_LE(decrypt_depth, mac_depth + 14 * 4 + 8);
  // Many blocks: the cipher chain (256 blocks * 40 layers) is still shorter than the HMAC.
  const CircuitStats stats = compute_stats(build_krb_encrypt_circuit(AesKeySize::Aes128, 40));
  std::cout << "[ stats    ] krb-aes128-enc-40: and " << stats.and_gates << ", and-depth " << stats.and_depth << "\n";
}

TEST(KerberosCircuit, CatalogueBuildsTheFamilies) {
  for (const std::string& name : catalogue_family_examples()) {
    EXPECT_GT(compute_stats(build_named_circuit(name)).and_gates, 0U) << name;
  }
  EXPECT_EQ(build_named_circuit("krb-aes128-enc-40").output_widths, (std::vector<std::uint32_t>{320U, 96U}));
  EXPECT_EQ(build_named_circuit("krb-aes256-dec-17").input_widths, (std::vector<std::uint32_t>{1920U, 320U, 136U, 96U}));
  EXPECT_EQ(build_named_circuit("krb-checksum-0").input_widths, std::vector<std::uint32_t>{320U});
  EXPECT_EQ(build_named_circuit("sha1-compress").input_widths, (std::vector<std::uint32_t>{160U, 512U}));
  for (const char* name : {"krb-aes128-enc-15", "krb-aes128-enc-", "krb-aes128-enc-040", "krb-aes128-enc-+40",
                           "krb-aes128-enc-40x", "krb-aes192-enc-40", "krb-checksum--1", "krb-checksum-65537",
                           "krb-checksum-99999999999999999999", "sha1-compress-0", "krb-aes256-dec-0"}) {
    EXPECT_THROW(build_named_circuit(name), FormatError) << name;
  }
}

}  // namespace
}  // namespace mpc::circuits
