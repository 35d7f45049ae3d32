// Kerberos batches garbled twice ahead of time (protocol/gc3/prepared_garbling.hpp):
// the three servers prepare a garbling with no input, then a batch of one job evaluates it. Honest
// batches compute AES as the reference does; each garbling is evaluated once at most, whoever
// asks again; a server that lost it refuses with Regrouping; and one server that deviates, while
// preparing or while the batch runs, ends the batch with no output share anywhere and a
// VerificationError at the server that caught it.
//
// Deviations are real: a server runs the production code on altered inputs (another circuit,
// another key share), or the bytes it sends are altered on their way out.
#include <gtest/gtest.h>
#include <sodium.h>

#include <array>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "circuits/aes.hpp"
#include "circuits/aes_reference.hpp"
#include "circuits/program.hpp"
#include "common/error.hpp"
#include "common/log.hpp"
#include "deviating_channel.hpp"
#include "garbled_aes_batch.hpp"
#include "engines/three_party/garbled_krb_batch.hpp"
#include "protocol/gc3/prepared_garblings.hpp"
#include "protocol/rss3/output.hpp"
#include "protocol/rss3/shares.hpp"
#include "protocol/two_party/channel.hpp"
#include "support/party_prf_keys.hpp"

namespace mpc::security_test {
namespace {

using Bytes = std::vector<std::uint8_t>;
using three_party_engine::BatchResult;
using three_party_engine::BatchTask;
using three_party_engine::PreparedGarblings;
using wire::KrbEvaluation;

constexpr std::size_t kKeyBytes = kAesKeyBytes;
constexpr std::size_t kKeyRows = kAesKeyRows;
constexpr std::size_t kOutputs = 128;
constexpr std::size_t kLabel = 16;
constexpr std::size_t kStreamHeader = 24;
constexpr std::size_t kCommitted = 2 * kKeyRows + 2 * kOutputs;  // wires with commitments
constexpr std::uint64_t kEpoch = 0x5eed'0000'0000'0001ull;


class PreparedGarbling : public GarbledAesTest {
 protected:
  void SetUp() override {
    GarbledAesTest::SetUp();
    for (std::size_t p = 0; p < 3; ++p)
      stores_[p] = std::make_unique<PreparedGarblings>(std::size_t{64} << 20, std::chrono::seconds(600));
  }


  // Runs one batch at the three servers: PrepareTwice (no job) or PreparedTwice naming
  // `prepared`. Returns the batch's sequence in `sequence`.
  Outcome run(KrbEvaluation evaluation, const Deviation& deviation, std::uint32_t prepared = 0,
              std::uint32_t* sequence_out = nullptr) {
    wire::BatchHeader header;
    header.epoch = kEpoch;
    header.sequence = ++sequence_;
    header.krb_evaluation = evaluation;
    header.prepared = prepared;
    if (sequence_out != nullptr) *sequence_out = header.sequence;
    return run_garbled_aes_batch(header, *program_, key_, block_, deviation, settings::Security::Active,
                                 std::chrono::milliseconds(800), {stores_[0].get(), stores_[1].get(), stores_[2].get()});
  }

  // Prepares a garbling honestly; its sequence.
  std::uint32_t prepare() {
    std::uint32_t sequence = 0;
    const Outcome outcome = run(KrbEvaluation::PrepareTwice, {}, 0, &sequence);
    for (const auto& result : outcome.results) EXPECT_TRUE(result.succeeded) << result.error;
    return sequence;
  }

  void expect_honest_use() {
    const Outcome outcome = run(KrbEvaluation::PreparedTwice, {}, prepare());
    ASSERT_TRUE(outcome.opened.has_value()) << outcome.results[0].error << " | " << outcome.results[1].error << " | "
                                            << outcome.results[2].error;
    EXPECT_EQ(*outcome.opened, expected());
  }

  // A deviation while a prepared garbling is used: refused at `detector` naming `check`, no
  // output opened, and honest batches before and after still right.
  void expect_caught_in_use(const Deviation& deviation, int detector, const std::string& check) {
    expect_honest_use();
    const Outcome caught = run(KrbEvaluation::PreparedTwice, deviation, prepare());
    expect_refused(caught, deviation, detector, check);
    expect_honest_use();
  }

  // A deviation while preparing: refused at party 2 naming the digest, the deviating party named
  // by an honest one, nothing kept by party 2, the
  // leader (party 1) not told the garbling is ready; a batch naming it anyway opens nothing.
  void expect_caught_in_preparation(const Deviation& deviation) {
    std::uint32_t sequence = 0;
    const Outcome caught = run(KrbEvaluation::PrepareTwice, deviation, 0, &sequence);
    EXPECT_FALSE(caught.results[0].succeeded) << "the leader counted the garbling as ready";
    EXPECT_EQ(caught.results[1].failure, wire::Status::VerificationFailed) << caught.results[1].error;
    EXPECT_NE(caught.results[1].error.find("the garbling party 1 sent differs from party 3's"), std::string::npos)
        << caught.results[1].error;
    expect_deviator_named(caught, deviation.party);
    EXPECT_EQ(stores_[1]->size(), 0u);
    const Outcome used = run(KrbEvaluation::PreparedTwice, {}, sequence);
    EXPECT_FALSE(used.opened.has_value());
    EXPECT_EQ(used.results[1].failure, wire::Status::Regrouping) << used.results[1].error;
    expect_honest_use();
  }

