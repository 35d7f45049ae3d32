// The job a two-server server's workers run: what the main thread admits and announces, and
// what a worker hands back (two_server.cpp, circuit_requests.cpp).
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
#include "two_server/gc2_backend.hpp"
#include "two_server/two_server.hpp"
#include "wire/client_messages.hpp"
#include "wire/two_server_messages.hpp"

namespace mpc::two_server {

struct TwoServer::Job {
  std::uint64_t number = 0;
  wire::TwoServerJobKind kind = wire::TwoServerJobKind::ClientRequest;
  std::uint64_t pool_entries = 0;  // a preprocessing job: the entries it fills from pool_start
  std::uint64_t pool_epoch = 0;
  std::string routing_id;
  wire::ClientKey client{};
  wire::ComputeRequest request;
  SecretBytes key_share;
  std::uint64_t pool_start = 0;
  std::chrono::steady_clock::time_point arrived = std::chrono::steady_clock::now();
  // A follower that refused the request itself keeps this marker, so the announcement of a
  // job it will never run is abandoned at once instead of after job_wait.
  bool refused = false;
  // A Kerberos or GCM request, run by the garbled-circuit engine (gc2_backend.hpp); `request`
  // then carries only its id and key. Its digest lets the two servers check they got the same.
  std::optional<wire::Request> circuit;
  std::array<std::uint8_t, 32> digest{};
  // Set by the worker.
  SecretBytes result;
  GcmPrefetched prefetched;
  GcmOpened opened;
  wire::Status status = wire::Status::Ok;
  std::string error;
};

struct TwoServer::Worker {
  std::thread thread;
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<std::shared_ptr<Job>> queue;
  bool stopping = false;
};

}  // namespace mpc::two_server
