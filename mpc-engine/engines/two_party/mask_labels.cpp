#include "engines/two_party/mask_labels.hpp"

#include <sodium.h>

#include <algorithm>
#include <string>

#include "common/error.hpp"
#include "common/secret.hpp"
#include "engines/two_party/channel_integers.hpp"
#include "protocol/ot/ot_extension.hpp"

namespace mpc::two_party_engine {
namespace {

using gc2::Block;

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

MaskLabelStock::Pending::~Pending() { wipe_blocks(correlations); }

bool MaskLabelStock::take(std::uint64_t id, std::uint32_t first, std::span<Block> q) {
  const std::size_t n = q.size();
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
}

MaskLabelStock::Asked MaskLabelStock::take_request(two_party::Channel& peer, std::size_t n) {
  Asked asked;
  if (n == 0) return asked;
  asked.stock = receive_le<std::uint64_t>(peer);
  asked.first = receive_le<std::uint32_t>(peer);
  asked.flips.resize((n + 7) / 8);
  peer.receive(asked.flips);
  return asked;
}

void MaskLabelStock::answer(two_party::Channel& peer, const gc2::Garbler& garbler, Asked& asked,
                            std::span<const Block> zero_labels, std::span<const std::uint8_t> own_bits) {
  const std::size_t n = zero_labels.size();
  if (own_bits.size() != n || asked.flips.size() != (n + 7) / 8)
    throw Error(Component::Server, "mask labels: share bits, labels and request differ in number");
  if (n == 0) return;
  std::vector<Block> q(n);
  if (take(asked.stock, asked.first, q)) {
    const std::uint8_t serves = 0;
    peer.send({&serves, 1});
  } else {
    const std::size_t count = std::max(kStockOts, n);
    std::uint64_t fresh = 0;
    while (fresh == 0 || fresh == asked.stock) randombytes_buf(&fresh, sizeof fresh);
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
    asked.first = receive_le<std::uint32_t>(peer);
    peer.receive(asked.flips);
    if (!take(fresh, asked.first, q))
      throw PeerError(Component::Server, "mask labels: server 2 spent outside the fresh stock");
  }
  gc2::Labels y(n);
  const Block delta = garbler.delta();
  for (std::size_t j = 0; j < n; ++j) {
    const bool flip = ((own_bits[j] ^ (asked.flips[j / 8] >> (j % 8))) & 1) != 0;
    y[j] = zero_labels[j] ^ q[j];
    if (flip) y[j] ^= delta;
  }
  wipe_blocks(q);
  peer.send({reinterpret_cast<const std::uint8_t*>(y.data()), y.size() * sizeof(Block)});
}

bool MaskLabelStock::hand_out(std::span<const std::uint8_t> own_bits, Pending& pending) {
  const std::size_t n = own_bits.size();
  pending.asked.stock = 0;
  pending.asked.first = 0;
  pending.asked.flips.assign((n + 7) / 8, 0);
  pending.correlations.assign(n, Block{});
  if (stocks_.empty() || stocks_.back().next + n > stocks_.back().correlations.size()) return false;
  Stock& stock = stocks_.back();
  pending.asked.stock = stock.id;
  pending.asked.first = static_cast<std::uint32_t>(stock.next);
  for (std::size_t j = 0; j < n; ++j) {
    const auto e = static_cast<std::uint8_t>((stock.choices[stock.next + j] ^ own_bits[j]) & 1);
    pending.asked.flips[j / 8] |= static_cast<std::uint8_t>(e << (j % 8));
    pending.correlations[j] = stock.correlations[stock.next + j];
    stock.correlations[stock.next + j] = Block{};
  }
  stock.next += n;
  return true;
}

MaskLabelStock::Pending MaskLabelStock::ask(two_party::Channel& peer, std::span<const std::uint8_t> own_bits) {
  Pending pending;
  if (own_bits.empty()) return pending;
  {
    std::lock_guard lock(mutex_);
    (void)hand_out(own_bits, pending);
  }
  send_le(peer, pending.asked.stock);
  send_le(peer, pending.asked.first);
  peer.send(pending.asked.flips);
  return pending;
}

gc2::Labels MaskLabelStock::collect(two_party::Channel& peer, Pending& pending, std::span<const std::uint8_t> own_bits) {
  const std::size_t n = own_bits.size();
  gc2::Labels out(n);
  if (n == 0) return out;
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
      (void)hand_out(own_bits, pending);
    }
    send_le(peer, pending.asked.first);
    peer.send(pending.asked.flips);
    peer.flush();
  }
  peer.receive({reinterpret_cast<std::uint8_t*>(out.data()), out.size() * sizeof(Block)});
  for (std::size_t j = 0; j < n; ++j) out[j] ^= pending.correlations[j];
  return out;
}

void MaskLabelStock::send(two_party::Channel& peer, const gc2::Garbler& garbler, std::span<const Block> zero_labels,
                          std::span<const std::uint8_t> own_bits) {
  Asked asked = take_request(peer, zero_labels.size());
  answer(peer, garbler, asked, zero_labels, own_bits);
}

gc2::Labels MaskLabelStock::receive(two_party::Channel& peer, std::span<const std::uint8_t> own_bits) {
  Pending pending = ask(peer, own_bits);
  peer.flush();
  return collect(peer, pending, own_bits);
}

}  // namespace mpc::two_party_engine
