// In-process three-party ring for LayerExchange (see memory_ring.hpp).
#include "protocol/rss3/memory_ring.hpp"

#include <cstring>
#include <string>

#include "common/error.hpp"
#include "common/secret.hpp"

namespace mpc::rss3 {

class MemoryRing::Endpoint final : public LayerExchange {
 public:
  Endpoint(MemoryRing& ring, int party) : ring_(ring), party_(party) {}
  void exchange(std::uint32_t layer, std::span<const std::uint8_t> outgoing,
                std::span<std::uint8_t> incoming) override {
    const auto lent = exchange_lent(layer, outgoing, incoming.size());
    if (!lent.empty()) std::memcpy(incoming.data(), lent.data(), lent.size());
  }

  // The message as the ring queued it, wiped at the next call (as a reader of it too late
  // would find).
  std::span<const std::uint8_t> exchange_lent(std::uint32_t layer, std::span<const std::uint8_t> outgoing,
                                              std::size_t incoming_bytes) override {
    release_held();
    if (outgoing.size() != incoming_bytes)
      throw Error(Component::Protocol, "exchange: incoming and outgoing buffers differ in size");
    ring_.post(next_party(party_), layer, outgoing);
    held_ = ring_.take(party_, layer, incoming_bytes);
    return held_.bytes;
  }

  ~Endpoint() override { release_held(); }

 private:
  void release_held() noexcept {
    if (!held_.bytes.empty()) wipe(held_.bytes.data(), held_.bytes.size());
    held_.bytes.clear();
  }

  MemoryRing& ring_;
  int party_;
  Message held_{};
};

MemoryRing::MemoryRing(std::chrono::milliseconds timeout) : timeout_(timeout) {
  for (int i = 0; i < kParties; ++i) endpoints_[static_cast<std::size_t>(i)] = std::make_unique<Endpoint>(*this, i);
}

MemoryRing::~MemoryRing() {
  for (auto& mailbox : mailboxes_)
    for (auto& message : mailbox)
      if (!message.bytes.empty()) wipe(message.bytes.data(), message.bytes.size());
}

LayerExchange& MemoryRing::endpoint(int party) {
  if (party < 0 || party >= kParties) throw Error(Component::Protocol, "no such party: " + std::to_string(party));
  return *endpoints_[static_cast<std::size_t>(party)];
}

void MemoryRing::abort() noexcept {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    aborted_ = true;
  }
  arrived_.notify_all();
}

bool MemoryRing::aborted() const noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  return aborted_;
}

void MemoryRing::post(int to, std::uint32_t layer, std::span<const std::uint8_t> bytes) {
  Message message{layer, std::vector<std::uint8_t>(bytes.begin(), bytes.end())};
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (aborted_) throw PeerError(Component::Protocol, "computation aborted");
    mailboxes_[static_cast<std::size_t>(to)].push_back(std::move(message));
  }
  arrived_.notify_all();
}

MemoryRing::Message MemoryRing::take(int party, std::uint32_t layer, std::size_t bytes) {
  auto& mailbox = mailboxes_[static_cast<std::size_t>(party)];
  std::unique_lock<std::mutex> lock(mutex_);
  const bool ready = arrived_.wait_for(lock, timeout_, [&] { return aborted_ || !mailbox.empty(); });
  if (aborted_) throw PeerError(Component::Protocol, "computation aborted");
  if (!ready)
    throw PeerError(Component::Protocol, "party " + std::to_string(party) + ": no message from party " +
                                             std::to_string(previous_party(party)) + " for layer " +
                                             std::to_string(layer) + " within the timeout");
  Message message = std::move(mailbox.front());
  mailbox.pop_front();
  lock.unlock();
  const bool size_ok = message.bytes.size() == bytes;
  const bool layer_ok = message.layer == layer;
  if (size_ok && layer_ok) return message;
  if (!message.bytes.empty()) wipe(message.bytes.data(), message.bytes.size());
  if (!layer_ok)
    throw PeerError(Component::Protocol, "party " + std::to_string(party) + ": expected layer " + std::to_string(layer) +
                                             ", received layer " + std::to_string(message.layer));
  throw PeerError(Component::Protocol, "party " + std::to_string(party) + ": layer " + std::to_string(layer) +
                                           " message of " + std::to_string(message.bytes.size()) +
                                           " bytes, expected " + std::to_string(bytes));
}

}  // namespace mpc::rss3
