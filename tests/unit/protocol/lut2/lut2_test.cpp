// tests/unit/protocol/lut2/lut2_test.cpp: AES through masked lookup tables between two threads gives
// FIPS-197's answers and OpenSSL's, with entries from the dealer and from OT; the opened bytes
// are uniform whatever the secret; the pool refuses when dry, recovers when refilled, and
// never hands out an entry twice; mismatched entries show; a silent peer is an error.
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <cmath>
#include <random>
#include <thread>

#include "circuits/aes_reference.hpp"
#include "common/error.hpp"
#include "protocol/lut2/dealer.hpp"
#include "protocol/lut2/entry_pool.hpp"
#include "protocol/lut2/lut_aes.hpp"
#include "protocol/lut2/ot_preprocessing.hpp"
#include "support/tap_channel.hpp"

namespace {

using namespace mpc;
using namespace mpc::lut2;
using namespace std::chrono_literals;
using Bytes = std::vector<std::uint8_t>;

Bytes hex(const std::string& text) {
  Bytes out;
  for (std::size_t i = 0; i < text.size(); i += 2) out.push_back(static_cast<std::uint8_t>(std::stoi(text.substr(i, 2), nullptr, 16)));
  return out;
}

struct Shares {
  Bytes first, second;
};

Shares split(const Bytes& secret, std::mt19937_64& rng) {
  Shares s{Bytes(secret.size()), Bytes(secret.size())};
  for (std::size_t i = 0; i < secret.size(); ++i) {
    s.first[i] = static_cast<std::uint8_t>(rng());
    s.second[i] = static_cast<std::uint8_t>(secret[i] ^ s.first[i]);
  }
  return s;
}

struct Preprocessed {
  std::vector<Entry> first, second;
};

Preprocessed dealt(std::size_t count) {
  DealtBatch batch = deal(count);
  return {expand_seed(batch.first_seed, count), batch.second};
}

Preprocessed by_ot(std::size_t count) {
  auto [a, b] = two_party::make_memory_channel_pair(10000ms);
  ot::OtExtensionSender sender(*a);
  ot::OtExtensionReceiver receiver(*b);
  Preprocessed out;
  std::thread s([&] { out.first = ot_preprocess_send(sender, *a, 1000, count); });
  out.second = ot_preprocess_receive(receiver, *b, 1000, count);
  s.join();
  return out;
}

// Runs both parties; returns the XOR of their output shares.
Bytes run_aes(const Bytes& key, bool decrypt, const Bytes& input, const Preprocessed& entries,
              std::vector<Bytes>* opened = nullptr) {
  std::mt19937_64 rng(key.size() * 7 + input.size());
  const Bytes round_keys = circuits::aes_expand_key(key);
  const Shares keys = split(round_keys, rng);
  auto [a, b] = two_party::make_memory_channel_pair(5000ms);
  SecretBytes first;
  std::thread party0([&, channel = a.get()] { first = lut_aes(*channel, 0, keys.first, decrypt, input, entries.first); });
  SecretBytes second = lut_aes(*b, 1, keys.second, decrypt, input, entries.second);
  party0.join();
  Bytes out(input.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = first[i] ^ second[i];
  if (opened) opened->push_back(out);
  return out;
}

Bytes openssl_ecb(const Bytes& key, const Bytes& data, bool decrypt) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  const EVP_CIPHER* cipher = key.size() == 16 ? EVP_aes_128_ecb() : EVP_aes_256_ecb();
  EXPECT_EQ(EVP_CipherInit_ex(ctx, cipher, nullptr, key.data(), nullptr, decrypt ? 0 : 1), 1);
  EVP_CIPHER_CTX_set_padding(ctx, 0);
  Bytes out(data.size());
  int written = 0;
  EXPECT_EQ(EVP_CipherUpdate(ctx, out.data(), &written, data.data(), static_cast<int>(data.size())), 1);
  EVP_CIPHER_CTX_free(ctx);
  return out;
}

TEST(LookupTables, Fips197KnownAnswersWithBothPreprocessings) {
  const Bytes plain = hex("00112233445566778899aabbccddeeff");
  const Bytes key128 = hex("000102030405060708090a0b0c0d0e0f");
  const Bytes key256 = hex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
  const Bytes c128 = hex("69c4e0d86a7b0430d8cdb78070b4c55a");
  const Bytes c256 = hex("8ea2b7ca516745bfeafc49904b496089");
  for (bool use_ot : {false, true}) {
    SCOPED_TRACE(use_ot ? "ot" : "dealer");
    auto make = [&](std::size_t n) { return use_ot ? by_ot(n) : dealt(n); };
    EXPECT_EQ(run_aes(key128, false, plain, make(160)), c128);
    EXPECT_EQ(run_aes(key128, true, c128, make(160)), plain);
    EXPECT_EQ(run_aes(key256, false, plain, make(224)), c256);
    EXPECT_EQ(run_aes(key256, true, c256, make(224)), plain);
  }
}

TEST(LookupTables, RandomBlocksMatchOpenSsl) {
  std::mt19937_64 rng(5);
  for (std::size_t key_bytes : {16u, 32u}) {
    for (std::size_t blocks : {1u, 3u, 64u}) {
      Bytes key(key_bytes), data(blocks * 16);
      for (auto& b : key) b = static_cast<std::uint8_t>(rng());
      for (auto& b : data) b = static_cast<std::uint8_t>(rng());
      const std::size_t n = entries_for(key_bytes == 16 ? 176 : 240, blocks);
      EXPECT_EQ(run_aes(key, false, data, dealt(n)), openssl_ecb(key, data, false));
      EXPECT_EQ(run_aes(key, true, data, dealt(n)), openssl_ecb(key, data, true));
    }
  }
  Bytes key(16, 7), data(16 * 5, 9);
  EXPECT_EQ(run_aes(key, false, data, by_ot(entries_for(176, 5))), openssl_ecb(key, data, false));
}

// What one party sends is x ^ r: uniform bytes even when every secret x is the same.
TEST(LookupTables, OpenedBytesAreUniform) {
  const std::size_t blocks = 256;
  const Bytes key(16, 0), data(blocks * 16, 0);  // every S-box input of round 1 is the same
  const Preprocessed entries = dealt(entries_for(176, blocks));
  std::mt19937_64 rng(6);
  const Shares keys = split(circuits::aes_expand_key(key), rng);
  auto [a, b] = two_party::make_memory_channel_pair(5000ms);
  test_support::TapChannel capture(*b);  // what party 1 sends
  std::thread party0([&, channel = a.get()] { (void)lut_aes(*channel, 0, keys.first, false, data, entries.first); });
  (void)lut_aes(capture, 1, keys.second, false, data, entries.second);
  party0.join();
  ASSERT_EQ(capture.sent.size(), entries_for(176, blocks));  // one byte per S-box
  std::array<double, 256> counts{};
  for (auto byte : capture.sent) counts[byte] += 1;
  const double expected = static_cast<double>(capture.sent.size()) / 256;
  double chi2 = 0;
  for (double c : counts) chi2 += (c - expected) * (c - expected) / expected;
  // 255 degrees of freedom: mean 255, sd ~22.6; 400 is beyond 6 sd.
  EXPECT_LT(chi2, 400.0);
}

TEST(LookupTables, MismatchedEntriesGiveAWrongResult) {
  const Bytes key(16, 1), data(32, 2);
  Preprocessed entries = dealt(entries_for(176, 2));
  std::swap(entries.second[0], entries.second[1]);
  EXPECT_NE(run_aes(key, false, data, entries), openssl_ecb(key, data, false));
}

TEST(LookupTables, PoolRefusesWhenDryAndNeverGivesTwice) {
  EntryPool pool;
  EXPECT_THROW((void)pool.take(0, 0, 10, 20ms), Error);
  pool.store(0, 0, dealt(100).first);
  pool.store(0, 100, dealt(50).first);
  EXPECT_EQ(pool.available(), 150u);
  auto first = pool.take(0, 0, 120, 0ms);  // spans both batches
  EXPECT_EQ(first.size(), 120u);
  EXPECT_EQ(pool.available(), 30u);
  EXPECT_THROW((void)pool.take(0, 110, 5, 0ms), Error);  // batch 0 is gone, and 110..115 were taken
  try {
    (void)pool.take(0, 120, 40, 20ms);
    ADD_FAILURE() << "a range past the pool was handed out";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("pool empty"), std::string::npos);
  }
  // A refill arriving while a job waits is used.
  std::thread refill([&] {
    std::this_thread::sleep_for(30ms);
    pool.store(0, 150, dealt(10).first);
  });
  EXPECT_EQ(pool.take(0, 120, 40, 2000ms).size(), 40u);
  refill.join();
  EXPECT_EQ(pool.available(), 0u);
  EXPECT_EQ(pool.consumed(), 160u);
  EXPECT_EQ(pool.produced(), 160u);
}

