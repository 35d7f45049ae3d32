// GHASH shares from replicated shares of the hash key powers (see ghash.hpp).
//
// GCM's field is the AND check's (gf128.hpp): GF(2)[x] / (x^128 + x^7 + x^2 + x + 1). Only the
// bit order differs: GCM writes the coefficient of x^0 as the top bit of byte 0 (SP 800-38D,
// 6.3). Reversing the bits of every byte turns a block into the little-endian value whose
// bit k is the coefficient of x^k, so products are the field kernels' (PCLMULQDQ where the
// CPU has it, else the portable product; both constant time), and the reversal itself is
// masks and shifts, no table.
#include "protocol/rss3/ghash.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "common/error.hpp"
#include "common/secret.hpp"
#include "protocol/rss3/field_kernels.hpp"
#include "protocol/rss3/gf128.hpp"

namespace mpc::rss3 {
namespace {

static_assert(std::endian::native == std::endian::little, "blocks are read as little-endian words");

void store_be64(std::uint64_t v, std::uint8_t* p) {
  for (int i = 7; i >= 0; --i) {
    p[i] = static_cast<std::uint8_t>(v);
    v >>= 8;
  }
}

std::uint64_t reverse_bits_of_bytes(std::uint64_t v) {
  v = ((v >> 1) & 0x5555555555555555ULL) | ((v & 0x5555555555555555ULL) << 1);
  v = ((v >> 2) & 0x3333333333333333ULL) | ((v & 0x3333333333333333ULL) << 2);
  return ((v >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((v & 0x0F0F0F0F0F0F0F0FULL) << 4);
}

Gf128 load(const std::uint8_t* block) {
  Gf128 v;
  std::memcpy(&v.lo, block, 8);
  std::memcpy(&v.hi, block + 8, 8);
  return {reverse_bits_of_bytes(v.lo), reverse_bits_of_bytes(v.hi)};
}

void store(Gf128 v, std::uint8_t* block) {
  const std::uint64_t lo = reverse_bits_of_bytes(v.lo), hi = reverse_bits_of_bytes(v.hi);
  std::memcpy(block, &lo, 8);
  std::memcpy(block + 8, &hi, 8);
}

void wipe_element(Gf128& e) { mpc::wipe(&e, sizeof e); }

// Bit lengths go into 64-bit fields.
constexpr std::size_t kMaxBytes = std::numeric_limits<std::uint64_t>::max() / 8;

std::size_t blocks_for(std::size_t bytes) { return bytes / kGhashBlockBytes + (bytes % kGhashBlockBytes != 0 ? 1 : 0); }

// Block `index` of `data` zero-padded to whole blocks.
GhashBlock padded_block(std::span<const std::uint8_t> data, std::size_t index) {
  GhashBlock block{};
  const std::size_t start = index * kGhashBlockBytes;
  const std::size_t n = std::min(kGhashBlockBytes, data.size() - start);
  for (std::size_t i = 0; i < n; ++i) block[i] = data[start + i];
  return block;
}

}  // namespace

GhashBlock gf128_multiply(const GhashBlock& a, const GhashBlock& b) {
  Gf128 x = load(a.data()), y = load(b.data());
  Gf128 z = detail::field_kernels().mul(x, y);
  GhashBlock out;
  store(z, out.data());
  wipe_element(x);
  wipe_element(y);
  wipe_element(z);
  return out;
}

std::vector<GhashBlock> hash_key_powers(const GhashBlock& h, std::size_t count) {
  std::vector<GhashBlock> powers;
  // Reserved up front so no reallocation leaves unwiped copies of the powers behind.
  powers.reserve(count);
  if (count == 0) return powers;
  powers.push_back(h);
  for (std::size_t k = 1; k < count; ++k) powers.push_back(gf128_multiply(powers.back(), h));
  return powers;
}

std::size_t ghash_blocks(std::size_t aad_bytes, std::size_t text_bytes) {
  // Each term is at most SIZE_MAX / 16 + 1, so the sum cannot overflow.
  return blocks_for(aad_bytes) + blocks_for(text_bytes) + 1;
}

namespace {

// The share from power k's components (k from 0: H^(k+1)), `a` null for a zero component;
// `available` powers, checked against what the lengths need.
template <class PowerAt>
ByteShare ghash_share_of(std::size_t available, PowerAt power_at, std::span<const std::uint8_t> aad,
                         std::span<const std::uint8_t> text) {
  const std::size_t aad_blocks = blocks_for(aad.size());
  const std::size_t text_blocks = blocks_for(text.size());
  const std::size_t m = ghash_blocks(aad.size(), text.size());
  if (available < m) {
    throw Error(Component::Protocol, "GHASH of " + std::to_string(m) + " blocks needs " + std::to_string(m) +
                                         " hash key powers, have " + std::to_string(available));
  }
  if (aad.size() > kMaxBytes || text.size() > kMaxBytes) {
    throw Error(Component::Protocol, "GHASH input longer than GCM's 64-bit length fields allow");
  }

  const detail::FieldKernels& field = detail::field_kernels();
  Gf128 sum_x, sum_a;
  // Block j (0-based) is multiplied by H^(m - j), i.e. power m - j - 1.
  auto absorb = [&](const GhashBlock& block, std::size_t j) {
    const auto [x, a] = power_at(m - j - 1);
    const Gf128 public_block = load(block.data());
    Gf128 px = load(x), pa = a != nullptr ? load(a) : Gf128{};
    Gf128 tx = field.mul(public_block, px), ta = field.mul(public_block, pa);
    sum_x ^= tx;
    sum_a ^= ta;
    wipe_element(px);
    wipe_element(pa);
    wipe_element(tx);
    wipe_element(ta);
  };
  std::size_t j = 0;
  for (std::size_t i = 0; i < aad_blocks; ++i) absorb(padded_block(aad, i), j++);
  for (std::size_t i = 0; i < text_blocks; ++i) absorb(padded_block(text, i), j++);
  GhashBlock lengths{};
  store_be64(static_cast<std::uint64_t>(aad.size()) * 8, lengths.data());
  store_be64(static_cast<std::uint64_t>(text.size()) * 8, lengths.data() + 8);
  absorb(lengths, j++);

  ByteShare share;
  share.x.resize(kGhashBlockBytes);
  share.a.resize(kGhashBlockBytes);
  store(sum_x, share.x.data());
  store(sum_a, share.a.data());
  wipe_element(sum_x);
  wipe_element(sum_a);
  return share;
}

}  // namespace

ByteShare ghash_share(std::span<const ByteShare> power_shares, std::span<const std::uint8_t> aad,
                      std::span<const std::uint8_t> text) {
  const std::size_t needed = std::min(power_shares.size(), ghash_blocks(aad.size(), text.size()));
  for (std::size_t k = 0; k < needed; ++k) {
    const ByteShare& power = power_shares[k];
    if (power.x.size() != kGhashBlockBytes || power.a.size() != kGhashBlockBytes) {
      throw Error(Component::Protocol, "hash key power share " + std::to_string(k + 1) + " is not 16 + 16 bytes");
    }
  }
  return ghash_share_of(
      power_shares.size(),
      [&](std::size_t k) { return std::pair{power_shares[k].x.data(), power_shares[k].a.data()}; }, aad, text);
}

ByteShare ghash_share(std::span<const std::uint8_t> powers_x, std::span<const std::uint8_t> powers_a,
                      std::span<const std::uint8_t> aad, std::span<const std::uint8_t> text) {
  if (powers_x.size() % kGhashBlockBytes != 0 || (!powers_a.empty() && powers_a.size() != powers_x.size()))
    throw Error(Component::Protocol, "hash key power shares of " + std::to_string(powers_x.size()) + " + " +
                                         std::to_string(powers_a.size()) + " bytes");
  return ghash_share_of(
      powers_x.size() / kGhashBlockBytes,
      [&](std::size_t k) {
        return std::pair{powers_x.data() + kGhashBlockBytes * k,
                         powers_a.empty() ? nullptr : powers_a.data() + kGhashBlockBytes * k};
      },
      aad, text);
}

GhashBlock secret_block_ghash_share(std::span<const std::uint8_t> powers_x, std::span<const std::uint8_t> powers_a,
                                    std::size_t aad_bytes, std::size_t offset, const ByteShare& secret) {
  if (offset > aad_bytes || aad_bytes - offset < kGhashBlockBytes)
    throw Error(Component::Protocol, "secret GHASH block at byte " + std::to_string(offset) + " of " +
                                         std::to_string(aad_bytes) + " bytes of associated data");
  if (secret.x.size() != kGhashBlockBytes || secret.a.size() != kGhashBlockBytes)
    throw Error(Component::Protocol, "secret GHASH block share is not 16 + 16 bytes");
  const std::size_t m = ghash_blocks(aad_bytes, 0);
  if (powers_x.size() % kGhashBlockBytes != 0 || powers_a.size() != powers_x.size() ||
      powers_x.size() / kGhashBlockBytes < m)
    throw Error(Component::Protocol, "GHASH of " + std::to_string(m) + " blocks needs as many hash key power shares");
  const detail::FieldKernels& field = detail::field_kernels();
  Gf128 sum;
  // S spans block offset / 16 and, unless aligned, the next one; block j meets H^(m - j).
  for (std::size_t j = offset / kGhashBlockBytes; j * kGhashBlockBytes < offset + kGhashBlockBytes; ++j) {
    GhashBlock part_x{}, part_a{};
    for (std::size_t i = 0; i < kGhashBlockBytes; ++i) {
      const std::size_t at = j * kGhashBlockBytes + i;
      if (at < offset || at >= offset + kGhashBlockBytes) continue;
      part_x[i] = secret.x[at - offset];
      part_a[i] = secret.a[at - offset];
    }
    const std::size_t power = m - j - 1;
    Gf128 sx = load(part_x.data()), sa = load(part_a.data());
    Gf128 px = load(powers_x.data() + kGhashBlockBytes * power), pa = load(powers_a.data() + kGhashBlockBytes * power);
    sum ^= field.mul(sx, px) ^ field.mul(sa, pa);
    wipe_element(sx);
    wipe_element(sa);
    wipe_element(px);
    wipe_element(pa);
    mpc::wipe(part_x.data(), part_x.size());
    mpc::wipe(part_a.data(), part_a.size());
  }
  GhashBlock out;
  store(sum, out.data());
  wipe_element(sum);
  return out;
}

}  // namespace mpc::rss3
