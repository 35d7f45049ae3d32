#include "node/job_metrics.hpp"

#include <cstdio>
#include <string>
#include <variant>

namespace mpc::node {

JobKind job_kind(const wire::Request& request) {
  if (const auto* compute = std::get_if<wire::ComputeRequest>(&request)) {
    switch (compute->operation) {
      case wire::Operation::CtrKeystream: return JobKind::CtrKeystream;
      case wire::Operation::EcbEncrypt: return JobKind::EcbEncrypt;
      case wire::Operation::EcbDecrypt: return JobKind::EcbDecrypt;
    }
  }
  if (std::holds_alternative<wire::GcmPrefetchRequest>(request)) return JobKind::GcmPrefetch;
  if (std::holds_alternative<wire::GcmTagRequest>(request)) return JobKind::GcmTag;
  if (std::holds_alternative<wire::GcmOpenRequest>(request)) return JobKind::GcmOpen;
  if (std::holds_alternative<wire::GcmReopenRequest>(request)) return JobKind::GcmReopen;
  if (std::holds_alternative<wire::GenerateKeyRequest>(request)) return JobKind::KeyGeneration;
  if (const auto* krb = std::get_if<wire::KrbRequest>(&request)) {
    switch (krb->operation) {
      case wire::KrbOperation::Encrypt: return JobKind::KrbEncrypt;
      case wire::KrbOperation::Decrypt: return JobKind::KrbDecrypt;
      case wire::KrbOperation::Checksum: return JobKind::KrbChecksum;
    }
  }
  return JobKind::Count;  // not a job: not counted
}

const char* job_kind_name(JobKind kind) {
  switch (kind) {
    case JobKind::CtrKeystream: return "ctr_keystream";
    case JobKind::EcbEncrypt: return "ecb_encrypt";
    case JobKind::EcbDecrypt: return "ecb_decrypt";
    case JobKind::GcmPrefetch: return "gcm_prefetch";
    case JobKind::GcmTag: return "gcm_tag";
    case JobKind::GcmOpen: return "gcm_open";
    case JobKind::GcmReopen: return "gcm_reopen";
    case JobKind::KrbEncrypt: return "krb_encrypt";
    case JobKind::KrbDecrypt: return "krb_decrypt";
    case JobKind::KrbChecksum: return "krb_checksum";
    case JobKind::KeyGeneration: return "key_generation";
    case JobKind::Count: break;
  }
  return "other";
}

void JobMetrics::add(JobKind kind, wire::Status status) {
  const auto k = static_cast<std::size_t>(kind), s = static_cast<std::size_t>(status);
  if (k < kKinds && s < kStatuses) ++counts_[k][s];
}

void JobMetrics::refused(JobKind kind, wire::Status status) { add(kind, status); }

void JobMetrics::answered(JobKind kind, wire::Status status, std::chrono::steady_clock::duration elapsed) {
  add(kind, status);
  const auto k = static_cast<std::size_t>(kind);
  if (k >= kKinds || status != wire::Status::Ok) return;
  const double seconds = std::chrono::duration<double>(elapsed).count();
  Latency& latency = latency_[k];
  ++latency.count;
  latency.seconds += seconds;
  for (std::size_t bucket = 0; bucket < kBuckets.size(); ++bucket)
    if (seconds <= kBuckets[bucket]) {
      ++latency.buckets[bucket];
      break;
    }
}

std::uint64_t JobMetrics::count(JobKind kind, wire::Status status) const {
  const auto k = static_cast<std::size_t>(kind), s = static_cast<std::size_t>(status);
  return k < kKinds && s < kStatuses ? counts_[k][s] : 0;
}

void JobMetrics::render(Exposition& out) const {
  out.metric("mpc_jobs_by_kind_total", "counter",
             "Client jobs this server answered, by kind and status (refusals on arrival included).");
  for (std::size_t k = 0; k < kKinds; ++k)
    for (std::size_t s = 0; s < kStatuses; ++s)
      if (counts_[k][s] != 0)
        out.sample("mpc_jobs_by_kind_total",
                   std::string("kind=\"") + job_kind_name(static_cast<JobKind>(k)) + "\",status=\"" +
                       wire::status_name(static_cast<wire::Status>(s)) + '"',
                   counts_[k][s]);
  out.metric("mpc_job_seconds", "histogram", "Seconds from a job's arrival to its answer, of the jobs answered ok.");
  for (std::size_t k = 0; k < kKinds; ++k) {
    const Latency& latency = latency_[k];
    if (latency.count == 0) continue;
    const std::string kind = std::string("kind=\"") + job_kind_name(static_cast<JobKind>(k)) + '"';
    std::uint64_t below = 0;
    for (std::size_t bucket = 0; bucket < kBuckets.size(); ++bucket) {
      below += latency.buckets[bucket];
      char bound[24];
      std::snprintf(bound, sizeof bound, "%g", kBuckets[bucket]);
      out.sample("mpc_job_seconds_bucket", kind + ",le=\"" + bound + '"', below);
    }
    out.sample("mpc_job_seconds_bucket", kind + ",le=\"+Inf\"", latency.count);
    out.sample_seconds("mpc_job_seconds_sum", kind, latency.seconds, 6);
    out.sample("mpc_job_seconds_count", kind, latency.count);
  }
}

}  // namespace mpc::node
