#include "engines/two_party/checked_part.hpp"

#include <map>
#include <memory>
#include <mutex>

#include "circuits/extra_inputs.hpp"
#include "circuits/share_hash.hpp"
#include "common/error.hpp"
#include "engines/two_party/and_material_stock.hpp"
#include "wire/sealed_share.hpp"

namespace mpc::two_party_engine {
namespace {

constexpr std::uint32_t kWordBits = 8 * client_checks::kShareCheckWordBytes;
// The stored form the client serializes is the one the wire layer counts.
static_assert(wire::kShareCheckKeyBytes == client_checks::kShareCheckWordBytes &&
              wire::kShareCheckSegmentBytes == 2 * client_checks::kShareCheckWordBytes);

// The check's circuit for shares of `share_bits`, built once per size.
std::shared_ptr<const circuits::Circuit> hash_check(std::uint32_t share_bits) {
  static std::mutex mutex;
  static std::map<std::uint32_t, std::shared_ptr<const circuits::Circuit>> built;
  std::lock_guard lock(mutex);
  auto& slot = built[share_bits];
  if (!slot) slot = std::make_shared<const circuits::Circuit>(circuits::build_share_hash_check(share_bits));
  return slot;
}

// Appends `sub`'s gates to `host`, its inputs on `inputs` (host wires, in its input order) and
// its other wires new: the host wire of its one output.
std::uint32_t append(circuits::Circuit& host, const circuits::Circuit& sub, std::span<const std::uint32_t> inputs) {
  const std::uint32_t sub_inputs = sub.total_inputs();
  if (inputs.size() != sub_inputs || sub.total_outputs() != 1)
    throw Error(Component::Server, "share check circuit does not fit its inputs");
  const std::uint32_t base = host.num_wires;
  const auto wire_of = [&](std::uint32_t wire) { return wire < sub_inputs ? inputs[wire] : base + (wire - sub_inputs); };
  host.gates.reserve(host.gates.size() + sub.gates.size());
  for (const circuits::Gate& gate : sub.gates) host.gates.push_back(circuits::with_wires(gate, wire_of));
  host.num_wires = base + (sub.num_wires - sub_inputs);
  return wire_of(sub.num_wires - 1);
}

void append_bits(std::vector<std::uint8_t>& bits, const client_checks::CheckWord& word) {
  for (std::size_t k = 0; k < kWordBits; ++k) bits.push_back((word[k / 8] >> (k % 8)) & 1);
}

}  // namespace

circuits::Circuit with_share_checks(const circuits::Circuit& circuit, std::span<const std::uint32_t> first_committed,
                                    std::span<const std::uint32_t> second_committed, std::uint32_t kept_outputs) {
  if (first_committed.size() != second_committed.size() || first_committed.size() <= client_checks::kCheckBits)
    throw Error(Component::Server, "share checks of shares of different sizes");
  const std::uint32_t outputs = circuit.total_outputs();
  if (kept_outputs > outputs) throw Error(Component::Server, "share checks: more kept outputs than the circuit has");
  const std::uint32_t words[] = {kWordBits, kWordBits, kWordBits, kWordBits};
  circuits::Circuit checked = circuits::with_extra_inputs(circuit, words);
  // with_extra_inputs leaves the circuit's input wires where they were.
  const std::uint32_t first_key = circuit.total_inputs(), first_tag = first_key + kWordBits,
                      second_key = first_tag + kWordBits, second_tag = second_key + kWordBits;
  const std::uint32_t first_output = checked.first_output_wire();
  const auto share_bits = static_cast<std::uint32_t>(first_committed.size() - client_checks::kCheckBits);
  const auto check = hash_check(share_bits);
  // Each share under the other party's key, against the tag the other party holds.
  const auto inputs_for = [&](std::span<const std::uint32_t> committed, std::uint32_t key, std::uint32_t tag) {
    std::vector<std::uint32_t> inputs(committed.begin(), committed.end());
    for (std::uint32_t k = 0; k < kWordBits; ++k) inputs.push_back(key + k);
    for (std::uint32_t k = 0; k < kWordBits; ++k) inputs.push_back(tag + k);
    return inputs;
  };
  const std::uint32_t first_verdict = append(checked, *check, inputs_for(first_committed, second_key, second_tag));
  const std::uint32_t second_verdict = append(checked, *check, inputs_for(second_committed, first_key, first_tag));
  // The outputs again as the last wires: the kept ones, the verdicts, the rest.
  std::uint32_t next = checked.num_wires;
  const auto copy = [&](std::uint32_t wire) { checked.gates.push_back({circuits::GateKind::Copy, wire, 0, next++}); };
  for (std::uint32_t j = 0; j < kept_outputs; ++j) copy(first_output + j);
  copy(first_verdict);
  copy(second_verdict);
  for (std::uint32_t j = kept_outputs; j < outputs; ++j) copy(first_output + j);
  checked.num_wires = next;
  checked.output_widths = {outputs + kShareCheckVerdicts};
  circuits::validate(checked);
  return checked;
}

auth2::InputOwners share_check_owners(const auth2::InputOwners& owners) {
  auth2::InputOwners checked = owners;
  checked.insert(checked.end(), {auth2::Owner::First, auth2::Owner::First, auth2::Owner::Second, auth2::Owner::Second});
  return checked;
}

namespace {

const client_checks::SegmentCheck& segment_of(const client_checks::ShareCheck& check, std::size_t segment) {
  if (segment >= check.segments.size())
    throw FormatError(Component::Protocol, "a key share's checks without segment " + std::to_string(segment));
  return check.segments[segment];
}

}  // namespace

std::vector<std::uint8_t> share_check_inputs(const client_checks::ShareCheck& check, std::size_t segment) {
  std::vector<std::uint8_t> bits;
  bits.reserve(kShareCheckInputBits);
  append_bits(bits, check.own_key);
  append_bits(bits, segment_of(check, segment).peer_tag);
  return bits;
}

std::vector<std::uint8_t> blinding_bits(const client_checks::ShareCheck& check, std::size_t segment) {
  std::vector<std::uint8_t> bits;
  append_bits(bits, segment_of(check, segment).own_blinding);
  return bits;
}

auth2::PaddedRun run_checked_part(auth2::Session& job, int party, const CheckedCircuit& part,
                                  std::span<const auth2::AndMaterial> material, std::uint64_t first_entry,
                                  std::span<const std::uint8_t> own_inputs, std::span<const std::uint8_t> public_inputs) {
  job.set_next_tweak(kJobTweaksPerEntry * first_entry);
  const auth2::CircuitMasks masks = auth2::prepare_masks(job, *part.circuit, *part.owners, material, part.slots);
  auth2::PaddedRun run = auth2::evaluate_padded(job, *part.circuit, *part.owners, masks, own_inputs, public_inputs,
                                                part.first_known, part.second_known, kShareCheckVerdicts);
  const std::uint8_t own = run.revealed.at(party == 0 ? 0 : 1), peer = run.revealed.at(party == 0 ? 1 : 0);
  const int peer_party = party == 0 ? 1 : 0;
  if (peer != 1)
    throw VerificationError(Component::Protocol,
                            "authenticated garbling: the peer fed another key share than the one its checks were dealt for "
                            "(it deviated, or the key was imported with other checks)",
                            "share_check", peer_party);
  if (own != 1)
    throw VerificationError(Component::Protocol,
                            "authenticated garbling: the check of this server's key share failed: it fed another key "
                            "share than the one its checks were dealt for (its store altered, or the key imported again), or "
                            "the peer fed another key or tag for the check",
                            "share_check", peer_party);
  return run;
}

}  // namespace mpc::two_party_engine
