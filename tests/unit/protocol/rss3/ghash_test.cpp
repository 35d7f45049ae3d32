// GHASH under a secret-shared hash key: GF(2^128) multiplication against the GCM spec's
// values and an independent reference, hash key powers, the parties' shares against a
// cleartext GHASH and (with AES from OpenSSL) against OpenSSL's AES-256-GCM tags, negative
// cases, and that one party's share is uniform and independent of H.
#include <gtest/gtest.h>

#include <openssl/evp.h>

#include <algorithm>
#include <limits>
#include <random>
#include <string>

#include "common/error.hpp"
#include "protocol/rss3/ghash.hpp"
#include "protocol/rss3/shares.hpp"
#include "test_util.hpp"

namespace mpc::rss3 {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes from_hex(const std::string& hex) {
  Bytes out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<std::uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  return out;
}

GhashBlock block_from_hex(const std::string& hex) {
  const Bytes bytes = from_hex(hex);
  EXPECT_EQ(bytes.size(), 16U);
  GhashBlock block{};
  std::copy(bytes.begin(), bytes.end(), block.begin());
  return block;
}

GhashBlock random_block(std::mt19937_64& rng) {
  GhashBlock block;
  for (auto& b : block) b = static_cast<std::uint8_t>(rng());
  return block;
}

Bytes random_bytes(std::mt19937_64& rng, std::size_t n) {
  Bytes out(n);
  for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  return out;
}

GhashBlock xor_blocks(const GhashBlock& a, const GhashBlock& b) {
  GhashBlock out;
  for (std::size_t i = 0; i < 16; ++i) out[i] = a[i] ^ b[i];
  return out;
}

// Independent reference: reverse GCM's bit order into ordinary polynomial coefficients
// (coefficient of x^i = GCM bit i = bit 7 - i % 8 of byte i / 8), multiply without carries,
// reduce modulo x^128 + x^7 + x^2 + x + 1, and convert back.
GhashBlock reference_multiply(const GhashBlock& a, const GhashBlock& b) {
  auto coefficient = [](const GhashBlock& v, int i) { return (v[static_cast<std::size_t>(i / 8)] >> (7 - i % 8)) & 1; };
  int product[255] = {};
  for (int i = 0; i < 128; ++i)
    for (int j = 0; j < 128; ++j) product[i + j] ^= coefficient(a, i) & coefficient(b, j);
  for (int d = 254; d >= 128; --d) {
    if (!product[d]) continue;
    product[d] = 0;
    for (int t : {7, 2, 1, 0}) product[d - 128 + t] ^= 1;
  }
  GhashBlock out{};
  for (int i = 0; i < 128; ++i)
    if (product[i]) out[static_cast<std::size_t>(i / 8)] |= static_cast<std::uint8_t>(0x80 >> (i % 8));
  return out;
}

// Cleartext GHASH by Horner's rule (SP 800-38D algorithm 2) with the reference multiply.
GhashBlock cleartext_ghash(const GhashBlock& h, const Bytes& aad, const Bytes& text) {
  Bytes data = aad;
  data.resize((aad.size() + 15) / 16 * 16, 0);
  data.insert(data.end(), text.begin(), text.end());
  data.resize(data.size() + (16 - text.size() % 16) % 16, 0);
  for (std::uint64_t bits : {static_cast<std::uint64_t>(aad.size()) * 8, static_cast<std::uint64_t>(text.size()) * 8})
    for (int i = 7; i >= 0; --i) data.push_back(static_cast<std::uint8_t>(bits >> (8 * i)));
  GhashBlock y{};
  for (std::size_t off = 0; off < data.size(); off += 16) {
    GhashBlock x;
    std::copy(data.begin() + static_cast<std::ptrdiff_t>(off), data.begin() + static_cast<std::ptrdiff_t>(off + 16), x.begin());
    y = reference_multiply(xor_blocks(y, x), h);
  }
  return y;
}

// The dealer: replicated shares of H^1..H^count, per party.
std::array<std::vector<ByteShare>, kParties> share_powers(const GhashBlock& h, std::size_t count) {
  std::vector<GhashBlock> powers = hash_key_powers(h, count);
  std::array<std::vector<ByteShare>, kParties> out;
  for (const GhashBlock& power : powers) {
    auto shares = share_bytes(power);
    for (int i = 0; i < kParties; ++i) out[static_cast<std::size_t>(i)].push_back(std::move(shares[static_cast<std::size_t>(i)]));
  }
  for (auto& power : powers) power.fill(0);
  return out;
}

GhashBlock mpc_ghash(const std::array<std::vector<ByteShare>, kParties>& powers, const Bytes& aad, const Bytes& text) {
  std::array<ByteShare, kParties> shares;
  for (int i = 0; i < kParties; ++i) {
    shares[static_cast<std::size_t>(i)] = ghash_share(powers[static_cast<std::size_t>(i)], aad, text);
    EXPECT_EQ(shares[static_cast<std::size_t>(i)].x.size(), 16U);
    EXPECT_EQ(shares[static_cast<std::size_t>(i)].a.size(), 16U);
  }
  const Bytes value = reconstruct_bytes(shares);
  GhashBlock out{};
  EXPECT_EQ(value.size(), 16U);
  std::copy(value.begin(), value.end(), out.begin());
  return out;
}

GhashBlock openssl_aes256_block(const Bytes& key, const GhashBlock& block) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  GhashBlock out{};
  int len = 0;
  const bool ok = ctx != nullptr && EVP_EncryptInit_ex(ctx, EVP_aes_256_ecb(), nullptr, key.data(), nullptr) == 1 &&
                  EVP_CIPHER_CTX_set_padding(ctx, 0) == 1 &&
                  EVP_EncryptUpdate(ctx, out.data(), &len, block.data(), 16) == 1 && len == 16;
  EVP_CIPHER_CTX_free(ctx);
  EXPECT_TRUE(ok);
  return out;
}

