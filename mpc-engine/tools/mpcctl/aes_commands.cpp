// aes keystream / ecb-encrypt / ecb-decrypt: results as hex, one block per line;
// aes gcm-prefetch / gcm-tag / gcm-open: the AES-256-GCM jobs of an aes256-gcm key.
#include <algorithm>
#include <array>
#include <iostream>

#include "client/cluster_client.hpp"
#include "common/bytes.hpp"
#include "common/error.hpp"
#include "settings/cluster_settings.hpp"
#include "tools/mpcctl/arguments.hpp"
#include "tools/mpcctl/commands.hpp"
#include "tools/mpcctl/key_options.hpp"

namespace mpc::tools {
namespace {

void print_blocks(const std::vector<std::uint8_t>& data) {
  for (std::size_t offset = 0; offset < data.size(); offset += 16)
    std::cout << to_hex(std::span(data).subspan(offset, 16)) << "\n";
}

// --name/--kvno of an aes256-gcm key (the algorithm is implied).
wire::KeyId gcm_key_from(const Arguments& arguments) {
  wire::KeyId key;
  key.name = arguments.required("name");
  wire::validate_key_name(key.name);
  key.version = static_cast<std::uint32_t>(arguments.number("kvno", 1, 0xffffffffu));
  key.algorithm = wire::KeyAlgorithm::Aes256Gcm;
  return key;
}

template <std::size_t N>
std::array<std::uint8_t, N> fixed_hex(const Arguments& arguments, const std::string& name) {
  const auto bytes = from_hex(arguments.required(name), Component::Tool);
  if (bytes.size() != N) throw Error(Component::Tool, "--" + name + " must be " + std::to_string(2 * N) + " hex digits");
  std::array<std::uint8_t, N> out{};
  std::copy(bytes.begin(), bytes.end(), out.begin());
  return out;
}

int run_gcm_command(const std::string& action, const Arguments& arguments) {
  if (action == "gcm-prefetch") {
    arguments.allow_only({"cluster", "name", "kvno", "count", "blocks-per-nonce"});
    const wire::KeyId key = gcm_key_from(arguments);
    const auto count = static_cast<std::uint32_t>(arguments.number("count", 1, wire::kMaxGcmPrefetchCount));
    const auto blocks = static_cast<std::uint32_t>(arguments.number("blocks-per-nonce", 0, wire::kMaxGcmBlocksPerNonce));
    if (count == 0) throw Error(Component::Tool, "--count must be at least 1");
    client::ClusterClient cluster(settings::load_cluster_settings(arguments.required("cluster")));
    const auto result = cluster.gcm_prefetch(key, count, blocks);
    const std::size_t stride = static_cast<std::size_t>(blocks) * wire::kBlockBytes;
    for (std::size_t i = 0; i < count; ++i) {
      std::cout << to_hex(std::span(result.nonces).subspan(i * wire::kGcmNonceBytes, wire::kGcmNonceBytes));
      for (std::size_t j = 0; j < blocks; ++j)
        std::cout << " " << to_hex(result.keystream.span().subspan(i * stride + j * wire::kBlockBytes, wire::kBlockBytes));
      std::cout << "\n";
    }
    return 0;
  }
  const bool open = action == "gcm-open";
  if (open)
    arguments.allow_only({"cluster", "name", "kvno", "nonce", "aad", "in", "tag"});
  else
    arguments.allow_only({"cluster", "name", "kvno", "nonce", "aad", "in"});
  const wire::KeyId key = gcm_key_from(arguments);
  const auto nonce = fixed_hex<wire::kGcmNonceBytes>(arguments, "nonce");
  const auto aad = from_hex(arguments.value_or("aad", ""), Component::Tool);
  const auto text = from_hex(arguments.value_or("in", ""), Component::Tool);
  if (wire::gcm_hash_blocks(aad.size(), text.size()) > wire::kGcmHashPowers)
    throw Error(Component::Tool, "--aad and --in need more than " + std::to_string(wire::kGcmHashPowers) +
                                     " GHASH blocks");
  if (!open) {
    client::ClusterClient cluster(settings::load_cluster_settings(arguments.required("cluster")));
    const auto tag = cluster.gcm_tag(key, nonce, aad, text);
    std::cout << to_hex(tag) << "\n";
    return 0;
  }
  const auto tag = fixed_hex<wire::kGcmTagBytes>(arguments, "tag");
  client::ClusterClient cluster(settings::load_cluster_settings(arguments.required("cluster")));
  const auto plaintext = cluster.gcm_open(key, nonce, aad, text, tag);
  if (!plaintext) {
    std::cerr << "mpcctl: authentication tag mismatch: data forged or damaged\n";
    return 2;
  }
  std::cout << to_hex(plaintext->span()) << "\n";
  return 0;
}

}  // namespace

int run_aes_command(const std::vector<std::string>& words) {
  if (words.empty())
    throw Error(Component::Tool,
                "aes: expected keystream, ecb-encrypt, ecb-decrypt, gcm-prefetch, gcm-tag or gcm-open");
  const std::string action = words[0];
  const Arguments arguments(std::vector<std::string>(words.begin() + 1, words.end()), {});
  if (action == "keystream") {
    arguments.allow_only({"cluster", "name", "kvno", "alg", "counter", "blocks"});
    const wire::KeyId key = key_id_from(arguments);
    const auto counter_bytes = from_hex(arguments.required("counter"), Component::Tool);
    if (counter_bytes.size() != 16) throw Error(Component::Tool, "--counter must be 32 hex digits");
    std::array<std::uint8_t, 16> counter{};
    std::copy(counter_bytes.begin(), counter_bytes.end(), counter.begin());
    const auto blocks = static_cast<std::uint32_t>(arguments.number("blocks", 1, wire::kMaxRequestBlocks));
    if (blocks == 0) throw Error(Component::Tool, "--blocks must be at least 1");
    client::ClusterClient cluster(settings::load_cluster_settings(arguments.required("cluster")));
    print_blocks(cluster.keystream(key, counter, blocks));
    return 0;
  }
  if (action == "ecb-encrypt" || action == "ecb-decrypt") {
    arguments.allow_only({"cluster", "name", "kvno", "alg", "in"});
    const wire::KeyId key = key_id_from(arguments);
    const auto input = from_hex(arguments.required("in"), Component::Tool);
    if (input.empty() || input.size() % 16 != 0) throw Error(Component::Tool, "--in must be whole 16-byte blocks");
    client::ClusterClient cluster(settings::load_cluster_settings(arguments.required("cluster")));
    print_blocks(action == "ecb-encrypt" ? cluster.ecb_encrypt(key, input) : cluster.ecb_decrypt(key, input));
    return 0;
  }
  if (action == "gcm-prefetch" || action == "gcm-tag" || action == "gcm-open") return run_gcm_command(action, arguments);
  throw Error(Component::Tool, "aes: unknown action '" + action + "'");
}

}  // namespace mpc::tools
