#include "protocol/auth2/authenticated_garbling.hpp"

#include <sodium.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <string>

#include "common/error.hpp"
#include "common/secret.hpp"
#include "protocol/ot/wipe_guard.hpp"
#include "protocol/two_party/fixed_key_hash.hpp"

namespace mpc::auth2 {
namespace {

using circuits::Circuit;
using circuits::GateKind;

// Tweak space of the garbled rows' pads: apart from the half-gates garbling (below 2^63), the
// OT extension's and the leaky AND's.
constexpr std::uint64_t kTweakHigh = (1ull << 63) | 0x41555448474cull;  // "AUTHGL"
// A garbled row: the high 64 bits of the garbler's MAC, then the 128-bit label part. The
// evaluator tells r^A by which of K and K ^ delta_B the 64 bits match: a forgery needs the high
// half of delta_B (2^-64 a try, kStatisticalSecurity), and the row is 24 bytes, not 32.
struct Row {
  std::uint64_t tag;
  Block label;
};
constexpr std::size_t kRowBytes = 24;
constexpr std::size_t kGateBytes = 4 * kRowBytes;

void write_row(std::uint8_t* at, const Row& row) {
  std::memcpy(at, &row.tag, 8);
  std::memcpy(at + 8, &row.label, 16);
}

Row read_row(const std::uint8_t* at) {
  Row row{};
  std::memcpy(&row.tag, at, 8);
  std::memcpy(&row.label, at + 8, 16);
  return row;
}

// The tweak of AND gate g's pad: block `part` (0 or 1) from input `input` (0 alpha, 1 beta).
std::uint64_t pad_tweak(std::uint64_t base, std::size_t gate, unsigned input, unsigned part) {
  return base + 4 * gate + 2 * part + input;
}

std::span<std::uint8_t> bytes_of(std::vector<Block>& blocks) {
  return {reinterpret_cast<std::uint8_t*>(blocks.data()), blocks.size() * sizeof(Block)};
}

Digest label_digest(std::span<const Block> labels) {
  Digest out{};
  crypto_generichash(out.data(), out.size(), reinterpret_cast<const unsigned char*>(labels.data()),
                     labels.size() * sizeof(Block), nullptr, 0);
  return out;
}

// The input wires of each role, in wire order, and the groups' owners checked.
struct InputWires {
  std::vector<std::uint32_t> first, second, shared;  // shared: the public inputs
};

InputWires input_wires(const Circuit& circuit, const InputOwners& owners) {
  if (owners.size() != circuit.input_widths.size())
    throw Error(Component::Protocol, "authenticated garbling: " + std::to_string(owners.size()) + " input owners for " +
                                         std::to_string(circuit.input_widths.size()) + " input groups");
  InputWires wires;
  std::uint32_t wire = 0;
  for (std::size_t g = 0; g < owners.size(); ++g)
    for (std::uint32_t i = 0; i < circuit.input_widths[g]; ++i, ++wire)
      (owners[g] == Owner::First ? wires.first : owners[g] == Owner::Second ? wires.second : wires.shared).push_back(wire);
  return wires;
}

// r_ab = lambda_gamma ^ sigma ^ a lambda_beta ^ b lambda_alpha ^ a b, this party's half.
AuthBit row_bit(Session& session, const AuthBit& gamma, const AuthBit& sigma, const AuthBit& alpha,
                const AuthBit& beta, unsigned a, unsigned b) {
  AuthBit r = gamma ^ sigma;
  if (a) r ^= beta;
  if (b) r ^= alpha;
  session.add_public(r, static_cast<std::uint8_t>(a & b));
  return r;
}

// The outputs [kept, n) revealed: masked ^ mask, after the kept shares in `out`.
void finish_outputs(std::vector<std::uint8_t>& out, std::size_t kept, std::span<const std::uint8_t> masked,
                    std::span<const std::uint8_t> masks) {
  for (std::size_t j = 0; j < masked.size(); ++j) out[kept + j] = masked[j] ^ masks[j];
}

// n random labels from one fresh seed, expanded in user space: the kernel's generator costs a
// system call per 256 bytes, and a circuit takes a label per input and AND gate.
std::vector<Block> random_labels(std::size_t n) {
  std::vector<Block> labels(n);
  std::array<std::uint8_t, randombytes_SEEDBYTES> seed{};
  randombytes_buf(seed.data(), seed.size());
  randombytes_buf_deterministic(labels.data(), n * sizeof(Block), seed.data());
  wipe(seed.data(), seed.size());
  return labels;
}

// `slots` where given (of this circuit, by their shape), else planned now.
std::shared_ptr<const WireSlots> checked_slots(const Circuit& circuit, std::shared_ptr<const WireSlots> slots) {
  if (!slots) return std::make_shared<const WireSlots>(plan_slots(circuit));
  if (slots->gates.size() != circuit.gates.size() || slots->input_slots.size() != circuit.total_inputs() ||
      slots->output_slots.size() != circuit.total_outputs())
    throw Error(Component::Protocol, "authenticated garbling: slots planned for another circuit");
  return slots;
}


std::vector<std::uint8_t> garble(Session& session, const Circuit& circuit, const WireSlots& plan,
                                 const InputWires& wires, const CircuitMasks& masks,
                                 std::span<const std::uint8_t> own_inputs, std::span<const std::uint8_t> public_inputs,
                                 Outputs mode, std::vector<std::uint8_t>* masked_inputs, std::size_t kept) {
  const Block delta = session.delta();
  const std::size_t ands = plan.and_gates;
  const std::uint32_t inputs = circuit.total_inputs();
  const std::uint64_t base = session.take_tweaks(4 * ands);
  // Zero labels: random on inputs, constants and AND outputs; free XOR elsewhere. Per slot as
  // the gates go, and kept per AND gate for its rows: its inputs' and its output's.
  std::vector<Block> fresh = random_labels(inputs + plan.constants + ands);
  const ot::WipeGuard fresh_guard(fresh);
  std::vector<Block> zero(plan.slots);
  const ot::WipeGuard zero_guard(zero);
  for (std::uint32_t w = 0; w < inputs; ++w) zero[plan.input_slots[w]] = fresh[w];
  std::vector<Block> and_zero[3];  // [alpha, beta, gamma][gate]
  for (auto& column : and_zero) column.resize(ands);
  const ot::WipeGuard alpha_guard(and_zero[0]), beta_guard(and_zero[1]), gamma_guard(and_zero[2]);
  std::vector<Block> constant_labels;  // each constant wire's label for its value, in gate order
  const ot::WipeGuard constants_guard(constant_labels);
  std::size_t next_fresh = inputs;
  std::size_t g = 0;
  for (const auto& gate : plan.gates) {
    switch (gate.kind) {
      case GateKind::Xor: zero[gate.out] = zero[gate.in0] ^ zero[gate.in1]; break;
      case GateKind::Inv:
      case GateKind::Copy: zero[gate.out] = zero[gate.in0]; break;
      case GateKind::Const: {
        const Block label = fresh[next_fresh++];
        constant_labels.push_back(label ^ (delta & two_party::select_mask(gate.in0 != 0)));
        zero[gate.out] = label;
        break;
      }
      case GateKind::And: {
        and_zero[0][g] = zero[gate.in0];
        and_zero[1][g] = zero[gate.in1];
        const Block label = fresh[next_fresh++];
        and_zero[2][g] = label;
        zero[gate.out] = label;
        ++g;
        break;
      }
    }
  }
  std::vector<Block> output_zero(plan.output_slots.size());
  const ot::WipeGuard output_guard(output_zero);
  for (std::size_t j = 0; j < output_zero.size(); ++j) output_zero[j] = zero[plan.output_slots[j]];
  // Pads of every row: H(L, t) for both labels of each input, both parts, batched per kind.
  std::vector<Block> pads[2][2][2];  // [input][label value][part]
  for (unsigned input = 0; input < 2; ++input)
    for (unsigned value = 0; value < 2; ++value)
      for (unsigned part = 0; part < 2; ++part) {
        auto& out = pads[input][value][part];
        out.resize(ands);
        const Block offset = value ? delta : Block{};
        for (std::size_t i = 0; i < ands; ++i) out[i] = and_zero[input][i] ^ offset;
        two_party::tccr_hash(out.data(), out.data(), ands, kTweakHigh, pad_tweak(base, 0, input, part), 4);
      }
  std::vector<std::uint8_t> rows(kGateBytes * ands);
  for (std::size_t i = 0; i < ands; ++i) {
    const AndMasks& m = masks.ands[i];
    for (unsigned a = 0; a < 2; ++a)
      for (unsigned b = 0; b < 2; ++b) {
        const AuthBit r = row_bit(session, m.gamma, m.sigma, m.alpha, m.beta, a, b);
        const Row row{(pads[0][a][0][i] ^ pads[1][b][0][i] ^ r.mac).hi,
                      pads[0][a][1][i] ^ pads[1][b][1][i] ^ and_zero[2][i] ^
                          (delta & two_party::select_mask(r.bit != 0)) ^ r.key};
        write_row(&rows[kGateBytes * i + kRowBytes * (2 * a + b)], row);
      }
  }
  for (auto& by_input : pads)
    for (auto& by_value : by_input)
      for (auto& part : by_value) wipe(part.data(), part.size() * sizeof(Block));
  session.send(Step::GarbledRows, rows);
  session.channel().flush();

  // Inputs: this party's masks from the evaluator, the evaluator's masks to it.
  std::vector<AuthBit> own_masks, peer_masks;
  for (const auto w : wires.first) own_masks.push_back(masks.inputs[w]);
  for (const auto w : wires.second) peer_masks.push_back(masks.inputs[w]);
  const std::vector<std::uint8_t> own_lambda = session.reveal_to(Role::First, own_masks);
  session.reveal_to(Role::Second, peer_masks);
  std::vector<std::uint8_t> masked(wires.first.size());
  std::vector<Block> labels;
  for (std::size_t i = 0; i < wires.first.size(); ++i) {
    masked[i] = (own_inputs[i] & 1) ^ own_lambda[i];
    labels.push_back(fresh[wires.first[i]] ^ (delta & two_party::select_mask(masked[i] != 0)));
  }
  for (std::size_t i = 0; i < wires.shared.size(); ++i)
    labels.push_back(fresh[wires.shared[i]] ^ (delta & two_party::select_mask((public_inputs[i] & 1) != 0)));
  labels.insert(labels.end(), constant_labels.begin(), constant_labels.end());
  std::vector<std::uint8_t> message = pack_bits(masked);
  session.send(Step::MaskedInputs, message);
  session.send(Step::InputLabels, bytes_of(labels));
  session.channel().flush();
  std::vector<std::uint8_t> peer_packed((wires.second.size() + 7) / 8);
  session.channel().receive(peer_packed);
  const std::vector<std::uint8_t> peer_masked = unpack_bits(peer_packed, wires.second.size());
  std::vector<Block> peer_labels(wires.second.size());
  for (std::size_t i = 0; i < wires.second.size(); ++i)
    peer_labels[i] = fresh[wires.second[i]] ^ (delta & two_party::select_mask(peer_masked[i] != 0));
  if (session.input_label_deviation()) session.input_label_deviation()(peer_masked, peer_labels);
  session.send(Step::InputLabels, bytes_of(peer_labels));
  session.channel().flush();
  if (masked_inputs != nullptr) {
    masked_inputs->assign(inputs, 0);
    for (std::size_t i = 0; i < wires.first.size(); ++i) (*masked_inputs)[wires.first[i]] = masked[i];
    for (std::size_t i = 0; i < wires.second.size(); ++i) (*masked_inputs)[wires.second[i]] = peer_masked[i];
    for (std::size_t i = 0; i < wires.shared.size(); ++i) (*masked_inputs)[wires.shared[i]] = public_inputs[i] & 1;
  }

  // Outputs: the kept ones as shares; the masks of the others both ways, and the evaluator's
  // masked outputs held to their labels.
  const std::uint32_t outputs = circuit.total_outputs();
  if (mode == Outputs::Shares) kept = outputs;
  std::vector<std::uint8_t> out(outputs);
  const std::span<const AuthBit> all_masks(masks.outputs);
  for (std::size_t j = 0; j < kept; ++j) out[j] = all_masks[j].bit;
  if (kept == outputs) return out;
  const auto revealed = static_cast<std::uint32_t>(outputs - kept);
  const std::span<const AuthBit> output_masks = all_masks.subspan(kept);
  session.reveal_to(Role::Second, output_masks);
  std::vector<std::uint8_t> claim(((revealed + 7) / 8) + sizeof(Digest));
  session.channel().receive(claim);
  const std::vector<std::uint8_t> output_masked = unpack_bits(claim, revealed);
  std::vector<Block> output_labels(revealed);
  for (std::uint32_t j = 0; j < revealed; ++j)
    output_labels[j] = output_zero[kept + j] ^ (delta & two_party::select_mask(output_masked[j] != 0));
  const Digest expected = label_digest(output_labels);
  const std::vector<std::uint8_t> output_lambda = session.reveal_to(Role::First, output_masks);
  if (sodium_memcmp(expected.data(), claim.data() + (revealed + 7) / 8, expected.size()) != 0)
    throw VerificationError(Component::Protocol,
                            "authenticated garbling: the evaluator reported outputs without their labels (it deviated)",
                            "output_label");
  finish_outputs(out, kept, output_masked, output_lambda);
  return out;
}

std::vector<std::uint8_t> evaluate(Session& session, const Circuit& circuit, const WireSlots& plan,
                                   const InputWires& wires, const CircuitMasks& masks,
                                   std::span<const std::uint8_t> own_inputs, std::span<const std::uint8_t> public_inputs,
                                   Outputs mode, std::vector<std::uint8_t>* masked_inputs, std::size_t kept) {
  const Block delta = session.delta();
  const std::size_t ands = plan.and_gates;
  const std::uint64_t base = session.take_tweaks(4 * ands);
  std::vector<std::uint8_t> rows(kGateBytes * ands);
  session.channel().receive(rows);

  std::vector<AuthBit> peer_masks, own_masks;
  for (const auto w : wires.first) peer_masks.push_back(masks.inputs[w]);
  for (const auto w : wires.second) own_masks.push_back(masks.inputs[w]);
  session.reveal_to(Role::First, peer_masks);
  const std::vector<std::uint8_t> own_lambda = session.reveal_to(Role::Second, own_masks);

  // Per slot: the wire's masked value and the label the evaluator holds for it.
  std::vector<std::uint8_t> masked(plan.slots, 0);
  std::vector<Block> labels(plan.slots);
  const ot::WipeGuard labels_guard(labels);
  std::vector<std::uint8_t> peer_packed((wires.first.size() + 7) / 8);
  session.channel().receive(peer_packed);
  const std::vector<std::uint8_t> peer_masked = unpack_bits(peer_packed, wires.first.size());
  std::vector<Block> first_labels(wires.first.size() + wires.shared.size() + plan.constants);
  const ot::WipeGuard first_guard(first_labels);
  session.channel().receive(bytes_of(first_labels));
  std::vector<std::uint8_t> input_masked(circuit.total_inputs(), 0);
  for (std::size_t i = 0; i < wires.first.size(); ++i) {
    input_masked[wires.first[i]] = peer_masked[i];
    labels[plan.input_slots[wires.first[i]]] = first_labels[i];
  }
  for (std::size_t i = 0; i < wires.shared.size(); ++i) {
    input_masked[wires.shared[i]] = public_inputs[i] & 1;
    labels[plan.input_slots[wires.shared[i]]] = first_labels[wires.first.size() + i];
  }
  std::vector<std::uint8_t> own_masked(wires.second.size());
  for (std::size_t i = 0; i < wires.second.size(); ++i) {
    own_masked[i] = (own_inputs[i] & 1) ^ own_lambda[i];
    input_masked[wires.second[i]] = own_masked[i];
  }
  std::vector<std::uint8_t> message = pack_bits(own_masked);
  session.send(Step::MaskedInputs, message);
  session.channel().flush();
  std::vector<Block> second_labels(wires.second.size());
  const ot::WipeGuard second_guard(second_labels);
  session.channel().receive(bytes_of(second_labels));
  for (std::size_t i = 0; i < wires.second.size(); ++i) labels[plan.input_slots[wires.second[i]]] = second_labels[i];
  for (std::uint32_t w = 0; w < input_masked.size(); ++w) masked[plan.input_slots[w]] = input_masked[w];
  if (masked_inputs != nullptr) *masked_inputs = input_masked;

  std::size_t constant = wires.first.size() + wires.shared.size();
  std::size_t g = 0;
  bool rows_hold = true;  // every opened row carried the garbler's MAC
  for (const auto& gate : plan.gates) {
    switch (gate.kind) {
      case GateKind::Xor: {
        const std::uint8_t value = masked[gate.in0] ^ masked[gate.in1];
        const Block label = labels[gate.in0] ^ labels[gate.in1];
        masked[gate.out] = value;
        labels[gate.out] = label;
        break;
      }
      case GateKind::Inv:  // the mask took the 1 (prepare_masks)
      case GateKind::Copy: {
        const std::uint8_t value = masked[gate.in0];
        const Block label = labels[gate.in0];
        masked[gate.out] = value;
        labels[gate.out] = label;
        break;
      }
      case GateKind::Const:
        masked[gate.out] = static_cast<std::uint8_t>(gate.in0 & 1);
        labels[gate.out] = first_labels[constant++];
        break;
      case GateKind::And: {
        const unsigned a = masked[gate.in0], b = masked[gate.in1];
        // The four pads in one call: tweaks 4g + 2 part + input are consecutive in this order.
        Block pads[4] = {labels[gate.in0], labels[gate.in1], labels[gate.in0], labels[gate.in1]};
        two_party::tccr_hash(pads, pads, 4, kTweakHigh, pad_tweak(base, g, 0, 0), 1);
        const Row row = read_row(&rows[kGateBytes * g + kRowBytes * (2 * a + b)]);
        const std::uint64_t tag = row.tag ^ pads[0].hi ^ pads[1].hi;
        const AndMasks& m = masks.ands[g];
        const AuthBit r = row_bit(session, m.gamma, m.sigma, m.alpha, m.beta, a, b);
        const bool zero_share = tag == r.key.hi, one_share = tag == (r.key.hi ^ delta.hi);
        rows_hold = rows_hold && (zero_share || one_share);
        const std::uint8_t peer_bit = one_share ? 1 : 0;
        masked[gate.out] = peer_bit ^ r.bit;
        labels[gate.out] = row.label ^ pads[2] ^ pads[3] ^ r.mac;
        ++g;
        break;
      }
    }
  }
  if (!rows_hold)
    throw VerificationError(Component::Protocol,
                            "authenticated garbling: a garbled row does not carry the garbler's MAC (it deviated)",
                            "garbled_row");

  const std::uint32_t outputs = circuit.total_outputs();
  if (mode == Outputs::Shares) kept = outputs;
  std::vector<std::uint8_t> out(outputs);
  std::vector<std::uint8_t> all_masked(outputs);
  for (std::uint32_t j = 0; j < outputs; ++j) all_masked[j] = masked[plan.output_slots[j]];
  for (std::size_t j = 0; j < kept; ++j) out[j] = all_masked[j] ^ masks.outputs[j].bit;
  if (kept == outputs) return out;
  const auto revealed = static_cast<std::uint32_t>(outputs - kept);
  const std::span<const AuthBit> output_masks(masks.outputs.data() + kept, revealed);
  const std::span<const std::uint8_t> output_masked(all_masked.data() + kept, revealed);
  const std::vector<std::uint8_t> output_lambda = session.reveal_to(Role::Second, output_masks);
  std::vector<Block> output_labels(revealed);
  const ot::WipeGuard output_guard(output_labels);
  for (std::uint32_t j = 0; j < revealed; ++j) output_labels[j] = labels[plan.output_slots[kept + j]];
  const Digest digest = label_digest(output_labels);
  std::vector<std::uint8_t> claim = pack_bits(output_masked);
  claim.insert(claim.end(), digest.begin(), digest.end());
  session.send(Step::OutputClaim, claim);
  session.reveal_to(Role::First, output_masks);
  finish_outputs(out, kept, output_masked, output_lambda);
  return out;
}

}  // namespace

std::size_t and_gate_count(const Circuit& circuit) {
  std::size_t count = 0;
  for (const auto& gate : circuit.gates) count += gate.kind == GateKind::And ? 1 : 0;
  return count;
}

namespace {

// The masks from fresh masks of the owned inputs and AND outputs (`fresh`, inputs first in wire
// order, then AND gates in gate order) and one triple per AND gate. Per slot as the gates go
// (wire_slots.hpp); what garbling and evaluation read is kept in their order.
template <typename Fresh, typename Triple>  // const AuthBit&(std::size_t); const AuthTriple&(std::size_t)
CircuitMasks masks_from(Session& session, const Circuit& circuit, std::shared_ptr<const WireSlots> slots,
                        const InputWires& wires, const Fresh& fresh, const Triple& triple) {
  const WireSlots& plan = *slots;
  const std::size_t ands = plan.and_gates;
  CircuitMasks masks;
  masks.inputs.resize(circuit.total_inputs());  // public inputs keep the mask 0
  std::size_t next = 0;
  for (const auto& owned : {wires.first, wires.second})
    for (const auto w : owned) masks.inputs[w] = fresh(next++);
  std::vector<AuthBit> lambda(plan.slots);
  const ot::WipeGuard lambda_guard(lambda.data(), lambda.size() * sizeof(AuthBit));
  for (std::uint32_t w = 0; w < masks.inputs.size(); ++w) lambda[plan.input_slots[w]] = masks.inputs[w];
  // Filled as the gates go (no zeroing first: a Kerberos job's are tens of MB).
  masks.ands.reserve(ands);
  std::vector<AuthBit> differences;
  differences.reserve(2 * ands);
  std::size_t g = 0;
  for (const auto& gate : plan.gates) {
    switch (gate.kind) {
      case GateKind::Xor: {
        const AuthBit out = lambda[gate.in0] ^ lambda[gate.in1];
        lambda[gate.out] = out;
        break;
      }
      case GateKind::Inv: {
        AuthBit out = lambda[gate.in0];
        session.add_public(out, 1);
        lambda[gate.out] = out;
        break;
      }
      case GateKind::Copy: {
        const AuthBit out = lambda[gate.in0];
        lambda[gate.out] = out;
        break;
      }
      case GateKind::Const: lambda[gate.out] = AuthBit{}; break;
      case GateKind::And: {
        const AuthTriple& t = triple(g);
        const AuthBit& alpha = lambda[gate.in0];
        const AuthBit& beta = lambda[gate.in1];
        differences.push_back(alpha ^ t.x);
        differences.push_back(beta ^ t.y);
        masks.ands.push_back(AndMasks{alpha, beta, fresh(next++), {}});
        lambda[gate.out] = masks.ands.back().gamma;
        ++g;
        break;
      }
    }
  }
  masks.outputs.resize(plan.output_slots.size());
  for (std::size_t j = 0; j < masks.outputs.size(); ++j) masks.outputs[j] = lambda[plan.output_slots[j]];
  // sigma = lambda_alpha lambda_beta = z ^ d y ^ e x ^ d e with d = lambda_alpha ^ x, e = lambda_beta ^ y.
  const std::vector<std::uint8_t> opened = session.open(differences);
  wipe(differences.data(), differences.size() * sizeof(AuthBit));
  for (std::size_t i = 0; i < ands; ++i) {
    const std::uint8_t d = opened[2 * i], e = opened[2 * i + 1];
    const AuthTriple& t = triple(i);
    AuthBit sigma = t.z;
    if (d) sigma ^= t.y;
    if (e) sigma ^= t.x;
    session.add_public(sigma, static_cast<std::uint8_t>(d & e));
    masks.ands[i].sigma = sigma;
  }
  masks.slots = std::move(slots);
  return masks;
}

}  // namespace

std::size_t material_entries(const Circuit& circuit, const InputOwners& owners) {
  const InputWires wires = input_wires(circuit, owners);
  return wires.first.size() + wires.second.size() + and_gate_count(circuit);
}

CircuitMasks prepare_masks(Session& session, const Circuit& circuit, const InputOwners& owners,
                           std::span<const AuthTriple> triples, std::shared_ptr<const WireSlots> slots) {
  slots = checked_slots(circuit, std::move(slots));
  const InputWires wires = input_wires(circuit, owners);
  const std::size_t ands = slots->and_gates;
  if (triples.size() != ands)
    throw Error(Component::Protocol, "authenticated garbling: " + std::to_string(triples.size()) + " triples for " +
                                         std::to_string(ands) + " AND gates");
  std::vector<AuthBit> fresh = session.random_bits(wires.first.size() + wires.second.size() + ands);
  const ot::WipeGuard fresh_guard(fresh);
  return masks_from(
      session, circuit, std::move(slots), wires, [&](std::size_t i) -> const AuthBit& { return fresh[i]; },
      [&](std::size_t g) -> const AuthTriple& { return triples[g]; });
}

CircuitMasks prepare_masks(Session& session, const Circuit& circuit, const InputOwners& owners,
                           std::span<const AndMaterial> material, std::shared_ptr<const WireSlots> slots) {
  slots = checked_slots(circuit, std::move(slots));
  const InputWires wires = input_wires(circuit, owners);
  const std::size_t inputs = wires.first.size() + wires.second.size();
  if (material.size() != inputs + slots->and_gates)
    throw Error(Component::Protocol, "authenticated garbling: " + std::to_string(material.size()) +
                                         " entries of AND material where the circuit takes " +
                                         std::to_string(inputs + slots->and_gates));
  return masks_from(
      session, circuit, std::move(slots), wires, [&](std::size_t i) -> const AuthBit& { return material[i].lambda; },
      [&](std::size_t g) -> const AuthTriple& { return material[inputs + g].triple; });
}

std::vector<std::uint8_t> evaluate_authenticated(Session& session, const Circuit& circuit, const InputOwners& owners,
                                                 const CircuitMasks& masks, std::span<const std::uint8_t> own_inputs,
                                                 std::span<const std::uint8_t> public_inputs, Outputs outputs,
                                                 std::vector<std::uint8_t>* masked_inputs, std::size_t kept_outputs) {
  const InputWires wires = input_wires(circuit, owners);
  const auto& own = session.role() == Role::First ? wires.first : wires.second;
  if (own_inputs.size() != own.size() || public_inputs.size() != wires.shared.size())
    throw Error(Component::Protocol, "authenticated garbling: " + std::to_string(own_inputs.size()) + " own and " +
                                         std::to_string(public_inputs.size()) + " public input bits where the circuit has " +
                                         std::to_string(own.size()) + " and " + std::to_string(wires.shared.size()));
  const std::shared_ptr<const WireSlots> slots = checked_slots(circuit, masks.slots);
  if (masks.inputs.size() != circuit.total_inputs() || masks.outputs.size() != circuit.total_outputs() ||
      masks.ands.size() != slots->and_gates)
    throw Error(Component::Protocol, "authenticated garbling: masks of another circuit");
  if (kept_outputs > circuit.total_outputs())
    throw Error(Component::Protocol, "authenticated garbling: more outputs kept as shares than the circuit has");
  return session.role() == Role::First ? garble(session, circuit, *slots, wires, masks, own_inputs, public_inputs,
                                                outputs, masked_inputs, kept_outputs)
                                       : evaluate(session, circuit, *slots, wires, masks, own_inputs, public_inputs,
                                                  outputs, masked_inputs, kept_outputs);
}

}  // namespace mpc::auth2
