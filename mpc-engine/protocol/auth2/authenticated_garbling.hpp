// Authenticated garbling: a boolean circuit between two servers, secure with abort against
// either one deviating (Wang, Ranellucci, Katz, "Authenticated Garbling and Efficient
// Maliciously Secure Two-Party Computation", CCS 2017, eprint 2017/030, section 4). The first
// party garbles, the second evaluates; neither can choose the function, an input of the other,
// or an output, and whether a run aborts depends on nothing the deviating party does not know.
//
// Masks (function-dependent preprocessing, before any input): every wire w carries a shared
// mask lambda_w (authenticated bits, auth_bits.hpp): random on inputs and AND outputs, XORs
// of them elsewhere (an inverter adds the public 1 to its mask and keeps its label). Every AND
// gate (alpha, beta, gamma) also gets the shared product sigma = lambda_alpha lambda_beta from
// one AND triple (and_triples.hpp) and one authenticated opening of lambda_alpha ^ x and
// lambda_beta ^ y for all gates at once.
//
// Garbling: the garbler's labels L_w0 and L_w1 = L_w0 ^ delta_A (its global delta, so XOR is
// free). An AND gate has four rows, one per pair (a, b) of masked input values, each hiding
// the garbler's half of the shared bit
//   r_ab = lambda_gamma ^ sigma ^ a lambda_beta ^ b lambda_alpha ^ a b
// (whose value is the masked output for those masked inputs) as
//   row_ab = pad(L_alpha_a, L_beta_b) ^ (hi64(M_B[r_ab^A]), L_gamma0 ^ r_ab^A delta_A ^ K_A[r_ab^B]),
// 24 bytes: pad = H(L_alpha_a, t) ^ H(L_beta_b, t') over two tweaks per part and input. The
// evaluator, holding the masked values (a, b) and their labels, opens row_ab: its first part
// must be the high half of its key K_B[r^A] or of that key ^ delta_B (else the garbler deviated:
// abort), which gives r^A; the masked output is r^A ^ r^B and its label the second part ^
// M_A[r^B]. Half a MAC suffices: a forgery needs the high 64 bits of delta_B, 2^-64 a try. The MAC makes
// the garbler commit to the function's truth table through the shared masks: a row for another
// function, or another label, fails that check in this gate or a later one. The row the
// evaluator opens is chosen by masked values, uniform to the garbler (lambda^B is hidden
// from it), so a corrupted row aborts independently of every wire value.
//
// Inputs: a public input (both parties hold it) has the mask 0 and the garbler sends its
// label; a wrong one fails a later row whatever the secrets. The garbler's input bit x on wire w: the evaluator reveals lambda_w^B to it
// (authenticated), the garbler sends x ^ lambda_w and its label. The evaluator's input y: the
// garbler reveals lambda_w^A (authenticated), the evaluator sends y ^ lambda_w (uniform to
// the garbler) and the garbler answers with that label: no OT, so no selective failure on the
// evaluator's bits. Outputs, revealed: each party reveals its output masks to the other
// (authenticated); the evaluator sends the masked outputs with a hash of their labels, which
// the garbler checks against the labels it made (so the evaluator cannot change an output it
// reports). Outputs as shares: nothing more is sent; the garbler keeps lambda^A, the evaluator
// the masked output ^ lambda^B. Either party can still XOR an error into its own share, one it
// picks without seeing any secret: the function, and so any dependence on the key, is fixed.
//
// Traffic: the garbled rows 24 bytes per AND per row, 96 per AND, from the garbler (the
// tables do not depend on inputs and may travel ahead); one triple and two opened bits per AND
// of preprocessing (and_triples.hpp); per input bit one opened mask, one masked bit and one
// label; per output bit two opened masks and one masked bit.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "circuits/circuit.hpp"
#include "protocol/auth2/and_triples.hpp"
#include "protocol/auth2/auth_bits.hpp"
#include "protocol/auth2/wire_slots.hpp"

namespace mpc::auth2 {

// One party's half of an AND gate's masks: its input wires' (alpha, beta) and output wire's
// (gamma) lambda, and sigma = lambda_alpha lambda_beta.
struct AndMasks {
  AuthBit alpha, beta, gamma, sigma;
};

// One party's half of a circuit's masks: what garbling and evaluation read of them, kept in
// the order they read it (wire_slots.hpp says why the passes keep no mask per wire).
struct CircuitMasks {
  std::vector<AuthBit> inputs;   // lambda of every input wire, in wire order (0 on public ones)
  std::vector<AuthBit> outputs;  // lambda of every output wire
  std::vector<AndMasks> ands;    // in gate order
  std::shared_ptr<const WireSlots> slots;  // the circuit's, as prepare_masks planned them
};

// Who provides each input group of the circuit: one party, or both (a public input).
enum class Owner : std::uint8_t { First, Second, Public };
using InputOwners = std::vector<Owner>;

// What a run gives each party: the outputs themselves, or an XOR share of them.
enum class Outputs : std::uint8_t { Reveal, Shares };

// The masks of one evaluation of `circuit`, from one AND triple per AND gate (in gate order;
// exactly as many). Both parties call together. VerificationError ("mac_check") when the peer
// deviates in the opening; FormatError for a circuit circuits::validate refuses.
CircuitMasks prepare_masks(Session& session, const circuits::Circuit& circuit, const InputOwners& owners,
                           std::span<const AuthTriple> triples, std::shared_ptr<const WireSlots> slots = nullptr);

// Garbles (first party) or evaluates (second party) `circuit` on this party's input bits (its
// own groups, in group order) and the public ones (the public groups, in group order), and
// returns the circuit's output bits, the same for both (Outputs::Reveal), or this party's XOR
// share of them (Outputs::Shares). Throws VerificationError when the peer deviated: check
// "garbled_row" (evaluator: a row that does not carry the garbler's MAC), "mac_check" (an
// opened mask), "output_label" (garbler: an output the evaluator reported without its label).
// Nothing is returned from a run that failed a check. With `masked_inputs`, also the masked
// value of every input wire (wire order), which both parties hold once the inputs are sent:
// with the wires' masks, a linear function of the inputs can be opened (padded_circuit.hpp).
// With Outputs::Reveal, the first `kept_outputs` outputs are kept as XOR shares all the same
// (values that stay with the two parties, such as a GCM tag's mask), and only the others are
// revealed.
std::vector<std::uint8_t> evaluate_authenticated(Session& session, const circuits::Circuit& circuit,
                                                 const InputOwners& owners, const CircuitMasks& masks,
                                                 std::span<const std::uint8_t> own_inputs,
                                                 std::span<const std::uint8_t> public_inputs = {},
                                                 Outputs outputs = Outputs::Reveal,
                                                 std::vector<std::uint8_t>* masked_inputs = nullptr,
                                                 std::size_t kept_outputs = 0);

// The same from AND material made ahead of time (and_triples.hpp): exactly
// material_entries(circuit, owners) entries, one per input a party owns (in wire order), then
// one per AND gate (in gate order). Makes no authenticated bits, so a job session can run it.
// `slots`: the circuit's, planned once where the circuit serves many jobs (nullptr: planned here).
CircuitMasks prepare_masks(Session& session, const circuits::Circuit& circuit, const InputOwners& owners,
                           std::span<const AndMaterial> material, std::shared_ptr<const WireSlots> slots = nullptr);
std::size_t material_entries(const circuits::Circuit& circuit, const InputOwners& owners);

// The number of AND gates: the triples a run needs.
std::size_t and_gate_count(const circuits::Circuit& circuit);

}  // namespace mpc::auth2
