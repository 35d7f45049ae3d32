// The mpc-server configuration file (TOML). Every key, its default and what it does:
// config/mpc-server.example.toml. Below: what load_server_settings checks.
//
// Relative paths are relative to the configuration file's directory.
//
// Validation (load_server_settings throws Error(Settings) "<file>:<line>: <key>: <problem>"):
//   - Every key is checked: unknown keys (typos) are errors in every table, as are wrong
//     types (a quoted number, a float where an integer is due).
//   - protocol: "rss3" (Araki et al., three servers, replicated shares), "gc2" (garbled
//     circuits) or "lut2" (masked lookup tables), both two servers holding XOR shares.
//     The cluster's clients must name the same protocol; the store's shares follow it
//     (mpc-server --convert-from-rss3 turns a three-server store into a two-server one).
//   - Required: party, client_endpoint, peer_endpoint, secret_key_file, storage_path,
//     storage_key_file, [[peers]] (exactly two), [clients]. Optional with the defaults
//     shown: log_level, backend and the whole [limits] table, key by key.
//   - backend: "cpu" (SIMD CPU evaluator), "cuda" (GPU evaluator, cuda/cuda_evaluator.hpp;
//     the server fails to start without a usable GPU or in a build without CUDA) or
//     "auto" (cuda when cuda::cuda_device_available(), else cpu). Both evaluators send
//     bit-identical messages, so servers of one cluster may differ.
//   - krb_evaluation (rss3): "garbled" runs each Kerberos batch as one garbled circuit
//     (server 1 garbles, server 2 evaluates, server 3 supplies labels: three messages,
//     engines/three_party/garbled_krb_batch.hpp), "layered" runs it layer by layer like every other batch
//     (a round per AND layer, thousands for HMAC-SHA1, but little traffic). Server 1 leads
//     every batch, so its setting decides; the others follow what its batches say.
//   - degraded_service (rss3): "two-party" lets the two servers that still hear each other
//     serve every job as a two-party cluster (garbled circuits on XOR shares each derives
//     from its replicated shares) while the third is down, and return to three-party service
//     by themselves once it is back (node/membership.hpp); "off" leaves every job failing
//     until all three servers are up. Every server of a cluster should say the same.
//     heartbeat_ms 10..60000 and below peer_down_ms; peer_down_ms, rejoin_ms 20..600000.
//     degraded_max_job_blocks 1..: the largest job (blocks, a GCM prefetch's included) such a
//     pair serves; unset, 1024 under security = "passive" and 48 under "active", where two
//     servers make a login's AND material in about a second: a seal's own prefetch (4 blocks)
//     passes, and a KDC router's background refill of many nonces (64 blocks at least), which
//     would take the material of the logins waiting meanwhile, is refused as too large (the
//     router's seals then prefetch for themselves).
//   - security (rss3): "active" (the default) checks a deviating server before any output
//     leaves: garbled Kerberos batches are garbled by servers 1 and 3 alike and server 2
//     compares the two (protocol/gc3/dual_garbling.hpp), and a batch that fails a
//     check is refused everywhere (verification_failed). "passive" garbles once, as secure
//     against one server that follows the protocol only. A server running "active" refuses
//     batches a leader sends in the passive form, so one server cannot lower it for the
//     others. Under "active", every AND gate of a layered batch is verified too
//     (protocol/rss3/and_check.hpp) before any output share leaves.
//     gc2 (two servers): "active" (the default there too) runs AES, Kerberos and GCM jobs by
//     authenticated garbling (engines/two_party/authenticated_aes.hpp, authenticated_krb.hpp,
//     authenticated_gcm.hpp) and refuses GCM nonces with local masks, which have no such form;
//     "passive" garbles with half-gates. Both servers must say the same: each refuses jobs of
//     the other mode. lut2 takes "passive" only, its default.
//   - data_endpoint (rss3): with one, the server listens there for data links (AES-256-GCM
//     over TCP, keyed by a handshake on the pinned keys: transport/data_link.hpp) from the
//     previous server of the ring; with a peer's data_endpoint, batch workers send their
//     layer messages to that server over data links, one per worker, instead of CurveZMQ.
//     Either way every link is authenticated and encrypted, and a server takes layer
//     messages from both. tcp:// only; it must differ from client_endpoint and peer_endpoint.
//   - Strings are non-empty, at most 4096 bytes, without control characters.
//   - Endpoints: tcp://host:port (port 1..65535 or *), ipc://path or inproc://name;
//     client_endpoint and peer_endpoint differ; the two peers' endpoints differ.
//   - Peers: parties 1..3, distinct, neither equal to this server's party; stored sorted.
//   - Limits: max_batch_blocks 64..2^20 and a multiple of 64 (one bitsliced word holds 64
//     lanes); max_job_blocks 1..2^24; max_pending_jobs 1..65536; peer_timeout_ms and
//     job_wait_ms 1..600000; latency_batch_blocks 0..max_batch_blocks (0: auto never
//     picks the depth-4 S-box); gcm_nonce_ttl_s 1..604800; gcm_nonces_per_client 1..2^22;
//     tagged_nonces_kept 0..2^24; tagged_nonce_ttl_s 1..604800;
//     prepared_circuits_mib 0..65536. Each server of a two-server cluster keeps at most that
//     many MiB of Kerberos garblings prepared ahead of time, counted as the garbled tables
//     (server 2 holds them; server 1 keeps a small part per garbling but counts them alike):
//     give both servers the same value. A login's three jobs on an aes256-cts-hmac-sha1-96
//     key take about 10 MB. In a three-server cluster the leader (server 1) has at most that
//     many MiB of tables prepared, two garblings per circuit a one-job batch ran in the last
//     minute (engines/three_party/prepared_stock.hpp); server 2, which holds them, accepts
//     twice as much, since it also keeps garblings the leader forgot until they expire.
//     and_material_entries 65536..16777216 (gc2, security = "active"): the AND material each
//     server keeps made ahead for authenticated garbling, about 192 bytes an entry (the
//     default, 1048576, about 200 MB: a login's largest Kerberos job, aes256-cts-hmac-
//     sha384-192, takes about 273,000); a job of n AES-128 blocks takes 5,120 n entries and
//     about 32,000 more per 16 blocks (the in-circuit share checks), and a job larger than the
//     pool is refused as too large. After a failed batch the entries the pool epoch left had
//     made stay until used or the next epoch (and_material_stock.hpp): at most twice this.
//     The GCM nonce pool lives in memory only: its size is bounded by
//     gcm_nonces_per_client x the number of client keys, and the tagged nonces by
//     tagged_nonces_kept. Each nonce takes about 200 bytes plus twice the keystream it was
//     prefetched with, kept for reopening (a 1 KB ticket: about 2.2 KB), so the defaults
//     allow far more than a KDC uses (its router keeps pool_high nonces per worker): size
//     both to the server's memory.
//   - Public keys: a 40-character z85 string is taken inline; anything else is a path to
//     a public key file (relative to the configuration file), which must be a regular file
//     and is read now (transport::read_public_key_file). [clients] must list at least one
//     key; a list may not repeat a key.
//   - [lut]: only with protocol = "lut2". dealer_endpoint and dealer_public_key are required
//     with preprocessing = "dealer" and refused otherwise; the dealer's key may not be a
//     peer's.
//   - Paths are made absolute and normalised; they are not opened here.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "transport/curve_keys.hpp"

