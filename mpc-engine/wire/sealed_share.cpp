#include "wire/sealed_share.hpp"

#include <sodium.h>

#include <cstring>
#include <string>

#include "common/error.hpp"

namespace mpc::wire {
namespace {

constexpr std::size_t kDigestBytes = 32;
// Far above any key's material (16624 bytes replicated twice for AES-256-GCM).
constexpr std::size_t kMaxSealedShareBytes = 1u << 20;
static_assert(kSealedShareOverhead == kDigestBytes + crypto_box_SEALBYTES);
static_assert(crypto_box_PUBLICKEYBYTES == 32 && crypto_box_SECRETKEYBYTES == 32);

// BLAKE2b-256 of the key id under a label of this format: binds a sealed share to its id.
std::array<std::uint8_t, kDigestBytes> key_id_digest(const KeyId& key) {
  validate_key_name(key.name);
  static constexpr char kLabel[] = "mpc-kdc sealed share v1";
  std::vector<std::uint8_t> encoded(key.name.begin(), key.name.end());
  encoded.push_back(0);
  for (int shift = 24; shift >= 0; shift -= 8) encoded.push_back(static_cast<std::uint8_t>(key.version >> shift));
  encoded.push_back(static_cast<std::uint8_t>(key.algorithm));
  std::array<std::uint8_t, kDigestBytes> digest{};
  crypto_generichash_state state;
  crypto_generichash_init(&state, nullptr, 0, digest.size());
  crypto_generichash_update(&state, reinterpret_cast<const unsigned char*>(kLabel), sizeof kLabel);
  crypto_generichash_update(&state, encoded.data(), encoded.size());
  crypto_generichash_final(&state, digest.data(), digest.size());
  return digest;
}

}  // namespace

std::vector<ShareSegment> share_check_segments(KeyAlgorithm algorithm) {
  if (algorithm == KeyAlgorithm::Aes256Gcm) return {{0, kGcmRoundKeyBytes}};
  if (!is_krb_algorithm(algorithm)) return {{0, material_bytes(algorithm)}};
  std::vector<ShareSegment> segments;
  for (std::size_t usage = 0; usage < std::size(kKrbUsages); ++usage)
    segments.push_back({krb_ke_offset(algorithm, usage), krb_usage_block_bytes(algorithm)});
  segments.push_back({krb_prf_offset(algorithm), material_bytes(algorithm) - krb_prf_offset(algorithm)});
  return segments;
}

std::size_t share_check_segment_of(KeyAlgorithm algorithm, std::size_t offset, std::size_t bytes) {
  const auto segments = share_check_segments(algorithm);
  for (std::size_t i = 0; i < segments.size(); ++i)
    if (offset >= segments[i].offset && offset + bytes <= segments[i].offset + segments[i].bytes) return i;
  throw Error(Component::Wire, "no checked segment of the key's material holds bytes " + std::to_string(offset) + ".." +
                                   std::to_string(offset + bytes));
}

std::size_t share_check_bytes(KeyAlgorithm algorithm) {
  // As many segments as share_check_segments lists, without listing them: asked per job.
  const std::size_t segments = is_krb_algorithm(algorithm) ? std::size(kKrbUsages) + 1 : 1;
  return kShareCheckKeyBytes + kShareCheckSegmentBytes * segments;
}

std::vector<std::uint8_t> seal_share(const KeyId& key, std::span<const std::uint8_t> share, const SealKey& server) {
  if (sodium_init() < 0) throw Error(Component::Wire, "libsodium initialisation failed");
  if (share.empty() || share.size() > kMaxSealedShareBytes) throw FormatError(Component::Wire, "key share size");
  const auto digest = key_id_digest(key);
  SecretBytes plain(kDigestBytes + share.size());
  std::memcpy(plain.data(), digest.data(), kDigestBytes);
  std::memcpy(plain.data() + kDigestBytes, share.data(), share.size());
  std::vector<std::uint8_t> sealed(plain.size() + crypto_box_SEALBYTES);
  if (crypto_box_seal(sealed.data(), plain.data(), plain.size(), server.data()) != 0)
    throw Error(Component::Wire, "cannot seal a key share");
  return sealed;
}

SecretBytes open_sealed_share(const KeyId& key, std::span<const std::uint8_t> sealed, const SealKey& own_public,
                              const SecretBytes& own_secret) {
  if (sodium_init() < 0) throw Error(Component::Wire, "libsodium initialisation failed");
  if (own_secret.size() != crypto_box_SECRETKEYBYTES) throw Error(Component::Wire, "secret key is not 32 bytes");
  if (sealed.size() < kSealedShareOverhead) throw FormatError(Component::Wire, "sealed key share too short");
  SecretBytes plain(sealed.size() - crypto_box_SEALBYTES);
  if (crypto_box_seal_open(plain.data(), sealed.data(), sealed.size(), own_public.data(), own_secret.data()) != 0)
    throw FormatError(Component::Wire, "the key share is not sealed to this server's key");
  const auto digest = key_id_digest(key);
  if (!equal_constant_time(plain.span().first(kDigestBytes), digest))
    throw FormatError(Component::Wire, "the key share was sealed for another key id");
  return SecretBytes(plain.span().subspan(kDigestBytes));
}

}  // namespace mpc::wire
