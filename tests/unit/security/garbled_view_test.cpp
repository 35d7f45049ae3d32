// What one server receives while the three run a batch as one garbled circuit
// (server/garbled_krb_batch.hpp; the honest-majority garbling of Mohassel, Rosulek and Zhang,
// CCS 2015, eprint 2015/931, with half-gates): party 1 gets the active labels of x_0 and of
// the public input, a_1's labels under a pad, the garbled tables and party 0's resharing
// message; party 0 gets a_1's padded labels and party 2's resharing message; party 2 gets
// party 1's resharing message. Each must look uniform and must not depend on the key.
//
// As a server runs: the stored shares and the PRF keys are fixed for the whole test, and
// each run is the next batch of one epoch (its sequence number grows), so what changes from
// run to run is what a server's batches change: the batch's delta, labels and pads, and the
// fresh labels party 0 draws. For each observed party the two keys are shared so that the
// party's own share (x_i, a_i) is the same under both: its view may then differ only through
// the key. The garbling number in the tables' header is public (the batch's) and left out.
//
// Control: the XOR of the three resharing messages is the cleartext result, the same in every
// run; the statistics must reject it and tell the two keys apart.
#include <gtest/gtest.h>
#include <sodium.h>

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "circuits/aes.hpp"
#include "circuits/aes_reference.hpp"
#include "circuits/program.hpp"
#include "common/log.hpp"
#include "protocol/rss3/output.hpp"
#include "protocol/two_party/channel.hpp"
#include "engines/three_party/garbled_krb_batch.hpp"
#include "statistics.hpp"
#include "support/tap_channel.hpp"
#include "support/party_prf_keys.hpp"

