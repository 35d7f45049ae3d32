// The lookup-table dealer of a lut2 cluster with [lut] preprocessing = "dealer": an offline
// third server that deals the masked S-box entries both servers consume (protocol/lut2/
// dealer.hpp), so the two never run OT for them.
//
// It listens on one CurveZMQ socket that admits exactly the two servers' pinned keys, each as
// its party. Server 2 says Hello (again every second: its route changes when it reconnects);
// server 1 asks for batches. Per request the dealer draws a fresh batch and a fresh random
// batch id, sends server 2 its explicit entries, then server 1 the batch's seed, wipes the
// batch and forgets it: it keeps no state and holds no key, and a batch is never dealt twice.
// It never sees a key share, an online message or a client. Messages: wire/dealer_messages.hpp.
//
// Trust: the dealer knows every mask it deals. Alone it learns nothing (it never sees an
// opened value), but with either server's view it could unmask the AES state of every job:
// security holds against one semi-honest party of the three, so the dealer must run apart
// from both servers, administered by neither server's administrator.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/log.hpp"
#include "lut_dealer/dealer_settings.hpp"
#include "transport/zmq_link.hpp"
#include "wire/dealer_messages.hpp"

namespace mpc::lut_dealer {

// The ZAP domain of the dealer's listener and the role each server's key is admitted with.
inline constexpr const char* kDealerDomain = "lut-dealer";
std::string dealer_role(int party);  // "server1", "server2" for 0-based party 0, 1

class DealerService {
 public:
  DealerService(const DealerSettings& settings, const transport::CurveKeyPair& own, const Logger& log);
  ~DealerService();
  DealerService(const DealerService&) = delete;
  DealerService& operator=(const DealerService&) = delete;

  // Serves until `stop` is set (checked at least every 200 ms).
  void run(const std::atomic<bool>& stop);
  // Handles what arrived within `timeout`; false when nothing did.
  bool serve_one(std::chrono::milliseconds timeout);
  std::string bound_endpoint() const { return listener_->bound_endpoint(); }
  std::uint64_t batches_dealt() const noexcept { return batches_; }
  std::uint64_t entries_dealt() const noexcept { return entries_; }

 private:
  void handle_request(const std::string& route, const wire::DealerBatchRequest& request);
  void refuse(const std::string& route, std::uint64_t request, const std::string& reason);
  void note_route(int party, const std::string& route);

  DealerSettings settings_;
  Logger log_;
  transport::Context context_;
  std::unique_ptr<transport::Listener> listener_;
  // The route each server last spoke from: where its batches go.
  std::array<std::optional<std::string>, 2> routes_;
  std::uint64_t batches_ = 0;
  std::uint64_t entries_ = 0;
  std::chrono::steady_clock::time_point last_report_ = std::chrono::steady_clock::now();
  std::string last_refusal_;
  std::chrono::steady_clock::time_point last_refusal_logged_{};
};

}  // namespace mpc::lut_dealer
