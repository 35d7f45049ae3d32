// tests/unit/protocol/lut2/dealer_link_test.cpp: the lookup-table dealer service and the servers' links
// to it, in one process over CurveZMQ on loopback: the two servers' shares of every dealt batch
// form valid sharings of (r, e_r); no batch is dealt twice; refusals, pinned keys both ways,
// bounded waits for a batch that never comes, and expiry of batches nobody takes.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

#include "common/error.hpp"
#include "lut_dealer/dealer_service.hpp"
#include "protocol/lut2/masked_table.hpp"
#include "transport/zmq_link.hpp"
#include "engines/two_party/dealer_link.hpp"
#include "wire/dealer_messages.hpp"

namespace {

using namespace mpc;
using namespace std::chrono_literals;
using two_party_engine::DealerLink;

class DealerLinkTest : public ::testing::Test {
 protected:
  void SetUp() override { start_dealer(1u << 16); }
  void TearDown() override { stop_dealer(); }

  void start_dealer(std::uint32_t max_batch) {
    lut_dealer::DealerSettings settings;
    settings.endpoint = endpoint.empty() ? "tcp://127.0.0.1:*" : endpoint;
    settings.servers = {server_keys[0].public_key, server_keys[1].public_key};
    settings.max_batch_entries = max_batch;
    dealer = std::make_unique<lut_dealer::DealerService>(settings, dealer_keys, Logger("dealer", LogLevel::Error));
    endpoint = dealer->bound_endpoint();
    stop = false;
    thread = std::thread([this] { dealer->run(stop); });
  }
  void stop_dealer() {
    stop = true;
    if (thread.joinable()) thread.join();
    dealer.reset();
  }

  settings::ServerSettings server_settings(int party, const transport::PublicKey& dealer_key) const {
    settings::ServerSettings s;
    s.protocol = settings::Protocol::Lut2;
    s.party = party;
    s.limits.peer_timeout = 1000ms;
    s.lut.preprocessing = settings::LutPreprocessing::Dealer;
    s.lut.dealer_endpoint = endpoint;
    s.lut.dealer_public_key = dealer_key;
    return s;
  }
  std::unique_ptr<DealerLink> link(transport::Context& context, int party, const transport::CurveKeyPair& own,
                                   const transport::PublicKey* dealer_key = nullptr) const {
    const auto settings = server_settings(party, dealer_key ? *dealer_key : dealer_keys.public_key);
    return std::make_unique<DealerLink>(context, settings, own, Logger("link", LogLevel::Error));
  }

  // Drives both links as the servers' main loops do until the leader's request is granted.
  std::optional<DealerLink::Grant> grant(DealerLink& leader, DealerLink& follower, std::uint64_t count,
                                         std::chrono::milliseconds within = 5000ms) {
    const auto deadline = std::chrono::steady_clock::now() + within;
    while (std::chrono::steady_clock::now() < deadline) {
      const auto now = std::chrono::steady_clock::now();
      follower.tick(now);
      (void)follower.receive();
      leader.tick(now);
      (void)leader.request_batch(count);
      if (auto granted = leader.receive()) return granted;
      std::this_thread::sleep_for(5ms);
    }
    return std::nullopt;
  }
  // The follower's main loop, until it holds `batches` batches (or more, with at_least).
  static bool follower_holds(DealerLink& follower, std::size_t batches, bool at_least = false) {
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (std::chrono::steady_clock::now() < deadline) {
      (void)follower.receive();
      if (follower.held_batches() == batches || (at_least && follower.held_batches() > batches)) return true;
      std::this_thread::sleep_for(2ms);
    }
    return false;
  }

