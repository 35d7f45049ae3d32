// One part of an actively secure two-server job, as every job kind runs it: the masks of its
// circuit from its AND material, the circuit with outputs padded for the client
// (protocol/auth2/padded_circuit.hpp), and each server held to the key share the client dealt it
// (protocol/auth2/share_check_protocol.hpp) before anything leaves.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "circuits/circuit.hpp"
#include "protocol/auth2/and_triples.hpp"
#include "protocol/auth2/authenticated_garbling.hpp"
#include "protocol/auth2/padded_circuit.hpp"
#include "protocol/client_checks/share_checks.hpp"

namespace mpc::two_party_engine {

// The bits of `bytes` (bit j is bit j % 8 of byte j / 8), 0/1 bytes, as circuits take inputs.
inline std::vector<std::uint8_t> bytes_to_bits(std::span<const std::uint8_t> bytes) {
  return auth2::unpack_bits(bytes, 8 * bytes.size());
}

struct CheckedCircuit {
  const circuits::Circuit* circuit = nullptr;  // padded_circuit(...)
  const auth2::InputOwners* owners = nullptr;
  // Inputs the client knows (the pads' checks cover them), per party.
  std::span<const std::uint32_t> first_known, second_known;
  // Each party's key-share wires, then its blinding's.
  std::span<const std::uint32_t> first_committed, second_committed;
};

// Runs one part on the job session: `material` exactly auth2::material_entries of the circuit,
// the first of which is entry `first_entry` of the epoch (its tweaks). party: 0 or 1.
auth2::PaddedRun run_checked_part(auth2::Session& job, int party, const CheckedCircuit& part,
                                  std::span<const auth2::AndMaterial> material, std::uint64_t first_entry,
                                  std::span<const std::uint8_t> own_inputs, std::span<const std::uint8_t> public_inputs,
                                  const client_checks::ShareCheck& check);

}  // namespace mpc::two_party_engine
