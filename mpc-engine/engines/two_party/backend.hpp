// What a two-server protocol (protocol/gc2 or protocol/lut2) does for the server: evaluate one
// job with the other server over the job's byte stream and return this server's XOR share of
// the result. The server owns everything else (sockets, store, scheduling, replies).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/log.hpp"
#include "common/secret.hpp"
#include "protocol/two_party/channel.hpp"
#include "settings/server_settings.hpp"
#include "wire/client_messages.hpp"

namespace mpc::two_party_engine {

// One AES job: `blocks` blocks under the key whose expanded round keys (the key's material,
// wire::material_bytes) are XOR-shared between the servers.
struct ComputeTask {
  std::uint64_t job = 0;       // the leader's job number: unique per leader start, never reused
  wire::KeyId key;
  bool decrypt = false;        // ECB decryption (the inverse cipher)
  std::span<const std::uint8_t> key_share;  // this server's share of the round keys
  std::span<const std::uint8_t> input;      // the public input blocks (counter blocks or ECB input), blocks * 16
  std::uint32_t blocks = 0;
  std::uint64_t pool_epoch = 0;  // lut2: the pool epoch and first entry this job consumes
  std::uint64_t pool_start = 0;
  std::optional<wire::OutputPadSeed> output_pad;  // this server's pad on the outputs, from the client
  std::span<const std::uint8_t> share_check;      // the check dealt with this server's share; empty: none
};

// A job's output: this server's XOR share, or (pads_outputs()) the output under both servers'
// pads, the same on both, with the reports the client checks the pads by.
struct ComputeOutput {
  SecretBytes bytes;
  std::optional<wire::PaddedReports> padded;
};

// A transient shortage (lut2: the pool has not got the job's entries): the client gets Busy.
class BackendBusy : public Error {
 public:
  using Error::Error;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  // Pool entries (lut2 masked tables, gc2's AND material under security = "active") a job of
  // this many blocks consumes; 0 for passive gc2.
  virtual std::uint64_t pool_entries(const wire::KeyId& key, std::uint32_t blocks) const = 0;
  // The same for a Kerberos or GCM request (a circuit job); 0 where such jobs take none.
  virtual std::uint64_t circuit_pool_entries(const wire::Request& request) const {
    (void)request;
    return 0;
  }
  // The same without waiting on the shell's thread: nullopt while the job's circuit is still
  // being built (the build then runs in the background).
  virtual std::optional<std::uint64_t> circuit_pool_entries_if_built(const wire::Request& request) const {
    return circuit_pool_entries(request);
  }
  // The output, blocks * 16 bytes (ComputeOutput). Runs on a worker thread; may be called by
  // several at once for different jobs. Throws PeerError when the other server fails.
  virtual ComputeOutput compute(two_party::Channel& peer, const ComputeTask& task) = 0;
  // Whether outputs go to the client padded (protocol/client_checks): AES jobs then need the
  // client's pad.
  virtual bool pads_outputs() const { return false; }
  // lut2: fills pool entries [start, start + count) with the other server (a job of its own).
  // Others never get such jobs.
  virtual void preprocess(two_party::Channel& peer, std::uint64_t epoch, std::uint64_t start, std::uint64_t count) = 0;
  // Numbers entries afresh under `epoch`. lut2 drops the pool; gc2's AND material keeps what
  // the epoch left made (keeps_left_epoch) and drops the one before.
  virtual void reset_pool(std::uint64_t epoch) { (void)epoch; }
  // Whether jobs may still take made entries of the epoch left last (and_material_stock.hpp),
  // and whether `epoch` is that one here.
  virtual bool keeps_left_epoch() const { return false; }
  virtual bool holds_left_epoch(std::uint64_t epoch) const { (void)epoch; return false; }
  // For the periodic status line and the Status reply.
  virtual std::string describe_state() const = 0;
  // lut2: the leader keeps the pool filled by announcing preprocessing jobs of
  // preprocess_batch() entries, at most pool_capacity() entries ahead of consumption.
  virtual bool wants_preprocessing() const = 0;
  virtual std::uint64_t preprocess_batch() const = 0;
  virtual std::uint64_t pool_capacity() const { return 0; }
  // Whether a job whose entries are neither made nor being made (and one batch more) waits at
  // the leader, in arrival order, until they are, rather than being given a range to wait for
  // on its worker: where jobs take many batches (gc2's AND material), such ranges would run
  // ahead of production and be given up.
  virtual bool admits_within_production() const { return false; }
  // What a pool entry is, for errors: "lookup-table entries ([lut] pool_sboxes)".
  virtual const char* pool_entry_name() const { return "pool entries"; }
};

// party: 0 (leader: garbler with gc2) or 1.
std::unique_ptr<Backend> make_backend(const settings::ServerSettings& settings, const Logger& log);

}  // namespace mpc::two_party_engine
