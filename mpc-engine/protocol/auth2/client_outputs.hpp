// Outputs for a client that trusts neither server: authenticated garbling (authenticated_
// garbling.hpp) keeps each server from choosing the function or the other's input, but outputs
// kept as XOR shares let a deviating server XOR any value of its choosing into the result the
// client rebuilds (a keystream, a plaintext, a verdict), and the client cannot tell.
//
// Here the client gives each server a one-time pad (from a seed: the first server's p_1, the
// second's p_2, each outputs + 64 bits). The circuit, padded (padded_circuit), takes each pad as
// an input of its server and outputs y = z ^ p_1 ^ p_2 for the circuit's outputs z; y is
// revealed to both servers with the MAC checks of Outputs::Reveal, so both hold the same y or
// the run aborts, and y tells neither anything of z (the other's pad is uniform to it). Each
// server hands y to the client, which takes it only if both hand the same.
//
// What remains is a server feeding a pad other than the client's, p_i ^ d, which shifts z by a d
// it knows. So once every input is fixed (masked and sent), the servers toss a seed neither
// chooses, and open, authenticated, for each pad c_i = R p_i ^ t_i: R the 64 x outputs binary
// matrix drawn from the seed, t_i the pad's last 64 bits (they enter no gate). The client
// recomputes c_i from the pads it gave: a pad shifted by (d, e) passes only if R d = e, which for
// a fixed (d, e) != 0 and a uniform R holds with probability at most 2^-64. The opened c_i is
// uniform (t_i is), so the check tells the servers nothing of z. It is a linear function of the
// input wires, so it costs no gate: each party XORs its shares of the wires' masks and the
// masked values, which both hold.
//
// Traffic beyond the circuit's: per output bit two more inputs (a mask opened, a masked bit and
// a label each, authenticated_garbling.hpp) and the revealed output; per run a coin toss and one
// opening of 128 bits. The client receives y and 48 bytes from each server.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "circuits/circuit.hpp"
#include "protocol/auth2/auth_bits.hpp"
#include "protocol/auth2/authenticated_garbling.hpp"

namespace mpc::auth2 {

inline constexpr std::size_t kPadCheckBits = 64;
using PadSeed = std::array<std::uint8_t, 32>;

// A pad of `outputs` bits then its kPadCheckBits check bits (0/1 bytes), from its seed.
std::vector<std::uint8_t> pad_bits(const PadSeed& seed, std::size_t outputs);

// `circuit` with two input groups appended, the first party's pad then the second's, each
// total_outputs() + kPadCheckBits bits; its outputs (same groups) are the circuit's XOR both
// pads' first total_outputs() bits. The owners of its inputs: `owners` then First, Second.
circuits::Circuit padded_circuit(const circuits::Circuit& circuit);
InputOwners padded_owners(const InputOwners& owners);

// What each server hands the client for one run; the same on both when neither deviated.
struct PaddedOutputs {
  std::vector<std::uint8_t> masked;  // y = z ^ p_1 ^ p_2, packed eight bits to a byte
  Digest check_seed{};               // the seed of R, tossed once the inputs were fixed
  std::array<std::uint8_t, kPadCheckBits / 8> first_check{}, second_check{};  // c_1, c_2, packed
  bool operator==(const PaddedOutputs&) const = default;
};
inline constexpr std::size_t kPaddedReportExtraBytes = sizeof(Digest) + 2 * (kPadCheckBits / 8);

// Both servers: runs `padded` (from padded_circuit, masks prepared for it with padded_owners)
// on this party's inputs (its own groups in group order: its pad, from pad_bits, comes last)
// and the public ones. Throws VerificationError as evaluate_authenticated does.
PaddedOutputs evaluate_padded(Session& session, const circuits::Circuit& padded, const InputOwners& padded_owners,
                              const CircuitMasks& masks, std::span<const std::uint8_t> own_inputs,
                              std::span<const std::uint8_t> public_inputs = {});

// The client: the circuit's `outputs` output bits (0/1 bytes) from the two servers' reports and
// the seeds of the pads it gave them. Throws VerificationError: "server_reports" when the
// reports differ (one server changed its own), "pad_check" when a server's pad fails the check
// (it fed another pad than the client's).
std::vector<std::uint8_t> open_padded(const PaddedOutputs& first, const PaddedOutputs& second,
                                      const PadSeed& first_pad, const PadSeed& second_pad, std::size_t outputs);

}  // namespace mpc::auth2
