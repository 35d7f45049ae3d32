// Replicated Boolean secret sharing (Araki, Furukawa, Lindell, Nof, Ohara, CCS 2016,
// eprint 2016/768, section 2.1): dealer sharing and three-way reconstruction.
#include "protocol/rss3/shares.hpp"

#include <sodium.h>

#include <string>

#include "common/error.hpp"
#include "common/secret.hpp"

namespace mpc::rss3 {

ShareMatrix::ShareMatrix(std::size_t rows_, std::size_t instances_) { reset(rows_, instances_); }

void ShareMatrix::reset(std::size_t rows_, std::size_t instances_) {
  const std::size_t words = words_for(instances_);
  if (words != 0 && rows_ > x.max_size() / words) throw Error(Component::Protocol, "share matrix too large");
  rows = rows_;
  instances = instances_;
  words_per_row = words;
  // assign() keeps the capacity: a server reusing one matrix per batch touches no new pages.
  x.assign(rows * words_per_row, 0);
  a.assign(rows * words_per_row, 0);
}

void ShareMatrix::reset_wiped(std::size_t rows_, std::size_t instances_) {
  if (rows_ == rows && instances_ == instances && x.size() == rows * words_per_row &&
      a.size() == rows * words_per_row)
    return;
  reset(rows_, instances_);
}

void ShareMatrix::wipe() {
  if (!x.empty()) mpc::wipe(x.data(), x.size() * sizeof(std::uint64_t));
  if (!a.empty()) mpc::wipe(a.data(), a.size() * sizeof(std::uint64_t));
}

void ByteShare::wipe() {
  if (!x.empty()) mpc::wipe(x.data(), x.size());
  if (!a.empty()) mpc::wipe(a.data(), a.size());
}

std::array<ByteShare, kParties> share_bytes(std::span<const std::uint8_t> secret) {
  if (sodium_init() < 0) throw Error(Component::Protocol, "libsodium initialisation failed");
  const std::size_t n = secret.size();
  std::array<ByteShare, kParties> shares;
  for (auto& share : shares) {
    share.x.resize(n);
    share.a.resize(n);
  }
  // x0, x1 uniform, x2 = x0 ^ x1, so x0 ^ x1 ^ x2 = 0.
  if (n != 0) {
    randombytes_buf(shares[0].x.data(), n);
    randombytes_buf(shares[1].x.data(), n);
  }
  for (std::size_t j = 0; j < n; ++j) shares[2].x[j] = shares[0].x[j] ^ shares[1].x[j];
  // a_i = x_{i-1} ^ v.
  for (int i = 0; i < kParties; ++i) {
    const auto& previous = shares[static_cast<std::size_t>(previous_party(i))].x;
    auto& a = shares[static_cast<std::size_t>(i)].a;
    for (std::size_t j = 0; j < n; ++j) a[j] = previous[j] ^ secret[j];
  }
  return shares;
}

std::vector<std::uint8_t> reconstruct_bytes(const std::array<ByteShare, kParties>& shares) {
  const std::size_t n = shares[0].x.size();
  for (const auto& share : shares)
    if (share.x.size() != n || share.a.size() != n)
      throw Error(Component::Protocol, "share lengths disagree");
  // v as seen by the pairs (i-1, i): v = a_i ^ x_{i-1}, for i = 0, 1, 2.
  std::array<SecretBytes, kParties> views{SecretBytes(n), SecretBytes(n), SecretBytes(n)};
  for (int i = 0; i < kParties; ++i) {
    const auto& a = shares[static_cast<std::size_t>(i)].a;
    const auto& previous_x = shares[static_cast<std::size_t>(previous_party(i))].x;
    auto& view = views[static_cast<std::size_t>(i)];
    for (std::size_t j = 0; j < n; ++j) view[j] = a[j] ^ previous_x[j];
  }
  const bool agree01 = equal_constant_time(views[0].span(), views[1].span());
  const bool agree02 = equal_constant_time(views[0].span(), views[2].span());
  if (!(agree01 & agree02))
    throw Error(Component::Protocol, "share reconstructions disagree: a party's share was altered");
  return std::vector<std::uint8_t>(views[0].span().begin(), views[0].span().end());
}

}  // namespace mpc::rss3
