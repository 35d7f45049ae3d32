#include "engines/two_party/convert_store.hpp"

#include <sodium.h>

#include "common/error.hpp"
#include "common/secret.hpp"
#include "engines/two_party/pair_key.hpp"
#include "store/share_store.hpp"
#include "transport/curve_keys.hpp"

namespace mpc::two_party_engine {
namespace {

constexpr char kLabel[] = "mpc-kdc rss3 to xor2 refresh v1";

// The mask key of one key id, the same at both servers.
SecretBytes mask_key(const settings::ServerSettings& settings, const transport::CurveKeyPair& own,
                     const wire::KeyId& key) {
  const std::string id = wire::describe(key);
  return derive_pair_key(settings, own, kLabel,
                         {reinterpret_cast<const std::uint8_t*>(id.data()), id.size()});
}

}  // namespace

std::size_t convert_from_rss3(const settings::ServerSettings& settings, const std::filesystem::path& old_storage,
                              const Logger& log) {
  if (settings.protocol == settings::Protocol::Rss3 || settings.peers.size() != 1)
    throw Error(Component::Server, "--convert-from-rss3 needs the new two-server configuration (protocol gc2 or lut2)");
  if (std::filesystem::weakly_canonical(old_storage) == std::filesystem::weakly_canonical(settings.storage_path))
    throw Error(Component::Server, "the converted store must go to a new storage_path, not over the old store");
  const SecretBytes storage_key = store::read_storage_key_file(settings.storage_key_file);
  const auto own = transport::read_secret_key_file(settings.secret_key_file);
  if (!std::filesystem::exists(old_storage / "data.mdb"))
    throw Error(Component::Server, "no store at " + old_storage.string());
  const store::ShareStore old_store(old_storage, storage_key);
  store::ShareStore new_store(settings.storage_path, storage_key);
  if (new_store.count() != 0)
    throw Error(Component::Server, "the new store at " + settings.storage_path.string() + " is not empty");
  std::size_t converted = 0;
  for (const auto& stored : old_store.list()) {
    auto share = old_store.get(stored.key);
    if (!share) continue;
    const std::size_t material = wire::material_bytes(stored.key.algorithm);
    if (share->size() != 2 * material)
      throw Error(Component::Server, wire::describe(stored.key) + " is not a replicated three-server share");
    // Server 1 keeps its x, server 2 its a (see the header).
    const std::size_t offset = settings.party == 0 ? 0 : material;
    SecretBytes xor_share(share->span().subspan(offset, material));
    share->clear();
    SecretBytes mask(material);
    const SecretBytes key = mask_key(settings, own, stored.key);
    const std::uint8_t nonce[crypto_stream_chacha20_ietf_NONCEBYTES] = {};
    crypto_stream_chacha20_ietf(mask.data(), mask.size(), nonce, key.data());
    for (std::size_t i = 0; i < material; ++i) xor_share[i] ^= mask[i];
    if (!new_store.put(stored.key, xor_share))
      throw Error(Component::Server, wire::describe(stored.key) + " exists twice in the old store");
    ++converted;
    log.info("key converted", {{"key", wire::describe(stored.key)}});
  }
  return converted;
}

}  // namespace mpc::two_party_engine
