// The job the two-party engine's workers run: what the shell's thread admits and announces,
// and what a worker hands back (two_party_engine.cpp, circuit_requests.cpp).
#pragma once

#include <array>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "common/secret.hpp"
#include "engines/two_party/gc2_backend.hpp"
#include "engines/two_party/two_party_engine.hpp"
#include "wire/client_messages.hpp"
#include "wire/two_server_messages.hpp"

namespace mpc::two_party_engine {

struct TwoPartyEngine::Job {
  std::uint64_t number = 0;
  wire::TwoServerJobKind kind = wire::TwoServerJobKind::ClientRequest;
  std::uint64_t pool_entries = 0;  // a preprocessing job: the entries it fills from pool_start
  std::uint64_t pool_epoch = 0;
  node::JobKey key;  // whose request: the client key and its request id
  wire::ClientKey client{};
  wire::ComputeRequest request;
  SecretBytes key_share;
  SecretBytes share_check;  // dealt with the share (EngineHost::key_share_check); empty: none
  SecretBytes mask_components;  // a prefetch with local masks: this server's (mask_components_of)
  std::uint64_t pool_start = 0;
  std::chrono::steady_clock::time_point arrived = std::chrono::steady_clock::now();
  // A Kerberos or GCM request, run by the garbled-circuit engine (gc2_backend.hpp); `request`
  // then carries only its id and key. Its digest lets the two servers check they got the same.
  std::optional<wire::Request> circuit;
  std::array<std::uint8_t, 32> digest{};
  // Set by the worker.
  SecretBytes result;
  std::optional<wire::PaddedReports> padded;  // a Compute job's reports, with outputs padded for the client
  std::optional<client_checks::PartReport> krb_report;  // a Kerberos job's, likewise
  GcmPrefetched prefetched;
  GcmOpened opened;
  wire::Status status = wire::Status::Ok;
  std::string error;
  std::string failed_check;  // VerificationFailed: the check (VerificationError::check)
};

struct TwoPartyEngine::Worker {
  std::thread thread;
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<std::shared_ptr<Job>> queue;
  bool stopping = false;
};

}  // namespace mpc::two_party_engine
