// A follower computes under an epoch only once: a leader that goes back to an epoch it left
// (E1, E2, E1) is refused, and so is the epoch it was in when this follower restarted, since
// the follower cannot tell where it stopped. Sequences and GCM nonces only grow inside one.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/log.hpp"
#include "engines/three_party/batch_follower.hpp"
#include "store/epoch_ledger.hpp"

namespace mpc::three_party_engine {
namespace {

namespace fs = std::filesystem;

// The engine as the follower sees it, recording what the follower decides.
class RecordingStarter final : public BatchStarter {
 public:
  std::map<node::JobKey, Job>& jobs() override { return jobs_; }
  BatchWorker* idle_worker(WorkerPool) const override { return nullptr; }
  bool pool_idle(WorkerPool) const override { return true; }
  void start_batch(const wire::BatchHeader& header, BatchWorker*) override { started.push_back(header); }
  void abort_batch(const wire::BatchHeader& header, wire::Status status, const std::string&) override {
    aborted.push_back({header, status});
  }
  bool send_to(int, const std::vector<std::uint8_t>&) override { return true; }

  std::vector<wire::BatchHeader> started;
  std::vector<std::pair<wire::BatchHeader, wire::Status>> aborted;

 private:
  std::map<node::JobKey, Job> jobs_;
};

class FollowerTest : public ::testing::Test {
 protected:
  FollowerTest() : log_("batch_follower_test", LogLevel::Error) {
    settings_.party = 1;
    directory_ = fs::temp_directory_path() / ("batch_follower_test." + std::to_string(::getpid()) + "." +
                                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(directory_);
    fs::create_directories(directory_);
  }
  ~FollowerTest() override { fs::remove_all(directory_); }

  // A batch of local masks: it needs no worker, so the follower decides at once.
  static wire::BatchHeader batch(std::uint64_t epoch, std::uint32_t sequence) {
    wire::BatchHeader header;
    header.epoch = epoch;
    header.sequence = sequence;
    header.circuit = wire::CircuitId::GcmLocalMasks;
    return header;
  }
  // Whether `follower` starts `header` (true) or refuses it, and how.
  static bool runs(BatchFollower& follower, RecordingStarter& starter, const wire::BatchHeader& header) {
    const std::size_t started = starter.started.size();
    follower.take_header(0, header);
    follower.schedule(starter);
    return starter.started.size() == started + 1;
  }

  Logger log_;
  settings::ServerSettings settings_;
  fs::path directory_;
};

TEST_F(FollowerTest, RefusesAnEpochItLeftAsRegrouping) {
  store::EpochLedger epochs(store::epoch_ledger_path(directory_));
  BatchFollower follower(settings_, log_, epochs);
  RecordingStarter starter;
  EXPECT_TRUE(runs(follower, starter, batch(0x1111, 1)));
  EXPECT_TRUE(runs(follower, starter, batch(0x1111, 2)));
  EXPECT_TRUE(runs(follower, starter, batch(0x2222, 1)));
  EXPECT_FALSE(runs(follower, starter, batch(0x1111, 3)));
  ASSERT_EQ(starter.aborted.size(), 1u);
  EXPECT_EQ(starter.aborted[0].second, wire::Status::Regrouping);
  EXPECT_FALSE(runs(follower, starter, batch(0x1111, 1)));
  // The epoch it is in goes on; a repeated sequence in it is dropped.
  EXPECT_TRUE(runs(follower, starter, batch(0x2222, 2)));
  EXPECT_FALSE(runs(follower, starter, batch(0x2222, 2)));
  EXPECT_EQ(follower.epoch(), 0x2222u);
}

TEST_F(FollowerTest, RefusesEveryEpochOfItsLifeAfterARestart) {
  {
    store::EpochLedger epochs(store::epoch_ledger_path(directory_));
    BatchFollower follower(settings_, log_, epochs);
    RecordingStarter starter;
    ASSERT_TRUE(runs(follower, starter, batch(0x1111, 1)));
    ASSERT_TRUE(runs(follower, starter, batch(0x2222, 1)));
  }
  store::EpochLedger epochs(store::epoch_ledger_path(directory_));
  BatchFollower follower(settings_, log_, epochs);
  RecordingStarter starter;
  EXPECT_FALSE(runs(follower, starter, batch(0x1111, 5)));
  EXPECT_FALSE(runs(follower, starter, batch(0x2222, 2)));  // where it stopped: unknown here
  EXPECT_EQ(starter.aborted.size(), 2u);
  EXPECT_TRUE(runs(follower, starter, batch(0x3333, 1)));
}

TEST_F(FollowerTest, WithoutTheLedgerAReturningEpochWouldRunAgain) {
  // The control: a ledger that forgets (as a follower without one did) lets E1 back in.
  RecordingStarter starter;
  store::EpochLedger first({});
  BatchFollower before(settings_, log_, first);
  ASSERT_TRUE(runs(before, starter, batch(0x1111, 1)));
  store::EpochLedger forgetful({});
  BatchFollower after(settings_, log_, forgetful);
  EXPECT_TRUE(runs(after, starter, batch(0x1111, 1)));
}

TEST_F(FollowerTest, RefusesGcmNoncesOfAnEpochItLeft) {
  store::EpochLedger epochs(store::epoch_ledger_path(directory_));
  BatchFollower follower(settings_, log_, epochs);
  RecordingStarter starter;
  node::JobKey key;
  key.request[0] = 1;
  starter.jobs().emplace(key, Job{});
  auto with_nonces = [&](std::uint64_t epoch, std::uint32_t sequence, std::uint32_t first) {
    wire::BatchHeader header = batch(epoch, sequence);
    header.slices.push_back({key.client, key.request, {}, 0, 3, first, 1});
    return header;
  };
  EXPECT_TRUE(runs(follower, starter, with_nonces(0x1111, 1, 0)));
  EXPECT_TRUE(runs(follower, starter, with_nonces(0x2222, 1, 0)));
  EXPECT_FALSE(runs(follower, starter, with_nonces(0x1111, 1, 0)));
  EXPECT_FALSE(runs(follower, starter, with_nonces(0x2222, 2, 0)));  // a used nonce in a fresh batch id
  EXPECT_TRUE(runs(follower, starter, with_nonces(0x2222, 3, 1)));
}

}  // namespace
}  // namespace mpc::three_party_engine
