// tests/unit/engines/two_party/prepared_jobs_test.cpp: Kerberos garblings prepared ahead of time,
// both servers' garbled-circuit engines in one process over in-memory channels. A job run on a
// prepared garbling opens to what its circuit computes in the clear (as an online one does);
// a garbling serves one job only; the servers learn the shapes to prepare from the jobs that
// ran; new labels for a key (re-imported, or server 1 restarted), a deleted key and a
// restarted server 2 drop the garblings that no longer fit, and the job runs online instead;
// the budget drops the least recently used shape on both servers; server 2 refuses a
// preparation for labels it lacks and a job that names a garbling it did not offer.
#include <gtest/gtest.h>

#include <exception>
#include <random>
#include <thread>

#include "circuits/evaluate.hpp"
#include "common/error.hpp"
#include "jobs/krb_jobs.hpp"
#include "engines/two_party/gc2_backend.hpp"
#include "test_bytes.hpp"

namespace mpc::two_party_engine {
namespace {

using test::Bytes;
using test::random_bytes;
using test::xor_of;
constexpr std::size_t kBudget = std::size_t{64} << 20;

// Runs one side of a two-server exchange per thread, each over its end of a channel pair that
// goes away (so the other side's receive fails at once) when its side returns or throws.
struct Sides {
  std::exception_ptr first;
  std::exception_ptr second;
};
Sides run_both(const std::function<void(two_party::Channel&)>& first,
               const std::function<void(two_party::Channel&)>& second) {
  auto [one, two] = two_party::make_memory_channel_pair(std::chrono::milliseconds(5000));
  Sides sides;
  std::thread garbler([&, channel = std::move(one)]() mutable {
    try {
      first(*channel);
    } catch (...) {
      sides.first = std::current_exception();
    }
    channel.reset();
  });
  try {
    second(*two);
  } catch (...) {
    sides.second = std::current_exception();
  }
  two.reset();
  garbler.join();
  return sides;
}

std::string message_of(const std::exception_ptr& error) {
  try {
    if (error) std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// A Kerberos key's material and its two XOR shares.
struct Key {
  wire::KeyId id;
  Bytes material;
  Bytes first;
  Bytes second;
};

Key make_key(std::mt19937_64& rng, const std::string& name, wire::KeyAlgorithm algorithm) {
  Key key{wire::KeyId{name, 1, algorithm}, random_bytes(rng, wire::material_bytes(algorithm)), {}, {}};
  key.first = random_bytes(rng, key.material.size());
  key.second = xor_of(key.material, key.first);
  return key;
}

struct Job {
  wire::KrbOperation operation = wire::KrbOperation::Checksum;
  std::uint32_t usage = 56;
  Bytes data;
};

// A job as the servers get it: its secret record masked by R (wire/krb_record_mask.hpp; all of
// an Encrypt's or Checksum's data, none of a Decrypt's), each holding an XOR share of R.
struct Sent {
  Bytes data;
  Bytes first_mask;
  Bytes second_mask;
};

Sent sent_of(const Job& job) {
  static std::mt19937_64 rng(99);
  const std::size_t masked = job.operation == wire::KrbOperation::Decrypt ? 0 : job.data.size();
  Sent sent{job.data, random_bytes(rng, masked), random_bytes(rng, masked)};
  for (std::size_t i = 0; i < masked; ++i) sent.data[i] ^= sent.first_mask[i] ^ sent.second_mask[i];
  return sent;
}

KrbTask task_of(const Key& key, const Job& job, std::span<const std::uint8_t> share, const Sent& sent, bool first) {
  KrbTask task;
  task.job = 1;
  task.key = key.id;
  task.operation = job.operation;
  task.usage = job.usage;
  task.key_share = share;
  task.data = sent.data;
  task.mask_share = first ? sent.first_mask : sent.second_mask;
  return task;
}

// What the job's circuit computes in the clear on the key's material and the public record.
Bytes clear_result(const Key& key, const Job& job) {
  wire::KrbRequest request;
  request.key = key.id;
  request.operation = job.operation;
  request.usage = job.usage;
  request.data = job.data;
  const auto plan = jobs::plan_krb_job(request);
  const auto circuit = jobs::build_krb_circuit(plan.circuit, circuits::CircuitCost::FewestAnds);
  std::vector<std::uint8_t> bits;
  for (std::size_t i = 0; i < plan.secret.bytes * 8; ++i)
    bits.push_back((key.material[plan.secret.offset + i / 8] >> (i % 8)) & 1);
  bits.resize(bits.size() + 8 * plan.mask_bytes, 0);  // R = 0: the record as it is
  for (std::size_t i = 0; i < plan.public_record.size() * 8; ++i)
    bits.push_back((plan.public_record[i / 8] >> (i % 8)) & 1);
  const auto out = circuits::evaluate(circuit, bits);
  Bytes result(plan.result_bytes);
  for (std::size_t j = 0; j < out.size(); ++j) result[j / 8] |= static_cast<std::uint8_t>(out[j] << (j % 8));
  return result;
}

struct Servers {
  Logger log{"test", LogLevel::Error};
  std::unique_ptr<Gc2Backend> garbler;
  std::unique_ptr<Gc2Backend> evaluator;
  explicit Servers(std::size_t budget = kBudget) {
    restart_garbler(budget);
    restart_evaluator(budget);
  }
  void restart_garbler(std::size_t budget = kBudget) {
    garbler = std::make_unique<Gc2Backend>(0, log);
    garbler->set_preparation_budget(budget);
  }
  void restart_evaluator(std::size_t budget = kBudget) {
    evaluator = std::make_unique<Gc2Backend>(1, log);
    evaluator->set_preparation_budget(budget);
  }

  // Runs the job and returns the opened result (the XOR of the two servers' shares).
  Bytes run(const Key& key, const Job& job) {
    SecretBytes x, y;
    const Sent sent = sent_of(job);
    const auto sides =
        run_both([&](two_party::Channel& c) { x = garbler->krb(c, task_of(key, job, key.first, sent, true)).bytes; },
                 [&](two_party::Channel& c) { y = evaluator->krb(c, task_of(key, job, key.second, sent, false)).bytes; });
    EXPECT_FALSE(sides.first) << message_of(sides.first);
    EXPECT_FALSE(sides.second) << message_of(sides.second);
    return xor_of(x.span(), y.span());
  }

  // Prepares the garbling server 1 picks next; false when it picks none.
  bool prepare() {
    const auto shape = garbler->next_preparation();
    if (!shape) return false;
    const auto sides = run_both([&](two_party::Channel& c) { garbler->prepare(c, *shape); },
                                [&](two_party::Channel& c) { evaluator->store_prepared(c); });
    EXPECT_FALSE(sides.first) << message_of(sides.first);
    EXPECT_FALSE(sides.second) << message_of(sides.second);
    return !sides.first && !sides.second;
  }

  std::uint64_t used() const { return garbler->prepared().used.load(); }
  std::uint64_t online() const { return garbler->prepared().online.load(); }
};

TEST(PreparedJobs, APreparedGarblingOpensToTheCircuitsResult) {
  std::mt19937_64 rng(1);
  Servers servers;
  for (const auto algorithm : {wire::KeyAlgorithm::Aes256CtsHmacSha1, wire::KeyAlgorithm::Aes128CtsHmacSha256}) {
    const Key key = make_key(rng, std::string("krb/") + wire::algorithm_name(algorithm), algorithm);
    // A login's three jobs: preauth decrypt, AS-REP encrypt, request checksum.
    for (const auto& [operation, usage, length] : std::vector<std::tuple<wire::KrbOperation, std::uint32_t, std::size_t>>{
             {wire::KrbOperation::Decrypt, 1, 60}, {wire::KrbOperation::Encrypt, 3, 37},
             {wire::KrbOperation::Checksum, 56, 100}}) {
      SCOPED_TRACE(std::string(wire::algorithm_name(algorithm)) + " usage " + std::to_string(usage));
      Job job{operation, usage, random_bytes(rng, length)};
      const auto used = servers.used();
      EXPECT_EQ(servers.run(key, job), clear_result(key, job));  // online: the shape is learned
      EXPECT_EQ(servers.used(), used);
      ASSERT_TRUE(servers.prepare());
      job.data = random_bytes(rng, length);  // the public record comes after the garbling
      EXPECT_EQ(servers.run(key, job), clear_result(key, job));
      EXPECT_EQ(servers.used(), used + 1);
      EXPECT_EQ(servers.evaluator->prepared().used.load(), used + 1);
    }
  }
}

TEST(PreparedJobs, AGarblingServesOneJobOnly) {
  std::mt19937_64 rng(2);
  Servers servers;
  const Key key = make_key(rng, "krb/once", wire::KeyAlgorithm::Aes256CtsHmacSha1);
  Job job{wire::KrbOperation::Checksum, 56, random_bytes(rng, 20)};
  (void)servers.run(key, job);
  ASSERT_TRUE(servers.prepare());
  ASSERT_TRUE(servers.prepare());
  EXPECT_FALSE(servers.prepare());  // two kept ready per shape
  EXPECT_EQ(servers.garbler->prepared().garblings.entries(), 2u);
  EXPECT_EQ(servers.evaluator->prepared().tables.entries(), 2u);
  for (int i = 0; i < 3; ++i) {
    job.data = random_bytes(rng, 20);
    EXPECT_EQ(servers.run(key, job), clear_result(key, job)) << i;
  }
  // Two jobs on the two garblings, the third online: none was used twice.
  EXPECT_EQ(servers.used(), 2u);
  EXPECT_EQ(servers.online(), 2u);
  EXPECT_EQ(servers.evaluator->prepared().used.load(), 2u);
  EXPECT_EQ(servers.garbler->prepared().garblings.entries(), 0u);
  EXPECT_EQ(servers.evaluator->prepared().tables.entries(), 0u);
  // Used garblings are refilled.
  EXPECT_TRUE(servers.prepare());
}

TEST(PreparedJobs, NewLabelsForAKeyDropItsGarblings) {
  std::mt19937_64 rng(3);
  Servers servers;
  Key key = make_key(rng, "krb/reimported", wire::KeyAlgorithm::Aes256CtsHmacSha1);
  Job job{wire::KrbOperation::Encrypt, 3, random_bytes(rng, 30)};
  (void)servers.run(key, job);
  ASSERT_TRUE(servers.prepare());
  // The key imported anew (new shares of the same material): new labels on both servers.
  key.first = random_bytes(rng, key.material.size());
  key.second = xor_of(key.material, key.first);
  EXPECT_EQ(servers.run(key, job), clear_result(key, job));
  EXPECT_EQ(servers.used(), 0u);
  EXPECT_EQ(servers.garbler->prepared().garblings.entries(), 0u);
  EXPECT_EQ(servers.evaluator->prepared().tables.entries(), 0u);
  // Preparing for the new labels works; deleting the key drops it all on both sides.
  ASSERT_TRUE(servers.prepare());
  servers.garbler->forget_key(key.id);
  servers.evaluator->forget_key(key.id);
  EXPECT_EQ(servers.garbler->prepared().garblings.entries(), 0u);
  EXPECT_EQ(servers.evaluator->prepared().tables.entries(), 0u);
  EXPECT_FALSE(servers.garbler->next_preparation().has_value());
}

TEST(PreparedJobs, ARestartedServerTwoRunsTheJobOnlineAndServerOneDropsItsGarblings) {
  std::mt19937_64 rng(4);
  Servers servers;
  const Key key = make_key(rng, "krb/restart2", wire::KeyAlgorithm::Aes256CtsHmacSha1);
  Job job{wire::KrbOperation::Checksum, 56, random_bytes(rng, 50)};
  (void)servers.run(key, job);
  ASSERT_TRUE(servers.prepare());
  servers.restart_evaluator();
  // Server 2 lacks the labels: a preparation now is refused (no tables for labels it lacks).
  const auto shape = servers.garbler->next_preparation();
  ASSERT_TRUE(shape.has_value());
  const auto sides = run_both([&](two_party::Channel& c) { servers.garbler->prepare(c, *shape); },
                              [&](two_party::Channel& c) { servers.evaluator->store_prepared(c); });
  EXPECT_TRUE(sides.first);
  EXPECT_NE(message_of(sides.second).find("labels"), std::string::npos) << message_of(sides.second);
  servers.garbler->preparation_failed(*shape);
  EXPECT_EQ(servers.evaluator->prepared().tables.entries(), 0u);
  // The next job: server 2 offers nothing, gets the labels again, the job runs online, and
  // server 1 drops the garbling server 2 lost.
  EXPECT_EQ(servers.garbler->prepared().garblings.entries(), 1u);
  job.data = random_bytes(rng, 50);
  EXPECT_EQ(servers.run(key, job), clear_result(key, job));
  EXPECT_EQ(servers.used(), 0u);
  EXPECT_EQ(servers.garbler->prepared().garblings.entries(), 0u);
}

TEST(PreparedJobs, ARestartedServerOneIsNoticedByServerTwo) {
  std::mt19937_64 rng(5);
  Servers servers;
  const Key key = make_key(rng, "krb/restart1", wire::KeyAlgorithm::Aes256CtsHmacSha1);
  Job job{wire::KrbOperation::Decrypt, 1, random_bytes(rng, 44)};
  (void)servers.run(key, job);
  ASSERT_TRUE(servers.prepare());
  servers.restart_garbler();  // a new delta and new labels
  job.data = random_bytes(rng, 44);
  EXPECT_EQ(servers.run(key, job), clear_result(key, job));
  EXPECT_EQ(servers.evaluator->prepared().used.load(), 0u);
  EXPECT_EQ(servers.evaluator->prepared().tables.entries(), 0u);
  // The new server 1 prepares and uses garblings of its own.
  ASSERT_TRUE(servers.prepare());
  job.data = random_bytes(rng, 44);
  EXPECT_EQ(servers.run(key, job), clear_result(key, job));
  EXPECT_EQ(servers.used(), 1u);
}

TEST(PreparedJobs, TheBudgetDropsTheLeastRecentlyUsedShapeOnBothServers) {
  std::mt19937_64 rng(6);
  Servers servers;
  const Key a = make_key(rng, "krb/a", wire::KeyAlgorithm::Aes256CtsHmacSha1);
  const Key b = make_key(rng, "krb/b", wire::KeyAlgorithm::Aes256CtsHmacSha1);
  const Job job{wire::KrbOperation::Checksum, 56, random_bytes(rng, 10)};
  (void)servers.run(a, job);
  ASSERT_TRUE(servers.prepare());
  const std::size_t one = servers.garbler->prepared().garblings.bytes();
  ASSERT_GT(one, 0u);
  EXPECT_EQ(servers.evaluator->prepared().tables.bytes(), one);
  // Room for one shape's two garblings and a little more.
  servers.garbler->set_preparation_budget(2 * one + one / 2);
  servers.evaluator->set_preparation_budget(2 * one + one / 2);
  ASSERT_TRUE(servers.prepare());
  EXPECT_FALSE(servers.prepare());
  (void)servers.run(b, job);  // b's shape is now the most recently used; a's garblings stay
  EXPECT_EQ(servers.garbler->prepared().garblings.entries(), 2u);
  ASSERT_TRUE(servers.prepare());  // for b: a's shape is dropped for room, on both servers
  EXPECT_EQ(servers.garbler->prepared().garblings.entries(), 1u);
  EXPECT_EQ(servers.evaluator->prepared().tables.entries(), 1u);
  EXPECT_LE(servers.garbler->prepared().garblings.bytes(), 2 * one + one / 2);
  // The one held is b's: b's next job uses it, a's runs online.
  const auto used = servers.used();
  EXPECT_EQ(servers.run(b, job), clear_result(b, job));
  EXPECT_EQ(servers.used(), used + 1);
  EXPECT_EQ(servers.run(a, job), clear_result(a, job));
  EXPECT_EQ(servers.used(), used + 1);
}

TEST(PreparedJobs, NamingAGarblingServerTwoDidNotOfferFailsTheJob) {
  std::mt19937_64 rng(7);
  Servers servers;
  const Key key = make_key(rng, "krb/named", wire::KeyAlgorithm::Aes256CtsHmacSha1);
  Job job{wire::KrbOperation::Checksum, 17, random_bytes(rng, 8)};
  (void)servers.run(key, job);
  ASSERT_TRUE(servers.prepare());
  // A server 1 that answers server 2's offer with another garbling's id.
  std::uint64_t offered = 0;
  const auto sides = run_both(
      [&](two_party::Channel& c) {
        // The job's first bytes: each server's mode (0: security = "passive").
        const std::uint8_t passive = 0;
        c.send({&passive, 1});
        c.flush();
        std::uint8_t mode[1];
        c.receive(mode);
        std::array<std::uint8_t, 32> digest{};  // the job's request digest (all zero here)
        c.send(digest);
        c.flush();
        // Server 2's request for the record mask's labels comes first, then its handshake.
        std::uint8_t stock[8], first[4], flips[8];
        c.receive(stock);
        c.receive(first);
        c.receive(flips);
        std::uint8_t held[8], offer[8], more[1];
        c.receive(held);
        c.receive(offer);
        c.receive(more);
        for (int i = 0; i < 8; ++i) offered |= static_cast<std::uint64_t>(offer[i]) << (8 * i);
        const std::uint8_t no_transfer = 0;
        c.send(held);
        c.send({&no_transfer, 1});
        // The record mask's labels (garbage labels will do).
        const std::uint8_t serves = 0;
        c.send({&serves, 1});
        c.send(std::vector<std::uint8_t>(8 * 8 * 16, 0x5a));
        std::uint8_t named[8];
        for (int i = 0; i < 8; ++i) named[i] = static_cast<std::uint8_t>((offered + 1) >> (8 * i));
        c.send(named);
        c.flush();
      },
      [&](two_party::Channel& c) {
        (void)servers.evaluator->krb(c, task_of(key, job, key.second, sent_of(job), false));
      });
  EXPECT_NE(offered, 0u);
  ASSERT_TRUE(sides.second);
  EXPECT_NE(message_of(sides.second).find("named prepared garbling"), std::string::npos) << message_of(sides.second);
  // The offered garbling is gone from server 2 all the same: never used twice.
  EXPECT_EQ(servers.evaluator->prepared().tables.entries(), 0u);
}

TEST(PreparedJobs, ABudgetOfZeroPreparesNothing) {
  std::mt19937_64 rng(8);
  Servers servers(0);
  const Key key = make_key(rng, "krb/off", wire::KeyAlgorithm::Aes256CtsHmacSha1);
  const Job job{wire::KrbOperation::Encrypt, 2, random_bytes(rng, 16)};
  EXPECT_EQ(servers.run(key, job), clear_result(key, job));
  EXPECT_FALSE(servers.garbler->next_preparation().has_value());
  EXPECT_EQ(servers.online(), 1u);
}

}  // namespace
}  // namespace mpc::two_party_engine
