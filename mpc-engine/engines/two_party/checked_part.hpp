// One part of an actively secure two-server job, as every job kind runs it: the masks of its
// circuit from its AND material, the circuit with outputs padded for the client
// (protocol/auth2/padded_circuit.hpp), and each server held to the key share the client dealt it
// (protocol/client_checks/share_checks.hpp) by a check computed inside the circuit, whose only
// outputs are its two verdicts, before anything leaves.
#pragma once

#include <cstdint>
#include <memory>
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

// Bits a party feeds for the share checks, after its other inputs and before its pad: its key
// for checking its peer, then its peer's tag.
inline constexpr std::uint32_t kShareCheckInputBits = 2 * 8 * client_checks::kShareCheckWordBytes;
// The verdicts: revealed outputs of every checked part, after its kept outputs.
inline constexpr std::uint32_t kShareCheckVerdicts = 2;

// `circuit` with the share checks: inputs appended after its own, the first party's key and tag
// then the second's (64 bits each); outputs the first kept_outputs of its own, the verdicts on
// the first party's share and the second's, then the rest of its own. first_committed and
// second_committed: each party's share wires, then its blinding's (kCheckBits), in `circuit`.
// Pad it with auth2::padded_circuit(..., kept_outputs, kShareCheckVerdicts).
circuits::Circuit with_share_checks(const circuits::Circuit& circuit, std::span<const std::uint32_t> first_committed,
                                    std::span<const std::uint32_t> second_committed, std::uint32_t kept_outputs = 0);
// The owners of its inputs: `owners`, then First, First, Second, Second.
auth2::InputOwners share_check_owners(const auth2::InputOwners& owners);
// This party's inputs for the checks of the part of its share a job feeds (`segment`, of
// wire::share_check_segments): its key, then its peer's tag (bits). Throws FormatError(Protocol)
// for a segment the check has not.
std::vector<std::uint8_t> share_check_inputs(const client_checks::ShareCheck& check, std::size_t segment);
// This party's blinding of that segment (bits), fed after its share.
std::vector<std::uint8_t> blinding_bits(const client_checks::ShareCheck& check, std::size_t segment);

struct CheckedCircuit {
  const circuits::Circuit* circuit = nullptr;  // padded_circuit(with_share_checks(...), kept, kShareCheckVerdicts)
  const auth2::InputOwners* owners = nullptr;
  // Inputs the client knows (the pads' checks cover them), per party.
  std::span<const std::uint32_t> first_known, second_known;
  std::shared_ptr<const auth2::WireSlots> slots;  // the circuit's (auth2::plan_slots), planned once
};

// Runs one part on the job session: `material` exactly auth2::material_entries of the circuit,
// the first of which is entry `first_entry` of the epoch (its tweaks). party: 0 or 1. Throws
// VerificationError ("share_check") when a verdict is 0, naming whose share failed; the run's
// revealed outputs are the verdicts.
auth2::PaddedRun run_checked_part(auth2::Session& job, int party, const CheckedCircuit& part,
                                  std::span<const auth2::AndMaterial> material, std::uint64_t first_entry,
                                  std::span<const std::uint8_t> own_inputs, std::span<const std::uint8_t> public_inputs);

}  // namespace mpc::two_party_engine
