// tests/unit/protocol/lut2/preprocessing_test.cpp: the entries both preprocessings make are sharings of
// (r, e_r) for every entry, with r uniform; server 1's seed expands from any position to the
// same entries; the OT construction's swap is XOR of the index with 2^i.
#include <gtest/gtest.h>

#include <array>
#include <thread>

#include "common/error.hpp"
#include "circuits/aes_reference.hpp"
#include "protocol/lut2/dealer.hpp"
#include "protocol/lut2/lut_aes.hpp"
#include "protocol/lut2/ot_preprocessing.hpp"

namespace {

using namespace mpc;
using namespace mpc::lut2;
using namespace std::chrono_literals;

// Every entry pair shares a mask r and the one-hot vector of that r; returns the counts of r.
std::array<int, 256> check_sharings(const std::vector<Entry>& first, const std::vector<Entry>& second) {
  std::array<int, 256> counts{};
  EXPECT_EQ(first.size(), second.size());
  for (std::size_t k = 0; k < std::min(first.size(), second.size()); ++k) {
    const auto r = static_cast<std::uint8_t>(first[k].mask ^ second[k].mask);
    std::array<std::uint64_t, 4> joined{};
    for (int w = 0; w < 4; ++w) joined[w] = first[k].one_hot[w] ^ second[k].one_hot[w];
    EXPECT_EQ(joined, one_hot(r)) << "entry " << k;
    if (joined != one_hot(r)) break;
    ++counts[r];
  }
  return counts;
}

double chi_squared(const std::array<int, 256>& counts, double total) {
  double chi2 = 0;
  for (int c : counts) chi2 += (c - total / 256) * (c - total / 256) / (total / 256);
  return chi2;
}

TEST(LookupPreprocessing, OneHotIsTheMasksBit) {
  for (int r = 0; r < 256; ++r) {
    const auto e = one_hot(static_cast<std::uint8_t>(r));
    for (int j = 0; j < 256; ++j) ASSERT_EQ((e[j / 64] >> (j % 64)) & 1, j == r ? 1u : 0u) << r << " " << j;
  }
}

TEST(LookupPreprocessing, SwapDimensionXorsTheIndex) {
  for (unsigned i = 0; i < 8; ++i)
    for (int r = 0; r < 256; ++r)
      ASSERT_EQ(swap_dimension(one_hot(static_cast<std::uint8_t>(r)), i), one_hot(static_cast<std::uint8_t>(r ^ (1 << i))))
          << "dimension " << i << " index " << r;
}

TEST(LookupPreprocessing, DealerEntriesAreSharingsOfUniformMasks) {
  const std::size_t count = 256 * 64;
  DealtBatch batch = deal(count);
  const auto counts = check_sharings(expand_seed(batch.first_seed, count), batch.second);
  // 255 degrees of freedom: mean 255, sd ~22.6.
  EXPECT_LT(chi_squared(counts, count), 400.0);
}

TEST(LookupPreprocessing, SeedExpandsFromAnyPosition) {
  Seed seed{};
  for (std::size_t i = 0; i < seed.size(); ++i) seed[i] = static_cast<std::uint8_t>(i * 13 + 1);
  const std::vector<Entry> whole = expand_seed(seed, 300);
  for (std::uint64_t first : {0u, 1u, 2u, 63u, 64u, 65u, 127u, 200u}) {
    const std::vector<Entry> part = expand_seed(seed, first, 300 - first);
    ASSERT_EQ(part.size(), 300 - first);
    for (std::size_t k = 0; k < part.size(); ++k) {
      ASSERT_EQ(part[k].one_hot, whole[first + k].one_hot) << "from " << first << " entry " << k;
      ASSERT_EQ(part[k].mask, whole[first + k].mask);
    }
  }
  // Distinct seeds give distinct entries.
  Seed other = seed;
  other[0] ^= 1;
  EXPECT_NE(expand_seed(other, 1)[0].one_hot, whole[0].one_hot);
  // The stream is finite: a range past its end is refused, never wrapped.
  EXPECT_THROW((void)expand_seed(seed, (64ull << 32) / 33, 1), Error);
  EXPECT_NO_THROW((void)expand_seed(seed, (64ull << 32) / 33 - 1, 1));
}

// Server 1 keeps only the seed and expands the range a job takes; server 2 takes the same range
// of its explicit entries: AES comes out right (FIPS-197 C.1).
TEST(LookupPreprocessing, SeedExpandedOnDemandServesAJob) {
  const std::vector<std::uint8_t> key = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
                                         0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f};
  std::vector<std::uint8_t> plain(16);
  for (std::size_t i = 0; i < 16; ++i) plain[i] = static_cast<std::uint8_t>(0x11 * i);
  const std::vector<std::uint8_t> round_keys = circuits::aes_expand_key(key);
  std::vector<std::uint8_t> first_keys(round_keys.size(), 0x3c), second_keys(round_keys.size());
  for (std::size_t i = 0; i < round_keys.size(); ++i) second_keys[i] = round_keys[i] ^ first_keys[i];
  DealtBatch batch = deal(3 * 160);
  const std::uint64_t start = 2 * 160 - 1;  // an odd position, not on a stream block boundary
  const std::vector<Entry> first = expand_seed(batch.first_seed, start, 160);
  const std::vector<Entry> second(batch.second.begin() + start, batch.second.begin() + start + 160);
  auto [a, b] = two_party::make_memory_channel_pair(5000ms);
  SecretBytes share0;
  std::thread party0([&, channel = a.get()] { share0 = lut_aes(*channel, 0, first_keys, false, plain, first); });
  const SecretBytes share1 = lut_aes(*b, 1, second_keys, false, plain, second);
  party0.join();
  std::vector<std::uint8_t> cipher(16);
  for (std::size_t i = 0; i < 16; ++i) cipher[i] = share0[i] ^ share1[i];
  const std::vector<std::uint8_t> want = {0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30,
                                          0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4, 0xc5, 0x5a};
  EXPECT_EQ(cipher, want);
}

TEST(LookupPreprocessing, OtEntriesAreSharingsOfUniformMasks) {
  auto [a, b] = two_party::make_memory_channel_pair(10000ms);
  ot::OtExtensionSender sender(*a);
  ot::OtExtensionReceiver receiver(*b);
  const std::size_t count = 256 * 40 + 7;  // not a multiple of the chunk
  std::vector<Entry> first, second;
  std::thread s([&] { first = ot_preprocess_send(sender, *a, 0, count); });
  second = ot_preprocess_receive(receiver, *b, 0, count);
  s.join();
  const auto counts = check_sharings(first, second);
  EXPECT_LT(chi_squared(counts, count), 400.0);
  // A second batch on the same OT objects, as a server's session makes them.
  std::thread s2([&] { first = ot_preprocess_send(sender, *a, count, 100); });
  second = ot_preprocess_receive(receiver, *b, count, 100);
  s2.join();
  (void)check_sharings(first, second);
  // Server 1's one-hot shares look random: about half their bits are set.
  std::size_t ones = 0;
  for (const Entry& e : first)
    for (auto w : e.one_hot) ones += static_cast<std::size_t>(__builtin_popcountll(w));
  EXPECT_NEAR(static_cast<double>(ones) / (first.size() * 256), 0.5, 0.02);
}

TEST(LookupPreprocessing, OtPreprocessingWithASilentPeerIsAPeerError) {
  auto [a, b] = two_party::make_memory_channel_pair(200ms);
  ot::OtExtensionReceiver receiver(*b);
  EXPECT_THROW((void)ot_preprocess_receive(receiver, *b, 0, 10), PeerError);
}

}  // namespace
