// mpc-engine/settings/cluster_settings.cpp: loads and validates a client's cluster.toml
// (rules in cluster_settings.hpp).
#include "settings/cluster_settings.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "settings/server_settings.hpp"
#include "settings/toml_reader.hpp"

namespace mpc::settings {

ClusterSettings load_cluster_settings(const std::filesystem::path& file) {
  using detail::TableReader;
  const detail::Document document = detail::parse_document(file);
  const TableReader root(document, document.root, "", {"protocol", "timeout_ms", "krb_timeout_ms", "secret_key_file", "servers"});
  ClusterSettings settings;
  settings.protocol = parse_protocol(root.choice("protocol", {"rss3", "gc2", "lut2"}));
  const int parties = party_count(settings.protocol);
  if (auto v = root.optional_integer("timeout_ms", 1, kMaxTimeoutMs)) settings.timeout = std::chrono::milliseconds(*v);
  if (auto v = root.optional_integer("krb_timeout_ms", 1, kMaxTimeoutMs))
    settings.krb_timeout = std::chrono::milliseconds(*v);
  settings.secret_key_file = root.path("secret_key_file");

  const auto servers = root.table_array("servers", static_cast<std::size_t>(parties), static_cast<std::size_t>(parties));
  for (std::size_t i = 0; i < servers.size(); ++i) {
    const std::string prefix = "servers[" + std::to_string(i) + "]";
    const TableReader reader(document, *servers[i], prefix, {"party", "endpoint", "data_endpoint", "public_key"});
    ServerEndpoint server;
    server.party = static_cast<int>(reader.integer("party", 1, parties)) - 1;
    server.endpoint = reader.endpoint("endpoint");
    server.public_key = reader.public_key("public_key");
    if (reader.has("data_endpoint")) {
      if (settings.protocol != Protocol::Rss3) reader.fail("data_endpoint", "applies only to protocol = \"rss3\"");
      server.data_endpoint = reader.tcp_endpoint("data_endpoint");
    }
    for (const auto& other : settings.servers) {
      if (other.party == server.party)
        reader.fail("party", "party " + std::to_string(server.party + 1) + " is listed twice");
      if (other.endpoint == server.endpoint)
        reader.fail("endpoint", "\"" + server.endpoint + "\" is listed twice");
    }
    settings.servers.push_back(std::move(server));
  }
  std::sort(settings.servers.begin(), settings.servers.end(),
            [](const ServerEndpoint& a, const ServerEndpoint& b) { return a.party < b.party; });
  return settings;
}

}  // namespace mpc::settings
