// keygen, storage-keygen, key import/list/delete.
#include <unistd.h>

#include <fstream>
#include <iomanip>
#include <iostream>
#include <iterator>
#include <sstream>

#include "client/cluster_client.hpp"
#include "client/dump_guard.hpp"
#include "common/bytes.hpp"
#include "common/error.hpp"
#include "settings/cluster_settings.hpp"
#include "store/share_store.hpp"
#include "tools/mpcctl/arguments.hpp"
#include "tools/mpcctl/commands.hpp"
#include "tools/mpcctl/key_options.hpp"
#include "tools/mpcctl/utc_time.hpp"
#include "transport/curve_keys.hpp"

namespace mpc::tools {
namespace {

// Reads hex from a file or stdin into a wiped buffer; the key never reaches disk from here.
SecretBytes read_hex_key(const std::optional<std::string>& file) {
  std::string text;
  if (file) {
    std::ifstream in(*file);
    if (!in) throw Error(Component::Tool, "cannot read key file " + *file);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } else {
    if (isatty(STDIN_FILENO)) std::cerr << "key (hex): " << std::flush;
    std::getline(std::cin, text);
  }
  std::vector<std::uint8_t> bytes;
  try {
    bytes = from_hex(text, Component::Tool);
  } catch (...) {
    wipe(text.data(), text.size());
    throw;
  }
  wipe(text.data(), text.size());
  SecretBytes key(bytes);
  wipe(bytes.data(), bytes.size());
  return key;
}

}  // namespace

int run_keygen_command(const std::vector<std::string>& words) {
  const Arguments arguments(words, {});
  arguments.allow_only({"out"});
  const std::string prefix = arguments.required("out");
  const auto pair = transport::generate_curve_key_pair();
  transport::write_secret_key_file(prefix + ".key", pair);
  transport::write_public_key_file(prefix + ".pub", pair.public_key);
  std::cout << "public-key " << transport::z85_encode(pair.public_key) << "\n";
  return 0;
}

int run_storage_keygen_command(const std::vector<std::string>& words) {
  const Arguments arguments(words, {});
  arguments.allow_only({"out"});
  store::write_storage_key_file(arguments.required("out"), store::generate_storage_key());
  return 0;
}

int run_key_command(const std::vector<std::string>& words) {
  if (words.empty()) throw Error(Component::Tool, "key: expected import, generate, list or delete");
  const std::string action = words[0];
  const Arguments arguments(std::vector<std::string>(words.begin() + 1, words.end()), {});
  if (action == "import") {
    arguments.allow_only({"cluster", "name", "kvno", "alg", "key-file"});
    const wire::KeyId key = key_id_from(arguments);
    const client::DumpGuard no_dump;  // the key, its material and the shares are in memory
    const SecretBytes aes_key = read_hex_key(arguments.optional("key-file"));
    client::ClusterClient cluster(settings::load_cluster_settings(arguments.required("cluster")));
    cluster.import_key(key, aes_key);
    std::cout << "imported " << wire::describe(key) << "\n";
    return 0;
  }
  if (action == "generate") {
    arguments.allow_only({"cluster", "name", "kvno", "alg"});
    const wire::KeyId key = key_id_from(arguments);
    client::ClusterClient cluster(settings::load_cluster_settings(arguments.required("cluster")));
    cluster.generate_key(key);
    std::cout << "generated " << wire::describe(key) << " (no host ever held it)\n";
    return 0;
  }
  if (action == "list") {
    arguments.allow_only({"cluster", "prefix"});
    client::ClusterClient cluster(settings::load_cluster_settings(arguments.required("cluster")));
    for (const auto& info : cluster.list_keys(arguments.value_or("prefix", "")))
      std::cout << info.key.name << "\t" << info.key.version << "\t" << wire::algorithm_name(info.key.algorithm)
                << "\t" << format_utc(info.created_unix) << "\n";
    return 0;
  }
  if (action == "delete") {
    arguments.allow_only({"cluster", "name", "kvno", "alg"});
    const wire::KeyId key = key_id_from(arguments);
    client::ClusterClient cluster(settings::load_cluster_settings(arguments.required("cluster")));
    cluster.delete_key(key);
    std::cout << "deleted " << wire::describe(key) << "\n";
    return 0;
  }
  throw Error(Component::Tool, "key: unknown action '" + action + "'");
}

}  // namespace mpc::tools
