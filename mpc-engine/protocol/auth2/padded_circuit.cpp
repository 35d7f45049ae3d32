#include "protocol/auth2/padded_circuit.hpp"

#include <algorithm>

#include "circuits/extra_inputs.hpp"
#include "common/error.hpp"
#include "common/secret.hpp"

namespace mpc::auth2 {
namespace {

using circuits::Circuit;
using circuits::GateKind;
using client_checks::kPadCheckBits;

}  // namespace

Circuit padded_circuit(const Circuit& circuit, std::uint32_t kept_outputs, std::uint32_t revealed_outputs) {
  const std::uint32_t inputs = circuit.total_inputs(), outputs = circuit.total_outputs();
  if (kept_outputs + revealed_outputs > outputs)
    throw Error(Component::Protocol, "padded outputs: more kept and revealed than the circuit has");
  // The kept and the revealed outputs are copied alike; only the padded ones differ.
  kept_outputs += revealed_outputs;
  const std::uint32_t padded_outputs = outputs - kept_outputs;
  const std::uint32_t pad = padded_outputs + static_cast<std::uint32_t>(kPadCheckBits);
  const std::uint32_t pads[] = {pad, pad};
  Circuit padded = circuits::with_extra_inputs(circuit, pads);
  // After the circuit's wires: z_j ^ p_1[j] for the padded outputs, then the kept outputs'
  // copies and the padded ^ p_2[j], the last wires, in output order.
  const std::uint32_t first_output = padded.first_output_wire(), first_padded = first_output + kept_outputs;
  const std::uint32_t with_first = padded.num_wires, copies = with_first + padded_outputs,
                      result = copies + kept_outputs;
  padded.gates.reserve(padded.gates.size() + kept_outputs + 2 * padded_outputs);
  for (std::uint32_t j = 0; j < padded_outputs; ++j)
    padded.gates.push_back({GateKind::Xor, first_padded + j, inputs + j, with_first + j});
  for (std::uint32_t j = 0; j < kept_outputs; ++j) padded.gates.push_back({GateKind::Copy, first_output + j, 0, copies + j});
  for (std::uint32_t j = 0; j < padded_outputs; ++j)
    padded.gates.push_back({GateKind::Xor, with_first + j, inputs + pad + j, result + j});
  padded.num_wires = result + padded_outputs;
  padded.output_widths = {outputs};
  circuits::validate(padded);
  return padded;
}

InputOwners padded_owners(const InputOwners& owners) {
  InputOwners padded = owners;
  padded.push_back(Owner::First);
  padded.push_back(Owner::Second);
  return padded;
}

PaddedRun evaluate_padded(Session& session, const Circuit& padded, const InputOwners& padded_owners,
                          const CircuitMasks& masks, std::span<const std::uint8_t> own_inputs,
                          std::span<const std::uint8_t> public_inputs, std::span<const std::uint32_t> first_known,
                          std::span<const std::uint32_t> second_known, std::uint32_t revealed_outputs) {
  const std::size_t groups = padded.input_widths.size();
  if (groups < 2 || padded_owners.size() != groups || padded_owners[groups - 2] != Owner::First ||
      padded_owners[groups - 1] != Owner::Second || padded.input_widths[groups - 2] != padded.input_widths[groups - 1] ||
      padded.input_widths[groups - 1] < kPadCheckBits ||
      padded.input_widths[groups - 1] - kPadCheckBits > padded.total_outputs())
    throw Error(Component::Protocol, "padded outputs: a circuit or owners not from padded_circuit");
  // The padded outputs are the last ones; before them the revealed ones, and before those the
  // ones kept as shares.
  const std::size_t outputs = padded.input_widths[groups - 1] - kPadCheckBits;
  if (outputs + revealed_outputs > padded.total_outputs())
    throw Error(Component::Protocol, "padded outputs: more revealed than the circuit has");
  const std::size_t kept = padded.total_outputs() - outputs - revealed_outputs;
  PaddedRun run;
  std::vector<std::uint8_t> all = evaluate_authenticated(session, padded, padded_owners, masks, own_inputs,
                                                         public_inputs, Outputs::Reveal, &run.masked_inputs, kept);
  run.shares.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(kept));
  run.revealed.assign(all.begin() + static_cast<std::ptrdiff_t>(kept),
                      all.begin() + static_cast<std::ptrdiff_t>(kept + revealed_outputs));
  run.masked.assign(all.begin() + static_cast<std::ptrdiff_t>(kept + revealed_outputs), all.end());
  wipe(all.data(), all.size());
  const std::vector<std::uint8_t>& masked_inputs = run.masked_inputs;
  // Every input is fixed now: R comes after, so no pad can be fitted to it.
  run.report.check_seed = session.coin_toss();
  const auto first_pad_wire = static_cast<std::uint32_t>(padded.total_inputs() - 2 * (outputs + kPadCheckBits));
  std::vector<AuthBit> checks(2 * kPadCheckBits);
  for (std::size_t party = 0; party < 2; ++party) {
    // The checked vector: the pad's output bits, the known inputs, then the check bits.
    const std::uint32_t pad_wire = first_pad_wire + static_cast<std::uint32_t>(party * (outputs + kPadCheckBits));
    const std::span<const std::uint32_t> known = party == 0 ? first_known : second_known;
    std::vector<std::uint32_t> columns(outputs + known.size());
    for (std::size_t i = 0; i < outputs; ++i) columns[i] = pad_wire + static_cast<std::uint32_t>(i);
    std::copy(known.begin(), known.end(), columns.begin() + static_cast<std::ptrdiff_t>(outputs));
    const client_checks::CheckRows rows(run.report.check_seed, columns.size());
    for (std::size_t k = 0; k < kPadCheckBits; ++k) {
      const std::uint32_t check_wire = pad_wire + static_cast<std::uint32_t>(outputs + k);
      AuthBit bit = masks.inputs[check_wire];
      std::uint8_t masked = masked_inputs[check_wire];
      for (std::size_t i = 0; i < columns.size(); ++i)
        if (rows.bit(k, i)) {
          bit ^= masks.inputs[columns[i]];
          masked ^= masked_inputs[columns[i]];
        }
      // A wire's value is its masked value ^ its mask: the public part joins the shares.
      session.add_public(bit, masked);
      checks[party * kPadCheckBits + k] = bit;
    }
  }
  const std::vector<std::uint8_t> opened = session.open(checks);
  for (std::size_t k = 0; k < kPadCheckBits; ++k) {
    run.report.first_check[k / 8] |= static_cast<std::uint8_t>(opened[k] << (k % 8));
    run.report.second_check[k / 8] |= static_cast<std::uint8_t>(opened[kPadCheckBits + k] << (k % 8));
  }
  return run;
}

}  // namespace mpc::auth2
