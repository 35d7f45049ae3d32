// The engine's side of a protected key for `mpcctl kdc`: its name and id, and the ticket key
// stored for a krbtgt key. The engine key is stored before the database refers to it and
// withdrawn when the database write fails, so the database never holds a marker whose key
// is missing.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "client/cluster_client.hpp"
#include "common/secret.hpp"
#include "keys/protected_key.h"
#include "tools/mpcctl/kdb_session.hpp"
#include "wire/key_id.hpp"

namespace mpc::tools::kdc {

inline constexpr std::size_t kTicketKeyBytes = MPC_PROTECTED_KEY_TICKET_KEY_LEN;

// The engine key name of a principal (protected_key.h: the name hash of its canonical name).
std::string engine_key_name(const std::string& principal);
// The engine key of a krbtgt key's kvno.
wire::KeyId engine_key(const std::string& name, krb5_kvno kvno);
// The command that removes an engine key by hand, for messages.
std::string delete_command(const std::string& cluster_file, const wire::KeyId& key);

std::unique_ptr<client::ClusterClient> connect(const std::string& cluster_file);
// Withdraws an engine key stored by this command after the database write failed; returns
// what happened, for the error message.
std::string withdraw(client::ClusterClient& cluster, const std::string& cluster_file, const wire::KeyId& key);
// Stores a ticket key: true; false when a server holds the id already or deleted it for good
// (an earlier attempt that failed halfway: the id is spent, and whatever this attempt stored
// is withdrawn). Throws tool_error for anything else. make_ticket_key has three servers
// generate one that exists nowhere (ClusterClient::generate_key); import_ticket_key imports
// one this host holds (two-server clusters, which generate none).
[[nodiscard]] bool make_ticket_key(client::ClusterClient& cluster, const wire::KeyId& key);
[[nodiscard]] bool import_ticket_key(client::ClusterClient& cluster, const wire::KeyId& key,
                                     const SecretBytes& ticket_key);
SecretBytes random_ticket_key();

}  // namespace mpc::tools::kdc
