#include "protocol/lut2/ot_preprocessing.hpp"

#include <sodium.h>

#include <cstring>

#include "common/secret.hpp"
#include "protocol/two_party/fixed_key_hash.hpp"

namespace mpc::lut2 {
namespace {

using two_party::Block;

// Tweak space of the pads: top bit set like the OT hash's, another label ("LUT-OT").
constexpr std::uint64_t kTweakHigh = (1ull << 63) | 0x4c55542d4f54ull;

// Tweak of half h of the term of ROT i in the pad of message j of entry k.
std::uint64_t tweak(std::uint64_t entry, std::uint32_t j, std::uint32_t i, std::uint32_t half) {
  return ((entry * 256 + j) * 8 + i) * 2 + half;
}

}  // namespace

std::vector<Entry> ot_preprocess_send(ot::OtExtensionSender& sender, two_party::Channel& peer, std::uint64_t first_entry,
                                      std::size_t count) {
  std::vector<Block> k0(8 * count), k1(8 * count);
  sender.random(k0, k1);
  std::vector<Entry> out(count);
  std::vector<std::uint8_t> masks(count);
  randombytes_buf(masks.data(), masks.size());
  std::vector<Block> keys(256 * 8 * 2), hashed(256 * 8 * 2);
  std::vector<std::uint8_t> messages(256 * 32);
  for (std::size_t k = 0; k < count; ++k) {
    Entry& entry = out[k];
    randombytes_buf(entry.one_hot.data(), sizeof entry.one_hot);
    entry.mask = masks[k];
    // Every pad term at once, tweaks in order: (j, i, half) for j < 256, i < 8.
    for (std::uint32_t j = 0; j < 256; ++j)
      for (std::uint32_t i = 0; i < 8; ++i) {
        const Block& key = ((j >> i) & 1) ? k1[8 * k + i] : k0[8 * k + i];
        keys[(j * 8 + i) * 2] = key;
        keys[(j * 8 + i) * 2 + 1] = key;
      }
    two_party::tccr_hash(keys.data(), hashed.data(), keys.size(), kTweakHigh, tweak(first_entry + k, 0, 0, 0), 1);
    for (std::uint32_t j = 0; j < 256; ++j) {
      Block pad[2] = {};
      for (std::uint32_t i = 0; i < 8; ++i) {
        pad[0] ^= hashed[(j * 8 + i) * 2];
        pad[1] ^= hashed[(j * 8 + i) * 2 + 1];
      }
      auto message = one_hot(static_cast<std::uint8_t>(entry.mask ^ j));
      for (int w = 0; w < 4; ++w) message[w] ^= entry.one_hot[w];
      std::uint8_t* slot = messages.data() + j * 32;
      std::memcpy(slot, message.data(), 32);
      const auto* pad_bytes = reinterpret_cast<const std::uint8_t*>(pad);
      for (int b = 0; b < 32; ++b) slot[b] ^= pad_bytes[b];
    }
    peer.send(messages);
  }
  peer.flush();
  wipe(k0.data(), k0.size() * sizeof(Block));
  wipe(k1.data(), k1.size() * sizeof(Block));
  wipe(keys.data(), keys.size() * sizeof(Block));
  wipe(hashed.data(), hashed.size() * sizeof(Block));
  wipe(masks.data(), masks.size());
  return out;
}

std::vector<Entry> ot_preprocess_receive(ot::OtExtensionReceiver& receiver, two_party::Channel& peer,
                                         std::uint64_t first_entry, std::size_t count) {
  std::vector<std::uint8_t> masks(count);
  randombytes_buf(masks.data(), masks.size());
  std::vector<std::uint8_t> choices(8 * count);
  for (std::size_t k = 0; k < count; ++k)
    for (int i = 0; i < 8; ++i) choices[8 * k + i] = (masks[k] >> i) & 1;
  std::vector<Block> keys(8 * count);
  receiver.random(choices, keys);
  std::vector<Entry> out(count);
  std::vector<std::uint8_t> messages(256 * 32);
  Block inputs[16], hashed[16];
  for (std::size_t k = 0; k < count; ++k) {
    peer.receive(messages);
    const std::uint32_t j = masks[k];
    for (int i = 0; i < 8; ++i) inputs[2 * i] = inputs[2 * i + 1] = keys[8 * k + static_cast<std::size_t>(i)];
    two_party::tccr_hash(inputs, hashed, 16, kTweakHigh, tweak(first_entry + k, j, 0, 0), 1);
    Block pad[2] = {};
    for (int i = 0; i < 8; ++i) {
      pad[0] ^= hashed[2 * i];
      pad[1] ^= hashed[2 * i + 1];
    }
    // Message r2 is read by scanning all 256 under a mask: no memory access depends on r2.
    std::uint8_t share[32] = {};
    for (std::uint32_t m = 0; m < 256; ++m) {
      const std::uint32_t differs = m ^ j;
      const auto select = static_cast<std::uint8_t>(((differs | (0u - differs)) >> 31) - 1);
      for (int b = 0; b < 32; ++b) share[b] |= messages[m * 32 + static_cast<std::uint32_t>(b)] & select;
    }
    const auto* pad_bytes = reinterpret_cast<const std::uint8_t*>(pad);
    for (int b = 0; b < 32; ++b) share[b] ^= pad_bytes[b];
    std::memcpy(out[k].one_hot.data(), share, 32);
    out[k].mask = masks[k];
    wipe(share, sizeof share);
    wipe(pad, sizeof pad);
  }
  wipe(keys.data(), keys.size() * sizeof(Block));
  wipe(masks.data(), masks.size());
  wipe(inputs, sizeof inputs);
  wipe(hashed, sizeof hashed);
  return out;
}

}  // namespace mpc::lut2
