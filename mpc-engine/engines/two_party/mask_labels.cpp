#include "engines/two_party/mask_labels.hpp"

#include <sodium.h>

#include <algorithm>
#include <string>

#include "common/error.hpp"
#include "common/secret.hpp"
#include "protocol/ot/ot_extension.hpp"

namespace mpc::two_party_engine {
namespace {

using gc2::Block;

template <typename T>
void send_le(two_party::Channel& peer, T value) {
  std::uint8_t bytes[sizeof(T)];
  for (std::size_t i = 0; i < sizeof(T); ++i) bytes[i] = static_cast<std::uint8_t>(value >> (8 * i));
  peer.send(bytes);
}

template <typename T>
T receive_le(two_party::Channel& peer) {
  std::uint8_t bytes[sizeof(T)];
  peer.receive(bytes);
  T value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) value |= static_cast<T>(static_cast<T>(bytes[i]) << (8 * i));
  return value;
}

void wipe_blocks(std::vector<Block>& blocks) {
  if (!blocks.empty()) wipe(blocks.data(), blocks.size() * sizeof(Block));
}

}  // namespace

void MaskLabelStock::Stock::wipe_all() { wipe_blocks(correlations); }

MaskLabelStock::~MaskLabelStock() {
  for (Stock& stock : stocks_) stock.wipe_all();
}

std::uint64_t MaskLabelStock::stocks_made() const {
  std::lock_guard lock(mutex_);
  return made_;
}

void MaskLabelStock::send(two_party::Channel& peer, const gc2::Garbler& garbler, std::span<const Block> zero_labels,
                          std::span<const std::uint8_t> own_bits) {
  const std::size_t n = zero_labels.size();
  if (own_bits.size() != n) throw Error(Component::Server, "mask labels: share bits and labels differ in number");
  if (n == 0) return;
  std::vector<std::uint8_t> flips((n + 7) / 8);
  std::vector<Block> q(n);
  // Takes [first, first + n) of the stock `id` if this server holds it and none of it is
  // spent: copies q_j out and marks them spent.
  const auto take = [&](std::uint64_t id, std::uint32_t first) {
    std::lock_guard lock(mutex_);
    const auto stock = std::find_if(stocks_.begin(), stocks_.end(), [&](const Stock& s) { return s.id == id; });
    if (id == 0 || stock == stocks_.end() || static_cast<std::size_t>(first) + n > stock->correlations.size())
      return false;
    for (std::size_t j = 0; j < n; ++j)
      if (stock->spent[first + j]) throw PeerError(Component::Server, "mask labels: server 2 spent a correlated OT twice");
    for (std::size_t j = 0; j < n; ++j) {
      stock->spent[first + j] = true;
      q[j] = stock->correlations[first + j];
      stock->correlations[first + j] = Block{};
    }
    return true;
  };
  const std::uint64_t named = receive_le<std::uint64_t>(peer);
  std::uint32_t first = receive_le<std::uint32_t>(peer);
  peer.receive(flips);
  if (take(named, first)) {
    const std::uint8_t serves = 0;
    peer.send({&serves, 1});
  } else {
    const std::size_t count = std::max(kStockOts, n);
    std::uint64_t fresh = 0;
    while (fresh == 0 || fresh == named) randombytes_buf(&fresh, sizeof fresh);
    const std::uint8_t renew = 1;
    peer.send({&renew, 1});
    send_le(peer, fresh);
    send_le(peer, static_cast<std::uint32_t>(count));
    peer.flush();
    Stock stock;
    stock.id = fresh;
    stock.correlations.resize(count);
    stock.spent.assign(count, false);
    ot::OtExtensionSender sender(peer);
    sender.correlated(garbler.delta(), stock.correlations);
    {
      std::lock_guard lock(mutex_);
      stocks_.push_back(std::move(stock));
      if (stocks_.size() > kStocksKept) {
        stocks_.front().wipe_all();
        stocks_.erase(stocks_.begin());
      }
      ++made_;
    }
    first = receive_le<std::uint32_t>(peer);
    peer.receive(flips);
    if (!take(fresh, first)) throw PeerError(Component::Server, "mask labels: server 2 spent outside the fresh stock");
  }
  gc2::Labels y(n);
  const Block delta = garbler.delta();
  for (std::size_t j = 0; j < n; ++j) {
    const bool flip = ((own_bits[j] ^ (flips[j / 8] >> (j % 8))) & 1) != 0;
    y[j] = zero_labels[j] ^ q[j];
    if (flip) y[j] ^= delta;
  }
  wipe_blocks(q);
  peer.send({reinterpret_cast<const std::uint8_t*>(y.data()), y.size() * sizeof(Block)});
}

gc2::Labels MaskLabelStock::receive(two_party::Channel& peer, std::span<const std::uint8_t> own_bits) {
  const std::size_t n = own_bits.size();
  gc2::Labels out(n);
  if (n == 0) return out;
  std::vector<Block> r(n);
  std::vector<std::uint8_t> flips((n + 7) / 8);
  // Hands out the next n correlated OTs of the newest stock (mutex_ held): its id and the first
  // index, or 0 when it lacks them.
  const auto hand_out = [&](std::uint32_t& first) -> std::uint64_t {
    first = 0;
    std::fill(flips.begin(), flips.end(), 0);
    if (stocks_.empty() || stocks_.back().next + n > stocks_.back().correlations.size()) return 0;
    Stock& stock = stocks_.back();
    first = static_cast<std::uint32_t>(stock.next);
    for (std::size_t j = 0; j < n; ++j) {
      const auto e = static_cast<std::uint8_t>((stock.choices[stock.next + j] ^ own_bits[j]) & 1);
      flips[j / 8] |= static_cast<std::uint8_t>(e << (j % 8));
      r[j] = stock.correlations[stock.next + j];
      stock.correlations[stock.next + j] = Block{};
    }
    stock.next += n;
    return stock.id;
  };
  std::uint32_t first = 0;
  std::uint64_t named = 0;
  {
    std::lock_guard lock(mutex_);
    named = hand_out(first);
  }
  send_le(peer, named);
  send_le(peer, first);
  peer.send(flips);
  peer.flush();
  std::uint8_t verdict = 0;
  peer.receive({&verdict, 1});
  if (verdict > 1) throw PeerError(Component::Server, "mask labels: malformed answer");
  if (verdict == 1) {
    Stock stock;
    stock.id = receive_le<std::uint64_t>(peer);
    const std::uint32_t count = receive_le<std::uint32_t>(peer);
    if (stock.id == 0 || count < n || count > kMaxStockOts)
      throw PeerError(Component::Server, "mask labels: a fresh stock of " + std::to_string(count) + " correlated OTs");
    stock.choices.resize(count);
    randombytes_buf(stock.choices.data(), stock.choices.size());
    for (auto& choice : stock.choices) choice &= 1;
    stock.correlations.resize(count);
    ot::OtExtensionReceiver receiver(peer);
    receiver.correlated(stock.choices, stock.correlations);
    {
      std::lock_guard lock(mutex_);
      for (Stock& old : stocks_) old.wipe_all();
      stocks_.clear();
      stocks_.push_back(std::move(stock));
      ++made_;
      named = hand_out(first);
    }
    send_le(peer, first);
    peer.send(flips);
    peer.flush();
  }
  peer.receive({reinterpret_cast<std::uint8_t*>(out.data()), out.size() * sizeof(Block)});
  for (std::size_t j = 0; j < n; ++j) out[j] ^= r[j];
  wipe_blocks(r);
  return out;
}

}  // namespace mpc::two_party_engine