  transport::CurveKeyPair dealer_keys = transport::generate_curve_key_pair();
  std::array<transport::CurveKeyPair, 2> server_keys{transport::generate_curve_key_pair(),
                                                     transport::generate_curve_key_pair()};
  std::string endpoint;
  std::unique_ptr<lut_dealer::DealerService> dealer;
  std::atomic<bool> stop{false};
  std::thread thread;
  transport::Context context1;
  transport::Context context2;
};

// Every entry pair shares a mask r and the one-hot vector of that r.
void expect_sharings(const std::vector<lut2::Entry>& first, const std::vector<lut2::Entry>& second,
                     std::set<int>& masks) {
  ASSERT_EQ(first.size(), second.size());
  for (std::size_t k = 0; k < first.size(); ++k) {
    const auto r = static_cast<std::uint8_t>(first[k].mask ^ second[k].mask);
    std::array<std::uint64_t, 4> joined{};
    for (int w = 0; w < 4; ++w) joined[w] = first[k].one_hot[w] ^ second[k].one_hot[w];
    ASSERT_EQ(joined, lut2::one_hot(r)) << "entry " << k;
    masks.insert(r);
  }
}

TEST_F(DealerLinkTest, BothServersGetSharesOfFreshBatches) {
  auto leader = link(context1, 0, server_keys[0]);
  auto follower = link(context2, 1, server_keys[1]);
  std::set<std::uint64_t> batch_ids;
  std::set<int> masks;
  std::vector<lut2::Entry> previous;
  for (std::uint64_t round = 0; round < 3; ++round) {
    SCOPED_TRACE(round);
    const std::uint64_t count = 1000 + round;
    auto granted = grant(*leader, *follower, count);
    ASSERT_TRUE(granted) << "no batch granted";
    EXPECT_EQ(granted->count, count);
    EXPECT_NE(granted->batch, 0u);
    EXPECT_TRUE(batch_ids.insert(granted->batch).second) << "batch id dealt twice";
    ASSERT_TRUE(follower_holds(*follower, 1));
    leader->expect(10 + round, granted->batch);
    follower->expect(20 + round, granted->batch);
    auto first = leader->take(10 + round, count, 0ms);
    auto second = follower->take(20 + round, count, 100ms);
    EXPECT_EQ(first.batch, granted->batch);
    EXPECT_EQ(second.batch, granted->batch);
    expect_sharings(first.entries, second.entries, masks);
    // A fresh batch, not the previous one again.
    if (!previous.empty()) {
      int same = 0;
      for (std::size_t k = 0; k < 16; ++k) same += previous[k].one_hot == first.entries[k].one_hot;
      EXPECT_LT(same, 16);
    }
    previous = first.entries;
    EXPECT_EQ(follower->held_batches(), 0u);
  }
  EXPECT_GT(masks.size(), 250u);  // 3003 masks drawn uniformly cover nearly all 256 values
  EXPECT_EQ(dealer->batches_dealt(), 3u);
}

TEST_F(DealerLinkTest, ABatchIsTakenOnceAndMustMatchTheJob) {
  auto leader = link(context1, 0, server_keys[0]);
  auto follower = link(context2, 1, server_keys[1]);
  auto granted = grant(*leader, *follower, 500);
  ASSERT_TRUE(granted);
  ASSERT_TRUE(follower_holds(*follower, 1));
  // No expectation for this job: a programming error, not a peer's.
  EXPECT_THROW((void)follower->take(1, 500, 0ms), Error);
  // The announced size disagrees with the batch: refused, and the batch is gone (wiped).
  follower->expect(2, granted->batch);
  EXPECT_THROW((void)follower->take(2, 501, 100ms), PeerError);
  EXPECT_EQ(follower->held_batches(), 0u);
  // Announced twice: the second job waits for a batch that never comes, within its bound.
  follower->expect(3, granted->batch);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW((void)follower->take(3, 500, 200ms), PeerError);
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, 190ms);
  EXPECT_LT(waited, 2000ms);
}

TEST_F(DealerLinkTest, BatchesNobodyTakesExpire) {
  auto leader = link(context1, 0, server_keys[0]);
  auto follower = link(context2, 1, server_keys[1]);
  ASSERT_TRUE(grant(*leader, *follower, 300));
  ASSERT_TRUE(follower_holds(*follower, 1));
  ASSERT_TRUE(grant(*leader, *follower, 300));
  ASSERT_TRUE(follower_holds(*follower, 2));
  EXPECT_EQ(leader->held_batches(), 2u);  // granted, never announced
  const auto later = std::chrono::steady_clock::now() + two_party_engine::kDealtBatchExpiry + 1s;
  follower->tick(later);
  leader->tick(later);
  EXPECT_EQ(follower->held_batches(), 0u);
  EXPECT_EQ(leader->held_batches(), 0u);
}

