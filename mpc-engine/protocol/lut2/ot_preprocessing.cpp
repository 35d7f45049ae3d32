#include "protocol/lut2/ot_preprocessing.hpp"

#include <sodium.h>

#include <cstring>

#include "common/secret.hpp"
#include "protocol/two_party/fixed_key_hash.hpp"

namespace mpc::lut2 {
namespace {

using two_party::Block;
using Vector = std::array<std::uint64_t, 4>;

constexpr std::size_t kBits = 8;               // random OTs per entry: one per bit of r2
constexpr std::size_t kCorrectionBytes = 32;   // one 256-bit correction per OT
// Entries per chunk of work (bounds the scratch memory and the size of one message).
constexpr std::size_t kChunk = 1024;

// Tweak space of the PRG: top bit set like the OT hash's, another label ("LUT-SW").
constexpr std::uint64_t kTweakHigh = (1ull << 63) | 0x4c55542d5357ull;

// Tweak of half h of G(k_i^bit) of entry `entry`; G(k) = H(k, t) || H(k, t + 1).
std::uint64_t tweak(std::uint64_t entry, std::uint64_t i, std::uint64_t bit) { return ((entry * kBits + i) * 2 + bit) * 2; }

Vector to_vector(const Block* halves) {
  Vector v;
  std::memcpy(v.data(), halves, 32);
  return v;
}

}  // namespace

Vector swap_dimension(const Vector& u, unsigned i) {
  static constexpr std::uint64_t kLow[6] = {0x5555555555555555ull, 0x3333333333333333ull, 0x0f0f0f0f0f0f0f0full,
                                            0x00ff00ff00ff00ffull, 0x0000ffff0000ffffull, 0x00000000ffffffffull};
  Vector out;
  if (i < 6) {
    const unsigned shift = 1u << i;
    for (int w = 0; w < 4; ++w) out[w] = ((u[w] >> shift) & kLow[i]) | ((u[w] & kLow[i]) << shift);
  } else {
    const unsigned words = i == 6 ? 1 : 2;  // bit j lives in word j / 64
    for (unsigned w = 0; w < 4; ++w) out[w] = u[w ^ words];
  }
  return out;
}

std::vector<Entry> ot_preprocess_send(ot::OtExtensionSender& sender, two_party::Channel& peer, std::uint64_t first_entry,
                                      std::size_t count) {
  std::vector<Block> k0(kBits * count), k1(kBits * count);
  sender.random(k0, k1);
  std::vector<Entry> out(count);
  std::vector<std::uint8_t> masks(count);
  randombytes_buf(masks.data(), masks.size());
  std::vector<Block> keys(kBits * 4 * kChunk), expanded(kBits * 4 * kChunk);
  std::vector<std::uint8_t> corrections(kBits * kCorrectionBytes * kChunk);
  for (std::size_t first = 0; first < count; first += kChunk) {
    const std::size_t n = std::min(kChunk, count - first);
    // G(k0) and G(k1) of every OT of the chunk, tweaks in order: (entry, i, bit, half).
    for (std::size_t k = 0; k < n; ++k)
      for (std::size_t i = 0; i < kBits; ++i) {
        Block* slot = &keys[(k * kBits + i) * 4];
        slot[0] = slot[1] = k0[(first + k) * kBits + i];
        slot[2] = slot[3] = k1[(first + k) * kBits + i];
      }
    two_party::tccr_hash(keys.data(), expanded.data(), n * kBits * 4, kTweakHigh, tweak(first_entry + first, 0, 0), 1);
    Vector u, s, g1, swapped, c;
    for (std::size_t k = 0; k < n; ++k) {
      Entry& entry = out[first + k];
      entry.mask = masks[first + k];
      u = one_hot(entry.mask);
      for (std::size_t i = 0; i < kBits; ++i) {
        s = to_vector(&expanded[(k * kBits + i) * 4]);
        g1 = to_vector(&expanded[(k * kBits + i) * 4 + 2]);
        swapped = swap_dimension(u, static_cast<unsigned>(i));
        for (int w = 0; w < 4; ++w) {
          c[w] = s[w] ^ g1[w] ^ u[w] ^ swapped[w];
          u[w] ^= s[w];
        }
        std::memcpy(&corrections[(k * kBits + i) * kCorrectionBytes], c.data(), kCorrectionBytes);
      }
      entry.one_hot = u;
    }
    for (Vector* v : {&u, &s, &g1, &swapped}) wipe(v->data(), sizeof *v);
    peer.send({corrections.data(), n * kBits * kCorrectionBytes});
  }
  peer.flush();
  wipe(k0.data(), k0.size() * sizeof(Block));
  wipe(k1.data(), k1.size() * sizeof(Block));
  wipe(keys.data(), keys.size() * sizeof(Block));
  wipe(expanded.data(), expanded.size() * sizeof(Block));
  wipe(masks.data(), masks.size());
  return out;
}

std::vector<Entry> ot_preprocess_receive(ot::OtExtensionReceiver& receiver, two_party::Channel& peer,
                                         std::uint64_t first_entry, std::size_t count) {
  std::vector<std::uint8_t> masks(count);
  randombytes_buf(masks.data(), masks.size());
  std::vector<std::uint8_t> choices(kBits * count);
  for (std::size_t k = 0; k < count; ++k)
    for (std::size_t i = 0; i < kBits; ++i) choices[kBits * k + i] = (masks[k] >> i) & 1;
  std::vector<Block> keys(kBits * count);
  receiver.random(choices, keys);
  std::vector<Entry> out(count);
  std::vector<Block> inputs(kBits * 2 * kChunk), expanded(kBits * 2 * kChunk);
  std::vector<std::uint8_t> corrections(kBits * kCorrectionBytes * kChunk);
  for (std::size_t first = 0; first < count; first += kChunk) {
    const std::size_t n = std::min(kChunk, count - first);
    peer.receive({corrections.data(), n * kBits * kCorrectionBytes});
    // G(k_b) under the chosen key's tweaks (the bit only moves the tweak: no memory access
    // depends on it).
    for (std::size_t k = 0; k < n; ++k)
      for (std::size_t i = 0; i < kBits; ++i) {
        const std::size_t ot = (first + k) * kBits + i;
        Block* pair = &inputs[(k * kBits + i) * 2];
        pair[0] = pair[1] = keys[ot];
        two_party::tccr_hash(pair, &expanded[(k * kBits + i) * 2], 2, kTweakHigh,
                             tweak(first_entry + first + k, i, choices[ot]), 1);
      }
    Vector u, g, c, swapped;
    for (std::size_t k = 0; k < n; ++k) {
      u = Vector{};
      for (std::size_t i = 0; i < kBits; ++i) {
        const std::uint64_t select = 0 - static_cast<std::uint64_t>(choices[(first + k) * kBits + i]);
        g = to_vector(&expanded[(k * kBits + i) * 2]);
        std::memcpy(c.data(), &corrections[(k * kBits + i) * kCorrectionBytes], kCorrectionBytes);
        swapped = swap_dimension(u, static_cast<unsigned>(i));
        for (int w = 0; w < 4; ++w) u[w] = (u[w] ^ (select & (u[w] ^ swapped[w]))) ^ g[w] ^ (select & c[w]);
      }
      out[first + k].one_hot = u;
      out[first + k].mask = masks[first + k];
    }
    for (Vector* v : {&u, &g, &swapped}) wipe(v->data(), sizeof *v);
  }
  wipe(keys.data(), keys.size() * sizeof(Block));
  wipe(inputs.data(), inputs.size() * sizeof(Block));
  wipe(expanded.data(), expanded.size() * sizeof(Block));
  wipe(choices.data(), choices.size());
  wipe(masks.data(), masks.size());
  return out;
}

}  // namespace mpc::lut2
