// cuda/device_ring.cpp: mailboxes of a DeviceRing (see device_ring.hpp).
#include "cuda/device_ring.hpp"

#include <string>

#include "common/error.hpp"

namespace mpc::cuda {

DeviceRing::DeviceRing(int parties, std::chrono::milliseconds timeout) {
  if (parties < 1) throw Error(Component::Protocol, "device ring of " + std::to_string(parties) + " parties");
  state_ = std::make_unique<State>(parties, timeout);
}

DeviceRing::~DeviceRing() = default;

int DeviceRing::parties() const noexcept { return state_->parties; }

void DeviceRing::abort() noexcept { state_->abort(); }

DeviceRing::State::State(int parties, std::chrono::milliseconds timeout)
    : parties(parties),
      timeout(timeout),
      generations_(static_cast<std::size_t>(parties), 0),
      outbox_(static_cast<std::size_t>(parties)),
      receipts_(static_cast<std::size_t>(parties)) {}

template <class Ready>
void DeviceRing::State::wait_for(std::unique_lock<std::mutex>& lock, Ready ready, const char* what) {
  if (!changed_.wait_for(lock, timeout, [&] { return aborted_ || ready(); }))
    throw PeerError(Component::Protocol, std::string("device ring: timed out waiting for ") + what);
  if (aborted_) throw PeerError(Component::Protocol, "device ring aborted");
}

std::uint64_t DeviceRing::State::begin(int party) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (party < 0 || party >= parties)
    throw Error(Component::Protocol, "device ring: no party " + std::to_string(party));
  if (aborted_) throw PeerError(Component::Protocol, "device ring aborted");
  return ++generations_[static_cast<std::size_t>(party)];
}

void DeviceRing::State::post(int party, std::uint64_t generation, std::uint32_t layer, const std::uint8_t* data,
                             void* ready) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& box = outbox_[static_cast<std::size_t>(party)];
    if (box.size() <= layer) box.resize(layer + std::size_t{1});
    box[layer] = {generation, data, ready};
  }
  changed_.notify_all();
}

DeviceRing::State::Message DeviceRing::State::take(int party, std::uint64_t generation, std::uint32_t layer) {
  const auto from = static_cast<std::size_t>((party + parties - 1) % parties);
  std::unique_lock<std::mutex> lock(mutex_);
  wait_for(
      lock, [&] { return outbox_[from].size() > layer && outbox_[from][layer].generation == generation; },
      "the previous party's message");
  return outbox_[from][layer];
}

void DeviceRing::State::acknowledge(int party, std::uint64_t generation, std::uint32_t layer, void* consumed) {
  const auto to = static_cast<std::size_t>((party + parties - 1) % parties);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& box = receipts_[to];
    if (box.size() <= layer) box.resize(layer + std::size_t{1});
    box[layer] = {generation, consumed};
  }
  changed_.notify_all();
}

DeviceRing::State::Receipt DeviceRing::State::receipt(int party, std::uint64_t generation, std::uint32_t layer) {
  const auto index = static_cast<std::size_t>(party);
  std::unique_lock<std::mutex> lock(mutex_);
  wait_for(
      lock, [&] { return receipts_[index].size() > layer && receipts_[index][layer].generation == generation; },
      "the next party to read a message");
  return receipts_[index][layer];
}

void DeviceRing::State::abort() noexcept {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    aborted_ = true;
  }
  changed_.notify_all();
}

bool DeviceRing::State::aborted() const noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  return aborted_;
}

}  // namespace mpc::cuda
