#include "lut_dealer/dealer_service.hpp"

#include <sodium.h>

#include "common/error.hpp"
#include "common/secret.hpp"
#include "protocol/lut2/dealer.hpp"

namespace mpc::lut_dealer {
namespace {

// Requests and hellos are a few bytes: nothing bigger is read (the floor libzmq's handshake needs).
constexpr std::int64_t kMaxIncomingBytes = 1024;
constexpr auto kReportInterval = std::chrono::minutes(1);
constexpr auto kRefusalLogInterval = std::chrono::minutes(1);

transport::LinkOptions listener_options() {
  transport::LinkOptions options;
  options.max_message_bytes = kMaxIncomingBytes;
  return options;
}

std::uint64_t fresh_batch_id() {
  std::uint64_t id = 0;
  while (id == 0) randombytes_buf(&id, sizeof id);
  return id;
}

// Sends a frame holding secret shares and wipes it, whatever happens.
bool send_secret(transport::Listener& listener, const std::string& route, std::vector<std::uint8_t>& frame) {
  bool sent = false;
  try {
    sent = listener.send(route, frame);
  } catch (...) {
    wipe(frame.data(), frame.size());
    throw;
  }
  wipe(frame.data(), frame.size());
  return sent;
}

}  // namespace

std::string dealer_role(int party) { return "server" + std::to_string(party + 1); }

DealerService::DealerService(const DealerSettings& settings, const transport::CurveKeyPair& own, const Logger& log)
    : settings_(settings), log_(log) {
  if (sodium_init() < 0) throw Error(Component::Server, "libsodium initialisation failed");
  for (int party = 0; party < 2; ++party)
    context_.allow(kDealerDomain, settings_.servers[static_cast<std::size_t>(party)], dealer_role(party));
  listener_ =
      std::make_unique<transport::Listener>(context_, settings_.endpoint, own, kDealerDomain, listener_options());
  log_.info("dealing", {{"endpoint", settings_.endpoint},
                        {"server1", transport::z85_encode(settings_.servers[0])},
                        {"server2", transport::z85_encode(settings_.servers[1])},
                        {"max_batch_entries", static_cast<std::uint64_t>(settings_.max_batch_entries)}});
}

DealerService::~DealerService() = default;

void DealerService::run(const std::atomic<bool>& stop) {
  while (!stop.load()) {
    serve_one(std::chrono::milliseconds(200));
    const auto now = std::chrono::steady_clock::now();
    if (now - last_report_ >= kReportInterval) {
      log_.info("dealt", {{"batches", batches_}, {"entries", entries_}});
      last_report_ = now;
    }
  }
  log_.info("stopping", {{"batches", batches_}, {"entries", entries_}});
}

bool DealerService::serve_one(std::chrono::milliseconds timeout) {
  auto message = listener_->receive(timeout);
  if (!message) return false;
  int party = -1;
  for (int p = 0; p < 2; ++p)
    if (message->role == dealer_role(p)) party = p;
  if (party < 0) return true;  // admitted with a role this listener never gives: drop
  wire::DealerMessage decoded;
  try {
    decoded = wire::decode_dealer(message->data);
  } catch (const FormatError& error) {
    log_.warn("malformed message", {{"party", party + 1}, {"error", error.what()}});
    return true;
  }
  if (std::holds_alternative<wire::DealerHello>(decoded)) {
    note_route(party, message->routing_id);
  } else if (const auto* request = std::get_if<wire::DealerBatchRequest>(&decoded)) {
    if (party != 0) {
      log_.warn("batch request from server 2 ignored: only server 1 asks for batches");
      return true;
    }
    note_route(party, message->routing_id);
    handle_request(message->routing_id, *request);
  } else {
    log_.warn("unexpected message from a server", {{"party", party + 1}, {"type", static_cast<int>(decoded.index())}});
  }
  return true;
}

void DealerService::note_route(int party, const std::string& route) {
  auto& known = routes_[static_cast<std::size_t>(party)];
  if (known && *known == route) return;
  known = route;
  log_.info("server connected", {{"party", party + 1}});
}

void DealerService::refuse(const std::string& route, std::uint64_t request, const std::string& reason) {
  // Server 1 retries a few times a second: one line per reason and minute is enough.
  const auto now = std::chrono::steady_clock::now();
  if (reason != last_refusal_ || now - last_refusal_logged_ >= kRefusalLogInterval) {
    log_.warn("batch refused", {{"reason", reason}});
    last_refusal_ = reason;
    last_refusal_logged_ = now;
  }
  wire::DealerBatchRefused refused;
  refused.request = request;
  refused.reason = reason;
  (void)listener_->send(route, wire::encode_dealer(refused));
}

void DealerService::handle_request(const std::string& route, const wire::DealerBatchRequest& request) {
  if (request.count > settings_.max_batch_entries) {
    refuse(route, request.request,
           "a batch of " + std::to_string(request.count) + " entries exceeds the dealer's [limits] max_batch_entries " +
               std::to_string(settings_.max_batch_entries));
    return;
  }
  if (!routes_[1]) {
    refuse(route, request.request, "server 2 has not connected to the dealer");
    return;
  }
  lut2::DealtBatch dealt = lut2::deal(request.count);
  const std::uint64_t batch = fresh_batch_id();
  // Server 2 first: when server 1 announces the batch, server 2's share is already on its way.
  {
    wire::DealerBatchEntries second;
    second.batch = batch;
    second.entries = std::move(dealt.second);
    auto frame = wire::encode_dealer(second);
    if (!send_secret(*listener_, *routes_[1], frame)) {
      routes_[1].reset();
      refuse(route, request.request, "server 2 is not reachable from the dealer");
      return;
    }
  }
  wire::DealerBatchSeed first;
  first.request = request.request;
  first.batch = batch;
  first.count = request.count;
  first.seed = dealt.first_seed;
  auto frame = wire::encode_dealer(first);
  // A batch server 1 never gets is never announced: server 2 wipes its share when it expires.
  if (!send_secret(*listener_, route, frame)) log_.warn("server 1 left before its batch was sent", {{"batch", batch}});
  ++batches_;
  entries_ += request.count;
  log_.debug("batch dealt", {{"batch", batch}, {"entries", static_cast<std::uint64_t>(request.count)}});
}

}  // namespace mpc::lut_dealer