namespace mpc::settings {

inline constexpr std::uint32_t kBatchBlocksMultiple = 64;
inline constexpr std::uint32_t kMaxBatchBlocksCeiling = 1u << 20;
inline constexpr std::uint32_t kMaxJobBlocksCeiling = 1u << 24;
inline constexpr std::uint32_t kMaxPendingJobsCeiling = 1u << 16;
inline constexpr std::int64_t kMaxTimeoutMs = 600000;  // also bounds cluster timeout_ms
inline constexpr std::int64_t kMaxGcmNonceTtlS = 7 * 24 * 3600;
inline constexpr std::uint32_t kMaxGcmNoncesPerClientCeiling = 1u << 22;
inline constexpr std::uint32_t kMaxTaggedNoncesKept = 1u << 24;
inline constexpr std::int64_t kMaxPreparedCircuitsMib = 1 << 16;
inline constexpr std::int64_t kMinAndMaterialEntries = 1 << 16;
inline constexpr std::int64_t kMaxAndMaterialEntries = 1 << 24;
inline constexpr std::int64_t kMaxWorkers = 256;

enum class Protocol { Rss3, Gc2, Lut2 };
Protocol parse_protocol(std::string_view name);  // "rss3" | "gc2" | "lut2" (anything else: Rss3)
const char* protocol_name(Protocol protocol) noexcept;
int party_count(Protocol protocol) noexcept;  // 3 or 2

inline constexpr std::int64_t kMinLutPoolSboxes = 1 << 12;
inline constexpr std::int64_t kMaxLutPoolSboxes = 1 << 26;

// Where the lut2 servers' masked tables come from.
enum class LutPreprocessing { Ot, Dealer };

struct LutSettings {
  LutPreprocessing preprocessing = LutPreprocessing::Ot;
  std::uint32_t pool_sboxes = 1u << 17;
  std::chrono::milliseconds pool_wait{200};
  std::string dealer_endpoint;               // preprocessing = Dealer: where mpc-lut-dealer listens
  transport::PublicKey dealer_public_key{};  // and its CurveZMQ key
};

enum class SboxChoice { Auto, And32, Depth4 };

// Which rss3::Evaluator the server runs (see "backend" above).
enum class EvaluatorBackend { Cpu, Cuda, Auto };

// How a three-server cluster runs Kerberos batches (see "krb_evaluation" above).
enum class KrbEvaluation { Garbled, Layered };

// What a three-server cluster does with one server down (see "degraded_service" above).
enum class DegradedService { TwoParty, Off };

// What a three-server cluster guards against (see "security" above).
enum class Security { Active, Passive };

struct PeerSettings {
  int party = 0;  // 0-based internally (file says 1..3)
  std::string endpoint;
  std::string data_endpoint;  // empty: layer messages to this peer go over CurveZMQ
  transport::PublicKey public_key{};
};

struct ServerLimits {
  std::uint32_t max_batch_blocks = 8192;
  std::uint32_t max_job_blocks = 1u << 20;
  std::uint32_t max_pending_jobs = 4096;
  std::chrono::milliseconds peer_timeout{1000};
  std::chrono::milliseconds job_wait{200};
  SboxChoice sbox = SboxChoice::Auto;
  std::uint32_t latency_batch_blocks = 512;
  std::chrono::seconds gcm_nonce_ttl{3600};
  std::uint32_t gcm_nonces_per_client = 262144;
  std::uint32_t tagged_nonces_kept = 262144;
  std::chrono::seconds tagged_nonce_ttl{36000};
  std::uint32_t prepared_circuits_mib = 256;
  std::uint32_t and_material_entries = 1048576;
  std::chrono::milliseconds heartbeat{100};
  std::chrono::milliseconds peer_down{500};
  std::chrono::milliseconds rejoin{1000};
  std::optional<std::uint32_t> degraded_max_job_blocks;  // unset: degraded_max_job_blocks()
  std::uint32_t workers = 0;  // 0: one per core, at least 2
};

struct ServerSettings {
  Protocol protocol = Protocol::Rss3;
  int party = 0;  // 0-based
  std::string client_endpoint;
  std::string peer_endpoint;
  std::string data_endpoint;  // empty: no data links arrive here
  std::filesystem::path secret_key_file;
  std::filesystem::path storage_path;
  std::filesystem::path storage_key_file;
  std::string log_level = "info";
  // HOST:PORT of the Prometheus endpoint (node/metrics_endpoint.hpp); empty: none. Counters and
  // states only, never a key name or request content; bind it to a management address.
  std::string metrics_listen;
  EvaluatorBackend backend = EvaluatorBackend::Auto;
  KrbEvaluation krb_evaluation = KrbEvaluation::Garbled;
  DegradedService degraded_service = DegradedService::TwoParty;
  Security security = Security::Active;
  // rss3: whether an admin client key may import an aes256-gcm ticket key (a value some host
  // chose) rather than have the servers generate one (wire::GenerateKeyRequest). Off by
  // default: no client key can then put a ticket key it knows under a realm's krbtgt.
  // Two-server clusters generate no keys and always import.
  bool ticket_key_import = false;
  ServerLimits limits;
  LutSettings lut;
  std::vector<PeerSettings> peers;  // the other parties (two, or one with gc2/lut2), sorted by party
  // Client keys by role: compute runs jobs (the KDC's router); enrol imports, lists and
  // deletes Kerberos user and service keys only (kadmind); admin does every key change (mpcctl).
  std::vector<transport::PublicKey> compute_clients;
  std::vector<transport::PublicKey> enrol_clients;
  std::vector<transport::PublicKey> admin_clients;
};

// The largest job a pair of a three-server cluster serves while the third is down.
std::uint32_t degraded_max_job_blocks(const ServerSettings& settings);

// Throws Error(Settings) naming the file, key and problem for anything missing or invalid.
ServerSettings load_server_settings(const std::filesystem::path& file);

}  // namespace mpc::settings