  // Party 0's online message: labels of a_0, c_A, a_2, the public block, then party 3's relay.
  static std::size_t relay_offset() { return kLabel * (kKeyRows + kOutputs + kKeyRows + 128); }
  // Party 0's preparation stream: the commitments, then the garbled stream.
  static std::size_t prepared_tables_offset() { return 2 * 8 * kCommitted + kStreamHeader; }

  std::array<std::unique_ptr<PreparedGarblings>, 3> stores_;
};

TEST_F(PreparedGarbling, PreparedBatchesComputeAesAndLeaveNothingBehind) {
  for (int i = 0; i < 3; ++i) expect_honest_use();
  for (const auto& store : stores_) EXPECT_EQ(store->size(), 0u);
}

TEST_F(PreparedGarbling, PreparingKeepsAPartAtEveryServer) {
  const std::uint32_t sequence = prepare();
  for (const auto& store : stores_) EXPECT_EQ(store->size(), 1u);
  // The evaluator keeps the whole stream: 32 bytes per AND gate and its header.
  EXPECT_GE(stores_[1]->bytes(), program_->and_gates * 32);
  EXPECT_LT(stores_[0]->bytes(), stores_[1]->bytes() / 10);
  const Outcome outcome = run(KrbEvaluation::PreparedTwice, {}, sequence);
  ASSERT_TRUE(outcome.opened.has_value());
  EXPECT_EQ(*outcome.opened, expected());
}

TEST_F(PreparedGarbling, AGarblingIsEvaluatedOnceWhoeverAsksAgain) {
  const std::uint32_t sequence = prepare();
  const Outcome first = run(KrbEvaluation::PreparedTwice, {}, sequence);
  ASSERT_TRUE(first.opened.has_value());
  const Outcome again = run(KrbEvaluation::PreparedTwice, {}, sequence);
  EXPECT_FALSE(again.any_succeeded());
  EXPECT_FALSE(again.opened.has_value());
  for (const auto& result : again.results) {
    EXPECT_EQ(result.failure, wire::Status::Regrouping) << result.error;
    EXPECT_NE(result.error.find("holds no garbling prepared by batch"), std::string::npos) << result.error;
  }
}

TEST_F(PreparedGarbling, AServerThatLostItsGarblingsRefusesWithRegrouping) {
  const std::uint32_t sequence = prepare();
  stores_[2] = std::make_unique<PreparedGarblings>(std::size_t{64} << 20, std::chrono::seconds(600));  // restarted
  const Outcome outcome = run(KrbEvaluation::PreparedTwice, {}, sequence);
  EXPECT_FALSE(outcome.opened.has_value());
  EXPECT_EQ(outcome.results[2].failure, wire::Status::Regrouping) << outcome.results[2].error;
  expect_honest_use();
}

TEST_F(PreparedGarbling, AGarblingOfAnotherCircuitIsNotEvaluated) {
  const std::uint32_t sequence = prepare();
  // The same garbling named by a batch of another circuit (another data length).
  auto held = stores_[1]->take(kEpoch, sequence, std::chrono::steady_clock::now());
  ASSERT_TRUE(held.has_value());
  held->program[1] += 1;  // the engine names a program by circuit, data length and combine shape
  ASSERT_TRUE(stores_[1]->put(kEpoch, sequence, std::move(*held), std::chrono::steady_clock::now()));
  const Outcome outcome = run(KrbEvaluation::PreparedTwice, {}, sequence);
  EXPECT_FALSE(outcome.opened.has_value());
  EXPECT_FALSE(outcome.results[1].succeeded);
  EXPECT_NE(outcome.results[1].error.find("is of another circuit"), std::string::npos) << outcome.results[1].error;
}

TEST_F(PreparedGarbling, AServerWithoutRoomFailsThePreparation) {
  stores_[1] = std::make_unique<PreparedGarblings>(1024, std::chrono::seconds(600));
  const Outcome outcome = run(KrbEvaluation::PrepareTwice, {});
  EXPECT_FALSE(outcome.results[0].succeeded) << "the leader counted the garbling as ready";
  EXPECT_NE(outcome.results[1].error.find("no room"), std::string::npos) << outcome.results[1].error;
}

TEST_F(PreparedGarbling, APassiveServerPreparesNothing) {
  BatchTask task;
  task.header.epoch = kEpoch;
  task.header.sequence = 1;
  task.header.krb_evaluation = KrbEvaluation::PrepareTwice;
  task.program = std::shared_ptr<const circuits::Program>(std::shared_ptr<const circuits::Program>(), program_.get());
  task.key_rows = kKeyRows;
  task.public_bytes = 16;
  task.instances = 1;
  auto edge = two_party::make_memory_channel_pair(std::chrono::milliseconds(200));
  const Logger log("prepared_garbling_test", LogLevel::Error);
  const BatchResult result = three_party_engine::evaluate_garbled_batch(
      task, 1, settings::Security::Passive, test_support::party_prf_keys(1), *edge.first, *edge.second, log,
      stores_[1].get());
  EXPECT_FALSE(result.succeeded);
  EXPECT_EQ(stores_[1]->size(), 0u);
}

TEST_F(PreparedGarbling, FirstGarblerPreparingAnotherCircuitIsCaught) {
  Deviation deviation;
  deviation.party = 0;
  deviation.program = other_.get();
  expect_caught_in_preparation(deviation);
}

TEST_F(PreparedGarbling, SecondGarblerPreparingAnotherCircuitIsCaught) {
  Deviation deviation;
  deviation.party = 2;
  deviation.program = other_.get();
  expect_caught_in_preparation(deviation);
}

TEST_F(PreparedGarbling, OneAlteredPreparedTableRowIsCaught) {
  Deviation deviation;
  deviation.party = 0;
  deviation.flip_sent_at = {prepared_tables_offset() + 5000};
  expect_caught_in_preparation(deviation);
}

TEST_F(PreparedGarbling, AnAlteredCommitmentIsCaught) {
  Deviation deviation;
  deviation.party = 0;
  deviation.flip_sent_at = {3};
  expect_caught_in_preparation(deviation);
}

TEST_F(PreparedGarbling, FirstGarblerSendingTheOtherLabelOfItsShareIsCaught) {
  Deviation deviation;
  deviation.party = 0;
  deviation.flip_key_x = true;
  deviation.flip_key_a = true;
  expect_caught_in_use(deviation, 1, "input labels from party 1 fail their commitments");
}

TEST_F(PreparedGarbling, SecondGarblerSendingTheOtherLabelOfItsShareIsCaught) {
  Deviation deviation;
  deviation.party = 2;
  deviation.flip_key_x = true;
  expect_caught_in_use(deviation, 1, "input labels from party 3 fail their commitments");
}

TEST_F(PreparedGarbling, FirstGarblerAlteringALabelBothGarblersKnowIsCaught) {
  // A label of a_2, which both garblers know and no commitment covers: party 3's signature does.
  Deviation deviation;
  deviation.party = 0;
  deviation.flip_sent_at = {kLabel * (kKeyRows + kOutputs) + 7};
  expect_caught_in_use(deviation, 1, "are not signed by party 3");
}

TEST_F(PreparedGarbling, FirstGarblerAlteringThePublicBlocksLabelsIsCaught) {
  Deviation deviation;
  deviation.party = 0;
  deviation.flip_sent_at = {kLabel * (2 * kKeyRows + kOutputs) + 9};
  expect_caught_in_use(deviation, 1, "are not signed by party 3");
}

TEST_F(PreparedGarbling, FirstGarblerAlteringWhatItRelaysIsCaught) {
  Deviation deviation;
  deviation.party = 0;
  deviation.flip_sent_at = {relay_offset() + 3};
  expect_caught_in_use(deviation, 1, "are not signed by party 3");
}

TEST_F(PreparedGarbling, EvaluatorAlteringTheOutputLabelsIsCaught) {
  Deviation deviation;
  deviation.party = 1;
  deviation.flip_sent_at = {17};
  expect_caught_in_use(deviation, 2, "party 2's outcome is not signed by party 2");
}

TEST_F(PreparedGarbling, EvaluatorEvaluatingAnotherCircuitIsCaught) {
  Deviation deviation;
  deviation.party = 1;
  deviation.program = other_.get();
  expect_caught_in_use(deviation, 2, "are not labels of the garbling");
}

TEST_F(PreparedGarbling, SecondGarblerAlteringItsSignedLabelsIsCaughtByTheFirst) {
  Deviation deviation;
  deviation.party = 2;
  deviation.flip_sent_at = {kLabel * (kKeyRows + kOutputs) + 10};  // the signature, after signing
  expect_caught_in_use(deviation, 0, "party 3's labels are not signed by party 3");
}

TEST_F(PreparedGarbling, EvaluatorAlteringItsWordThatItKeptTheGarblingIsCaught) {
  Deviation deviation;
  deviation.party = 1;
  deviation.flip_sent_at = {1 + 7};  // the signature of its Kept outcome
  std::uint32_t sequence = 0;
  const Outcome caught = run(KrbEvaluation::PrepareTwice, deviation, 0, &sequence);
  EXPECT_FALSE(caught.results[0].succeeded) << "the leader counted the garbling as ready";
  EXPECT_NE(caught.results[2].error.find("party 2's outcome is not signed by party 2"), std::string::npos)
      << caught.results[2].error;
  expect_deviator_named(caught, 1);
  EXPECT_EQ(stores_[2]->size(), 0u);
}

}  // namespace
}  // namespace mpc::security_test