namespace mpc::security_test {
namespace {

using Bytes = std::vector<std::uint8_t>;
using test_support::TapChannel;

constexpr std::size_t kRuns = 150;  // per key and observed party
constexpr std::size_t kKeyBytes = 176;
constexpr std::size_t kKeyRows = 8 * kKeyBytes;
constexpr std::size_t kLabelBytes = 16;
constexpr std::size_t kHeaderNumberBytes = 8;

Bytes fixed_bytes(std::uint32_t seed, std::size_t bytes) {
  std::mt19937 generator(seed);
  Bytes out(bytes);
  for (auto& byte : out) byte = static_cast<std::uint8_t>(generator());
  return out;
}


// Replicated shares x_i || a_i (a_i = x_{i-1} ^ v, x_0 ^ x_1 ^ x_2 = 0) of `value` in which
// party `fixed` holds exactly `mine` (x || a, 2 * value.size() bytes).
std::array<SecretBytes, 3> shares_around(const Bytes& value, int fixed, const Bytes& mine) {
  const std::size_t n = value.size();
  const auto p = static_cast<std::size_t>(fixed);
  const std::size_t before = (p + 2) % 3, after = (p + 1) % 3;
  std::array<Bytes, 3> x, a;
  x[p].assign(mine.begin(), mine.begin() + static_cast<std::ptrdiff_t>(n));
  a[p].assign(mine.begin() + static_cast<std::ptrdiff_t>(n), mine.end());
  x[before].resize(n);
  x[after].resize(n);
  a[before].resize(n);
  a[after].resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[before][i] = a[p][i] ^ value[i];          // a_p = x_{p-1} ^ v
    x[after][i] = x[p][i] ^ x[before][i];       // the three x sum to zero
    a[after][i] = x[p][i] ^ value[i];           // a_{p+1} = x_p ^ v
    a[before][i] = x[after][i] ^ value[i];      // a_{p-1} = x_{p-2} ^ v = x_{p+1} ^ v
  }
  std::array<SecretBytes, 3> out;
  for (std::size_t q = 0; q < 3; ++q) {
    out[q] = SecretBytes(2 * n);
    std::copy(x[q].begin(), x[q].end(), out[q].data());
    std::copy(a[q].begin(), a[q].end(), out[q].data() + n);
  }
  return out;
}

struct RunViews {
  std::array<Bytes, 3> received;   // per party, everything it received, in order
  Bytes opened;                    // the result the three parties' outputs open to
};

RunViews run_batch(const circuits::Program& program, const std::array<SecretBytes, 3>& shares, const Bytes& block,
                   std::uint32_t sequence) {
  std::array<three_party_engine::BatchTask, 3> tasks;
  for (std::size_t p = 0; p < 3; ++p) {
    three_party_engine::BatchTask& task = tasks[p];
    task.header.epoch = 0x5eed'0000'0001ull;
    task.header.sequence = sequence;
    task.header.krb_evaluation = wire::KrbEvaluation::Garbled;
    task.header.slices.push_back(wire::BatchSlice{{}, {}, 0, 1, 0, 0});
    task.program = std::shared_ptr<const circuits::Program>(std::shared_ptr<const circuits::Program>(), &program);
    task.key_rows = kKeyRows;
    task.public_bytes = 16;
    task.instances = 1;
    three_party_engine::SliceInput input;
    input.blocks = 1;
    input.key_share = shares[p];
    input.public_records = block;
    task.slices.push_back(std::move(input));
  }
  std::array<std::pair<std::unique_ptr<two_party::Channel>, std::unique_ptr<two_party::Channel>>, 3> edges;
  for (auto& edge : edges) edge = two_party::make_memory_channel_pair(std::chrono::seconds(30));
  const Logger log("garbled_view_test", LogLevel::Error);
  std::array<three_party_engine::BatchResult, 3> results;
  std::array<std::unique_ptr<TapChannel>, 3> incoming;
  for (std::size_t p = 0; p < 3; ++p) incoming[p] = std::make_unique<TapChannel>(*edges[(p + 2) % 3].second);
  auto party = [&](int p) {
    const auto i = static_cast<std::size_t>(p);
    results[i] = three_party_engine::evaluate_garbled_batch(tasks[i], p, settings::Security::Passive, test_support::party_prf_keys(p), *edges[i].first, *incoming[i], log);
  };
  std::thread second(party, 1), third(party, 2);
  party(0);
  second.join();
  third.join();
  RunViews views;
  for (std::size_t p = 0; p < 3; ++p) {
    if (!results[p].succeeded) throw std::runtime_error("party " + std::to_string(p) + ": " + results[p].error);
    views.received[p] = std::move(incoming[p]->received);
  }
  views.opened = rss3::open_output({results[0].masked, results[1].masked, results[2].masked});
  return views;
}

// Party 1's stream: active x_0 labels, public labels, padded a_1 labels, then the tables'
// header, whose first 8 bytes are the public garbling number.
constexpr std::size_t kNumberOffset = (2 * kKeyRows + 128) * kLabelBytes;

// What one party receives, with public bytes removed.
Bytes secret_view(int party, const Bytes& received) {
  if (party != 1) return received;
  Bytes out(received.begin(), received.begin() + kNumberOffset);
  out.insert(out.end(), received.begin() + kNumberOffset + kHeaderNumberBytes, received.end());
  return out;
}

struct PartyView {
  explicit PartyView(std::size_t bits) : per_bit(bits) {}
  BitCounter per_bit;
  ByteHistogram bytes;
};

struct Collected {
  std::vector<PartyView> views;      // one per key
  std::vector<BitCounter> cleartext; // control, one per key
};

class GarbledViewTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (sodium_init() < 0) {
      setup_error_ = new std::string("libsodium initialisation failed");
      return;
    }
    program_ = new circuits::Program(circuits::compile(circuits::build_aes_circuit(
        circuits::AesKeySize::Aes128, circuits::AesDirection::Encrypt, circuits::SboxVariant::And32)));
    keys_[0] = new Bytes(circuits::aes_expand_key(Bytes(16, 0)));
    keys_[1] = new Bytes(circuits::aes_expand_key(fixed_bytes(7, 16)));
    block_ = new Bytes(fixed_bytes(11, 16));
    try {
      for (int party = 0; party < 3; ++party) collected_[party] = new Collected(collect(party));
    } catch (const std::exception& error) {
      setup_error_ = new std::string(error.what());
    }
  }
  void SetUp() override {
    if (setup_error_ != nullptr) GTEST_FAIL() << "collecting the garbled views failed: " << *setup_error_;
  }
  static void TearDownTestSuite() {
    for (auto*& c : collected_) {
      delete c;
      c = nullptr;
    }
    for (auto*& k : keys_) {
      delete k;
      k = nullptr;
    }
    delete block_;
    block_ = nullptr;
    delete program_;
    program_ = nullptr;
    delete setup_error_;
    setup_error_ = nullptr;
  }

  // Runs kRuns batches per key with `party`'s share the same under both keys.
  static Collected collect(int party) {
    const Bytes mine = fixed_bytes(100 + static_cast<std::uint32_t>(party), 2 * kKeyBytes);
    Collected out;
    for (std::size_t k = 0; k < keys_.size(); ++k) {
      const auto shares = shares_around(*keys_[k], party, mine);
      if (!std::equal(shares[static_cast<std::size_t>(party)].span().begin(),
                      shares[static_cast<std::size_t>(party)].span().end(), mine.begin()))
        throw std::runtime_error("the observed party's share differs between the keys");
      std::optional<PartyView> view;
      BitCounter cleartext(128);
      for (std::size_t run = 0; run < kRuns; ++run) {
        const RunViews views = run_batch(*program_, shares, *block_, static_cast<std::uint32_t>(run + 1));
        const Bytes seen = secret_view(party, views.received[static_cast<std::size_t>(party)]);
        if (!view) view.emplace(seen.size() * 8);
        if (seen.size() * 8 != view->per_bit.positions())
          throw std::runtime_error("the view's length changed between runs");
        view->per_bit.add(seen);
        view->bytes.add(seen);
        // Control: each party's last 16 received bytes are its predecessor's resharing message.
        Bytes combined(16, 0);
        for (const Bytes& received : views.received)
          for (std::size_t i = 0; i < 16; ++i) combined[i] ^= received[received.size() - 16 + i];
        cleartext.add(combined);
        if (run == 0) {
          const auto expected =
              circuits::aes_encrypt_block(*keys_[k], std::span<const std::uint8_t, 16>(block_->data(), 16));
          if (!std::equal(expected.begin(), expected.end(), views.opened.begin()) || combined != views.opened)
            throw std::runtime_error("the garbled batch does not compute AES under the key");
        }
      }
      out.views.push_back(std::move(*view));
      out.cleartext.push_back(std::move(cleartext));
    }
    return out;
  }

  static circuits::Program* program_;
  static std::array<Bytes*, 2> keys_;
  static Bytes* block_;
  static std::array<Collected*, 3> collected_;
  static std::string* setup_error_;
};

