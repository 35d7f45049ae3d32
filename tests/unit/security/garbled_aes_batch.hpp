// What the tests of garbled three-server batches share: an AES-128 circuit and another of the
// same shape, a random key's round keys cut into the three servers' replicated shares, the
// reference result, and one batch of one block run at the three servers in process, one of them
// deviating.
#pragma once

#include <gtest/gtest.h>
#include <sodium.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "circuits/aes.hpp"
#include "circuits/aes_reference.hpp"
#include "circuits/program.hpp"
#include "common/error.hpp"
#include "common/log.hpp"
#include "common/secret.hpp"
#include "deviating_channel.hpp"
#include "engines/three_party/garbled_krb_batch.hpp"
#include "protocol/gc3/prepared_garblings.hpp"
#include "protocol/rss3/output.hpp"
#include "protocol/rss3/shares.hpp"
#include "protocol/two_party/channel.hpp"
#include "support/party_prf_keys.hpp"

namespace mpc::security_test {

inline constexpr std::size_t kAesKeyBytes = 176;  // AES-128 round keys
inline constexpr std::size_t kAesKeyRows = 8 * kAesKeyBytes;

inline std::vector<std::uint8_t> random_bytes(std::size_t n) {
  std::vector<std::uint8_t> out(n);
  randombytes_buf(out.data(), n);
  return out;
}

inline circuits::Program aes128_program() {
  return circuits::compile(circuits::build_aes_circuit(circuits::AesKeySize::Aes128, circuits::AesDirection::Encrypt,
                                                       circuits::SboxVariant::And32));
}

// Another circuit of the same shape: every AND of the last AND layer takes its left input twice
// (x & x = x), so the output differs from AES wherever some x = 1, y = 0 there.
inline circuits::Program with_last_and_layer_altered(const circuits::Program& program) {
  circuits::Program other = program;
  for (auto it = other.layers.rbegin(); it != other.layers.rend(); ++it)
    if (!it->ands.empty()) {
      for (auto& gate : it->ands) gate.in1 = gate.in0;
      break;
    }
  return other;
}

// A random AES-128 key: its round keys, and each server's share of them (x || a).
struct SharedAesKey {
  std::vector<std::uint8_t> round_keys;
  std::array<SecretBytes, 3> shares;

