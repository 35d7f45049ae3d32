#include "tools/mpcctl/kdc_engine_keys.hpp"

#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "settings/cluster_settings.hpp"
#include "tools/mpcctl/kdc_actions.hpp"

namespace mpc::tools::kdc {

std::string engine_key_name(const std::string& principal) {
  std::uint8_t hash[MPC_PROTECTED_KEY_NAME_HASH_LEN];
  if (mpc_protected_key_name_hash(principal.data(), principal.size(), hash) != 0)
    throw tool_error("cannot hash the principal name " + principal);
  char name[MPC_PROTECTED_KEY_ENGINE_NAME_LEN];
  mpc_protected_key_engine_name(hash, name);
  return name;
}

wire::KeyId engine_key(const std::string& name, krb5_kvno kvno) {
  return wire::KeyId{name, static_cast<std::uint32_t>(kvno), wire::KeyAlgorithm::Aes256Gcm};
}

std::string delete_command(const std::string& cluster_file, const wire::KeyId& key) {
  return "mpcctl key delete --cluster " + cluster_file + " --name " + key.name + " --kvno " +
         std::to_string(key.version) + " --alg " + wire::algorithm_name(key.algorithm);
}

std::unique_ptr<client::ClusterClient> connect(const std::string& cluster_file) {
  return std::make_unique<client::ClusterClient>(settings::load_cluster_settings(cluster_file));
}

std::string withdraw(client::ClusterClient& cluster, const std::string& cluster_file, const wire::KeyId& key) {
  try {
    cluster.delete_key(key);
    return "the engine key " + wire::describe(key) + " was deleted again; nothing changed";
  } catch (const std::exception& error) {
    return "deleting the engine key " + wire::describe(key) + " again failed too (" + error.what() +
           "); the database is unchanged; remove the key with `" + delete_command(cluster_file, key) + "`";
  }
}

namespace {

// Runs `store` (an import or a generation of `key`) with the contract of import_ticket_key.
template <class Store>
bool store_ticket_key(client::ClusterClient& cluster, const wire::KeyId& key, Store store) {
  try {
    store();
    return true;
  } catch (const client::ServerError& error) {
    if (error.status() != wire::Status::KeyExists)
      throw tool_error(std::string("cannot store the ticket key in the engine: ") + error.what() +
                       "; the database is unchanged");
    // A server holds this id already, or deleted it for good: an earlier attempt that failed
    // halfway. The id is spent (a ticket key's id is never imported twice); what this attempt
    // stored elsewhere is withdrawn, and the caller takes another kvno.
    try {
      cluster.delete_key(key);
    } catch (const std::exception&) {
      // Stored nowhere, or somewhere only: either way nothing can use it.
    }
    return false;
  } catch (const std::exception& error) {
    throw tool_error(std::string("cannot store the ticket key in the engine: ") + error.what() +
                     "; the database is unchanged");
  }
}

}  // namespace

bool make_ticket_key(client::ClusterClient& cluster, const wire::KeyId& key) {
  return store_ticket_key(cluster, key, [&] { cluster.generate_key(key); });
}

bool import_ticket_key(client::ClusterClient& cluster, const wire::KeyId& key, const SecretBytes& ticket_key) {
  return store_ticket_key(cluster, key, [&] { cluster.import_key(key, ticket_key); });
}

SecretBytes random_ticket_key() {
  SecretBytes key(kTicketKeyBytes);
  std::size_t filled = 0;
  while (filled < key.size()) {
    const ssize_t got = ::getrandom(key.data() + filled, key.size() - filled, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) throw tool_error(std::string("getrandom failed: ") + std::strerror(errno));
    filled += static_cast<std::size_t>(got);
  }
  return key;
}

}  // namespace mpc::tools::kdc