circuits::Program* GarbledViewTest::program_ = nullptr;
std::array<Bytes*, 2> GarbledViewTest::keys_ = {nullptr, nullptr};
Bytes* GarbledViewTest::block_ = nullptr;
std::array<Collected*, 3> GarbledViewTest::collected_ = {nullptr, nullptr, nullptr};
std::string* GarbledViewTest::setup_error_ = nullptr;

TEST_F(GarbledViewTest, ViewsHaveTheExpectedParts) {
  // Party 1: three label rows, the tables (32 bytes per AND) and their header, one message.
  EXPECT_EQ(collected_[1]->views[0].per_bit.positions(),
            8 * ((2 * kKeyRows + 128) * kLabelBytes + 16 + 32 * program_->and_gates + 16));
  EXPECT_EQ(collected_[0]->views[0].per_bit.positions(), 8 * (kKeyRows * kLabelBytes + 16));
  EXPECT_EQ(collected_[2]->views[0].per_bit.positions(), 8u * 16);
}

TEST_F(GarbledViewTest, EachPartysViewLooksUniform) {
  for (int party = 0; party < 3; ++party)
    for (const PartyView& view : collected_[party]->views) {
      for (const Verdict& verdict : {monobit(view.per_bit), per_position_chi_square(view.per_bit),
                                     worst_position(view.per_bit), uniform_bytes(view.bytes)})
        EXPECT_GT(verdict.p, kRejectP) << "party " << party << ": " << verdict.detail;
    }
}

TEST_F(GarbledViewTest, EachPartysViewDoesNotDependOnTheKey) {
  for (int party = 0; party < 3; ++party) {
    const auto& views = collected_[party]->views;
    const Verdict positions = two_sample_positions(views[0].per_bit, views[1].per_bit);
    EXPECT_GT(positions.p, kRejectP) << "party " << party << ": " << positions.detail;
    const Verdict bytes = same_byte_distribution(views[0].bytes, views[1].bytes);
    EXPECT_GT(bytes.p, kRejectP) << "party " << party << ": " << bytes.detail;
  }
}

// Control: the three resharing messages together are the result; the same statistics reject
// them and tell the keys apart.
TEST_F(GarbledViewTest, CleartextResultIsDetected) {
  for (int party = 0; party < 3; ++party) {
    const auto& cleartext = collected_[party]->cleartext;
    EXPECT_LT(per_position_chi_square(cleartext[0]).p, kRejectP);
    EXPECT_LT(two_sample_positions(cleartext[0], cleartext[1]).p, kRejectP);
  }
}

}  // namespace
}  // namespace mpc::security_test
