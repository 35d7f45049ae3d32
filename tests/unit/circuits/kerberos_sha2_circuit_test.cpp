// The RFC 8009 circuits against the RFC's Appendix A sample encryptions and checksums and
// against OpenSSL (AES-CBC with the ciphertext-stealing swap done here, HMAC-SHA256/384), with
// HMAC states made by sha2_reference.
#include <gtest/gtest.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <memory>
#include <random>
#include <stdexcept>

#include "circuits/aes_reference.hpp"
#include "circuits/catalogue.hpp"
#include "circuits/evaluate.hpp"
#include "circuits/kerberos_sha2.hpp"
#include "circuits/program.hpp"
#include "circuits/sha2_reference.hpp"
#include "circuits/stats.hpp"
#include "common/error.hpp"
#include "support.hpp"

namespace mpc::circuits {
namespace {

using test::Bytes;
using test::concat;
using test::openssl_cts_encrypt;

std::size_t ke_bytes(AesKeySize size) { return size == AesKeySize::Aes128 ? 16 : 32; }
std::size_t ki_bytes(KrbSha2Hash hash) { return hash == KrbSha2Hash::Sha256 ? 16 : 24; }

// The HMAC state: the chaining values after (key ^ ipad) and after (key ^ opad).
Bytes hmac_state(KrbSha2Hash hash, const Bytes& key) {
  Bytes out;
  for (std::uint8_t pad : {std::uint8_t{0x36}, std::uint8_t{0x5c}}) {
    if (hash == KrbSha2Hash::Sha256) {
      std::array<std::uint8_t, kSha256BlockBytes> block{};
      for (std::size_t i = 0; i < block.size(); ++i) block[i] = static_cast<std::uint8_t>((i < key.size() ? key[i] : 0) ^ pad);
      Sha256State state = sha256_initial_state();
      sha256_compress(state, block);
      const auto bytes = sha256_state_bytes(state);
      out.insert(out.end(), bytes.begin(), bytes.end());
    } else {
      std::array<std::uint8_t, kSha512BlockBytes> block{};
      for (std::size_t i = 0; i < block.size(); ++i) block[i] = static_cast<std::uint8_t>((i < key.size() ? key[i] : 0) ^ pad);
      Sha512State state = sha384_initial_state();
      sha512_compress(state, block);
      const auto bytes = sha512_state_bytes(state);
      out.insert(out.end(), bytes.begin(), bytes.end());
    }
  }
  return out;
}

Bytes openssl_hmac(KrbSha2Hash hash, const Bytes& key, const Bytes& message) {
  std::uint8_t digest[EVP_MAX_MD_SIZE];
  unsigned length = 0;
  const EVP_MD* md = hash == KrbSha2Hash::Sha256 ? EVP_sha256() : EVP_sha384();
  if (HMAC(md, key.data(), static_cast<int>(key.size()), message.data(), message.size(), digest, &length) == nullptr) {
    throw std::runtime_error("OpenSSL HMAC failed");
  }
  return Bytes(digest, digest + krb_sha2_mac_bytes(hash));
}

// RFC 8009's MAC input: the 16-byte zero cipher state, then the ciphertext.
Bytes with_zero_iv(const Bytes& ciphertext) {
  Bytes out(16, 0);
  out.insert(out.end(), ciphertext.begin(), ciphertext.end());
  return out;
}

Bytes slice(const Bytes& bytes, std::size_t from, std::size_t count) {
  return Bytes(bytes.begin() + static_cast<std::ptrdiff_t>(from), bytes.begin() + static_cast<std::ptrdiff_t>(from + count));
}

constexpr std::size_t kLanes = 8;

TEST(KerberosSha2Circuit, Rfc8009AppendixASampleEncryptions) {
  struct Vector {
    AesKeySize size;
    const char* confounder;
    const char* plaintext;
    const char* ciphertext;  // the AES output, then the truncated HMAC
  };
  const char* const ke128 = "9b197dd1e8c5609d6e67c3e37c62c72e";
  const char* const ki128 = "9fda0e56ab2d85e1569a688696c26a6c";
  const char* const ke256 = "56ab22bee63d82d7bc5227f6773f8ea7a5eb1c825160c38312980c442e5c7e49";
  const char* const ki256 = "69b16514e3cd8e56b82010d5c73012b622c4d00ffc23ed1f";
  const Vector vectors[] = {
      {AesKeySize::Aes128, "7e5895eaf2672435bad817f545a37148", "",
       "ef85fb890bb8472f4dab20394dca781dad877eda39d50c870c0d5a0a8e48c718"},
      {AesKeySize::Aes128, "7bca285e2fd4130fb55b1a5c83bc5b24", "000102030405",
       "84d7f30754ed987bab0bf3506beb09cfb55402cef7e6877ce99e247e52d16ed4421dfdf8976c"},
      {AesKeySize::Aes128, "56ab21713ff62c0a1457200f6fa9948f", "000102030405060708090a0b0c0d0e0f",
       "3517d640f50ddc8ad3628722b3569d2ae07493fa8263254080ea65c1008e8fc295fb4852e7d83e1e7c48c37eebe6b0d3"},
      {AesKeySize::Aes128, "a7a4e29a4728ce10664fb64e49ad3fac", "000102030405060708090a0b0c0d0e0f1011121314",
       "720f73b18d9859cd6ccb4346115cd336c70f58edc0c4437c5573544c31c813bce1e6d072c186b39a413c2f92ca9b8334a287ffcbfc"},
      {AesKeySize::Aes256, "f764e9fa15c276478b2c7d0c4e5f58e4", "",
       "41f53fa5bfe7026d91faf9be959195a058707273a96a40f0a01960621ac612748b9bbfbe7eb4ce3c"},
      {AesKeySize::Aes256, "b80d3251c1f6471494256ffe712d0b9a", "000102030405",
       "4ed7b37c2bcac8f74f23c1cf07e62bc7b75fb3f637b9f559c7f664f69eab7b6092237526ea0d1f61cb20d69d10f2"},
      {AesKeySize::Aes256, "53bf8a0d105265d4e276428624ce5e63", "000102030405060708090a0b0c0d0e0f",
       "bc47ffec7998eb91e8115cf8d19dac4bbbe2e163e87dd37f49beca92027764f68cf51f14d798c2273f35df574d1f932e40c4ff255b36a266"},
      {AesKeySize::Aes256, "763e65367e864f02f55153c7e3b58af1", "000102030405060708090a0b0c0d0e0f1011121314",
       "40013e2df58e8751957d2878bcd2d6fe101ccfd556cb1eae79db3c3ee86429f2b2a602ac86fef6ecb647d6295fae077a1feb517508d2c16b4192e01f62"},
  };
  for (const Vector& vector : vectors) {
    const bool is128 = vector.size == AesKeySize::Aes128;
    const KrbSha2Hash hash = krb_sha2_hash_for(vector.size);
    const Bytes ke = test::from_hex(is128 ? ke128 : ke256);
    const Bytes ki = test::from_hex(is128 ? ki128 : ki256);
    const Bytes confounder = test::from_hex(vector.confounder);
    const Bytes plaintext = test::from_hex(vector.plaintext);
    const Bytes expected = test::from_hex(vector.ciphertext);
    const Bytes message = concat({&confounder, &plaintext});
    const Bytes round_keys = aes_expand_key(ke);
    const Bytes state = hmac_state(hash, ki);
    const Bytes input = concat({&round_keys, &state, &message});
    const Bytes output =
        test::bits_to_bytes(evaluate(build_krb_sha2_encrypt_circuit(vector.size, message.size()), test::bytes_to_bits(input)));
    EXPECT_EQ(output, expected) << vector.ciphertext;
    // The MAC covers the zero cipher state as well as the ciphertext (OpenSSL agrees; without
    // the IV it would not).
    const Bytes aes_output = slice(expected, 0, message.size());
    EXPECT_EQ(openssl_hmac(hash, ki, with_zero_iv(aes_output)), slice(expected, message.size(), krb_sha2_mac_bytes(hash)));
    EXPECT_NE(openssl_hmac(hash, ki, aes_output), slice(expected, message.size(), krb_sha2_mac_bytes(hash)));

    // Decryption of the published ciphertext gives back confounder || plaintext.
    const Bytes decrypt_input = concat({&round_keys, &state, &expected});
    const auto bits = evaluate(build_krb_sha2_decrypt_circuit(vector.size, message.size()), test::bytes_to_bits(decrypt_input));
    ASSERT_EQ(bits.size(), 8 * message.size() + 1);
    EXPECT_EQ(bits.back(), 1U);
    EXPECT_EQ(test::bits_to_bytes(std::span<const std::uint8_t>(bits).first(8 * message.size())), message);
  }
}

TEST(KerberosSha2Circuit, Rfc8009AppendixAChecksums) {
  const Bytes message = test::from_hex("000102030405060708090a0b0c0d0e0f1011121314");
  const struct {
    KrbSha2Hash hash;
    const char* kc;
    const char* checksum;
  } vectors[] = {
      {KrbSha2Hash::Sha256, "b31a018a48f54776f403e9a396325dc3", "d78367186643d67b411cba9139fc1dee"},
      {KrbSha2Hash::Sha384, "ef5718be86cc84963d8bbb5031e9f5c4ba41f28faf69e73d",
       "45ee791567eefca37f4ac1e0222de80d43c3bfa06699672a"},
  };
  for (const auto& vector : vectors) {
    const Bytes state = hmac_state(vector.hash, test::from_hex(vector.kc));
    const Bytes input = concat({&state, &message});
    const Bytes output =
        test::bits_to_bytes(evaluate(build_krb_sha2_checksum_circuit(vector.hash, message.size()), test::bytes_to_bits(input)));
    EXPECT_EQ(output, test::from_hex(vector.checksum));
  }
}

// RFC 8009 Appendix A "Sample results for PRF" (input "test"), then OpenSSL's
// HMAC(key, 00000001 | "prf" | 00 | input | k) at other input lengths, including none.
TEST(KerberosSha2Circuit, Rfc8009AppendixAPrf) {
  const struct {
    KrbSha2Hash hash;
    const char* key;
    const char* prf;
  } vectors[] = {
      {KrbSha2Hash::Sha256, "3705d96080c17728a0e800eab6e0d23c",
       "9d188616f63852fe86915bb840b4a886ff3e6bb0f819b49b893393d393854295"},
      {KrbSha2Hash::Sha384, "6d404d37faf79f9df0d33568d320669800eb4836472ea8a026d16b7182460c52",
       "9801f69a368c2bf675e59521e177d9a07f67efe1cfde8d3c8d6f6a0256e3b17db3c1b62ad1b8553360d17367eb1514d2"},
  };
  std::mt19937_64 rng(8009);
  for (const auto& vector : vectors) {
    const Bytes key = test::from_hex(vector.key);
    const Bytes state = hmac_state(vector.hash, key);
    const Bytes test_input = {'t', 'e', 's', 't'};
    const Bytes input = concat({&state, &test_input});
    const Circuit circuit = build_krb_sha2_prf_circuit(vector.hash, test_input.size());
    EXPECT_EQ(test::bits_to_bytes(evaluate(circuit, test::bytes_to_bits(input))), test::from_hex(vector.prf));
    EXPECT_EQ(krb_sha2_prf_bytes(vector.hash) * 8, circuit.total_outputs());
    for (std::size_t length : {std::size_t{0}, std::size_t{1}, std::size_t{47}, std::size_t{120}, std::size_t{200}}) {
      const Bytes data = test::random_bytes(rng, length);
      Bytes message = {0, 0, 0, 1, 'p', 'r', 'f', 0};
      message.insert(message.end(), data.begin(), data.end());
      const std::uint32_t bits = static_cast<std::uint32_t>(krb_sha2_prf_bytes(vector.hash) * 8);
      for (int shift = 24; shift >= 0; shift -= 8) message.push_back(static_cast<std::uint8_t>(bits >> shift));
      std::uint8_t digest[EVP_MAX_MD_SIZE];
      unsigned digest_length = 0;
      ASSERT_NE(HMAC(vector.hash == KrbSha2Hash::Sha256 ? EVP_sha256() : EVP_sha384(), key.data(),
                     static_cast<int>(key.size()), message.data(), message.size(), digest, &digest_length),
                nullptr);
      const Bytes prf_input = length == 0 ? state : concat({&state, &data});
      EXPECT_EQ(test::bits_to_bytes(evaluate(build_krb_sha2_prf_circuit(vector.hash, length), test::bytes_to_bits(prf_input))),
                Bytes(digest, digest + digest_length))
          << length;
    }
  }
}

class KerberosSha2SizeTest : public ::testing::TestWithParam<AesKeySize> {};

std::vector<std::size_t> test_lengths() { return {16, 17, 31, 32, 33, 47, 48, 63, 64, 65, 100, 111, 112, 113, 129}; }

struct EncryptCase {
  Bytes ke;
  Bytes ki;
  Bytes message;
};

EncryptCase random_case(std::mt19937_64& rng, AesKeySize size, std::size_t length) {
  return {test::random_bytes(rng, ke_bytes(size)), test::random_bytes(rng, ki_bytes(krb_sha2_hash_for(size))),
          test::random_bytes(rng, length)};
}

TEST_P(KerberosSha2SizeTest, EncryptMatchesOpenSsl) {
  const AesKeySize size = GetParam();
  const KrbSha2Hash hash = krb_sha2_hash_for(size);
  std::mt19937_64 rng(size == AesKeySize::Aes128 ? 1 : 2);
  for (std::size_t length : test_lengths()) {
    const Circuit circuit = build_krb_sha2_encrypt_circuit(size, length);
    ASSERT_EQ(circuit.input_widths, (std::vector<std::uint32_t>{(size == AesKeySize::Aes128 ? 11U : 15U) * 128U,
                                                                 krb_sha2_hmac_state_bits(hash),
                                                                 static_cast<std::uint32_t>(8 * length)}));
    ASSERT_EQ(circuit.output_widths, (std::vector<std::uint32_t>{static_cast<std::uint32_t>(8 * length),
                                                                  static_cast<std::uint32_t>(8 * krb_sha2_mac_bytes(hash))}));
    std::vector<EncryptCase> cases;
    std::vector<Bytes> inputs;
    for (std::size_t lane = 0; lane < kLanes; ++lane) {
      cases.push_back(random_case(rng, size, length));
      const Bytes round_keys = aes_expand_key(cases.back().ke);
      const Bytes state = hmac_state(hash, cases.back().ki);
      inputs.push_back(concat({&round_keys, &state, &cases.back().message}));
    }
    const auto words = test::pack_lanes(inputs);
    const auto outputs = evaluate_packed(circuit, words);
    const auto program_outputs = length == 33 ? evaluate_program_packed(compile(circuit), words) : outputs;
    for (std::size_t lane = 0; lane < kLanes; ++lane) {
      const Bytes ciphertext = openssl_cts_encrypt(cases[lane].ke, cases[lane].message);
      const Bytes mac = openssl_hmac(hash, cases[lane].ki, with_zero_iv(ciphertext));
      const Bytes expected = concat({&ciphertext, &mac});
      ASSERT_EQ(test::unpack_lane(outputs, lane), expected) << "length " << length << " lane " << lane;
      ASSERT_EQ(test::unpack_lane(program_outputs, lane), expected) << "length " << length << " lane " << lane;
    }
  }
}

// Lane kinds: 0 genuine, 1 one MAC bit flipped, 2 one ciphertext bit flipped, 3 random MAC.
TEST_P(KerberosSha2SizeTest, DecryptRoundTripsAndRejectsTampering) {
  const AesKeySize size = GetParam();
  const KrbSha2Hash hash = krb_sha2_hash_for(size);
  const std::size_t mac_bytes = krb_sha2_mac_bytes(hash);
  std::mt19937_64 rng(size == AesKeySize::Aes128 ? 3 : 4);
  for (std::size_t length : test_lengths()) {
    const Circuit circuit = build_krb_sha2_decrypt_circuit(size, length);
    ASSERT_EQ(circuit.input_widths.size(), 4U);
    ASSERT_EQ(circuit.input_widths[1], krb_sha2_hmac_state_bits(hash));
    ASSERT_EQ(circuit.input_widths[2], 8 * length);
    ASSERT_EQ(circuit.input_widths[3], 8 * mac_bytes);
    ASSERT_EQ(circuit.output_widths, (std::vector<std::uint32_t>{static_cast<std::uint32_t>(8 * length), 1U}));
    std::vector<EncryptCase> cases;
    std::vector<Bytes> inputs;
    for (std::size_t lane = 0; lane < kLanes; ++lane) {
      cases.push_back(random_case(rng, size, length));
      const EncryptCase& c = cases.back();
      Bytes ciphertext = openssl_cts_encrypt(c.ke, c.message);
      Bytes mac = openssl_hmac(hash, c.ki, with_zero_iv(ciphertext));
      switch (lane % 4) {
        case 1: mac[rng() % mac.size()] ^= static_cast<std::uint8_t>(1U << (rng() % 8)); break;
        case 2: ciphertext[rng() % ciphertext.size()] ^= static_cast<std::uint8_t>(1U << (rng() % 8)); break;
        case 3: mac = test::random_bytes(rng, mac_bytes); break;
        default: break;
      }
      const Bytes round_keys = aes_expand_key(c.ke);
      const Bytes state = hmac_state(hash, c.ki);
      inputs.push_back(concat({&round_keys, &state, &ciphertext, &mac}));
    }
    const auto words = test::pack_lanes(inputs);
    const auto outputs = evaluate_packed(circuit, words);
    const auto program_outputs = length == 33 ? evaluate_program_packed(compile(circuit), words) : outputs;
    ASSERT_EQ(program_outputs, outputs) << "length " << length;
    for (std::size_t lane = 0; lane < kLanes; ++lane) {
      const bool genuine = lane % 4 == 0;
      const std::uint64_t verdict_word = outputs[8 * length];
      EXPECT_EQ((verdict_word >> lane) & 1U, genuine ? 1U : 0U) << "length " << length << " lane " << lane;
      std::vector<std::uint64_t> plaintext_words(outputs.begin(), outputs.begin() + static_cast<std::ptrdiff_t>(8 * length));
      ASSERT_EQ(test::unpack_lane(plaintext_words, lane), genuine ? cases[lane].message : Bytes(length, 0))
          << "length " << length << " lane " << lane;
    }
  }
}

TEST_P(KerberosSha2SizeTest, CiphertextOpenedThenMacedByTheChecksumCircuit) {
  // The two-circuit route of kerberos_sha2.hpp: the checksum circuit over the public
  // 16 zero bytes || ciphertext under the Ki state gives the encryption circuit's MAC.
  const AesKeySize size = GetParam();
  const KrbSha2Hash hash = krb_sha2_hash_for(size);
  std::mt19937_64 rng(5);
  for (std::size_t length : {16, 40, 100}) {
    const EncryptCase c = random_case(rng, size, length);
    const Bytes round_keys = aes_expand_key(c.ke);
    const Bytes state = hmac_state(hash, c.ki);
    const Bytes encrypted = test::bits_to_bytes(
        evaluate(build_krb_sha2_encrypt_circuit(size, length), test::bytes_to_bits(concat({&round_keys, &state, &c.message}))));
    const Bytes mac_input = with_zero_iv(slice(encrypted, 0, length));
    const Bytes mac = test::bits_to_bytes(
        evaluate(build_krb_sha2_checksum_circuit(hash, mac_input.size()), test::bytes_to_bits(concat({&state, &mac_input}))));
    EXPECT_EQ(mac, slice(encrypted, length, krb_sha2_mac_bytes(hash))) << length;
  }
}

INSTANTIATE_TEST_SUITE_P(Both, KerberosSha2SizeTest, ::testing::Values(AesKeySize::Aes128, AesKeySize::Aes256),
                         [](const auto& info) { return std::string(info.param == AesKeySize::Aes128 ? "Aes128" : "Aes256"); });

TEST(KerberosSha2Circuit, ChecksumMatchesOpenSslHmac) {
  std::mt19937_64 rng(6);
  for (const KrbSha2Hash hash : {KrbSha2Hash::Sha256, KrbSha2Hash::Sha384}) {
    for (std::size_t length : {0, 1, 21, 55, 56, 63, 64, 111, 112, 119, 120, 128, 200, 300}) {
      const Circuit circuit = build_krb_sha2_checksum_circuit(hash, length);
      ASSERT_EQ(circuit.input_widths.size(), length == 0 ? 1U : 2U);
      ASSERT_EQ(circuit.input_widths[0], krb_sha2_hmac_state_bits(hash));
      ASSERT_EQ(circuit.output_widths, std::vector<std::uint32_t>{static_cast<std::uint32_t>(8 * krb_sha2_mac_bytes(hash))});
      std::vector<Bytes> keys;
      std::vector<Bytes> messages;
      std::vector<Bytes> inputs;
      for (std::size_t lane = 0; lane < kLanes; ++lane) {
        keys.push_back(test::random_bytes(rng, lane % 2 == 0 ? ki_bytes(hash) : 32));
        messages.push_back(test::random_bytes(rng, length));
        const Bytes state = hmac_state(hash, keys.back());
        inputs.push_back(concat({&state, &messages.back()}));
      }
      const auto words = test::pack_lanes(inputs);
      const auto outputs = evaluate_packed(circuit, words);
      const auto program_outputs = length == 0 || length == 56 ? evaluate_program_packed(compile(circuit), words) : outputs;
      for (std::size_t lane = 0; lane < kLanes; ++lane) {
        const Bytes expected = openssl_hmac(hash, keys[lane], messages[lane]);
        ASSERT_EQ(test::unpack_lane(outputs, lane), expected) << "length " << length << " lane " << lane;
        ASSERT_EQ(test::unpack_lane(program_outputs, lane), expected) << "length " << length << " lane " << lane;
      }
    }
  }
}

TEST(KerberosSha2Circuit, RejectsMessagesShorterThanABlock) {
  for (std::size_t length : {0, 1, 15}) {
    EXPECT_THROW(build_krb_sha2_encrypt_circuit(AesKeySize::Aes128, length), FormatError) << length;
    EXPECT_THROW(build_krb_sha2_decrypt_circuit(AesKeySize::Aes256, length), FormatError) << length;
  }
}

TEST(KerberosSha2Circuit, DepthsAndSizes) {
  for (const AesKeySize size : {AesKeySize::Aes128, AesKeySize::Aes256}) {
    const KrbSha2Hash hash = krb_sha2_hash_for(size);
    const char* name = size == AesKeySize::Aes128 ? "aes128-sha256" : "aes256-sha384";
    for (std::size_t length : {40, 300}) {
      const CircuitStats encrypt = compute_stats(build_krb_sha2_encrypt_circuit(size, length));
      const CircuitStats decrypt = compute_stats(build_krb_sha2_decrypt_circuit(size, length));
      const CircuitStats mac = compute_stats(build_krb_sha2_checksum_circuit(hash, length + 16));
      const CircuitStats checksum = compute_stats(build_krb_sha2_checksum_circuit(hash, length));
      std::cout << "[ stats    ] krb-" << name << " " << length << " bytes: enc and " << encrypt.and_gates << " depth "
                << encrypt.and_depth << "; dec and " << decrypt.and_gates << " depth " << decrypt.and_depth
                << "; checksum and " << checksum.and_gates << " depth " << checksum.and_depth
                << "; checksum of IV || C depth " << mac.and_depth << "\n";
      // Encryption: the MAC reads the ciphertext, so the cipher chain delays it; the MAC takes
      // each ciphertext block as it appears, so the delay is at most the whole CBC chain
      // (4 AND layers per AES round with the depth-4 S-box).
      const std::size_t blocks = (length + 15) / 16;
      const std::size_t aes_rounds = size == AesKeySize::Aes128 ? 10 : 14;
      EXPECT_GT(encrypt.and_depth, mac.and_depth) << name << " " << length;
      EXPECT_LE(encrypt.and_depth, mac.and_depth + blocks * aes_rounds * 4) << name << " " << length;
      // Decryption: the MAC of public data runs beside the cipher; then the comparison
      // (ceil(log2(mac bits)) layers) and the release AND.
      const std::uint32_t compare = hash == KrbSha2Hash::Sha256 ? 7 : 8;
      EXPECT_EQ(decrypt.and_depth, mac.and_depth + compare + 1) << name << " " << length;
    }
  }
}

TEST(KerberosSha2Circuit, CatalogueBuildsTheFamilies) {
  EXPECT_EQ(build_named_circuit("krb-aes128-sha256-enc-40").output_widths, (std::vector<std::uint32_t>{320U, 128U}));
  EXPECT_EQ(build_named_circuit("krb-aes256-sha384-dec-17").input_widths,
            (std::vector<std::uint32_t>{1920U, 1024U, 136U, 192U}));
  EXPECT_EQ(build_named_circuit("krb-sha256-checksum-0").input_widths, std::vector<std::uint32_t>{512U});
  EXPECT_EQ(build_named_circuit("krb-sha384-checksum-5").output_widths, std::vector<std::uint32_t>{192U});
  EXPECT_EQ(build_named_circuit("sha256-compress").input_widths, (std::vector<std::uint32_t>{256U, 512U}));
  EXPECT_EQ(build_named_circuit("sha512-compress").input_widths, (std::vector<std::uint32_t>{512U, 1024U}));
  for (const char* name : {"krb-aes128-sha256-enc-15", "krb-aes256-sha256-enc-40", "krb-aes128-sha384-dec-40",
                           "krb-sha256-checksum-", "krb-sha384-checksum-65537", "krb-aes128-sha256-enc-040"}) {
    EXPECT_THROW(build_named_circuit(name), FormatError) << name;
  }
}

}  // namespace
}  // namespace mpc::circuits