TEST(LookupTables, PoolEpochsNeverMix) {
  EntryPool pool;
  pool.store(0, 0, dealt(100).first);
  pool.reset(9);  // the peer lost its pool: everything goes
  EXPECT_EQ(pool.available(), 0u);
  EXPECT_THROW((void)pool.take(0, 0, 10, 0ms), PoolEmpty);
  pool.store(0, 0, dealt(100).first);  // a batch made before the reset is dropped
  EXPECT_EQ(pool.available(), 0u);
  pool.store(9, 0, dealt(100).first);
  EXPECT_EQ(pool.take(9, 0, 100, 0ms).size(), 100u);
  // Abandoned ranges (failed jobs) are dropped when their entries arrive.
  pool.abandon(9, 100, 50);
  pool.store(9, 100, dealt(100).first);
  EXPECT_EQ(pool.available(), 50u);
  EXPECT_THROW((void)pool.take(9, 120, 10, 0ms), Error);
  EXPECT_EQ(pool.take(9, 150, 50, 0ms).size(), 50u);
  // A job of an epoch the pool has left gives up nothing of the new one: a job waiting when
  // the peer restarted must not spoil the entries numbered afresh.
  pool.reset(10);
  pool.abandon(9, 0, 50);
  pool.store(10, 0, dealt(100).first);
  EXPECT_EQ(pool.available(), 100u);
  EXPECT_EQ(pool.take(10, 0, 50, 0ms).size(), 50u);
}

