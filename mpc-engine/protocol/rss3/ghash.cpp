// GHASH shares from replicated shares of the hash key powers (see ghash.hpp).
//
// GF(2^128) multiplication follows Algorithm 1 of NIST SP 800-38D (6.3), made constant time:
// each conditional XOR becomes an AND with a mask derived from the bit, and the loop runs
// all 128 iterations. The blocks are held as two 64-bit big-endian halves, so GCM's bit 0 is
// the top bit of `hi` and "shift right" is a 128-bit right shift.
#include "protocol/rss3/ghash.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "common/error.hpp"
#include "common/secret.hpp"

namespace mpc::rss3 {
namespace {

constexpr std::uint64_t kReduction = 0xe1ULL << 56;  // R = 11100001 || 0^120, top half

struct Element {
  std::uint64_t hi = 0;
  std::uint64_t lo = 0;
};

std::uint64_t load_be64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}

void store_be64(std::uint64_t v, std::uint8_t* p) {
  for (int i = 7; i >= 0; --i) {
    p[i] = static_cast<std::uint8_t>(v);
    v >>= 8;
  }
}

Element load(const std::uint8_t* block) { return {load_be64(block), load_be64(block + 8)}; }

void store(const Element& e, std::uint8_t* block) {
  store_be64(e.hi, block);
  store_be64(e.lo, block + 8);
}

Element multiply(const Element& x, const Element& y) {
  Element z;
  Element v = y;
  for (int i = 0; i < 128; ++i) {
    // Bit i of x in GCM order; the shift amount depends only on the public loop index.
    const std::uint64_t bit = i < 64 ? (x.hi >> (63 - i)) & 1U : (x.lo >> (127 - i)) & 1U;
    const std::uint64_t take = 0 - bit;
    z.hi ^= v.hi & take;
    z.lo ^= v.lo & take;
    // v = v * x: shift right by one, reduce by R when the bit shifted out was set.
    const std::uint64_t carry = 0 - (v.lo & 1U);
    v.lo = (v.lo >> 1) | (v.hi << 63);
    v.hi = (v.hi >> 1) ^ (kReduction & carry);
  }
  return z;
}

void wipe_element(Element& e) { mpc::wipe(&e, sizeof e); }

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
  Element x = load(a.data()), y = load(b.data());
  Element z = multiply(x, y);
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

ByteShare ghash_share(std::span<const ByteShare> power_shares, std::span<const std::uint8_t> aad,
                      std::span<const std::uint8_t> text) {
  const std::size_t aad_blocks = blocks_for(aad.size());
  const std::size_t text_blocks = blocks_for(text.size());
  const std::size_t m = ghash_blocks(aad.size(), text.size());
  if (power_shares.size() < m) {
    throw Error(Component::Protocol, "GHASH of " + std::to_string(m) + " blocks needs " + std::to_string(m) +
                                         " hash key powers, have " + std::to_string(power_shares.size()));
  }
  if (aad.size() > kMaxBytes || text.size() > kMaxBytes) {
    throw Error(Component::Protocol, "GHASH input longer than GCM's 64-bit length fields allow");
  }
  for (std::size_t k = 0; k < m; ++k) {
    const ByteShare& power = power_shares[k];
    if (power.x.size() != kGhashBlockBytes || power.a.size() != kGhashBlockBytes) {
      throw Error(Component::Protocol, "hash key power share " + std::to_string(k + 1) + " is not 16 + 16 bytes");
    }
  }

  Element sum_x, sum_a;
  // Block j (0-based) is multiplied by H^(m - j), i.e. power_shares[m - j - 1].
  auto absorb = [&](const GhashBlock& block, std::size_t j) {
    const ByteShare& power = power_shares[m - j - 1];
    const Element public_block = load(block.data());
    Element px = load(power.x.data()), pa = load(power.a.data());
    Element tx = multiply(public_block, px), ta = multiply(public_block, pa);
    sum_x.hi ^= tx.hi;
    sum_x.lo ^= tx.lo;
    sum_a.hi ^= ta.hi;
    sum_a.lo ^= ta.lo;
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

}  // namespace mpc::rss3