// AES-256-GCM through OpenSSL EVP: returns the tag and sets `ciphertext`.
GhashBlock openssl_gcm_tag(const Bytes& key, const Bytes& nonce, const Bytes& aad, const Bytes& text, Bytes& ciphertext) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  ciphertext.assign(text.size() + 16, 0);
  GhashBlock tag{};
  int len = 0, total = 0;
  bool ok = ctx != nullptr && EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1 &&
            EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, 12, nullptr) == 1 &&
            EVP_EncryptInit_ex(ctx, nullptr, nullptr, key.data(), nonce.data()) == 1;
  if (ok && !aad.empty()) ok = EVP_EncryptUpdate(ctx, nullptr, &len, aad.data(), static_cast<int>(aad.size())) == 1;
  if (ok && !text.empty()) {
    ok = EVP_EncryptUpdate(ctx, ciphertext.data(), &len, text.data(), static_cast<int>(text.size())) == 1;
    total = len;
  }
  if (ok) ok = EVP_EncryptFinal_ex(ctx, ciphertext.data() + total, &len) == 1;
  total += len;
  if (ok) ok = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, tag.data()) == 1;
  EVP_CIPHER_CTX_free(ctx);
  EXPECT_TRUE(ok);
  ciphertext.resize(static_cast<std::size_t>(total));
  return tag;
}

// ---------------------------------------------------------------------------------------
// GF(2^128) multiplication

TEST(Gf128, ExampleFromGcmSpec) {
  // GCM spec (McGrew, Viega), test case 2: X_1 = C_1 * H.
  EXPECT_EQ(gf128_multiply(block_from_hex("0388dace60b6a392f328c2b971b2fe78"),
                           block_from_hex("66e94bd4ef8a2c3b884cfa59ca342b2e")),
            block_from_hex("5e2ec746917062882c85b0685353deb7"));
}

TEST(Gf128, AgreesWithIndependentReference) {
  std::mt19937_64 rng(21);
  for (int trial = 0; trial < 300; ++trial) {
    const GhashBlock a = random_block(rng), b = random_block(rng);
    ASSERT_EQ(gf128_multiply(a, b), reference_multiply(a, b)) << trial;
  }
  // Sparse operands exercise every reduction path: single bits times single bits.
  for (int i = 0; i < 128; i += 7) {
    for (int j = 0; j < 128; j += 5) {
      GhashBlock a{}, b{};
      a[static_cast<std::size_t>(i / 8)] = static_cast<std::uint8_t>(0x80 >> (i % 8));
      b[static_cast<std::size_t>(j / 8)] = static_cast<std::uint8_t>(0x80 >> (j % 8));
      ASSERT_EQ(gf128_multiply(a, b), reference_multiply(a, b)) << i << " " << j;
    }
  }
}

