#include "jobs/gcm_hash.hpp"

#include <string>

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
  // The powers are read where they are stored: no copy of them to wipe.
  return rss3::ghash_share(x.subspan(wire::kGcmRoundKeyBytes, 16 * count),
                           a.empty() ? a : a.subspan(wire::kGcmRoundKeyBytes, 16 * count), aad, text);
}

rss3::ByteShare gcm_hash_share(const SecretBytes& share, std::span<const std::uint8_t> aad,
                               std::span<const std::uint8_t> text) {
  const std::size_t half = share.size() / 2;
  return gcm_hash_share(std::span(share.data(), half), std::span(share.data() + half, half), aad, text);
}

rss3::GhashBlock gcm_secret_block_share(const SecretBytes& share, std::size_t aad_bytes, std::size_t offset,
                                        const rss3::ByteShare& secret) {
  const std::size_t count = rss3::ghash_blocks(aad_bytes, 0);
  const std::size_t half = share.size() / 2;
  if (count > wire::kGcmHashPowers || half < wire::kGcmRoundKeyBytes + 16 * count)
    throw Error(Component::Server, "GCM input of " + std::to_string(count) + " GHASH blocks exceeds the stored hash key powers");
  return rss3::secret_block_ghash_share(std::span(share.data() + wire::kGcmRoundKeyBytes, 16 * count),
                                        std::span(share.data() + half + wire::kGcmRoundKeyBytes, 16 * count),
                                        aad_bytes, offset, secret);
}

}  // namespace mpc::jobs
