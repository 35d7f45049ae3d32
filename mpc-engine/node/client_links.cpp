#include "node/client_links.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace mpc::node {
namespace {

// A routing id of ten bytes starting with a zero byte: ZeroMQ's own are five bytes, and ids a
// ZeroMQ client chooses may not start with zero.
constexpr char kLinkIdTag = 'L';
constexpr std::size_t kLinkIdBytes = 2 + 8;

std::string link_id(std::uint64_t serial) {
  std::string id(kLinkIdBytes, '\0');
  id[1] = kLinkIdTag;
  for (std::size_t i = 0; i < 8; ++i) id[2 + i] = static_cast<char>((serial >> (8 * i)) & 0xff);
  return id;
}

std::uint64_t serial_of(const std::string& id) {
  std::uint64_t serial = 0;
  for (std::size_t i = 0; i < 8; ++i) serial |= std::uint64_t{static_cast<std::uint8_t>(id[2 + i])} << (8 * i);
  return serial;
}

}  // namespace

ClientLinks::ClientLinks(const std::vector<transport::PublicKey>& compute_clients,
                         const std::vector<transport::PublicKey>& enrol_clients,
                         const std::vector<transport::PublicKey>& admin_clients, std::uint32_t max_request_bytes,
                         const Logger& log, std::size_t max_links_per_key)
    : log_(log), max_request_bytes_(max_request_bytes), max_links_per_key_(max_links_per_key) {
  for (const auto& key : compute_clients) roles_[key] = "compute";
  for (const auto& key : enrol_clients) roles_[key] = "enrol";
  for (const auto& key : admin_clients) roles_[key] = "admin";  // as on CurveZMQ, admin wins
}

std::vector<transport::PublicKey> ClientLinks::keys() const {
  std::vector<transport::PublicKey> keys;
  for (const auto& [key, role] : roles_) keys.push_back(key);
  return keys;
}

namespace {

std::size_t count_of(const std::map<transport::PublicKey, std::size_t>& counts, const transport::PublicKey& key) {
  const auto it = counts.find(key);
  return it == counts.end() ? 0 : it->second;
}

void decrement(std::map<transport::PublicKey, std::size_t>& counts, const transport::PublicKey& key) {
  const auto it = counts.find(key);
  if (it != counts.end() && --it->second == 0) counts.erase(it);
}

}  // namespace

bool ClientLinks::reserve(const transport::PublicKey& key) {
  std::lock_guard lock(mutex_);
  if (count_of(held_, key) + count_of(reserved_, key) >= max_links_per_key_) return false;
  ++reserved_[key];
  return true;
}

void ClientLinks::release(const transport::PublicKey& key) {
  std::lock_guard lock(mutex_);
  decrement(reserved_, key);
}

void ClientLinks::adopt(std::unique_ptr<transport::DataLink> link) {
  link->limit_frames(max_request_bytes_);
  {
    std::lock_guard lock(mutex_);
    decrement(reserved_, link->peer());
    ++held_[link->peer()];
    adopted_.push_back(std::move(link));
  }
  adopted_waiting_ = true;
  wakeup_.notify();
}

void ClientLinks::take_adopted() {
  // Checked on every turn of the shell's loop: the eventfd is read only when a link came.
  if (!adopted_waiting_.exchange(false)) return;
  wakeup_.clear();
  std::vector<std::unique_ptr<transport::DataLink>> adopted;
  {
    std::lock_guard lock(mutex_);
    adopted.swap(adopted_);
  }
  for (auto& link : adopted) {
    const auto role = roles_.find(link->peer());
    if (role == roles_.end()) {  // the listener admits only these keys
      forget(link->peer());
      continue;
    }
    std::size_t same_key = 0;
    std::optional<std::uint64_t> oldest;
    for (const auto& [serial, other] : links_) {
      if (other.link->peer() != link->peer()) continue;
      if (!oldest) oldest = serial;
      ++same_key;
    }
    if (same_key >= max_links_per_key_) close(*oldest, "the client opened more links than a key may hold");
    links_.emplace(next_serial_++, Link{std::move(link), role->second});
  }
}

std::vector<int> ClientLinks::descriptors() {
  take_adopted();
  std::vector<int> descriptors{wakeup_.descriptor()};
  for (const auto& [serial, link] : links_) descriptors.push_back(link.link->descriptor());
  return descriptors;
}

void ClientLinks::receive(std::span<const int> readable, std::size_t limit,
                          const std::function<void(transport::ReceivedMessage&)>& handle) {
  take_adopted();
  std::size_t handled = 0;
  const auto now = std::chrono::steady_clock::now();
  // Answering one request may answer others, on other links, and close a link that fails:
  // links are looked up afresh for each frame.
  std::vector<std::uint64_t> serials;
  for (const auto& [serial, link] : links_)
    if (link.link->buffered() ||
        std::find(readable.begin(), readable.end(), link.link->descriptor()) != readable.end())
      serials.push_back(serial);
  for (const std::uint64_t serial : serials) {
    try {
      for (;;) {
        const auto it = links_.find(serial);
        if (handled >= limit || it == links_.end() || !it->second.link->receive(frame_, now)) break;
        transport::ReceivedMessage message;
        message.routing_id = link_id(serial);
        message.sender = it->second.link->peer();
        message.role = it->second.role;
        message.data.swap(frame_);
        ++handled;
        handle(message);
      }
    } catch (const PeerError& error) {
      close(serial, error.what());
    }
  }
}

bool ClientLinks::buffered() const {
  return std::any_of(links_.begin(), links_.end(), [](const auto& entry) { return entry.second.link->buffered(); });
}

bool ClientLinks::is_link_id(const std::string& routing_id) {
  return routing_id.size() == kLinkIdBytes && routing_id[0] == '\0' && routing_id[1] == kLinkIdTag;
}

bool ClientLinks::send(const std::string& routing_id, std::span<const std::uint8_t> data,
                       std::chrono::steady_clock::time_point deadline) {
  if (!is_link_id(routing_id)) return false;
  const std::uint64_t serial = serial_of(routing_id);
  const auto it = links_.find(serial);
  if (it == links_.end()) return false;
  try {
    it->second.link->send({data}, deadline);
    return true;
  } catch (const PeerError& error) {
    close(serial, error.what());
    return false;
  }
}

void ClientLinks::close(std::uint64_t serial, const std::string& why) {
  const auto it = links_.find(serial);
  if (it == links_.end()) return;
  log_.info("client data link closed",
             {{"client_key", transport::z85_encode(it->second.link->peer())}, {"error", why}});
  forget(it->second.link->peer());
  links_.erase(it);
}

void ClientLinks::forget(const transport::PublicKey& key) {
  std::lock_guard lock(mutex_);
  decrement(held_, key);
}

}  // namespace mpc::node