TEST(Gf128, FieldLaws) {
  std::mt19937_64 rng(22);
  const GhashBlock one = block_from_hex("80000000000000000000000000000000");  // x^0 in GCM order
  const GhashBlock zero{};
  // x * x^127 = x^128 = x^7 + x^2 + x + 1, i.e. R = 0xe1 || 0^120.
  EXPECT_EQ(gf128_multiply(block_from_hex("40000000000000000000000000000000"),
                           block_from_hex("00000000000000000000000000000001")),
            block_from_hex("e1000000000000000000000000000000"));
  for (int trial = 0; trial < 100; ++trial) {
    const GhashBlock a = random_block(rng), b = random_block(rng), c = random_block(rng);
    EXPECT_EQ(gf128_multiply(a, one), a);
    EXPECT_EQ(gf128_multiply(one, a), a);
    EXPECT_EQ(gf128_multiply(a, zero), zero);
    EXPECT_EQ(gf128_multiply(a, b), gf128_multiply(b, a));
    EXPECT_EQ(gf128_multiply(gf128_multiply(a, b), c), gf128_multiply(a, gf128_multiply(b, c)));
    EXPECT_EQ(gf128_multiply(a, xor_blocks(b, c)), xor_blocks(gf128_multiply(a, b), gf128_multiply(a, c)));
  }
}

// ---------------------------------------------------------------------------------------
// Hash key powers and block counts

TEST(HashKeyPowers, Consistency) {
  std::mt19937_64 rng(23);
  const GhashBlock h = random_block(rng);
  EXPECT_TRUE(hash_key_powers(h, 0).empty());
  const auto one = hash_key_powers(h, 1);
  ASSERT_EQ(one.size(), 1U);
  EXPECT_EQ(one[0], h);
  const auto powers = hash_key_powers(h, 40);
  ASSERT_EQ(powers.size(), 40U);
  EXPECT_EQ(powers[0], h);
  for (std::size_t k = 1; k < powers.size(); ++k) EXPECT_EQ(powers[k], reference_multiply(powers[k - 1], h)) << k;
  for (std::size_t i = 1; i <= 20; ++i)  // H^i * H^j = H^(i+j)
    for (std::size_t j = 1; i + j <= 40; j += 3) EXPECT_EQ(gf128_multiply(powers[i - 1], powers[j - 1]), powers[i + j - 1]);
}

TEST(GhashBlocks, Counts) {
  EXPECT_EQ(ghash_blocks(0, 0), 1U);
  EXPECT_EQ(ghash_blocks(1, 0), 2U);
  EXPECT_EQ(ghash_blocks(16, 0), 2U);
  EXPECT_EQ(ghash_blocks(17, 0), 3U);
  EXPECT_EQ(ghash_blocks(0, 15), 2U);
  EXPECT_EQ(ghash_blocks(20, 60), 7U);  // GCM spec test case 4
  EXPECT_EQ(ghash_blocks(40, 1000), 3U + 63U + 1U);
  const std::size_t huge = std::numeric_limits<std::size_t>::max();
  EXPECT_EQ(ghash_blocks(huge, huge), 2 * (huge / 16 + 1) + 1);
}

// ---------------------------------------------------------------------------------------
// Shares

TEST(GhashShare, KnownAnswersFromGcmSpec) {
  struct Case {
    const char* h;
    const char* aad;
    const char* ciphertext;
    const char* ghash;
  };
  // Test cases 2, 4, 14 and 16 of the GCM spec (H, A, C and GHASH(H, A, C)).
  const Case cases[] = {
      {"66e94bd4ef8a2c3b884cfa59ca342b2e", "", "0388dace60b6a392f328c2b971b2fe78", "f38cbb1ad69223dcc3457ae5b6b0f885"},
      {"b83b533708bf535d0aa6e52980d53b78", "feedfacedeadbeeffeedfacedeadbeefabaddad2",
       "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091",
       "698e57f70e6ecc7fd9463b7260a9ae5f"},
      {"dc95c078a2408989ad48a21492842087", "", "cea7403d4d606b6e074ec5d3baf39d18", "83de425c5edc5d498f382c441041ca92"},
      {"acbef20579b4b8ebce889bac8732dad7", "feedfacedeadbeeffeedfacedeadbeefabaddad2",
       "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
       "8bd0c4d8aacd391e67cca447e8c38f65"},
  };
  for (const Case& c : cases) {
    const GhashBlock h = block_from_hex(c.h);
    const Bytes aad = from_hex(c.aad), text = from_hex(c.ciphertext);
    const auto powers = share_powers(h, ghash_blocks(aad.size(), text.size()));
    EXPECT_EQ(mpc_ghash(powers, aad, text), block_from_hex(c.ghash)) << c.h;
    EXPECT_EQ(cleartext_ghash(h, aad, text), block_from_hex(c.ghash)) << c.h;
  }
}

