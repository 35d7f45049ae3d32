#include "node/request_agreement.hpp"

#include <algorithm>

#include <gtest/gtest.h>

#include "common/error.hpp"

namespace mpc::node {
namespace {

using namespace std::chrono_literals;

PartyWord copy(std::uint8_t fill) {
  PartyWord word;
  word.digest.fill(fill);
  return word;
}

PartyWord refusal(wire::Status status, std::string detail) { return PartyWord{{}, status, std::move(detail)}; }

JobKey key(std::uint8_t n) {
  JobKey out;
  out.client.fill(7);
  out.request.fill(n);
  return out;
}

const std::vector<int> kAll{0, 1, 2};

TEST(RequestAgreement, AgreesOnlyWhenEveryPartyHoldsTheSameCopy) {
  CopyWords words;
  EXPECT_EQ(judge(words, kAll).consensus, Consensus::Waiting);
  words[0] = copy(1);
  words[2] = copy(1);
  EXPECT_EQ(judge(words, kAll).consensus, Consensus::Waiting);
  words[1] = copy(1);
  const Verdict verdict = judge(words, kAll);
  EXPECT_EQ(verdict.consensus, Consensus::Agreed);
  EXPECT_EQ(verdict.status, wire::Status::Ok);
  // Two parties are enough where only two are asked (the survivors of an outage).
  CopyWords two;
  two[0] = copy(4);
  two[2] = copy(4);
  EXPECT_EQ(judge(two, {0, 2}).consensus, Consensus::Agreed);
}

TEST(RequestAgreement, NamesTheServerWhoseCopyDiffers) {
  for (int odd = 0; odd < 3; ++odd) {
    CopyWords words;
    for (int party = 0; party < 3; ++party) words[static_cast<std::size_t>(party)] = copy(party == odd ? 9 : 1);
    const Verdict verdict = judge(words, kAll);
    EXPECT_EQ(verdict.consensus, Consensus::Differ);
    EXPECT_EQ(verdict.status, wire::Status::RequestMismatch);
    EXPECT_NE(verdict.detail.find("party " + std::to_string(odd + 1) + "'s copy of the request differs"),
              std::string::npos)
        << verdict.detail;
  }
  CopyWords all_differ;
  for (std::uint8_t party = 0; party < 3; ++party) all_differ[party] = copy(party);
  EXPECT_EQ(judge(all_differ, kAll).detail, "parties 1, 2 and 3 hold different copies of the request");
}

TEST(RequestAgreement, WaitsForTheThirdPartyBeforeJudgingADifference) {
  CopyWords words;
  words[0] = copy(1);
  words[1] = copy(2);
  EXPECT_EQ(judge(words, kAll).consensus, Consensus::Waiting);
  // ... unless asked about the two that spoke (a deadline passed).
  const Verdict partial = judge(words, {0, 1});
  EXPECT_EQ(partial.consensus, Consensus::Differ);
  EXPECT_EQ(partial.detail, "parties 1 and 2 hold different copies of the request");
}

TEST(RequestAgreement, ARefusalIsJudgedAtOnceWithItsReason) {
  CopyWords words;
  words[1] = refusal(wire::Status::UnknownKey, "k kvno 1 aes128 not found");
  Verdict verdict = judge(words, kAll);
  EXPECT_EQ(verdict.consensus, Consensus::Refused);
  EXPECT_EQ(verdict.status, wire::Status::UnknownKey);
  EXPECT_EQ(verdict.detail, "party 2 refused the request: k kvno 1 aes128 not found");
  // A refusal wins over copies that differ.
  words[0] = copy(1);
  words[2] = copy(2);
  EXPECT_EQ(judge(words, kAll).consensus, Consensus::Refused);
  EXPECT_THROW((void)judge(words, {0, 3}), Error);
}

TEST(RequestLedger, KeepsEarlyWordsUntilTheCopyComes) {
  const auto now = std::chrono::steady_clock::now();
  RequestLedger ledger(4, 30s);
  EXPECT_FALSE(ledger.has_early(key(1)));
  ledger.keep_early(key(1), 2, copy(5), now);
  ledger.keep_early(key(1), 1, copy(6), now + 1ms);
  ledger.keep_early(key(1), 2, copy(7), now + 2ms);  // a party's first word stands
  EXPECT_TRUE(ledger.has_early(key(1)));
  EXPECT_EQ(ledger.early_since(key(1)), now);
  const CopyWords words = ledger.take_early(key(1));
  ASSERT_TRUE(words[1] && words[2]);
  EXPECT_FALSE(words[0]);
  EXPECT_EQ(words[1]->digest, copy(6).digest);
  EXPECT_EQ(words[2]->digest, copy(5).digest);
  EXPECT_FALSE(ledger.has_early(key(1)));
  EXPECT_FALSE(ledger.take_early(key(1))[2]);
}

TEST(RequestLedger, IsBoundedAndExpires) {
  const auto now = std::chrono::steady_clock::now();
  RequestLedger ledger(3, 10s);
  for (std::uint8_t n = 0; n < 10; ++n) ledger.keep_early(key(n), 1, copy(n), now + std::chrono::milliseconds(n));
  EXPECT_EQ(ledger.size(), 3u);
  EXPECT_TRUE(ledger.has_early(key(9)));
  EXPECT_FALSE(ledger.has_early(key(6)));
  for (std::uint8_t n = 0; n < 10; ++n)
    ledger.bury(key(n), Tombstone{wire::Status::PeerFailure, "gone", false}, now + std::chrono::milliseconds(n));
  EXPECT_EQ(ledger.size(), 3u);  // burying takes the early words too
  ASSERT_NE(ledger.tombstone(key(9)), nullptr);
  EXPECT_EQ(ledger.tombstone(key(6)), nullptr);
  EXPECT_EQ(ledger.tombstone(key(9))->detail, "gone");
  ledger.expire(now + 9s);
  EXPECT_NE(ledger.tombstone(key(9)), nullptr);
  ledger.expire(now + 11s);
  EXPECT_EQ(ledger.size(), 0u);
}

TEST(RequestLedger, AReburiedTombstoneLivesFromItsNewBurial) {
  const auto now = std::chrono::steady_clock::now();
  RequestLedger ledger(8, 10s);
  ledger.bury(key(1), Tombstone{wire::Status::PeerFailure, "first", false}, now);
  ledger.bury(key(1), Tombstone{wire::Status::RequestMismatch, "second", true}, now + 8s);
  ledger.expire(now + 12s);
  ASSERT_NE(ledger.tombstone(key(1)), nullptr);
  EXPECT_EQ(ledger.tombstone(key(1))->status, wire::Status::RequestMismatch);
  ledger.expire(now + 19s);
  EXPECT_EQ(ledger.tombstone(key(1)), nullptr);
}

TEST(RequestLedger, NamesTheRefusalsBuriedSinceAMoment) {
  const auto now = std::chrono::steady_clock::now();
  RequestLedger ledger(8, 10s);
  ledger.bury(key(1), Tombstone{wire::Status::Regrouping, "before the switch", true}, now);
  ledger.bury(key(2), Tombstone{wire::Status::PeerFailure, "gone", true}, now + 2s);
  ledger.bury(key(3), Tombstone{wire::Status::Regrouping, "given up unseen", false}, now + 3s);
  Tombstone answered_tag{wire::Status::BadRequest, "request id already in use", true};
  answered_tag.answered_copy = copy(4).digest;
  ledger.bury(key(4), answered_tag, now + 3s);

  auto refusals = ledger.refusals_since(now + 1s);
  std::sort(refusals.begin(), refusals.end(),
            [](const auto& a, const auto& b) { return a.first.request < b.first.request; });
  ASSERT_EQ(refusals.size(), 2u);  // not the one before, not the answered tag
  EXPECT_EQ(refusals[0].first, key(2));
  EXPECT_EQ(refusals[0].second.status, wire::Status::PeerFailure);
  EXPECT_EQ(refusals[0].second.detail, "gone");
  EXPECT_EQ(refusals[1].first, key(3));
  EXPECT_EQ(refusals[1].second.status, wire::Status::Regrouping);
  EXPECT_EQ(ledger.refusals_since(now).size(), 3u);
  ledger.expire(now + 13500ms);
  EXPECT_TRUE(ledger.refusals_since(now).empty());  // expired ones are gone
}

TEST(OutgoingNotes, SplitsIntoFramesOfAtMostTheLimit) {
  OutgoingNotes notes;
  EXPECT_TRUE(notes.empty());
  for (std::size_t i = 0; i < wire::kMaxNotesPerMessage + 5; ++i)
    notes.add(2, make_note(key(static_cast<std::uint8_t>(i)), copy(1)));
  notes.add(1, make_note(key(1), refusal(wire::Status::Busy, std::string(2000, 'b'))));
  EXPECT_FALSE(notes.empty());
  const auto frames = notes.take_frames(2);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(std::get<std::vector<wire::RequestNote>>(wire::decode_peer_message(frames[0])).size(),
            wire::kMaxNotesPerMessage);
  EXPECT_EQ(std::get<std::vector<wire::RequestNote>>(wire::decode_peer_message(frames[1])).size(), 5u);
  EXPECT_TRUE(notes.take_frames(2).empty());
  const auto other = notes.take_frames(1);
  ASSERT_EQ(other.size(), 1u);
  const auto decoded = std::get<std::vector<wire::RequestNote>>(wire::decode_peer_message(other[0]));
  EXPECT_EQ(decoded[0].status, wire::Status::Busy);
  EXPECT_EQ(decoded[0].detail.size(), 1024u);  // details are cut to what a note carries
  EXPECT_TRUE(notes.empty());
  EXPECT_THROW(notes.add(3, make_note(key(1), copy(1))), Error);
}

TEST(OutgoingNotes, NotesForTheRecordWaitForCompanyOrTheirDelay) {
  OutgoingNotes notes;
  const auto now = std::chrono::steady_clock::now();
  EXPECT_FALSE(notes.next_due());
  notes.add_record(1, make_note(key(1), copy(1)), now);
  notes.add_record(1, make_note(key(2), copy(1)), now + 5ms);
  EXPECT_FALSE(notes.due(1, now));
  EXPECT_FALSE(notes.due(1, now + OutgoingNotes::kRecordDelay - 1ms));
  EXPECT_TRUE(notes.due(1, now + OutgoingNotes::kRecordDelay));  // from the oldest, not the newest
  ASSERT_TRUE(notes.next_due());
  EXPECT_EQ(*notes.next_due(), now + OutgoingNotes::kRecordDelay);
  EXPECT_FALSE(notes.due(2, now + 1s));

  // A note another server waits on takes those for the record along at once.
  notes.add(1, make_note(key(3), copy(2)));
  EXPECT_TRUE(notes.due(1, now));
  EXPECT_LE(*notes.next_due(), now);
  const auto frames = notes.take_frames(1);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(std::get<std::vector<wire::RequestNote>>(wire::decode_peer_message(frames[0])).size(), 3u);
  EXPECT_TRUE(notes.empty());
  EXPECT_FALSE(notes.next_due());

  // Once sent, the delay starts again from the next note for the record.
  notes.add_record(1, make_note(key(4), copy(1)), now + 1s);
  EXPECT_FALSE(notes.due(1, now + 1s + 1ms));
  EXPECT_TRUE(notes.due(1, now + 1s + OutgoingNotes::kRecordDelay));
  EXPECT_THROW(notes.add_record(3, make_note(key(1), copy(1)), now), Error);
}

}  // namespace
}  // namespace mpc::node
