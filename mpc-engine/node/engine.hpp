// The seam between a server's shell (node.hpp) and the protocol engine it runs: the
// three-party engine (engines/three_party) or the two-party one (engines/two_party). The
// shell owns the sockets, the store, the key material, client intake and the agreement of
// the servers on each request; an engine owns how the jobs it is handed are computed with
// the other servers. The two engines implement this interface as siblings and never include
// each other.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/log.hpp"
#include "common/secret.hpp"
#include "node/job_key.hpp"
#include "node/peer_links.hpp"
#include "settings/server_settings.hpp"
#include "store/epoch_ledger.hpp"
#include "store/share_store.hpp"
#include "transport/zmq_link.hpp"
#include "wire/client_messages.hpp"

namespace mpc::jobs {
class KrbCircuitCache;
}

namespace mpc::node {

class ClientLinks;

// A client's job request as the shell hands it to an engine.
struct ClientJob {
  JobKey key;                  // the authenticated client key and its request id
  wire::Request request;       // Compute, GcmPrefetch, GcmTag, GcmOpen or Krb
  wire::RequestDigest digest;  // of the request frame as it arrived here
};

enum class KeyChange { Stored, Deleted };

// Why a request is refused (jobs/request_checks.hpp makes the refusals every engine shares).
using Refusal = wire::Refusal;

// What the shell offers its engine. Every call is made on the shell's thread.
class EngineHost {
 public:
  virtual ~EngineHost() = default;
  // The share material of a stored key from the shell's bounded cache, or nullptr. Valid
  // until the next call of key_material or the next turn of the shell's loop.
  virtual const SecretBytes* key_material(const wire::KeyId& key) = 0;
  // The check dealt with a two-server cluster's share of the key (wire::share_check_bytes of its algorithm), or
  // nullptr: none was dealt, or this host's shares are not a two-server cluster's. Valid as
  // key_material's.
  virtual const SecretBytes* key_share_check(const wire::KeyId& key) {
    (void)key;
    return nullptr;
  }
  // A pair of three servers serving without the third (pair_service.hpp) computes local GCM
  // masks (jobs/gcm_masks.hpp) from the components of the whole replicated share, which
  // key_material cuts down to a half: that share, and whether this server leads the pair.
  // nullopt from a host whose engine serves every server of the cluster.
  struct PairedShare {
    const SecretBytes* share = nullptr;  // x || a, valid as key_material's
    bool leader = false;
  };
  virtual std::optional<PairedShare> paired_share(const wire::KeyId& key) {
    (void)key;
    return std::nullopt;
  }
  // Answers a job the engine was handed (once; later answers of the same job are dropped).
  virtual void answer(const JobKey& key, wire::Reply reply) = 0;
  // Ends a job without an answer (a follower's job that no batch named in time).
  virtual void forget(const JobKey& key) = 0;
  // A peer frame the engine took off the peer socket itself (while it waited inside a batch)
  // that is the shell's to handle: true if the shell took it.
  virtual bool take_shell_frame(PeerEnvelope& envelope) = 0;
  virtual PeerLinks& peers() = 0;
  // Sends a frame to another party of the engine without waiting: false when its link is not
  // up or its queue is full. Parties are the engine's own (a two-party engine serving for a
  // three-server cluster numbers its pair 0 and 1).
  virtual bool try_send(int party, std::span<const std::uint8_t> frame) = 0;
  // Called now and then by an engine that waits for a peer on the shell's thread (inside a
  // batch): the shell keeps telling the others it is alive. False: the shell is about to
  // change how the cluster serves (a server went away), so the wait should end now.
  virtual bool keep_alive() = 0;
  // A key the servers generated (wire::GenerateKeyRequest): this server's share of its
  // material, to store under `key` as an imported one would be. A refusal (the id was taken or
  // deleted meanwhile) fails the request.
  virtual std::optional<Refusal> store_generated(const wire::KeyId& key, const SecretBytes& share) = 0;
  // A link to another party broke under a send (callable from any thread: workers' lanes
  // run off the shell's thread). It is the first sign of a server going away, ahead of its
  // missed heartbeats, so failures in the moments after it are answered as regrouping.
  virtual void link_broke(int party) = 0;
  // A check of active security failed here (node/disputes.hpp), on the shell's thread: `party`
  // (the engine's numbering) deviated if this server did not; -1 for a three-party check that
  // shows only that one of the other two did. `check` names it, `where` the job or batch.
  virtual void deviation_caught(int party, const std::string& check, const std::string& where) {
    (void)party;
    (void)check;
    (void)where;
  }
  // A check of active security failed here that names no party: one of the servers computing
  // deviated, or the server that dealt what it checks against (a key share's checks).
  virtual void unattributed_check_failed(const std::string& check, const std::string& where) {
    (void)check;
    (void)where;
  }
  // The same, of the pair serving without `missing` (its host's word, node/pair_service.hpp).
  virtual void pair_failed(int missing, const std::string& check, const std::string& where) {
    (void)missing;
    (void)check;
    (void)where;
  }
};

// What an engine is built from: the shell's settings, keys, store and sockets, and the shell
// itself as its host. All outlive the engine.
struct EngineResources {
  const settings::ServerSettings& settings;
  const Logger& log;
  const transport::CurveKeyPair& own_keys;
  transport::Context& context;
  store::ShareStore& store;
  // Every epoch this server computed under (store/epoch_ledger.hpp), shared by its engines.
  store::EpochLedger& epochs;
  EngineHost& host;
  // Kerberos circuits compiled for fewest AND gates (garbled evaluation), shared by the
  // engines of one server so that a two-party engine built when a server goes down finds
  // the circuits already compiled; outlives them. Null: the engine compiles its own.
  jobs::KrbCircuitCache* garbled_krb_circuits = nullptr;
  // Where clients' data links go once keyed (an engine whose data listener admits clients hands
  // them here); outlives the engine. Null: clients reach this server on CurveZMQ only.
  ClientLinks* client_links = nullptr;
};

class Engine {
 public:
  virtual ~Engine() = default;