TEST(LookupTables, AnEpochWhoseProductionEndedGivesWhatItHasAndWaitsForNothing) {
  EntryPool pool;
  pool.reset(4);
  pool.store(4, 0, dealt(100).first);
  // A job waiting for entries a batch still makes is woken when production ends: they never come.
  std::thread ending([&] {
    std::this_thread::sleep_for(30ms);
    pool.end_production();
  });
  const auto started = std::chrono::steady_clock::now();
  EXPECT_THROW((void)pool.take(4, 100, 10, 5000ms), PoolEmpty);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 2000ms);
  ending.join();
  EXPECT_THROW((void)pool.take(4, 90, 20, 5000ms), PoolEmpty);  // half made: nothing given
  EXPECT_EQ(pool.take(4, 0, 100, 5000ms).size(), 100u);
}

TEST(LookupTables, SilentPeerIsAPeerError) {
  auto [a, b] = two_party::make_memory_channel_pair(200ms);
  const Bytes keys(176, 0), data(16, 0);
  const Preprocessed entries = dealt(160);
  EXPECT_THROW((void)lut_aes(*b, 1, keys, false, data, entries.second), PeerError);
}

TEST(LookupTables, BadArgumentsAreRefused) {
  auto [a, b] = two_party::make_memory_channel_pair(200ms);
  const Preprocessed entries = dealt(160);
  EXPECT_THROW((void)lut_aes(*b, 1, Bytes(100), false, Bytes(16), entries.second), Error);
  EXPECT_THROW((void)lut_aes(*b, 1, Bytes(176), false, Bytes(15), entries.second), Error);
  EXPECT_THROW((void)lut_aes(*b, 1, Bytes(176), false, Bytes(32), entries.second), Error);
}

}  // namespace
