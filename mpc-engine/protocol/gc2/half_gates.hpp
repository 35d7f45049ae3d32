// Semi-honest garbled circuits for two servers: free-XOR (Kolesnikov-Schneider 2008),
// half-gates (Zahur, Rosulek, Evans, "Two Halves Make a Whole", EUROCRYPT 2015: two
// ciphertexts, 256 bits, per AND gate) and point-and-permute, hashed with the fixed-key TCCR of
// two_party/fixed_key_hash.hpp.
//
// Both sides run the same layered circuits::Program over `instances` instances (as the
// three-party evaluator does), the garbler streaming each layer's tables to the evaluator as
// soon as they are made: one message direction, constant rounds, memory bounded by the
// program's slots x instances whatever the circuit's size.
//
// Labels: the garbler holds each wire's zero label W0 (W1 = W0 ^ delta, lsb(delta) = 1); the
// evaluator holds the active label, W0 ^ v * delta. Inputs come as labels from the caller
// (the server transfers them: the garbler's own bits directly, the evaluator's by OT), laid
// out row by row: input row r of instance e is entry r * instances + e. Public constants are
// relative to one constant wire of value 0: the garbler passes its zero label, the evaluator
// the same label (the garbler sends it; it reveals nothing).
//
// Outputs: the garbler ends with the decoding bits lsb(W0) and the evaluator with lsb of its
// active labels; their XOR is the output and each alone is uniform (lsb(W0) is a fresh
// random bit per wire), so the two servers' bits are an XOR sharing of the result.
//
// Tweaks: AND gate k (counting every instance) uses (tweak_high, 2(first_gate + k)) and
// (tweak_high, 2(first_gate + k) + 1); the caller makes these unique for every garbling under
// one delta (a job number as tweak_high, disjoint first_gate ranges for a job's parts).
//
// Three-halves garbling (Rosulek-Roy, CRYPTO 2021) would cut the wire to 192 bits per AND
// at 1.5x the hashing for the garbler's and evaluator's per-gate work and a more involved
// decoding; the link between two servers in one data centre is not the bottleneck at the
// rates below, so half-gates stays.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "circuits/program.hpp"
#include "protocol/two_party/block.hpp"
#include "protocol/two_party/channel.hpp"

namespace mpc::gc2 {

using two_party::Block;

// Fresh uniform labels (system CSPRNG); random_delta() has lsb 1.
std::vector<Block> random_labels(std::size_t count);
Block random_delta();

// The active labels of known bits: zero_labels[i] ^ bits[i] * delta (bits are 0 or 1).
std::vector<Block> active_labels(std::span<const Block> zero_labels, std::span<const std::uint8_t> bits, Block delta);

// Garbles and streams. Returns the decoding bits, output j of instance e at j * instances + e.
std::vector<std::uint8_t> garble(const circuits::Program& program, std::size_t instances, Block delta,
                                 std::uint64_t tweak_high, std::span<const Block> input_zero_labels,
                                 Block constant_zero, two_party::Channel& channel, std::uint64_t first_gate = 0);

// Evaluates the garbler's stream. Returns lsb of the output labels, laid out as garble()'s.
// Throws PeerError when the stream stops (the channel's timeout).
std::vector<std::uint8_t> evaluate(const circuits::Program& program, std::size_t instances, std::uint64_t tweak_high,
                                   std::span<const Block> input_labels, Block constant_label,
                                   two_party::Channel& channel, std::uint64_t first_gate = 0);

// Bytes the garbler sends for `program` over `instances` instances.
std::uint64_t garbled_bytes(const circuits::Program& program, std::size_t instances);

}  // namespace mpc::gc2