TEST(GhashShare, MatchesCleartextGhash) {
  std::mt19937_64 rng(24);
  const std::size_t lengths[] = {0, 1, 15, 16, 17, 31, 32, 33, 100};
  for (std::size_t aad_len : lengths) {
    for (std::size_t text_len : lengths) {
      const GhashBlock h = random_block(rng);
      const Bytes aad = random_bytes(rng, aad_len), text = random_bytes(rng, text_len);
      // More powers than needed: the extra ones are ignored.
      const auto powers = share_powers(h, ghash_blocks(aad_len, text_len) + (aad_len % 3));
      ASSERT_EQ(mpc_ghash(powers, aad, text), cleartext_ghash(h, aad, text)) << aad_len << " " << text_len;
    }
  }
}

// The powers laid end to end and read in place give each party the same share as the
// ByteShare form; an empty `a` reads as a zero component, and ragged lengths are refused.
TEST(GhashShare, PowersInPlaceMatchTheShareForm) {
  std::mt19937_64 rng(29);
  const GhashBlock h = random_block(rng);
  const Bytes aad = random_bytes(rng, 21), text = random_bytes(rng, 40);
  const auto powers = share_powers(h, ghash_blocks(aad.size(), text.size()) + 2);
  for (const auto& party : powers) {
    Bytes x, a, zero(16 * party.size(), 0);
    for (const ByteShare& power : party) {
      x.insert(x.end(), power.x.begin(), power.x.end());
      a.insert(a.end(), power.a.begin(), power.a.end());
    }
    const ByteShare expected = ghash_share(party, aad, text);
    const ByteShare in_place = ghash_share(x, a, aad, text);
    EXPECT_EQ(in_place.x, expected.x);
    EXPECT_EQ(in_place.a, expected.a);
    const ByteShare without_a = ghash_share(x, {}, aad, text);
    EXPECT_EQ(without_a.x, expected.x);
    EXPECT_EQ(without_a.a, ghash_share(x, zero, aad, text).a);
    EXPECT_EQ(without_a.a, Bytes(16, 0));
    EXPECT_THROW(ghash_share(std::span(x).first(x.size() - 1), {}, aad, text), Error);
    EXPECT_THROW(ghash_share(x, std::span(a).first(16), aad, text), Error);
  }
}

// GHASH_H(A, C) ^ AES_K(N || 1) with H = AES_K(0^128) is OpenSSL's AES-256-GCM tag.
TEST(GhashShare, EndToEndAgainstOpenSslGcm) {
  std::mt19937_64 rng(25);
  auto check = [&](std::size_t aad_len, std::size_t text_len) {
    const Bytes key = random_bytes(rng, 32), nonce = random_bytes(rng, 12);
    const Bytes aad = random_bytes(rng, aad_len), plaintext = random_bytes(rng, text_len);
    Bytes ciphertext;
    const GhashBlock tag = openssl_gcm_tag(key, nonce, aad, plaintext, ciphertext);
    EXPECT_EQ(ciphertext.size(), text_len);
    const GhashBlock h = openssl_aes256_block(key, GhashBlock{});
    GhashBlock j0{};
    std::copy(nonce.begin(), nonce.end(), j0.begin());
    j0[15] = 1;
    const GhashBlock mask = openssl_aes256_block(key, j0);
    const auto powers = share_powers(h, ghash_blocks(aad_len, text_len));
    return xor_blocks(mpc_ghash(powers, aad, ciphertext), mask) == tag;
  };
  const std::size_t text_lengths[] = {0, 1, 12, 15, 16, 17, 31, 32, 33, 63, 64, 65, 255, 256, 257, 999, 1000};
  for (std::size_t aad_len = 0; aad_len <= 40; ++aad_len) {
    for (std::size_t text_len : text_lengths) ASSERT_TRUE(check(aad_len, text_len)) << aad_len << " " << text_len;
    const std::size_t random_len = static_cast<std::size_t>(rng() % 1001);
    ASSERT_TRUE(check(aad_len, random_len)) << aad_len << " " << random_len;
  }
  for (std::size_t text_len = 0; text_len <= 1000; ++text_len) {
    const std::size_t aad_len = static_cast<std::size_t>(rng() % 41);
    ASSERT_TRUE(check(aad_len, text_len)) << aad_len << " " << text_len;
  }
}

