#include "jobs/gcm_hash.hpp"

#include <string>
#include <vector>

#include "common/error.hpp"
#include "protocol/rss3/ghash.hpp"
#include "wire/key_id.hpp"

namespace mpc::jobs {

rss3::ByteShare gcm_hash_share(std::span<const std::uint8_t> x, std::span<const std::uint8_t> a,
                               std::span<const std::uint8_t> aad, std::span<const std::uint8_t> text) {
  const std::size_t count = rss3::ghash_blocks(aad.size(), text.size());
  if (count > wire::kGcmHashPowers)
    throw Error(Component::Server, "GCM input of " + std::to_string(count) + " GHASH blocks exceeds the " +
                                       std::to_string(wire::kGcmHashPowers) + " stored hash key powers");
  const std::size_t needed = wire::kGcmRoundKeyBytes + 16 * count;
  if (x.size() < needed || (!a.empty() && a.size() < needed))
    throw Error(Component::Server, "GCM key material too short for " + std::to_string(count) + " hash key powers");
  std::vector<rss3::ByteShare> powers(count);
  for (std::size_t k = 0; k < count; ++k) {
    const std::size_t at = wire::kGcmRoundKeyBytes + 16 * k;
    powers[k].x.assign(x.data() + at, x.data() + at + 16);
    if (a.empty()) {
      powers[k].a.assign(16, 0);
    } else {
      powers[k].a.assign(a.data() + at, a.data() + at + 16);
    }
  }
  rss3::ByteShare out;
  try {
    out = rss3::ghash_share(powers, aad, text);
  } catch (...) {
    for (auto& power : powers) power.wipe();
    throw;
  }
  for (auto& power : powers) power.wipe();
  return out;
}

rss3::ByteShare gcm_hash_share(const SecretBytes& share, std::span<const std::uint8_t> aad,
                               std::span<const std::uint8_t> text) {
  const std::size_t half = share.size() / 2;
  return gcm_hash_share(std::span(share.data(), half), std::span(share.data() + half, half), aad, text);
}

}  // namespace mpc::jobs
