// One server that deviates while the three run a Kerberos batch as a garbled circuit: with
// security = "active" the batch is garbled by servers 1 and 3 alike and server 2 checks both
// before anything leaves (protocol/gc3/dual_garbling.hpp), so every deviation below
// ends the batch with no output share at any server and a VerificationError at the server that
// caught it; honest batches before and after still compute AES as OpenSSL does. The same
// deviations against the passive form (garbled once) change the opened result silently: that is
// what the checks are for, and why these tests fail without them.
//
// Deviations are real: a server runs the production code on altered inputs (another circuit,
// another key share or public record), or the bytes it sends are altered on their way out (a
// table row, a relayed message, the output labels), or it stops sending.
#include <gtest/gtest.h>
#include <sodium.h>

#include <array>
#include <chrono>
#include <functional>
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
#include "engines/three_party/garbled_krb_batch.hpp"
#include "protocol/rss3/output.hpp"
#include "protocol/rss3/shares.hpp"
#include "protocol/two_party/channel.hpp"
#include "deviating_channel.hpp"
#include "garbled_aes_batch.hpp"
#include "support/party_prf_keys.hpp"

namespace mpc::security_test {
namespace {

using Bytes = std::vector<std::uint8_t>;
using three_party_engine::BatchResult;
using three_party_engine::BatchTask;

constexpr std::size_t kKeyBytes = kAesKeyBytes;
constexpr std::size_t kKeyRows = kAesKeyRows;
constexpr std::size_t kOutputs = 128;
constexpr std::size_t kLabel = 16;
constexpr std::size_t kStreamHeader = 24;

class DualGarbling : public GarbledAesTest {
 protected:

  Outcome run(wire::KrbEvaluation evaluation, const Deviation& deviation,
              std::chrono::milliseconds timeout = std::chrono::milliseconds(1000)) {
    wire::BatchHeader header;
    header.epoch = 0xdead'beef'0000'0001ull;
    header.sequence = ++sequence_;
    header.krb_evaluation = evaluation;
    const auto security =
        evaluation == wire::KrbEvaluation::GarbledTwice ? settings::Security::Active : settings::Security::Passive;
    return run_garbled_aes_batch(header, *program_, key_, block_, deviation, security, timeout);
  }

  // An honest batch, then the deviation, then an honest batch again. The deviation is refused at
  // `detector`, naming `check`; neither honest garbler ends with a share (the evaluator's share
  // is masks alone, independent of the result), so no client opens anything.
  void expect_caught(const Deviation& deviation, int detector, const std::string& check) {
    const Outcome before = run(wire::KrbEvaluation::GarbledTwice, {});
    ASSERT_TRUE(before.opened.has_value());
    EXPECT_EQ(*before.opened, expected());

    const Outcome caught = run(wire::KrbEvaluation::GarbledTwice, deviation);
    expect_refused(caught, deviation, detector, check);

    const Outcome after = run(wire::KrbEvaluation::GarbledTwice, {});
    ASSERT_TRUE(after.opened.has_value());
    EXPECT_EQ(*after.opened, expected());
  }

  // Garbled once, the same deviation goes through: the client opens a wrong result.
  void expect_silent_when_passive(const Deviation& deviation) {
    const Outcome honest = run(wire::KrbEvaluation::Garbled, {});
    ASSERT_TRUE(honest.opened.has_value());
    EXPECT_EQ(*honest.opened, expected());
    const Outcome deviated = run(wire::KrbEvaluation::Garbled, deviation);
    ASSERT_TRUE(deviated.opened.has_value()) << "passive: the deviation was noticed";
    EXPECT_NE(*deviated.opened, expected());
  }

