#include "protocol/client_checks/share_checks.hpp"

#include <sodium.h>

#include <algorithm>

#include "common/error.hpp"

namespace mpc::client_checks {
namespace {

std::uint64_t word_value(const CheckWord& word) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < word.size(); ++i) value |= static_cast<std::uint64_t>(word[i]) << (8 * i);
  return value;
}

CheckWord word_of(std::uint64_t value) {
  CheckWord word{};
  for (std::size_t i = 0; i < word.size(); ++i) word[i] = static_cast<std::uint8_t>(value >> (8 * i));
  return word;
}

// a * b in GF(2^64) = GF(2)[x] / (x^64 + x^4 + x^3 + x + 1), bit i the coefficient of x^i; no
// branch on either operand (both are secrets).
std::uint64_t gf64_multiply(std::uint64_t a, std::uint64_t b) {
  std::uint64_t low = 0, high = 0;
  for (unsigned i = 0; i < 64; ++i) {
    const std::uint64_t take = 0 - ((b >> i) & 1);
    low ^= (a << i) & take;
    high ^= (i == 0 ? 0 : a >> (64 - i)) & take;
  }
  // x^64 = x^4 + x^3 + x + 1, twice: the first fold leaves at most four bits above x^63.
  const std::uint64_t over = (high >> 63) ^ (high >> 61) ^ (high >> 60);
  low ^= high ^ (high << 1) ^ (high << 3) ^ (high << 4);
  low ^= over ^ (over << 1) ^ (over << 3) ^ (over << 4);
  return low;
}

}  // namespace

std::vector<std::uint8_t> serialize(const ShareCheck& check) {
  std::vector<std::uint8_t> out(check.own_key.begin(), check.own_key.end());
  for (const auto& segment : check.segments) {
    out.insert(out.end(), segment.own_blinding.begin(), segment.own_blinding.end());
    out.insert(out.end(), segment.peer_tag.begin(), segment.peer_tag.end());
  }
  return out;
}

ShareCheck parse_share_check(std::span<const std::uint8_t> bytes) {
  constexpr std::size_t kSegment = 2 * kShareCheckWordBytes;
  if (bytes.size() < kShareCheckWordBytes + kSegment || (bytes.size() - kShareCheckWordBytes) % kSegment != 0)
    throw FormatError(Component::Protocol, "a key share's checks of " + std::to_string(bytes.size()) + " bytes");
  ShareCheck check;
  std::copy_n(bytes.begin(), kShareCheckWordBytes, check.own_key.begin());
  for (std::size_t at = kShareCheckWordBytes; at < bytes.size(); at += kSegment) {
    SegmentCheck segment;
    std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(at), kShareCheckWordBytes, segment.own_blinding.begin());
    std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(at + kShareCheckWordBytes), kShareCheckWordBytes,
                segment.peer_tag.begin());
    check.segments.push_back(segment);
  }
  return check;
}

CheckWord share_tag(const CheckWord& key, std::span<const std::uint8_t> share, const CheckWord& blinding) {
  const std::uint64_t a = word_value(key);
  std::uint64_t hash = 0;
  // Horner over the share's 64-bit blocks, the last zero-padded.
  for (std::size_t first = 0; first < share.size(); first += 8) {
    std::uint64_t block = 0;
    for (std::size_t i = 0; i < 8 && first + i < share.size(); ++i)
      block |= static_cast<std::uint64_t>(share[first + i]) << (8 * i);
    hash = gf64_multiply(hash ^ block, a);
  }
  return word_of(hash ^ word_value(blinding));
}

std::array<ShareCheck, 2> deal_share_checks(std::span<const std::uint8_t> first, std::span<const std::uint8_t> second,
                                            std::span<const Segment> segments) {
  if (first.size() != second.size() || first.empty() || segments.empty())
    throw Error(Component::Protocol, "key shares of different sizes to check");
  std::array<ShareCheck, 2> checks;
  for (auto& check : checks) {
    randombytes_buf(check.own_key.data(), check.own_key.size());
    check.segments.resize(segments.size());
    for (auto& segment : check.segments) randombytes_buf(segment.own_blinding.data(), segment.own_blinding.size());
  }
  for (std::size_t i = 0; i < segments.size(); ++i) {
    if (segments[i].bytes == 0 || segments[i].offset + segments[i].bytes > first.size())
      throw Error(Component::Protocol, "a checked segment outside the key's material");
    const auto part = [&](std::span<const std::uint8_t> share) { return share.subspan(segments[i].offset, segments[i].bytes); };
    checks[0].segments[i].peer_tag = share_tag(checks[0].own_key, part(second), checks[1].segments[i].own_blinding);
    checks[1].segments[i].peer_tag = share_tag(checks[1].own_key, part(first), checks[0].segments[i].own_blinding);
  }
  return checks;
}

}  // namespace mpc::client_checks