TEST_F(DealerLinkTest, RefusalsReachTheLeader) {
  auto leader = link(context1, 0, server_keys[0]);
  auto follower = link(context2, 1, server_keys[1]);
  // Server 2 never said hello: nothing can be dealt.
  const auto deadline = std::chrono::steady_clock::now() + 2s;
  bool sent = false;
  while (!sent && std::chrono::steady_clock::now() < deadline) {
    sent = leader->request_batch(100);
    std::this_thread::sleep_for(5ms);
  }
  ASSERT_TRUE(sent);
  std::optional<DealerLink::Grant> none;
  for (int i = 0; i < 100 && leader->request_pending(); ++i) {
    none = leader->receive();
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_FALSE(none);
  EXPECT_FALSE(leader->request_pending()) << "the refusal did not arrive";
  EXPECT_EQ(dealer->batches_dealt(), 0u);
  // Over the dealer's limit: refused as well.
  stop_dealer();
  start_dealer(256);
  EXPECT_FALSE(grant(*leader, *follower, 257, 1500ms));
  EXPECT_EQ(dealer->batches_dealt(), 0u);
  EXPECT_TRUE(grant(*leader, *follower, 256));
}

TEST_F(DealerLinkTest, OnlyThePinnedKeysConnect) {
  // A server that pins another key for the dealer never reaches it.
  const auto impostor = transport::generate_curve_key_pair();
  auto misled = link(context1, 0, server_keys[0], &impostor.public_key);
  // A key the dealer does not list is refused by its ZAP handler.
  const auto stranger = transport::generate_curve_key_pair();
  transport::Context context3;
  auto unknown = link(context3, 0, stranger);
  const auto deadline = std::chrono::steady_clock::now() + 1500ms;
  while (std::chrono::steady_clock::now() < deadline) {
    EXPECT_FALSE(misled->request_batch(10));
    EXPECT_FALSE(unknown->request_batch(10));
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(dealer->batches_dealt(), 0u);
}

TEST_F(DealerLinkTest, OnlyServerOneMayAskForBatches) {
  auto follower = link(context2, 1, server_keys[1]);
  transport::Connection raw(context1, endpoint, dealer_keys.public_key, server_keys[1]);
  const auto request = wire::encode_dealer(wire::DealerBatchRequest{1, 10});
  ASSERT_TRUE(raw.send_until(request, std::chrono::steady_clock::now() + 2s));
  // Nothing comes back, to the asker or as entries.
  EXPECT_FALSE(raw.receive(300ms));
  (void)follower->receive();
  EXPECT_EQ(follower->held_batches(), 0u);
  EXPECT_EQ(dealer->batches_dealt(), 0u);
}

TEST_F(DealerLinkTest, ARestartedDealerDealsAgain) {
  auto leader = link(context1, 0, server_keys[0]);
  auto follower = link(context2, 1, server_keys[1]);
  ASSERT_TRUE(grant(*leader, *follower, 100));
  // Server 2's share must be here before the dealer stops: it may still be on its way
  // (a loaded machine), and a stopping dealer drops what it has not sent.
  ASSERT_TRUE(follower_holds(*follower, 1));
  stop_dealer();
  // Down: requests do not go out, or go unanswered and time out.
  EXPECT_FALSE(grant(*leader, *follower, 100, 300ms));
  start_dealer(1u << 16);  // same key, same endpoint, no memory of the past
  auto again = grant(*leader, *follower, 100, 8000ms);
  ASSERT_TRUE(again) << "no batch from the restarted dealer";
  // The first batch (never announced) and this one; a request the leader queued while the
  // dealer was down may reach the restarted dealer too and bring a batch of its own.
  ASSERT_TRUE(follower_holds(*follower, 2, true));
  EXPECT_LE(follower->held_batches(), 3u);
}

}  // namespace
