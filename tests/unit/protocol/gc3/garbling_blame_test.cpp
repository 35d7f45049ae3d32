// The conclusions of a garbling twice that failed (protocol/gc3/garbling_blame.hpp), each party's
// drawn from the messages it receives: the cases a deviating server reaches by saying something
// other than what its own computation gives (a false refusal, a false answer), which a deviation
// on the wire cannot show (tests/unit/security runs those through the whole protocol).
#include <gtest/gtest.h>
#include <sodium.h>

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <vector>

#include "common/error.hpp"
#include "common/identity_signature.hpp"
#include "protocol/gc3/garbling_blame.hpp"
#include "protocol/two_party/channel.hpp"

namespace mpc::gc3::blame {
namespace {

constexpr BatchId kId{0x1234'5678'9abc'def0ull, 42};

class GarblingBlame : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_GE(sodium_init(), 0);
    std::array<std::array<std::uint8_t, 32>, 3> secrets{};
    for (std::size_t p = 0; p < 3; ++p) {
      secrets[p].fill(static_cast<std::uint8_t>(0x31 + p));
      crypto_scalarmult_base(public_keys_[p].data(), secrets[p].data());
      signers_[p] = std::make_unique<IdentitySigner>(secrets[p]);
    }
    key_.resize(GarblingDigest::kKeyBytes);
    randombytes_buf(key_.data(), key_.size());
    honest_digest_ = digest_under(key_);
  }

  PartyIdentities identities(int party) const {
    return {signers_[static_cast<std::size_t>(party)].get(), public_keys_};
  }

  // The digest of a fixed garbling under `key`: what an honest first garbler computes.
  static Digest digest_under(std::span<const std::uint8_t> key) {
    GarblingDigest digest(key);
    const std::vector<std::uint8_t> garbling(1000, 0x5a);
    digest.add(garbling);
    return digest.finish();
  }

  SecondGarblerDigest second_garbler_digest(const Digest& digest) const {
    SecondGarblerDigest second;
    second.digest = digest;
    second.commitment = key_commitment(key_, kId);
    return second;
  }

  // Runs `body`; the DeviationFound it throws.
  template <typename Body>
  static DeviationFound conclusion(Body body) {
    try {
      body();
    } catch (const DeviationFound& found) {
      return found;
    }
    ADD_FAILURE() << "no conclusion";
    return DeviationFound(Component::Protocol, "none", "none", -1, 0xff, false);
  }

  // Party 0's answer as party 1 receives it: the verdict and its signature.
  std::vector<std::uint8_t> answer(Answer verdict, int signer, const Digest& second_digest) const {
    const auto byte = static_cast<std::uint8_t>(verdict);
    const IdentitySignature signature = sign(identities(signer), "first garbler's answer", kId,
                                             {std::span(&byte, 1), key_, second_digest});
    std::vector<std::uint8_t> out{byte};
    out.insert(out.end(), signature.begin(), signature.end());
    return out;
  }

  // The answer party 0 sent: `verdict`, signed by party 0 (signatures are randomised: checked, not compared).
  void expect_answer(two_party::Channel& at_next, Answer verdict, const Digest& second_digest) const {
    std::uint8_t byte = 0;
    IdentitySignature signature{};
    at_next.receive(std::span(&byte, 1));
    at_next.receive(signature);
    EXPECT_EQ(byte, static_cast<std::uint8_t>(verdict));
    EXPECT_TRUE(signed_by(identities(1), 0, "first garbler's answer", kId, {std::span(&byte, 1), key_, second_digest},
                          signature));
  }