// A tampered ciphertext gives a different GHASH (so a different tag).
TEST(GhashShare, DetectsChangedInput) {
  std::mt19937_64 rng(26);
  const GhashBlock h = random_block(rng);
  const Bytes aad = random_bytes(rng, 13), text = random_bytes(rng, 50);
  const auto powers = share_powers(h, ghash_blocks(13, 50) + 1);
  const GhashBlock reference = mpc_ghash(powers, aad, text);
  Bytes flipped = text;
  flipped[49] ^= 1;
  EXPECT_NE(mpc_ghash(powers, aad, flipped), reference);
  // Moving bytes between AAD and text changes the length block.
  Bytes aad_longer = aad;
  aad_longer.push_back(text[0]);
  EXPECT_NE(mpc_ghash(powers, aad_longer, Bytes(text.begin() + 1, text.end())), reference);
  // Appending a zero byte changes the length block although the padded data is the same.
  Bytes padded = text;
  padded.push_back(0);
  EXPECT_NE(mpc_ghash(powers, aad, padded), reference);
}

TEST(GhashShare, TooFewPowersThrows) {
  std::mt19937_64 rng(27);
  const GhashBlock h = random_block(rng);
  const Bytes aad = random_bytes(rng, 17), text = random_bytes(rng, 33);  // 2 + 3 + 1 blocks
  const auto powers = share_powers(h, 6);
  for (int party = 0; party < kParties; ++party) {
    const auto& mine = powers[static_cast<std::size_t>(party)];
    EXPECT_NO_THROW((void)ghash_share(mine, aad, text));
    try {
      (void)ghash_share(std::span<const ByteShare>(mine).first(5), aad, text);
      ADD_FAILURE() << "five powers for six blocks accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.component(), Component::Protocol);
    }
    EXPECT_THROW((void)ghash_share(std::span<const ByteShare>{}, {}, {}), Error);  // the length block needs H
    EXPECT_NO_THROW((void)ghash_share(std::span<const ByteShare>(mine).first(1), {}, {}));
  }
}

TEST(GhashShare, MalformedPowerShareThrows) {
  std::mt19937_64 rng(28);
  const Bytes text = random_bytes(rng, 20);  // 2 + 1 blocks
  for (std::size_t bad = 0; bad < 3; ++bad) {
    for (int component = 0; component < 2; ++component) {
      auto powers = share_powers(random_block(rng), 3);
      auto& share = powers[1][bad];
      (component == 0 ? share.x : share.a).pop_back();
      EXPECT_THROW((void)ghash_share(powers[1], {}, text), Error) << bad << " " << component;
      (component == 0 ? share.x : share.a).resize(17);
      EXPECT_THROW((void)ghash_share(powers[1], {}, text), Error) << bad << " " << component;
    }
  }
  // A malformed power beyond the ones needed is not read.
  auto powers = share_powers(random_block(rng), 4);
  powers[0][3].x.clear();
  EXPECT_NO_THROW((void)ghash_share(powers[0], {}, text));
}

// Party i's share of GHASH over many dealings: each component uniform, and the joint
// distribution of (x_i, a_i) the same for two different hash keys. The statistics use 255
// degrees of freedom and the bound mean + 8 sd (test::chi_square_bound); by the Wilson-Hilferty
// approximation one check fails by chance with probability about 1e-11, and this test makes
// 21 checks, so a false failure is far below 1e-6.
TEST(GhashShare, SinglePartyShareIsUniformAndIndependentOfKey) {
  constexpr int kSamples = 20000;
  std::mt19937_64 rng(29);
  const Bytes aad = random_bytes(rng, 7), text = random_bytes(rng, 21);
  const std::size_t blocks = ghash_blocks(aad.size(), text.size());
  const GhashBlock keys[2] = {block_from_hex("80000000000000000000000000000000"), random_block(rng)};
  for (int party = 0; party < kParties; ++party) {
    std::vector<std::uint64_t> joint[2];
    for (int s = 0; s < 2; ++s) {
      std::vector<std::uint64_t> x_counts(256), a_counts(256);
      joint[s].assign(256, 0);
      for (int k = 0; k < kSamples; ++k) {
        const auto powers = share_powers(keys[s], blocks);
        const ByteShare share = ghash_share(powers[static_cast<std::size_t>(party)], aad, text);
        ++x_counts[share.x[5]];
        ++a_counts[share.a[15]];
        ++joint[s][static_cast<std::size_t>((share.x[0] & 0x0f) | ((share.a[0] & 0x0f) << 4))];
      }
      EXPECT_LT(test::chi_square_uniform(x_counts), test::chi_square_bound(255)) << party << " " << s;
      EXPECT_LT(test::chi_square_uniform(a_counts), test::chi_square_bound(255)) << party << " " << s;
      EXPECT_LT(test::chi_square_uniform(joint[s]), test::chi_square_bound(255)) << party << " " << s;
    }
    EXPECT_LT(test::chi_square_two_samples(joint[0], joint[1]), test::chi_square_bound(255)) << party;
  }
}

}  // namespace
}  // namespace mpc::rss3
