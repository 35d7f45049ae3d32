// How the leader forms batches: a small job a caller waits on goes ahead of a bulk nonce
// refill queued before it and gets a small batch of its own, while a bulk job that has waited
// long enough is no longer passed.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <optional>
#include <thread>
#include <vector>

#include "common/log.hpp"
#include "engines/three_party/batch_leader.hpp"

namespace mpc::three_party_engine {
namespace {

using Clock = std::chrono::steady_clock;

class LeaderTest : public ::testing::Test {
 protected:
  LeaderTest() : log_("batch_leader_test", LogLevel::Error) {
    settings_.limits.max_batch_blocks = 16384;
    settings_.limits.latency_batch_blocks = 512;
  }

  node::JobKey add(Job job, Clock::time_point arrived) {
    node::JobKey key;
    key.request[0] = static_cast<std::uint8_t>(++count_);
    job.key.algorithm = wire::KeyAlgorithm::Aes256;
    job.arrived = arrived;
    jobs_.emplace(key, std::move(job));
    leader_.job_admitted(key);
    return key;
  }
  // A GCM prefetch of `nonces` nonces with two keystream blocks each (a ticket's).
  node::JobKey prefetch(std::uint32_t nonces, Clock::time_point arrived = Clock::now()) {
    Job job;
    job.kind = JobKind::GcmPrefetch;
    job.blocks_per_nonce = 2;
    job.nonce_count = nonces;
    job.instances = 3 * nonces;
    return add(std::move(job), arrived);
  }
  node::JobKey open(Clock::time_point arrived = Clock::now()) {
    Job job;
    job.kind = JobKind::GcmOpen;
    job.instances = 3;
    return add(std::move(job), arrived);
  }
  std::uint32_t blocks_of(const wire::BatchHeader& header, const node::JobKey& key) {
    std::uint32_t blocks = 0;
    for (const auto& slice : header.slices)
      if (slice.request == key.request) blocks += slice.blocks;
    return blocks;
  }
  static std::uint32_t total(const wire::BatchHeader& header) {
    std::uint32_t blocks = 0;
    for (const auto& slice : header.slices) blocks += slice.blocks;
    return blocks;
  }

