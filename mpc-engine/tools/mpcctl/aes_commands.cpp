// aes keystream / ecb-encrypt / ecb-decrypt: results as hex, one block per line.
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

}  // namespace

int run_aes_command(const std::vector<std::string>& words) {
  if (words.empty()) throw Error(Component::Tool, "aes: expected keystream, ecb-encrypt or ecb-decrypt");
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
  throw Error(Component::Tool, "aes: unknown action '" + action + "'");
}

}  // namespace mpc::tools
