// mpc-engine/settings/server_settings.cpp: loads and validates mpc-server.toml
// (rules in server_settings.hpp).
#include "settings/server_settings.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "settings/toml_reader.hpp"

namespace mpc::settings {

namespace {

using detail::TableReader;

ServerLimits read_limits(const detail::Document& document, const toml::table& table) {
  const TableReader reader(document, table, "limits",
                           {"max_batch_blocks", "max_job_blocks", "max_pending_jobs", "peer_timeout_ms",
                            "job_wait_ms", "sbox", "latency_batch_blocks", "gcm_nonce_ttl_s",
                            "gcm_nonces_per_client", "tagged_nonces_kept", "tagged_nonce_ttl_s",
                            "prepared_circuits_mib", "heartbeat_ms", "peer_down_ms", "rejoin_ms",
                            "degraded_max_job_blocks", "workers", "and_material_entries"});
  ServerLimits limits;
  if (auto v = reader.optional_integer("max_batch_blocks", kBatchBlocksMultiple, kMaxBatchBlocksCeiling)) {
    if (*v % kBatchBlocksMultiple != 0)
      reader.fail("max_batch_blocks", "must be a multiple of " + std::to_string(kBatchBlocksMultiple) + " (got " +
                                          std::to_string(*v) + ")");
    limits.max_batch_blocks = static_cast<std::uint32_t>(*v);
  }
  if (auto v = reader.optional_integer("max_job_blocks", 1, kMaxJobBlocksCeiling))
    limits.max_job_blocks = static_cast<std::uint32_t>(*v);
  if (auto v = reader.optional_integer("max_pending_jobs", 1, kMaxPendingJobsCeiling))
    limits.max_pending_jobs = static_cast<std::uint32_t>(*v);
  if (auto v = reader.optional_integer("peer_timeout_ms", 1, kMaxTimeoutMs))
    limits.peer_timeout = std::chrono::milliseconds(*v);
  if (auto v = reader.optional_integer("job_wait_ms", 1, kMaxTimeoutMs)) limits.job_wait = std::chrono::milliseconds(*v);
  if (auto v = reader.optional_choice("sbox", {"auto", "and32", "depth4"}))
    limits.sbox = *v == "and32" ? SboxChoice::And32 : *v == "depth4" ? SboxChoice::Depth4 : SboxChoice::Auto;
  // Bounded by the batch size, read above (or its default).
  if (auto v = reader.optional_integer("latency_batch_blocks", 0, limits.max_batch_blocks))
    limits.latency_batch_blocks = static_cast<std::uint32_t>(*v);
  if (auto v = reader.optional_integer("gcm_nonce_ttl_s", 1, kMaxGcmNonceTtlS))
    limits.gcm_nonce_ttl = std::chrono::seconds(*v);
  if (auto v = reader.optional_integer("gcm_nonces_per_client", 1, kMaxGcmNoncesPerClientCeiling))
    limits.gcm_nonces_per_client = static_cast<std::uint32_t>(*v);
  if (auto v = reader.optional_integer("tagged_nonces_kept", 0, kMaxTaggedNoncesKept))
    limits.tagged_nonces_kept = static_cast<std::uint32_t>(*v);
  if (auto v = reader.optional_integer("tagged_nonce_ttl_s", 1, kMaxGcmNonceTtlS))
    limits.tagged_nonce_ttl = std::chrono::seconds(*v);
  if (auto v = reader.optional_integer("prepared_circuits_mib", 0, kMaxPreparedCircuitsMib))
    limits.prepared_circuits_mib = static_cast<std::uint32_t>(*v);
  if (auto v = reader.optional_integer("and_material_entries", kMinAndMaterialEntries, kMaxAndMaterialEntries))
    limits.and_material_entries = static_cast<std::uint32_t>(*v);
  if (auto v = reader.optional_integer("peer_down_ms", 20, kMaxTimeoutMs)) limits.peer_down = std::chrono::milliseconds(*v);
  if (auto v = reader.optional_integer("heartbeat_ms", 10, 60000)) {
    if (*v >= limits.peer_down.count())
      reader.fail("heartbeat_ms", "must be below peer_down_ms (" + std::to_string(limits.peer_down.count()) + ")");
    limits.heartbeat = std::chrono::milliseconds(*v);
  } else if (limits.heartbeat >= limits.peer_down) {
    reader.fail("peer_down_ms", "must be above heartbeat_ms (" + std::to_string(limits.heartbeat.count()) + ")");
  }
  if (auto v = reader.optional_integer("rejoin_ms", 20, kMaxTimeoutMs)) limits.rejoin = std::chrono::milliseconds(*v);
  if (auto v = reader.optional_integer("degraded_max_job_blocks", 1, kMaxJobBlocksCeiling))
    limits.degraded_max_job_blocks = static_cast<std::uint32_t>(*v);
  if (auto v = reader.optional_integer("workers", 0, kMaxWorkers)) limits.workers = static_cast<std::uint32_t>(*v);
  return limits;
}

LutSettings read_lut(const detail::Document& document, const toml::table& table) {
  const TableReader reader(document, table, "lut",
                           {"preprocessing", "pool_sboxes", "pool_wait_ms", "dealer_endpoint", "dealer_public_key"});
  LutSettings lut;
  if (auto source = reader.optional_choice("preprocessing", {"ot", "dealer"}))
    lut.preprocessing = *source == "ot" ? LutPreprocessing::Ot : LutPreprocessing::Dealer;
  // The dealer's address and key go with a dealer, and only with one: a leftover of either
  // under "ot" is a configuration that does not say what it means.
  if (lut.preprocessing == LutPreprocessing::Dealer) {
    lut.dealer_endpoint = reader.endpoint("dealer_endpoint");
    lut.dealer_public_key = reader.public_key("dealer_public_key");
  } else {
    for (const char* key : {"dealer_endpoint", "dealer_public_key"})
      if (reader.has(key)) reader.fail(key, "applies only to preprocessing = \"dealer\"");
  }
  if (auto v = reader.optional_integer("pool_sboxes", kMinLutPoolSboxes, kMaxLutPoolSboxes))
    lut.pool_sboxes = static_cast<std::uint32_t>(*v);
  if (auto v = reader.optional_integer("pool_wait_ms", 0, kMaxTimeoutMs)) lut.pool_wait = std::chrono::milliseconds(*v);
  return lut;
}

}  // namespace

Protocol parse_protocol(std::string_view name) {
  if (name == "gc2") return Protocol::Gc2;
  if (name == "lut2") return Protocol::Lut2;
  return Protocol::Rss3;
}

const char* protocol_name(Protocol protocol) noexcept {
  switch (protocol) {
    case Protocol::Gc2: return "gc2";
    case Protocol::Lut2: return "lut2";
    case Protocol::Rss3: break;
  }
  return "rss3";
}

int party_count(Protocol protocol) noexcept { return protocol == Protocol::Rss3 ? 3 : 2; }

std::uint32_t degraded_max_job_blocks(const ServerSettings& settings) {
  constexpr std::uint32_t kPassivePair = 1024;
  // Below the KDC router's smallest background refill (64 blocks), above a seal's own prefetch.
  constexpr std::uint32_t kActivePair = 48;
  return settings.limits.degraded_max_job_blocks.value_or(settings.security == Security::Active ? kActivePair
                                                                                                : kPassivePair);
}

ServerSettings load_server_settings(const std::filesystem::path& file) {
  const detail::Document document = detail::parse_document(file);
  const TableReader root(document, document.root, "",
                         {"protocol", "party", "client_endpoint", "peer_endpoint", "data_endpoint", "secret_key_file", "storage_path",
                          "storage_key_file", "log_level", "backend", "krb_evaluation", "degraded_service", "security", "limits", "lut",
                          "peers", "clients", "metrics_listen", "ticket_key_import"});
  ServerSettings settings;
  if (auto protocol = root.optional_choice("protocol", {"rss3", "gc2", "lut2"}))
    settings.protocol = parse_protocol(*protocol);
  const int parties = party_count(settings.protocol);
  settings.party = static_cast<int>(root.integer("party", 1, parties)) - 1;
  settings.client_endpoint = root.endpoint("client_endpoint");
  if (auto listen = root.optional_string("metrics_listen")) {
    const auto colon = listen->rfind(':');
    const std::string host = colon == std::string::npos ? std::string() : listen->substr(0, colon);
    const std::string port = colon == std::string::npos ? std::string() : listen->substr(colon + 1);
    const bool digits = !port.empty() && port.size() <= 5 &&
                        std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (host.empty() || !digits || std::stoul(port) == 0 || std::stoul(port) > 65535)
      root.fail("metrics_listen", "must be HOST:PORT (an address of this host and a port from 1 to 65535), got \"" +
                                      *listen + "\"");
    settings.metrics_listen = *listen;
  }
  settings.peer_endpoint = root.endpoint("peer_endpoint");
  if (settings.peer_endpoint == settings.client_endpoint)
    root.fail("peer_endpoint", "must differ from client_endpoint (\"" + settings.client_endpoint + "\")");
  if (root.has("data_endpoint")) {
    if (settings.protocol != Protocol::Rss3) root.fail("data_endpoint", "applies only to protocol = \"rss3\"");
    settings.data_endpoint = root.tcp_endpoint("data_endpoint");
    if (settings.data_endpoint == settings.client_endpoint || settings.data_endpoint == settings.peer_endpoint)
      root.fail("data_endpoint", "must differ from client_endpoint and peer_endpoint");
  }
  settings.secret_key_file = root.path("secret_key_file");
  settings.storage_path = root.path("storage_path");
  settings.storage_key_file = root.path("storage_key_file");
  if (auto level = root.optional_choice("log_level", {"debug", "info", "warning", "error"})) settings.log_level = *level;
  if (auto backend = root.optional_choice("backend", {"cpu", "cuda", "auto"}))
    settings.backend = *backend == "cpu"    ? EvaluatorBackend::Cpu
                       : *backend == "cuda" ? EvaluatorBackend::Cuda
                                            : EvaluatorBackend::Auto;
  if (auto degraded = root.optional_choice("degraded_service", {"two-party", "off"})) {
    if (settings.protocol != Protocol::Rss3) root.fail("degraded_service", "applies only to protocol = \"rss3\"");
    settings.degraded_service = *degraded == "off" ? DegradedService::Off : DegradedService::TwoParty;
  }
  // Active unless passive is asked for: lut2 has no active form yet, so it is passive and says so.
  if (settings.protocol == Protocol::Lut2) settings.security = Security::Passive;
  if (auto security = root.optional_choice("security", {"active", "passive"})) {
    if (settings.protocol == Protocol::Lut2 && *security == "active")
      root.fail("security", "\"active\" applies to protocol = \"rss3\" and \"gc2\" (lut2 is semi-honest)");
    settings.security = *security == "passive" ? Security::Passive : Security::Active;
  }
  settings.ticket_key_import = settings.protocol != Protocol::Rss3;
  if (auto import = root.optional_choice("ticket_key_import", {"refuse", "allow"})) {
    if (settings.protocol != Protocol::Rss3)
      root.fail("ticket_key_import", "applies only to protocol = \"rss3\" (two servers always import)");
    settings.ticket_key_import = *import == "allow";
  }
  if (auto evaluation = root.optional_choice("krb_evaluation", {"garbled", "layered"})) {
    if (settings.protocol != Protocol::Rss3) root.fail("krb_evaluation", "applies only to protocol = \"rss3\"");
    settings.krb_evaluation = *evaluation == "garbled" ? KrbEvaluation::Garbled : KrbEvaluation::Layered;
  }
  if (const toml::table* limits = root.optional_table("limits")) settings.limits = read_limits(document, *limits);
  if (const toml::table* lut = root.optional_table("lut")) {
    if (settings.protocol != Protocol::Lut2) root.fail("lut", "applies only to protocol = \"lut2\"");
    settings.lut = read_lut(document, *lut);
  }
  // A job waiting for its entries must not look dead to the other server, which waits for it
  // no longer than peer_timeout_ms.
  if (settings.protocol == Protocol::Lut2 && settings.lut.pool_wait >= settings.limits.peer_timeout)
    root.fail("lut", "pool_wait_ms (" + std::to_string(settings.lut.pool_wait.count()) +
                         ") must be below [limits] peer_timeout_ms (" +
                         std::to_string(settings.limits.peer_timeout.count()) + ")");

  const auto peers = root.table_array("peers", parties - 1, parties - 1);
  for (std::size_t i = 0; i < peers.size(); ++i) {
    const TableReader reader(document, *peers[i], "peers[" + std::to_string(i) + "]",
                             {"party", "endpoint", "data_endpoint", "public_key"});
    PeerSettings peer;
    peer.party = static_cast<int>(reader.integer("party", 1, parties)) - 1;
    if (peer.party == settings.party)
      reader.fail("party", "is " + std::to_string(peer.party + 1) + ", this server's own party");
    peer.endpoint = reader.endpoint("endpoint");
    if (reader.has("data_endpoint")) {
      if (settings.protocol != Protocol::Rss3) reader.fail("data_endpoint", "applies only to protocol = \"rss3\"");
      peer.data_endpoint = reader.tcp_endpoint("data_endpoint");
    }
    peer.public_key = reader.public_key("public_key");
    for (const auto& other : settings.peers) {
      if (other.party == peer.party)
        reader.fail("party", "party " + std::to_string(peer.party + 1) + " is listed twice");
      if (other.endpoint == peer.endpoint) reader.fail("endpoint", "\"" + peer.endpoint + "\" is listed twice");
    }
    settings.peers.push_back(std::move(peer));
  }
  std::sort(settings.peers.begin(), settings.peers.end(),
            [](const PeerSettings& a, const PeerSettings& b) { return a.party < b.party; });
  if (settings.lut.preprocessing == LutPreprocessing::Dealer) {
    for (const auto& peer : settings.peers)
      if (peer.public_key == settings.lut.dealer_public_key)
        root.fail("lut", "dealer_public_key is the key of server " + std::to_string(peer.party + 1) +
                             ": the dealer needs a key pair of its own");
  }

  const TableReader clients(document, root.table("clients"), "clients", {"compute", "enrol", "admin"});
  if (clients.has("compute")) settings.compute_clients = clients.public_key_list("compute");
  if (clients.has("enrol")) settings.enrol_clients = clients.public_key_list("enrol");
  if (clients.has("admin")) settings.admin_clients = clients.public_key_list("admin");
  // One role per connection: a key that is both would lose one of them.
  for (const auto& key : settings.enrol_clients)
    if (std::find(settings.compute_clients.begin(), settings.compute_clients.end(), key) !=
        settings.compute_clients.end())
      clients.fail("enrol", "names a key compute names too: give kadmind a key pair of its own");
  if (settings.compute_clients.empty() && settings.enrol_clients.empty() && settings.admin_clients.empty())
    clients.fail("", "lists no client keys: no client could connect");
  return settings;
}

}  // namespace mpc::settings
