// Jobs a server answered, by kind and status, and how long each took from its arrival to its
// answer: the counters and latency histograms of the Prometheus endpoint. Kinds and statuses
// are short fixed lists, so every label stays of low cardinality.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "node/metrics_exposition.hpp"
#include "wire/client_messages.hpp"

namespace mpc::node {

enum class JobKind : std::uint8_t {
  CtrKeystream,
  EcbEncrypt,
  EcbDecrypt,
  GcmPrefetch,
  GcmTag,
  GcmOpen,
  GcmReopen,
  KrbEncrypt,
  KrbDecrypt,
  KrbChecksum,
  KeyGeneration,
  Count
};

// The kind of a job request (ComputeRequest, Gcm*, KrbRequest).
JobKind job_kind(const wire::Request& request);
const char* job_kind_name(JobKind kind);

class JobMetrics {
 public:
  // Upper bounds of the latency buckets, in seconds (the last bucket, +Inf, is implied).
  static constexpr std::array<double, 14> kBuckets{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                   0.1,    0.25,  0.5,    1.0,   2.5,  5.0,   10.0};

  // A job answered with `status`, `elapsed` after it arrived.
  void answered(JobKind kind, wire::Status status, std::chrono::steady_clock::duration elapsed);
  // A job refused on arrival (nothing held, nothing computed): counted, not timed.
  void refused(JobKind kind, wire::Status status);
  std::uint64_t count(JobKind kind, wire::Status status) const;

  // mpc_jobs_by_kind_total{kind,status} and mpc_job_seconds{kind} (a histogram of the jobs
  // answered Ok).
  void render(Exposition& out) const;

 private:
  void add(JobKind kind, wire::Status status);

  static constexpr std::size_t kKinds = static_cast<std::size_t>(JobKind::Count);
  static constexpr std::size_t kStatuses = static_cast<std::size_t>(wire::kLastStatus) + 1;
  struct Latency {
    std::array<std::uint64_t, kBuckets.size()> buckets{};  // not cumulative; render() sums them
    std::uint64_t count = 0;
    double seconds = 0;
  };

  std::array<std::array<std::uint64_t, kStatuses>, kKinds> counts_{};
  std::array<Latency, kKinds> latency_{};
};

}  // namespace mpc::node