  std::array<std::array<std::uint8_t, 32>, 3> public_keys_{};
  std::array<std::unique_ptr<IdentitySigner>, 3> signers_;
  std::vector<std::uint8_t> key_;
  Digest honest_digest_{};
};

TEST_F(GarblingBlame, AFalseRefusalNamesTheEvaluatorAtTheFirstGarbler) {
  auto [to_next, at_next] = two_party::make_memory_channel_pair();
  const DeviationFound found = conclusion([&] {
    first_garbler_concludes(identities(0), kId, key_, second_garbler_digest(honest_digest_), digest_under, *to_next);
  });
  EXPECT_EQ(found.claims(), 1u << 1) << found.what();
  EXPECT_TRUE(found.concluded());
  expect_answer(*at_next, Answer::EvaluatorLied, honest_digest_);
}

TEST_F(GarblingBlame, ASecondGarblerDigestOfAnotherGarblingNamesItAtTheFirstGarbler) {
  Digest other = honest_digest_;
  other[3] ^= 1;
  auto [to_next, at_next] = two_party::make_memory_channel_pair();
  const DeviationFound found = conclusion([&] {
    first_garbler_concludes(identities(0), kId, key_, second_garbler_digest(other), digest_under, *to_next);
  });
  EXPECT_EQ(found.claims(), 1u << 2) << found.what();
  expect_answer(*at_next, Answer::SecondGarblerLied, other);
}

TEST_F(GarblingBlame, AKeyTheSecondGarblerDidNotCommitToNamesTheEvaluator) {
  SecondGarblerDigest second = second_garbler_digest(honest_digest_);
  second.commitment[0] ^= 1;
  auto [to_next, at_next] = two_party::make_memory_channel_pair();
  const DeviationFound found = conclusion(
      [&] { first_garbler_concludes(identities(0), kId, key_, second, digest_under, *to_next); });
  EXPECT_EQ(found.claims(), 1u << 1) << found.what();
}

TEST_F(GarblingBlame, TheEvaluatorNamesTheFirstGarblerOnlyWhenItAnswersThatItsStreamWasRight) {
  for (const auto& [verdict, claims] :
       {std::pair{Answer::EvaluatorLied, 1u << 0}, std::pair{Answer::SecondGarblerLied, 0u}}) {
    auto [from_first, first] = two_party::make_memory_channel_pair();
    auto [to_next, at_next] = two_party::make_memory_channel_pair();
    const auto sent = answer(verdict, 0, honest_digest_);
    first->send(sent);
    first->flush();
    const DeviationFound found = conclusion([&] {
      evaluator_concludes(identities(1), kId, key_, honest_digest_, *from_first, *to_next, std::chrono::milliseconds(0));
    });
    EXPECT_EQ(found.claims(), claims) << found.what();
    EXPECT_TRUE(found.concluded());
    std::vector<std::uint8_t> passed(sent.size());
    at_next->receive(passed);
    EXPECT_EQ(passed, sent) << "the answer is passed on as it came";
  }
}

TEST_F(GarblingBlame, TheSecondGarblerNamesTheFirstOnlyWhenItAnswersThatTheDigestWasWrong) {
  for (const auto& [verdict, claims] : {std::pair{Answer::SecondGarblerLied, 1u << 0}, std::pair{Answer::EvaluatorLied, 0u},
                                        std::pair{static_cast<Answer>(7), 1u << 0}}) {
    auto [from_evaluator, evaluator] = two_party::make_memory_channel_pair();
    evaluator->send(answer(verdict, 0, honest_digest_));
    evaluator->flush();
    const DeviationFound found = conclusion([&] {
      second_garbler_concludes(identities(2), kId, key_, honest_digest_, *from_evaluator, std::chrono::milliseconds(0));
    });
    EXPECT_EQ(found.claims(), claims) << found.what();
  }
}

TEST_F(GarblingBlame, AnAnswerNotSignedByTheFirstGarblerNamesTheServerItCameFrom) {
  {
    auto [from_first, first] = two_party::make_memory_channel_pair();
    auto [to_next, at_next] = two_party::make_memory_channel_pair();
    first->send(answer(Answer::SecondGarblerLied, 2, honest_digest_));  // signed by another
    first->flush();
    const DeviationFound found = conclusion([&] {
      evaluator_concludes(identities(1), kId, key_, honest_digest_, *from_first, *to_next, std::chrono::milliseconds(0));
    });
    EXPECT_EQ(found.claims(), 1u << 0) << found.what();
    EXPECT_FALSE(found.concluded());
  }
  {
    auto [from_evaluator, evaluator] = two_party::make_memory_channel_pair();
    auto altered = answer(Answer::EvaluatorLied, 0, honest_digest_);
    altered[0] = static_cast<std::uint8_t>(Answer::SecondGarblerLied);  // the relaying evaluator changed it
    evaluator->send(altered);
    evaluator->flush();
    const DeviationFound found = conclusion([&] {
      second_garbler_concludes(identities(2), kId, key_, honest_digest_, *from_evaluator, std::chrono::milliseconds(0));
    });
    EXPECT_EQ(found.claims(), 1u << 1) << found.what();
  }
}

TEST_F(GarblingBlame, AnOutcomeNotSignedOrOfAFormTheBatchDoesNotAllowNamesItsSender) {
  const OutcomeForm evaluated{Outcome::Evaluated, 32, true};
  const std::vector<std::uint8_t> labels(32, 7);
  {
    auto [to_second, at_second] = two_party::make_memory_channel_pair();
    send_outcome(identities(1), kId, Outcome::Evaluated, labels, *to_second);
    const ReceivedOutcome received =
        receive_from_evaluator(identities(2), kId, evaluated, *at_second, std::chrono::milliseconds(0));
    EXPECT_TRUE(std::equal(labels.begin(), labels.end(), received.payload.data()) && received.payload.size() == labels.size());
  }
  {
    auto [to_second, at_second] = two_party::make_memory_channel_pair();
    send_outcome(identities(0), kId, Outcome::Evaluated, labels, *to_second);  // not party 1's
    const DeviationFound found = conclusion(
        [&] { receive_from_evaluator(identities(2), kId, evaluated, *at_second, std::chrono::milliseconds(0)); });
    EXPECT_EQ(found.claims(), 1u << 1) << found.what();
  }
  {
    auto [to_first, at_first] = two_party::make_memory_channel_pair();
    send_outcome(identities(2), kId, Outcome::Evaluated, labels, *to_first);  // not party 1's, relayed by 2
    const DeviationFound found = conclusion(
        [&] { receive_relayed_outcome(identities(0), kId, evaluated, *at_first, std::chrono::milliseconds(0)); });
    EXPECT_EQ(found.claims(), 1u << 2) << found.what();
  }
  {
    // A refusal where no digest was compared (a prepared garbling in use): no honest evaluator sends it.
    const OutcomeForm in_use{Outcome::Evaluated, 32, false};
    auto [to_second, at_second] = two_party::make_memory_channel_pair();
    send_outcome(identities(1), kId, Outcome::GarblingsDiffer, key_, *to_second);
    const DeviationFound found = conclusion(
        [&] { receive_from_evaluator(identities(2), kId, in_use, *at_second, std::chrono::milliseconds(0)); });
    EXPECT_EQ(found.claims(), 1u << 1) << found.what();
  }
}

TEST_F(GarblingBlame, TheSecondGarblersDigestNamesItsSignerOrItsRelay) {
  const std::vector<std::uint8_t> padded(64, 9);
  auto [to_first, at_first] = two_party::make_memory_channel_pair();
  auto [to_evaluator, at_evaluator] = two_party::make_memory_channel_pair();
  send_second_garbler_digest(identities(2), kId, key_, honest_digest_, {padded}, *to_first);
  const SecondGarblerDigest relayed = relay_second_garbler_digest(identities(0), kId, {padded}, *at_first,
                                                                  *to_evaluator, std::chrono::milliseconds(0));
  EXPECT_EQ(relayed.digest, honest_digest_);
  const SecondGarblerDigest received = receive_second_garbler_digest(
      identities(1), kId, key_, {padded}, *at_evaluator, std::chrono::milliseconds(0));
  EXPECT_EQ(received.commitment, key_commitment(key_, kId));

  // Padded labels other than those signed: party 0 names party 2 if it signed them so, party 1
  // names party 0 if they changed on the way.
  std::vector<std::uint8_t> other = padded;
  other[5] ^= 1;
  send_second_garbler_digest(identities(2), kId, key_, honest_digest_, {padded}, *to_first);
  DeviationFound found = conclusion([&] {
    relay_second_garbler_digest(identities(0), kId, {other}, *at_first, *to_evaluator, std::chrono::milliseconds(0));
  });
  EXPECT_EQ(found.claims(), 1u << 2) << found.what();
  send_second_garbler_digest(identities(2), kId, key_, honest_digest_, {padded}, *to_evaluator);
  found = conclusion([&] {
    receive_second_garbler_digest(identities(1), kId, key_, {other}, *at_evaluator, std::chrono::milliseconds(0));
  });
  EXPECT_EQ(found.claims(), 1u << 0) << found.what();

  // A commitment to another key than the one parties 1 and 2 share names party 2, who signed it.
  std::vector<std::uint8_t> another_key = key_;
  another_key[0] ^= 1;
  send_second_garbler_digest(identities(2), kId, another_key, honest_digest_, {padded}, *to_evaluator);
  found = conclusion([&] {
    receive_second_garbler_digest(identities(1), kId, key_, {padded}, *at_evaluator, std::chrono::milliseconds(0));
  });
  EXPECT_EQ(found.claims(), 1u << 2) << found.what();
}

}  // namespace
}  // namespace mpc::gc3::blame