  settings::ServerSettings settings_;
  Logger log_;
  BatchLeader leader_{settings_, log_};
  std::map<node::JobKey, Job> jobs_;
  int count_ = 0;
};

// A refill of 4,096 nonces (12,288 blocks) is queued, then a seal's synchronous prefetch of
// one nonce: the one nonce goes first into a batch no larger than a latency batch (the refill
// fills the rest of it), and the refill's remainder gets the batch after.
TEST_F(LeaderTest, ASynchronousPrefetchGoesAheadOfARefill) {
  const auto refill = prefetch(4096);
  const auto seal = prefetch(1);
  const auto header = leader_.form_batch(jobs_, true, true);
  ASSERT_TRUE(header.has_value());
  EXPECT_EQ(blocks_of(*header, seal), 3u);
  EXPECT_EQ(header->slices.front().request, seal.request);
  EXPECT_LE(total(*header), settings_.limits.latency_batch_blocks);
  const auto next = leader_.form_batch(jobs_, true, true);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(blocks_of(*header, refill) + blocks_of(*next, refill), 12288u);
  EXPECT_EQ(blocks_of(*next, seal), 0u);
}

// A ticket's open (another circuit) queued behind a refill names the next batch's circuit.
TEST_F(LeaderTest, AnOpenGoesAheadOfARefill) {
  prefetch(4096);
  const auto ticket = open();
  const auto header = leader_.form_batch(jobs_, true, true);
  ASSERT_TRUE(header.has_value());
  EXPECT_EQ(blocks_of(*header, ticket), 3u);
  EXPECT_EQ(total(*header), 3u);
}

// A refill that has waited over a second goes first again (a small job of its circuit still
// rides in its batch), so a stream of small jobs cannot starve it.
TEST_F(LeaderTest, ARefillThatWaitedASecondIsNotPassedAgain) {
  const auto refill = prefetch(4096, Clock::now() - std::chrono::seconds(2));
  const auto ticket = open();
  const auto seal = prefetch(1);
  const auto header = leader_.form_batch(jobs_, true, true);
  ASSERT_TRUE(header.has_value());
  EXPECT_EQ(blocks_of(*header, refill), 12288u);
  EXPECT_EQ(blocks_of(*header, seal), 3u);
  EXPECT_EQ(blocks_of(*header, ticket), 0u);
}

// Small jobs still coalesce into one large batch: forty prefetches of 100 nonces (12,000
// blocks) share one, with no refill's blocks beyond a latency batch's size.
TEST_F(LeaderTest, SmallJobsStillCoalesce) {
  const auto refill = prefetch(4096);
  std::vector<node::JobKey> seals;
  for (int i = 0; i < 40; ++i) seals.push_back(prefetch(100));
  const auto header = leader_.form_batch(jobs_, true, true);
  ASSERT_TRUE(header.has_value());
  for (const auto& seal : seals) EXPECT_EQ(blocks_of(*header, seal), 300u);
  EXPECT_EQ(blocks_of(*header, refill), 0u);
  EXPECT_EQ(total(*header), 12000u);
}

// A Kerberos job of one instance (a login's AS-REP encryption).
class PreparingLeaderTest : public LeaderTest {
 protected:
  node::JobKey krb() {
    Job job;
    job.kind = JobKind::Krb;
    job.krb_circuit = kCircuit;
    job.krb_data.resize(kCircuit.data_bytes);
    job.instances = 1;
    return add(std::move(job), Clock::now());
  }
  // Forms the job's batch and ends it as the servers would.
  wire::BatchHeader run_krb(bool succeeded = true) {
    krb();
    auto header = leader_.form_batch(jobs_, true, true);
    EXPECT_TRUE(header.has_value());
    jobs_.clear();
    leader_.batch_done(*header, succeeded, 189'760);
    return *header;
  }
  using KrbLoad = BatchLeader::KrbLoad;
  // A preparation beside a running job: one Kerberos worker busy, the other free.
  std::optional<wire::BatchHeader> prepare() { return leader_.form_preparation(KrbLoad::Some, true); }
  // A preparation once Kerberos jobs have paused.
  std::optional<wire::BatchHeader> prepare_after_pause() {
    std::this_thread::sleep_for(BatchLeader::kQuietBeforePreparing + std::chrono::milliseconds(5));
    return leader_.form_preparation(KrbLoad::Idle, true);
  }
  static constexpr jobs::KrbCircuitKey kCircuit{wire::CircuitId::KrbEncryptAes256, 265, 0};
};

// The leader prepares the circuit that ran; the next batch of one job of it evaluates that
// garbling, and the one after garbles online until another is prepared.
TEST_F(PreparingLeaderTest, PreparesWhatRanAndNamesItOnce) {
  EXPECT_FALSE(prepare().has_value()) << "prepared a circuit no job ran";
  const auto online = run_krb();
  EXPECT_EQ(online.krb_evaluation, wire::KrbEvaluation::GarbledTwice);
  EXPECT_FALSE(leader_.form_preparation(KrbLoad::Some, false).has_value())
      << "prepared while the preparation worker is busy";
  const auto preparation = prepare();
  ASSERT_TRUE(preparation.has_value());
  EXPECT_EQ(preparation->krb_evaluation, wire::KrbEvaluation::PrepareTwice);
  EXPECT_TRUE(preparation->slices.empty());
  EXPECT_EQ(preparation->circuit, kCircuit.id);
  EXPECT_EQ(preparation->data_bytes, kCircuit.data_bytes);
  EXPECT_GT(preparation->sequence, online.sequence);
  EXPECT_FALSE(leader_.form_preparation(KrbLoad::Idle, true).has_value()) << "two preparations at once";
  leader_.batch_done(*preparation, true, 189'760);

  const auto used = run_krb();
  EXPECT_EQ(used.krb_evaluation, wire::KrbEvaluation::PreparedTwice);
  EXPECT_EQ(used.prepared, preparation->sequence);
  EXPECT_EQ(run_krb().krb_evaluation, wire::KrbEvaluation::GarbledTwice);
}

// A preparation runs on a worker of its own at the lowest CPU priority, beside a running job, but
// none starts while every Kerberos worker is busy: the servers are saturated then. It takes no
// Kerberos worker: a job's batch still forms beside it.
TEST_F(PreparingLeaderTest, APreparationStartsBesideAJobButNotWhenKerberosWorkersAreBusy) {
  run_krb();
  EXPECT_FALSE(leader_.form_preparation(KrbLoad::Full, true).has_value())
      << "prepared with every Kerberos worker busy";
  const auto ahead = prepare();
  ASSERT_TRUE(ahead.has_value());
  krb();
  const auto header = leader_.form_batch(jobs_, true, true);
  ASSERT_TRUE(header.has_value());
  EXPECT_EQ(header->krb_evaluation, wire::KrbEvaluation::GarbledTwice);
  EXPECT_GT(header->sequence, ahead->sequence);
}

// Beside jobs only a circuit with no garbling ready is prepared; the second of a circuit, a
// reserve, waits until Kerberos jobs have paused with every Kerberos worker idle.
TEST_F(PreparingLeaderTest, TheReserveWaitsForAPause) {
  run_krb();
  const auto first = prepare();
  ASSERT_TRUE(first.has_value());
  leader_.batch_done(*first, true, 189'760);
  EXPECT_FALSE(prepare().has_value()) << "a reserve prepared beside jobs";
  EXPECT_FALSE(leader_.form_preparation(KrbLoad::Idle, true).has_value()) << "a reserve prepared before the pause";
  ASSERT_TRUE(leader_.wake_at().has_value());
  std::this_thread::sleep_for(BatchLeader::kQuietBeforePreparing + std::chrono::milliseconds(5));
  EXPECT_FALSE(prepare().has_value()) << "a reserve prepared while a Kerberos worker is busy";
  const auto reserve = leader_.form_preparation(KrbLoad::Idle, true);
  ASSERT_TRUE(reserve.has_value());
  EXPECT_EQ(reserve->circuit, kCircuit.id);
  leader_.batch_done(*reserve, true, 189'760);
  EXPECT_FALSE(prepare_after_pause().has_value()) << "more than two ready";
}

// A batch that failed with a prepared garbling empties the stock: a server may have lost its
// garblings, and the next job garbles online.
TEST_F(PreparingLeaderTest, AFailedPreparedBatchEmptiesTheStock) {
  run_krb();
  for (int i = 0; i < 2; ++i) {
    const auto preparation = prepare_after_pause();
    ASSERT_TRUE(preparation.has_value());
    leader_.batch_done(*preparation, true, 189'760);
  }
  EXPECT_EQ(run_krb(false).krb_evaluation, wire::KrbEvaluation::PreparedTwice);
  EXPECT_EQ(run_krb().krb_evaluation, wire::KrbEvaluation::GarbledTwice);
}

// Two jobs of a circuit with one garbling ready: the first gets a batch of its own that evaluates
// it, the second a batch garbled online.
TEST_F(PreparingLeaderTest, AJobWithAGarblingReadyGetsABatchOfItsOwn) {
  run_krb();
  const auto preparation = prepare();
  ASSERT_TRUE(preparation.has_value());
  leader_.batch_done(*preparation, true, 189'760);
  krb();
  krb();
  const auto first = leader_.form_batch(jobs_, true, true);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(total(*first), 1u);
  EXPECT_EQ(first->krb_evaluation, wire::KrbEvaluation::PreparedTwice);
  const auto second = leader_.form_batch(jobs_, true, true);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(total(*second), 1u);
  EXPECT_EQ(second->krb_evaluation, wire::KrbEvaluation::GarbledTwice);
}

// Without a garbling ready, jobs of one circuit still share a batch garbled online.
TEST_F(PreparingLeaderTest, JobsWithoutAGarblingReadyShareABatch) {
  run_krb();
  krb();
  krb();
  const auto header = leader_.form_batch(jobs_, true, true);
  ASSERT_TRUE(header.has_value());
  EXPECT_EQ(total(*header), 2u);
  EXPECT_EQ(header->krb_evaluation, wire::KrbEvaluation::GarbledTwice);
}

TEST_F(PreparingLeaderTest, APassiveClusterPreparesNothing) {
  settings_.security = settings::Security::Passive;
  BatchLeader passive(settings_, log_);
  passive.job_admitted(krb());
  const auto header = passive.form_batch(jobs_, true, true);
  ASSERT_TRUE(header.has_value());
  passive.batch_done(*header, true, 189'760);
  EXPECT_FALSE(passive.form_preparation(BatchLeader::KrbLoad::Some, true).has_value());
  std::this_thread::sleep_for(BatchLeader::kQuietBeforePreparing + std::chrono::milliseconds(5));
  EXPECT_FALSE(passive.form_preparation(BatchLeader::KrbLoad::Idle, true).has_value());
}

// Without an idle worker for its pool nothing is formed, small or not.
TEST_F(LeaderTest, NothingIsFormedWithoutAnIdleWorker) {
  prefetch(1);
  EXPECT_FALSE(leader_.form_batch(jobs_, true, false).has_value());
}

}  // namespace
}  // namespace mpc::three_party_engine
