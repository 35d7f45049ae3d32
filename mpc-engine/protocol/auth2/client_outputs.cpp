#include "protocol/auth2/client_outputs.hpp"

#include <sodium.h>

#include <string>

#include "common/error.hpp"
#include "common/secret.hpp"

namespace mpc::auth2 {
namespace {

using circuits::Circuit;
using circuits::Gate;
using circuits::GateKind;

// The check's matrix R: row k (of kPadCheckBits) is `outputs` bits, packed, from the tossed seed.
std::vector<std::uint8_t> check_rows(const Digest& seed, std::size_t outputs) {
  std::vector<std::uint8_t> rows(kPadCheckBits * ((outputs + 7) / 8));
  static_assert(sizeof(Digest) == randombytes_SEEDBYTES);
  randombytes_buf_deterministic(rows.data(), rows.size(), seed.data());
  return rows;
}

bool row_bit(const std::vector<std::uint8_t>& rows, std::size_t outputs, std::size_t k, std::size_t i) {
  return ((rows[k * ((outputs + 7) / 8) + i / 8] >> (i % 8)) & 1) != 0;
}

// c = R p ^ t for a pad given as bits (outputs then the check bits), packed.
std::array<std::uint8_t, kPadCheckBits / 8> pad_check(const std::vector<std::uint8_t>& rows,
                                                      std::span<const std::uint8_t> pad, std::size_t outputs) {
  std::array<std::uint8_t, kPadCheckBits / 8> check{};
  for (std::size_t k = 0; k < kPadCheckBits; ++k) {
    std::uint8_t bit = pad[outputs + k] & 1;
    for (std::size_t i = 0; i < outputs; ++i)
      if (row_bit(rows, outputs, k, i)) bit ^= pad[i] & 1;
    check[k / 8] |= static_cast<std::uint8_t>(bit << (k % 8));
  }
  return check;
}

}  // namespace

std::vector<std::uint8_t> pad_bits(const PadSeed& seed, std::size_t outputs) {
  const std::size_t count = outputs + kPadCheckBits;
  SecretBytes packed((count + 7) / 8);
  static_assert(sizeof(PadSeed) == randombytes_SEEDBYTES);
  randombytes_buf_deterministic(packed.data(), packed.size(), seed.data());
  return unpack_bits(packed.span(), count);
}

Circuit padded_circuit(const Circuit& circuit) {
  circuits::validate(circuit);
  const std::uint32_t inputs = circuit.total_inputs(), outputs = circuit.total_outputs();
  const std::uint32_t pad = outputs + static_cast<std::uint32_t>(kPadCheckBits);
  const std::uint32_t shift = 2 * pad;  // the original non-input wires move past both pads
  const auto moved = [&](std::uint32_t wire) { return wire < inputs ? wire : wire + shift; };
  Circuit padded;
  padded.input_widths = circuit.input_widths;
  padded.input_widths.push_back(pad);
  padded.input_widths.push_back(pad);
  padded.output_widths = circuit.output_widths;
  padded.gates.reserve(circuit.gates.size() + 2 * outputs);
  for (const Gate& gate : circuit.gates) {
    Gate copy = gate;
    copy.out = moved(gate.out);
    if (gate.kind != GateKind::Const) copy.in0 = moved(gate.in0);
    if (gate.kind == GateKind::Xor || gate.kind == GateKind::And) copy.in1 = moved(gate.in1);
    padded.gates.push_back(copy);
  }
  // z_j ^ p_1[j] into the wires after the original circuit's, then ^ p_2[j] into the last ones.
  const std::uint32_t first_output = moved(circuit.first_output_wire());
  const std::uint32_t with_first = circuit.num_wires + shift, result = with_first + outputs;
  for (std::uint32_t j = 0; j < outputs; ++j)
    padded.gates.push_back({GateKind::Xor, first_output + j, inputs + j, with_first + j});
  for (std::uint32_t j = 0; j < outputs; ++j)
    padded.gates.push_back({GateKind::Xor, with_first + j, inputs + pad + j, result + j});
  padded.num_wires = result + outputs;
  circuits::validate(padded);
  return padded;
}

InputOwners padded_owners(const InputOwners& owners) {
  InputOwners padded = owners;
  padded.push_back(Owner::First);
  padded.push_back(Owner::Second);
  return padded;
}

PaddedOutputs evaluate_padded(Session& session, const Circuit& padded, const InputOwners& padded_owners,
                              const CircuitMasks& masks, std::span<const std::uint8_t> own_inputs,
                              std::span<const std::uint8_t> public_inputs) {
  const std::size_t outputs = padded.total_outputs();
  const std::size_t groups = padded.input_widths.size();
  if (groups < 2 || padded_owners.size() != groups || padded_owners[groups - 2] != Owner::First ||
      padded_owners[groups - 1] != Owner::Second || padded.input_widths[groups - 2] != outputs + kPadCheckBits ||
      padded.input_widths[groups - 1] != outputs + kPadCheckBits)
    throw Error(Component::Protocol, "padded outputs: a circuit or owners not from padded_circuit");
  std::vector<std::uint8_t> masked_inputs;
  const std::vector<std::uint8_t> revealed = evaluate_authenticated(session, padded, padded_owners, masks, own_inputs,
                                                                    public_inputs, Outputs::Reveal, &masked_inputs);
  PaddedOutputs report;
  report.masked = pack_bits(revealed);
  // Every input is fixed now: R comes after, so no pad can be fitted to it.
  report.check_seed = session.coin_toss();
  const std::vector<std::uint8_t> rows = check_rows(report.check_seed, outputs);
  const std::uint32_t pads = padded.total_inputs() - 2 * static_cast<std::uint32_t>(outputs + kPadCheckBits);
  std::vector<AuthBit> checks(2 * kPadCheckBits);
  for (std::size_t party = 0; party < 2; ++party) {
    const std::uint32_t first_wire = pads + static_cast<std::uint32_t>(party * (outputs + kPadCheckBits));
    for (std::size_t k = 0; k < kPadCheckBits; ++k) {
      const std::uint32_t check_wire = first_wire + static_cast<std::uint32_t>(outputs + k);
      AuthBit bit = masks.lambda[check_wire];
      std::uint8_t masked = masked_inputs[check_wire];
      for (std::size_t i = 0; i < outputs; ++i)
        if (row_bit(rows, outputs, k, i)) {
          bit ^= masks.lambda[first_wire + i];
          masked ^= masked_inputs[first_wire + i];
        }
      // The wire's value is its masked value ^ its mask: the public part joins one share.
      session.add_public(bit, masked);
      checks[party * kPadCheckBits + k] = bit;
    }
  }
  const std::vector<std::uint8_t> opened = session.open(checks);
  for (std::size_t k = 0; k < kPadCheckBits; ++k) {
    report.first_check[k / 8] |= static_cast<std::uint8_t>(opened[k] << (k % 8));
    report.second_check[k / 8] |= static_cast<std::uint8_t>(opened[kPadCheckBits + k] << (k % 8));
  }
  return report;
}

std::vector<std::uint8_t> open_padded(const PaddedOutputs& first, const PaddedOutputs& second,
                                      const PadSeed& first_pad, const PadSeed& second_pad, std::size_t outputs) {
  if (first.masked.size() != (outputs + 7) / 8 || !(first == second))
    throw VerificationError(Component::Protocol, "padded outputs: the two servers reported different outputs",
                            "server_reports");
  const std::vector<std::uint8_t> rows = check_rows(first.check_seed, outputs);
  const std::vector<std::uint8_t> p1 = pad_bits(first_pad, outputs), p2 = pad_bits(second_pad, outputs);
  const bool first_holds = pad_check(rows, p1, outputs) == first.first_check;
  const bool second_holds = pad_check(rows, p2, outputs) == first.second_check;
  if (!first_holds || !second_holds)
    throw VerificationError(Component::Protocol,
                            std::string("padded outputs: server ") + (first_holds ? "2" : "1") +
                                " computed with another pad than the client's",
                            "pad_check");
  const std::vector<std::uint8_t> masked = unpack_bits(first.masked, outputs);
  std::vector<std::uint8_t> out(outputs);
  for (std::size_t j = 0; j < outputs; ++j) out[j] = masked[j] ^ p1[j] ^ p2[j];
  return out;
}

}  // namespace mpc::auth2
