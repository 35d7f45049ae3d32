// What the tests of garbled three-server batches share: an AES-128 circuit and another of the
// same shape, a random key's round keys cut into the three servers' replicated shares, and the
// reference result.
#pragma once

#include <sodium.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "circuits/aes.hpp"
#include "circuits/aes_reference.hpp"
#include "circuits/program.hpp"
#include "common/secret.hpp"
#include "protocol/rss3/shares.hpp"

namespace mpc::security_test {

inline constexpr std::size_t kAesKeyBytes = 176;  // AES-128 round keys
inline constexpr std::size_t kAesKeyRows = 8 * kAesKeyBytes;

inline std::vector<std::uint8_t> random_bytes(std::size_t n) {
  std::vector<std::uint8_t> out(n);
  randombytes_buf(out.data(), n);
  return out;
}

inline circuits::Program aes128_program() {
  return circuits::compile(circuits::build_aes_circuit(circuits::AesKeySize::Aes128, circuits::AesDirection::Encrypt,
                                                       circuits::SboxVariant::And32));
}

// Another circuit of the same shape: every AND of the last AND layer takes its left input twice
// (x & x = x), so the output differs from AES wherever some x = 1, y = 0 there.
inline circuits::Program with_last_and_layer_altered(const circuits::Program& program) {
  circuits::Program other = program;
  for (auto it = other.layers.rbegin(); it != other.layers.rend(); ++it)
    if (!it->ands.empty()) {
      for (auto& gate : it->ands) gate.in1 = gate.in0;
      break;
    }
  return other;
}

// A random AES-128 key: its round keys, and each server's share of them (x || a).
struct SharedAesKey {
  std::vector<std::uint8_t> round_keys;
  std::array<SecretBytes, 3> shares;

  SharedAesKey() : round_keys(circuits::aes_expand_key(random_bytes(16))) {
    auto split = rss3::share_bytes(round_keys);
    for (std::size_t p = 0; p < 3; ++p) {
      shares[p] = SecretBytes(2 * kAesKeyBytes);
      std::copy(split[p].x.begin(), split[p].x.end(), shares[p].data());
      std::copy(split[p].a.begin(), split[p].a.end(), shares[p].data() + kAesKeyBytes);
    }
  }
  std::vector<std::uint8_t> encrypt(const std::vector<std::uint8_t>& block) const {
    const auto out = circuits::aes_encrypt_block(round_keys, std::span<const std::uint8_t, 16>(block.data(), 16));
    return {out.begin(), out.end()};
  }
};

}  // namespace mpc::security_test