  // Where party 0's stream (garbled twice) reaches the tables: labels of a_0, c_A, a_2 and the
  // public block, the commitments, party 3's relayed labels, the stream's header.
  static std::size_t dual_tables_offset() {
    return kLabel * (kKeyRows + kOutputs + kKeyRows + 128) + kLabel * (2 * kKeyRows + 2 * kOutputs) +
           kLabel * (kKeyRows + kOutputs) + kStreamHeader;
  }
  static std::size_t dual_relay_offset() {
    return kLabel * (kKeyRows + kOutputs + kKeyRows + 128) + kLabel * (2 * kKeyRows + 2 * kOutputs);
  }
  // Garbled once: labels of x_0, the public block and a_1, then the stream's header.
  static std::size_t single_tables_offset() { return kLabel * (2 * kKeyRows + 128) + kStreamHeader; }

};


TEST_F(DualGarbling, HonestBatchesComputeAes) {
  for (int i = 0; i < 3; ++i) {
    const Outcome outcome = run(wire::KrbEvaluation::GarbledTwice, {});
    ASSERT_TRUE(outcome.opened.has_value()) << outcome.results[0].error << " | " << outcome.results[1].error << " | "
                                            << outcome.results[2].error;
    EXPECT_EQ(*outcome.opened, expected());
  }
}

TEST_F(DualGarbling, FirstGarblerGarblingAnotherCircuitIsCaught) {
  Deviation deviation;
  deviation.party = 0;
  deviation.program = other_.get();
  expect_caught(deviation, 1, "differs from party 3's");
  expect_silent_when_passive(deviation);
}

TEST_F(DualGarbling, SecondGarblerGarblingAnotherCircuitIsCaught) {
  Deviation deviation;
  deviation.party = 2;
  deviation.program = other_.get();
  expect_caught(deviation, 1, "differs from party 3's");
}

TEST_F(DualGarbling, OneAlteredTableRowIsCaught) {
  Deviation active;
  active.party = 0;
  active.flip_sent_at = {dual_tables_offset() + 5000};
  expect_caught(active, 1, "differs from party 3's");
  // Garbled once, a row the evaluator happens not to use changes nothing, nor does a bit that
  // only XORs carry on to an output without changing its colour: alter the colour bit of a row in
  // each of the last 64 tables, so that some row on the way to the outputs is used.
  Deviation passive;
  passive.party = 0;
  const std::size_t tables_end = single_tables_offset() + program_->and_gates * 2 * kLabel;
  for (std::size_t gate = 1; gate <= 64; ++gate) passive.flip_sent_at.push_back(tables_end - gate * 2 * kLabel);
  expect_silent_when_passive(passive);
}

TEST_F(DualGarbling, FirstGarblerGarblingAnotherPublicInputIsCaught) {
  Deviation deviation;
  deviation.party = 0;
  deviation.flip_public = true;
  expect_caught(deviation, 1, "differs from party 3's");
  expect_silent_when_passive(deviation);
}

TEST_F(DualGarbling, FirstGarblerSendingTheOtherLabelOfItsShareIsCaught) {
  // Flipping both components of its share flips a_0 alone: party 1's commitments catch it.
  Deviation deviation;
  deviation.party = 0;
  deviation.flip_key_x = true;
  deviation.flip_key_a = true;
  expect_caught(deviation, 1, "input labels from party 1 fail their commitments");
  Deviation passive;
  passive.party = 0;
  passive.flip_key_x = true;  // garbled once, party 0 garbles with x_0
  expect_silent_when_passive(passive);
}

TEST_F(DualGarbling, SecondGarblerSendingTheOtherLabelOfItsShareIsCaught) {
  // Flipping x alone flips a_1 = x_2 ^ a_2.
  Deviation deviation;
  deviation.party = 2;
  deviation.flip_key_x = true;
  expect_caught(deviation, 1, "input labels from party 3 fail their commitments");
  expect_silent_when_passive(deviation);
}

TEST_F(DualGarbling, FirstGarblerAlteringWhatItRelaysIsCaught) {
  Deviation deviation;
  deviation.party = 0;
  deviation.flip_sent_at = {dual_relay_offset() + 3};
  expect_caught(deviation, 1, "relayed by party 1 are not signed by party 3");
}

TEST_F(DualGarbling, FirstGarblerAlteringTheDigestItRelaysIsCaught) {
  const std::size_t tables_end = dual_tables_offset() + program_->and_gates * 2 * kLabel;
  Deviation deviation;
  deviation.party = 0;
  deviation.flip_sent_at = {tables_end + 3};
  expect_caught(deviation, 1, "relayed by party 1 are not signed by party 3");
}

TEST_F(DualGarbling, EvaluatorAlteringTheOutputLabelsIsCaught) {
  Deviation deviation;
  deviation.party = 1;
  deviation.flip_sent_at = {17};  // in the second output label, after the outcome's status byte
  expect_caught(deviation, 2, "party 2's outcome is not signed by party 2");
}

TEST_F(DualGarbling, EvaluatorEvaluatingAnotherCircuitIsCaught) {
  // Labels it signs as its own, but of wires it had no right to reach.
  Deviation deviation;
  deviation.party = 1;
  deviation.program = other_.get();
  expect_caught(deviation, 2, "are not labels of the garbling");
}

TEST_F(DualGarbling, SecondGarblerAlteringItsDigestMessageIsCaught) {
  const std::size_t padded = kLabel * (kKeyRows + kOutputs);
  Deviation deviation;
  deviation.party = 2;
  deviation.flip_sent_at = {padded + 40};  // the commitment to the digest's key, after signing
  expect_caught(deviation, 0, "is not signed by party 3");
}

TEST_F(DualGarbling, SecondGarblerAlteringWhatItPassesOnIsCaught) {
  // Party 3 sends its padded labels and its signed digest, then passes party 2's outcome on.
  const std::size_t padded = kLabel * (kKeyRows + kOutputs);
  const std::size_t digest_message = 16 + 32 + 64;
  Deviation deviation;
  deviation.party = 2;
  deviation.flip_sent_at = {padded + digest_message + 1 + 5};
  expect_caught(deviation, 0, "party 2's outcome relayed by party 3 is not signed by party 2");
}

TEST_F(DualGarbling, ASecondGarblerThatStopsBeforeItsDigestLeavesNoOutput) {
  Deviation deviation;
  deviation.party = 2;
  deviation.stop_sending_at = kLabel * (kKeyRows + kOutputs);
  const Outcome outcome = run(wire::KrbEvaluation::GarbledTwice, deviation, std::chrono::milliseconds(800));
  EXPECT_FALSE(outcome.any_succeeded());
  const Outcome after = run(wire::KrbEvaluation::GarbledTwice, {});
  ASSERT_TRUE(after.opened.has_value());
  EXPECT_EQ(*after.opened, expected());
}

TEST_F(DualGarbling, AnActiveServerRefusesABatchGarbledOnce) {
  BatchTask task;
  task.header.epoch = 1;
  task.header.sequence = 1;
  task.header.krb_evaluation = wire::KrbEvaluation::Garbled;
  task.header.slices.push_back(wire::BatchSlice{{}, {}, 0, 1, 0, 0});
  task.program = std::shared_ptr<const circuits::Program>(std::shared_ptr<const circuits::Program>(), program_.get());
  task.key_rows = kKeyRows;
  task.public_bytes = 16;
  task.instances = 1;
  three_party_engine::SliceInput input;
  input.blocks = 1;
  input.key_share = key_.shares[1];
  input.public_records = block_;
  task.slices.push_back(std::move(input));
  auto edge = two_party::make_memory_channel_pair(std::chrono::milliseconds(200));
  const Logger log("dual_garbling_test", LogLevel::Error);
  const BatchResult result = three_party_engine::evaluate_garbled_batch(
      task, 1, settings::Security::Active, test_support::party_prf_keys(1), *edge.first, *edge.second, log);
  EXPECT_FALSE(result.succeeded);
  EXPECT_EQ(result.failure, wire::Status::VerificationFailed);
  EXPECT_NE(result.error.find("garbled by one server"), std::string::npos) << result.error;
}

}  // namespace
}  // namespace mpc::security_test
