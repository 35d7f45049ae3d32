// A batch as the three-server garbling protocols of this folder see it: its id, its program, the
// shapes of its inputs and where to read them, and the keys a party garbles with. The engine that
// runs a batch (engines/three_party/garbled_krb_batch.hpp) fills it in from its own records.
//
// The protocols (Mohassel, Rosulek and Zhang, "Fast and Secure Three-party Computation: The
// Garbled Circuit Approach", CCS 2015): garbled once, by one server, against a passive server
// (single_garbling.hpp); garbled twice, by two servers from a seed they share, against an active
// one (dual_garbling.hpp), online or ahead of its inputs (prepared_garbling.hpp). Each runs
// over two channels, to the next party and from the previous one (protocol/two_party/channel.hpp).
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "circuits/program.hpp"
#include "common/identity_signature.hpp"
#include "protocol/rss3/correlated_randomness.hpp"

namespace mpc::gc3 {

// The batch's epoch and sequence: they seed its garbling and its streams (never twice under one
// key), and its signed messages name it.
using BatchId = rss3::BatchNonce;

// Which part of this party's key share (x_i, a_i) to take. With a_i = x_{i-1} ^ v and
// x_0 ^ x_1 ^ x_2 = 0, the a_j are an XOR sharing of v and party i knows a_i and
// a_{i-1} = x_i ^ a_i.
enum class KeyPart { X, A, XorA };

// A batch's inputs at this party, one bit per byte, row-major over instances (row r of instance n
// at r * instances + n).
class BatchInputs {
 public:
  virtual ~BatchInputs() = default;
  // The key rows' bits of `part`. An instance without a key share (its job absent here) is all
  // zeros at every party.
  virtual std::vector<std::uint8_t> key_row_bits(KeyPart part) const = 0;
  // The public records' bits.
  virtual std::vector<std::uint8_t> public_row_bits() const = 0;
};

// The caller's name for a batch's program: a garbling made ahead is evaluated only in a batch
// whose program has the same name.
using ProgramName = std::array<std::uint32_t, 3>;

// The program's inputs, per instance: `key_rows` rows the same for every instance of a job (a
// key share), then a public record of `public_bytes` bytes.
struct Batch {
  BatchId id;
  const circuits::Program* program = nullptr;
  std::size_t key_rows = 0;
  std::size_t public_bytes = 0;
  std::size_t instances = 0;
  const BatchInputs* inputs = nullptr;  // null in a batch that garbles ahead (it has no inputs)
  // How much longer than the channel's timeout a party waits for the evaluator's first word: the
  // evaluator may have to build the circuit first.
  std::chrono::milliseconds build_grace{0};
  // Garblings made ahead: the program's name, and in the batch that evaluates one the sequence
  // (in this batch's epoch) of the batch that made it.
  ProgramName program_name{};
  std::uint32_t prepared = 0;
};

// The keys a party garbles with, each shared with one neighbour: `own` with party i+1 and
// `previous` with party i-1 (hashed from the correlated-randomness keys under a label of their
// own, so that no stream of the garbling repeats one of the evaluation's).
// `identities` sign the messages that travel through a third server (garbling_blame.hpp).
struct GarblingKeys {
  const rss3::PrfKey& own;
  const rss3::PrfKey& previous;
  const PartyIdentities& identities;
};

// A batch's garbling number, the high half of every gate's hash tweak (protocol/gc2/half_gates.hpp):
// the epoch's low 31 bits, then the sequence. Within an epoch no two batches share it (sequences
// grow); across epochs, which draw 64 random bits each, only if those 31 bits agree, and then
// under independent deltas.
inline std::uint64_t garbling_number(const BatchId& id) { return ((id.epoch & 0x7fffffffu) << 32) | id.sequence; }

// A garbler waits for the other garbler's whole garbling, or for the evaluator's evaluation:
// allow 2 M AND gates a second.
inline std::chrono::milliseconds garbling_time(const Batch& batch) {
  return std::chrono::milliseconds(batch.program->and_gates * batch.instances / 2000);
}

}  // namespace mpc::gc3
