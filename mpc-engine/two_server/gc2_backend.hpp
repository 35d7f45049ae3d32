// The garbled-circuit back end (protocol gc2): server 1 garbles, server 2 evaluates, for every
// job, the AES circuit with the 32-AND S-box (the fewest AND gates; depth costs nothing here).
//
// One job over its stream:
//   2 -> 1  the id of the label set server 2 holds for this key and its own share (0: none)
//   1 -> 2  the id of server 1's label set for the key and its share; if they differ, server
//           2's key-share bits are transferred by chosen OT (protocol/ot): server 2 learns,
//           per key bit, Z ^ (s1 ^ s2) * delta
//   1 -> 2  the active labels of the public input blocks, then the garbled stream (its header
//           names the garbling and carries the constant's label), per part of at most 512 blocks
//   each    its output bits: server 1 the decoding bits, server 2 its labels' colours
//
// Server 1 draws delta when it starts and keeps, per key, the zero labels of the key rows under
// a random label-set id; server 2 keeps the active labels it received under that id. Each
// side also remembers a digest of the share the labels were made with (never sent), so a key
// re-imported under the same id gets fresh labels. The OT thus runs once per key and server-1
// start, not per job, and a job costs one small round trip plus the stream. Reusing input labels across jobs under one delta is sound because every job's gates
// use tweaks of their own (the job number, which a leader never reuses): all jobs of a session
// form one garbled circuit whose key wires fan out into every job.
#pragma once

#include <array>
#include <map>
#include <span>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "circuits/program.hpp"
#include "protocol/gc2/half_gates.hpp"
#include "two_server/backend.hpp"

namespace mpc::two_server {

class Gc2Backend final : public Backend {
 public:
  Gc2Backend(int party, const Logger& log);
  ~Gc2Backend() override;

  const char* name() const override { return "gc2 (half-gates garbled circuits)"; }
  std::uint64_t pool_entries(const wire::KeyId&, std::uint32_t) const override { return 0; }
  SecretBytes compute(two_party::Channel& peer, const ComputeTask& task) override;
  void preprocess(two_party::Channel&, std::uint64_t, std::uint64_t, std::uint64_t) override;
  std::string describe_state() const override;
  bool wants_preprocessing() const override { return false; }
  std::uint64_t preprocess_batch() const override { return 0; }

 private:
  const circuits::Program& program(wire::KeyAlgorithm algorithm, bool decrypt) const;
  SecretBytes garble_job(two_party::Channel& peer, const ComputeTask& task);
  SecretBytes evaluate_job(two_party::Channel& peer, const ComputeTask& task);
  struct LabelSet {
    std::uint64_t id = 0;
    std::array<std::uint8_t, 32> share_digest{};
    std::vector<gc2::Block> labels;  // server 1: zero labels; server 2: active labels
  };
  // Server 1: the label set of `key` for this share (made on first use or a new share).
  LabelSet garbler_labels(const std::string& key, std::span<const std::uint8_t> share);

  int party_;
  Logger log_;
  // AES-128 / AES-256 x encrypt / decrypt.
  circuits::Program programs_[2][2];
  std::unique_ptr<gc2::Garbler> garbler_;  // server 1: one delta for the server's life
  mutable std::mutex mutex_;
  std::map<std::string, LabelSet> label_sets_;  // by wire::describe(key)
  std::uint64_t key_transfers_ = 0;
};

}  // namespace mpc::two_server