  // This engine's refusal of a request before any server computes with it (its limits, the
  // key's kind, the stored share), or nullopt when it can run it.
  virtual std::optional<Refusal> check(const ClientJob& job) = 0;
  // Takes a job the servers agree on (at the leader, and for a GCM tag everywhere) or that
  // this follower holds and has confirmed to the leader. It answers through the host.
  virtual void admit(ClientJob job) = 0;
  // Gives up a job that no batch has named (the leader refused it): true if it held it.
  virtual bool abandon(const JobKey& key) = 0;
  // Whether a batch that names the job has started here: it then runs to its end whatever the
  // cluster's mode becomes, and answers the job itself (computed, or failed).
  virtual bool computing(const JobKey& key) const {
    (void)key;
    return false;
  }
  // Takes what batches already running have computed and answers their jobs, starting
  // nothing: the shell calls it on the engine of a service it left while jobs kept at the
  // switch (computing()) still run there.
  virtual void finish_running() {}
  // A frame from a peer server that is not the shell's.
  virtual void take_peer_frame(PeerEnvelope envelope) = 0;
  // One turn of work: starts what can start, answers what finished, expires what is stale.
  virtual void step(std::chrono::steady_clock::time_point now) = 0;
  // How long the shell may sleep before the next step is due (it wakes earlier on a socket).
  virtual std::chrono::milliseconds idle_wait() const = 0;
  // ZeroMQ sockets and file descriptors the shell must wait on besides its own.
  virtual std::vector<void*> sockets() const = 0;
  virtual std::vector<int> descriptors() const = 0;

  // The engine's part of the Status reply (batches, epoch, traffic, AND gates).
  virtual void fill_status(wire::ServerStatus& status) const = 0;
  // What the engine keeps for later jobs, for the metrics (node/metrics_text.hpp).
  struct Stock {
    std::size_t gcm_nonces = 0;          // prefetched GCM nonces' shares held for their tags
    std::size_t prepared_garblings = 0;  // Kerberos garblings prepared ahead and held
    std::size_t prepared_bytes = 0;
    // lut2, at the leader: lookup-table entries made (or being made) ahead of the jobs that
    // will use them; nullopt where the engine keeps no such stock or cannot tell.
    std::optional<std::uint64_t> lut_entries_ahead;
  };
  virtual Stock stock() const { return {}; }
  // What the engine counted since it started, for the Prometheus endpoint.
  struct Activity {
    // Batches refused for a failed check of active security, by the check (VerificationError's
    // name of it) and the 0-based party whose messages failed it here (-1: not known).
    std::map<std::pair<std::string, int>, std::uint64_t> aborts;
    std::uint64_t payload_bytes_received = 0;  // batch payload from the previous party
    // Clients' data links refused: their key held as many as it may, their handshake failed
    // (an unknown key, a bad or slow handshake), or too many handshakes were under way.
    std::uint64_t links_refused_at_limit = 0;
    std::uint64_t links_refused_handshake = 0;
    std::uint64_t links_refused_busy = 0;
  };
  virtual Activity activity() const { return {}; }
  // A key was stored or deleted here: drop whatever the engine keeps made from its material.
  virtual void key_changed(const wire::KeyId& key, KeyChange change) = 0;
  // The engines of the pairs a server of three belongs to (pair_service.hpp) are built when it
  // starts and run ahead of need. Standby: all three serve and the server is idle; the engine
  // makes its preprocessing at the lowest priority, up to half its pool, so that the pair's
  // first jobs find it made. Paced: the same while the server is busy, one batch now and then,
  // so that a server under steady load still fills its stock without slowing its jobs. Serving:
  // its pair serves. Waiting: its other member is not heard, and it makes nothing.
  enum class PairDuty : std::uint8_t { Serving, Standby, Paced, Waiting };
  virtual void set_pair_duty(PairDuty duty) { (void)duty; }
  // A job the service that runs now took: an engine standing by readies what its like would
  // need should its pair serve next (a Kerberos shape's circuit, built in the background), so
  // that the pair's first jobs after a switch do not wait for it.
  virtual void anticipate(const wire::Request& request) { (void)request; }
  // How one server's share of a key is kept: copies of the material in it (2 for a replicated
  // share x || a, 1 for an XOR share), and how to say so in a refusal of another form.
  virtual std::size_t share_copies() const = 0;
  virtual std::string sharing() const = 0;
  // For logs.
  virtual std::string name() const = 0;
};

}  // namespace mpc::node
