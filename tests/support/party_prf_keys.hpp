// Fixed PRF keys of three in-process parties, as each server would derive them from its edges
// (three_party_engine::derive_prf_keys): party i holds k_i and k_{i-1}, and the garbling keys
// likewise, and fixed X25519 identities for the AND check's signatures. Tests that run the
// three parties' batch code in one process use these.
#pragma once

#include <sodium.h>

#include <array>
#include <cstddef>
#include <memory>

#include "engines/three_party/prf_keys.hpp"

namespace mpc::test_support {

inline three_party_engine::PartyPrfKeys party_prf_keys(int party) {
  const std::array<rss3::PrfKey, 3> k = {rss3::PrfKey{11}, rss3::PrfKey{22}, rss3::PrfKey{33}};
  const std::array<rss3::PrfKey, 3> garbling = {rss3::PrfKey{44}, rss3::PrfKey{55}, rss3::PrfKey{66}};
  three_party_engine::PartyPrfKeys keys;
  keys.own = k[static_cast<std::size_t>(party)];
  keys.previous = k[static_cast<std::size_t>((party + 2) % 3)];
  keys.garbling_own = garbling[static_cast<std::size_t>(party)];
  keys.garbling_previous = garbling[static_cast<std::size_t>((party + 2) % 3)];
  std::array<std::array<std::uint8_t, 32>, 3> secrets{};
  for (std::size_t p = 0; p < 3; ++p) {
    secrets[p].fill(static_cast<std::uint8_t>(0x71 + p));
    crypto_scalarmult_base(keys.public_keys[p].data(), secrets[p].data());
  }
  keys.signer = std::make_shared<const IdentitySigner>(secrets[static_cast<std::size_t>(party)]);
  return keys;
}

}  // namespace mpc::test_support
