// The servers' side of outputs padded for the client (protocol/client_checks/output_pads.hpp has
// the scheme and why): the circuit takes each server's pad as an input of that server and
// outputs y = z ^ p_1 ^ p_2, revealed to both with the MAC checks of authenticated garbling
// (authenticated_garbling.hpp, Outputs::Reveal), so that both hold the same y or the run
// aborts. Then, every input fixed, a coin toss draws the check's matrix R and both open
// c_i = R p_i ^ t_i with authenticated opening. c_i is a linear function of input wires, so it
// costs no gate: each party XORs its shares of the wires' masks, and the masked values, which
// both hold once the inputs are sent.
//
// Traffic beyond the circuit's: per output bit two more inputs (an opened mask, a masked bit
// and a label each) and the revealed output; per run a coin toss and one opening of 128 bits.
// The client receives y and client_checks::kPartReportBytes from each server.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "circuits/circuit.hpp"
#include "protocol/auth2/auth_bits.hpp"
#include "protocol/auth2/authenticated_garbling.hpp"
#include "protocol/client_checks/output_pads.hpp"

namespace mpc::auth2 {

// `circuit` with two input groups appended, the first party's pad then the second's, each
// n + client_checks::kPadCheckBits bits for the n = total_outputs() - kept_outputs -
// revealed_outputs last outputs; its outputs (one group) are the first kept_outputs outputs as
// they were (kept by the two parties as XOR shares, evaluate_padded), the next revealed_outputs
// as they were (revealed to both: what the parties themselves must see, such as a check's
// verdict), and the last n XOR both pads' first n bits.
circuits::Circuit padded_circuit(const circuits::Circuit& circuit, std::uint32_t kept_outputs = 0,
                                 std::uint32_t revealed_outputs = 0);
// The owners of its inputs: `owners`, then First, Second.
InputOwners padded_owners(const InputOwners& owners);

// What one run gives each server to hand the client: the same on both unless a check failed.
struct PaddedRun {
  std::vector<std::uint8_t> shares;    // this party's XOR shares of the kept outputs, 0/1 bytes
  std::vector<std::uint8_t> revealed;  // the revealed outputs, 0/1 bytes
  std::vector<std::uint8_t> masked;    // y, 0/1 bytes
  client_checks::PartReport report;
  std::vector<std::uint8_t> masked_inputs;  // evaluate_authenticated's: for the share checks
};

// Both servers: runs `padded` (from padded_circuit, masks prepared for it with padded_owners)
// on this party's inputs (its own groups in group order, so its pad, from client_checks::pad_bits,
// comes last) and the public ones. Throws VerificationError as evaluate_authenticated does.
// `first_known`, `second_known`: the wires of other inputs of each party that the client knows
// (the shares of a record's mask, which it dealt): each party's check covers them after its
// pad's output bits (client_checks::open_part), so that neither can feed others either.
// `revealed_outputs`: as given to padded_circuit.
PaddedRun evaluate_padded(Session& session, const circuits::Circuit& padded, const InputOwners& padded_owners,
                          const CircuitMasks& masks, std::span<const std::uint8_t> own_inputs,
                          std::span<const std::uint8_t> public_inputs = {},
                          std::span<const std::uint32_t> first_known = {},
                          std::span<const std::uint32_t> second_known = {}, std::uint32_t revealed_outputs = 0);

}  // namespace mpc::auth2