  SharedAesKey() : round_keys(circuits::aes_expand_key(random_bytes(16))) {
    auto split = rss3::share_bytes(round_keys);
    for (std::size_t p = 0; p < 3; ++p) {
      shares[p] = SecretBytes(2 * kAesKeyBytes);
      std::copy(split[p].x.begin(), split[p].x.end(), shares[p].data());
      std::copy(split[p].a.begin(), split[p].a.end(), shares[p].data() + kAesKeyBytes);
    }
  }
  std::vector<std::uint8_t> encrypt(const std::vector<std::uint8_t>& block) const {
    const auto out = circuits::aes_encrypt_block(round_keys, std::span<const std::uint8_t, 16>(block.data(), 16));
    return {out.begin(), out.end()};
  }
};

// How one server deviates in a batch; the default is every server honest.
struct Deviation {
  int party = -1;                              // the deviating party (0-based), -1 for none
  const circuits::Program* program = nullptr;  // garbles, or prepares, this circuit instead
  bool flip_key_x = false;                     // flips bit 0 of its share's x component
  bool flip_key_a = false;                     // ... and of its a component
  bool flip_public = false;                    // flips bit 0 of its copy of the public block
  std::vector<std::size_t> flip_sent_at;       // flips a bit of these bytes of what it sends
  std::optional<std::size_t> stop_sending_at;  // sends nothing from this byte on
};

struct Outcome {
  std::array<three_party_engine::BatchResult, 3> results;
  std::optional<std::vector<std::uint8_t>> opened;  // when all three succeeded and the client's opening agreed
  bool any_succeeded() const { return results[0].succeeded || results[1].succeeded || results[2].succeeded; }
};

// One garbled batch of `header`'s form at the three servers, over memory channels that give up
// after `timeout`: one AES block `block` under `key` (no job when header.krb_evaluation is
// PrepareTwice), party `deviation.party` deviating. `stores`: each server's prepared garblings,
// for the forms that use them.
inline Outcome run_garbled_aes_batch(wire::BatchHeader header, const circuits::Program& program,
                                     const SharedAesKey& key, const std::vector<std::uint8_t>& block,
                                     const Deviation& deviation, settings::Security security,
                                     std::chrono::milliseconds timeout,
                                     const std::array<three_party_engine::PreparedGarblings*, 3>& stores = {}) {
  const bool with_job = header.krb_evaluation != wire::KrbEvaluation::PrepareTwice;
  std::array<three_party_engine::BatchTask, 3> tasks;
  for (std::size_t p = 0; p < 3; ++p) {
    const bool deviates = static_cast<int>(p) == deviation.party;
    three_party_engine::BatchTask& task = tasks[p];
    task.header = header;
    const circuits::Program* own = deviates && deviation.program != nullptr ? deviation.program : &program;
    task.program = std::shared_ptr<const circuits::Program>(std::shared_ptr<const circuits::Program>(), own);
    task.key_rows = kAesKeyRows;
    task.public_bytes = 16;
    task.instances = 1;
    if (!with_job) continue;
    task.header.slices.push_back(wire::BatchSlice{{}, {}, {}, 0, 1, 0, 0});
    three_party_engine::SliceInput input;
    input.blocks = 1;
    input.key_share = key.shares[p];
    if (deviates && deviation.flip_key_x) input.key_share[0] ^= 1;
    if (deviates && deviation.flip_key_a) input.key_share[kAesKeyBytes] ^= 1;
    input.public_records = block;
    if (deviates && deviation.flip_public) input.public_records[0] ^= 1;
    task.slices.push_back(std::move(input));
  }
  std::array<std::pair<std::unique_ptr<two_party::Channel>, std::unique_ptr<two_party::Channel>>, 3> edges;
  for (auto& edge : edges) edge = two_party::make_memory_channel_pair(timeout);
  std::array<std::unique_ptr<DeviatingChannel>, 3> outgoing;
  for (std::size_t p = 0; p < 3; ++p) {
    const bool deviates = static_cast<int>(p) == deviation.party;
    outgoing[p] = std::make_unique<DeviatingChannel>(*edges[p].first,
                                                     deviates ? deviation.flip_sent_at : std::vector<std::size_t>{},
                                                     deviates ? deviation.stop_sending_at : std::nullopt);
  }
  const Logger log("garbled_aes_batch", LogLevel::Error);
  Outcome outcome;
  auto party = [&](int p) {
    const auto i = static_cast<std::size_t>(p);
    outcome.results[i] = three_party_engine::evaluate_garbled_batch(
        tasks[i], p, security, test_support::party_prf_keys(p), *outgoing[i], *edges[(i + 2) % 3].second, log,
        stores[i]);
  };
  std::thread second(party, 1), third(party, 2);
  party(0);
  second.join();
  third.join();
  if (with_job && outcome.results[0].succeeded && outcome.results[1].succeeded && outcome.results[2].succeeded) {
    try {
      outcome.opened =
          rss3::open_output({outcome.results[0].masked, outcome.results[1].masked, outcome.results[2].masked});
    } catch (const mpc::Error&) {
      // the client's three reconstructions disagree: refused
    }
  }
  return outcome;
}

// The fixture of both kinds of test: the AES-128 circuit and its altered twin (built once), and
// a fresh key and block per test.
class GarbledAesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (sodium_init() < 0) GTEST_FAIL() << "libsodium initialisation failed";
    program_ = std::make_unique<circuits::Program>(aes128_program());
    other_ = std::make_unique<circuits::Program>(with_last_and_layer_altered(*program_));
  }
  static void TearDownTestSuite() {
    program_.reset();
    other_.reset();
  }
  void SetUp() override { block_ = random_bytes(16); }

  std::vector<std::uint8_t> expected() const { return key_.encrypt(block_); }

  static inline std::unique_ptr<circuits::Program> program_;
  static inline std::unique_ptr<circuits::Program> other_;
  SharedAesKey key_;
  std::vector<std::uint8_t> block_;
  std::uint32_t sequence_ = 0;
};

// Who the honest parties name after `deviator` deviated (protocol/gc3/garbling_blame.hpp): an
// honest party never names another honest one, and at least one names the deviator, so that a
// dispute containing it forms.
inline void expect_deviator_named(const Outcome& caught, int deviator) {
  bool named = false;
  for (int p = 0; p < 3; ++p) {
    if (p == deviator) continue;
    const auto claims = caught.results[static_cast<std::size_t>(p)].claims;
    for (int q = 0; q < 3; ++q)
      if (q != deviator) EXPECT_EQ(claims & (1u << q), 0u) << "honest party " << p << " names honest party " << q;
    named = named || (claims & (1u << deviator)) != 0;
  }
  EXPECT_TRUE(named) << "no honest party names party " << deviator << ": " << caught.results[0].error << " | "
                     << caught.results[1].error << " | " << caught.results[2].error;
}

// A deviation caught: no output opened, neither honest garbler (parties 1 and 3) with a share,
// and party `detector` refusing with VerificationFailed, naming `check`.
inline void expect_refused(const Outcome& caught, const Deviation& deviation, int detector, const std::string& check) {
  EXPECT_FALSE(caught.opened.has_value()) << "the client opened a result";
  for (int garbler : {0, 2}) {
    if (garbler != deviation.party) {
      EXPECT_FALSE(caught.results[static_cast<std::size_t>(garbler)].succeeded) << "party " << garbler;
    }
  }
  const three_party_engine::BatchResult& at = caught.results[static_cast<std::size_t>(detector)];
  EXPECT_EQ(at.failure, wire::Status::VerificationFailed) << at.error;
  EXPECT_NE(at.error.find(check), std::string::npos) << at.error;
  expect_deviator_named(caught, deviation.party);
}

}  // namespace mpc::security_test
