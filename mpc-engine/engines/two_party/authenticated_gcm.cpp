#include "engines/two_party/authenticated_gcm.hpp"

#include <algorithm>

#include "circuits/aes_shared_key.hpp"
#include "circuits/extra_inputs.hpp"
#include "common/error.hpp"
#include "engines/two_party/authenticated_aes.hpp"
#include "engines/two_party/checked_part.hpp"
#include "jobs/nonce_pool.hpp"
#include "protocol/auth2/padded_circuit.hpp"
#include "protocol/client_checks/share_checks.hpp"
#include "protocol/ot/wipe_guard.hpp"
#if defined(MPC_FAULT_INJECTION)
#include "common/fault_injection.hpp"
#endif

namespace mpc::two_party_engine {

struct AuthenticatedGcm::Shape {
  circuits::Circuit circuit;  // padded
  auth2::InputOwners owners;
  std::shared_ptr<const auth2::WireSlots> slots;  // of the circuit
  std::uint32_t padded_bits = 0;  // outputs under the pads (after the kept ones and the verdicts)
};

namespace {

using auth2::Owner;
constexpr std::uint32_t kBlindingBits = client_checks::kCheckBits;
constexpr std::uint32_t kRoundKeyBits = 8 * wire::kGcmRoundKeyBytes;

circuits::Circuit shared_key_aes256(std::uint32_t blocks) {
  return circuits::build_shared_key_aes_circuit(circuits::AesKeySize::Aes256, circuits::AesDirection::Encrypt,
                                                circuits::SboxVariant::And32, blocks);
}

// `circuit` with its share checks (checked_part.hpp), padded: each party's share wires (the
// circuit's first two groups), then its blinding's at `blinding`.
circuits::Circuit checked_and_padded(const circuits::Circuit& circuit, std::uint32_t blinding,
                                     std::uint32_t kept_outputs) {
  std::vector<std::uint32_t> first, second;
  for (std::uint32_t i = 0; i < kRoundKeyBits; ++i) {
    first.push_back(i);
    second.push_back(kRoundKeyBits + i);
  }
  for (std::uint32_t k = 0; k < kBlindingBits; ++k) {
    first.push_back(blinding + k);
    second.push_back(blinding + kBlindingBits + k);
  }
  return auth2::padded_circuit(with_share_checks(circuit, first, second, kept_outputs), kept_outputs,
                               kShareCheckVerdicts);
}

// The 128 bits of a counter block N || j, as circuits take them.
void append_counter_bits(std::vector<std::uint8_t>& bits, const wire::GcmNonce& nonce, std::uint32_t counter) {
  const auto block = jobs::gcm_counter_block(nonce, counter);
  const std::vector<std::uint8_t> block_bits = bytes_to_bits(block);
  bits.insert(bits.end(), block_bits.begin(), block_bits.end());
}

// This server's inputs of its own: its round-key share, then (after other groups of its own,
// `middle`) its blinding, its share check's key and tag, and its pad.
std::vector<std::uint8_t> own_inputs(const AuthenticatedGcm::Inputs& inputs, const client_checks::ShareCheck& check,
                                     std::span<const std::uint8_t> middle, const client_checks::PadSeed& part_seed,
                                     std::size_t padded_bits, bool first_part) {
  std::vector<std::uint8_t> own = bytes_to_bits(inputs.round_key_share);
#if defined(MPC_FAULT_INJECTION)
  // "share-bit": either server feeds its share of the last round key with bit 0 flipped, which
  // changes every block; its peer's check of the share catches it.
  if (fault::armed("share-bit")) own[kRoundKeyBits - 128] ^= 1;
#endif
  own.insert(own.end(), middle.begin(), middle.end());
  const std::vector<std::uint8_t> blinding = blinding_bits(check, 0), checks = share_check_inputs(check, 0);
  own.insert(own.end(), blinding.begin(), blinding.end());
  own.insert(own.end(), checks.begin(), checks.end());
  std::vector<std::uint8_t> pad = client_checks::pad_bits(part_seed, padded_bits);
#if defined(MPC_FAULT_INJECTION)
  // "output-shift": either server feeds its pad with bit 0 flipped, which shifts bit 0 of what
  // the client takes; the client's pad check catches it.
  if (first_part && padded_bits > 0 && fault::armed("output-shift")) pad[0] ^= 1;
#else
  (void)first_part;
#endif
  own.insert(own.end(), pad.begin(), pad.end());
  wipe(pad.data(), pad.size());
  return own;
}

}  // namespace

std::uint32_t gcm_nonces_per_part(std::uint32_t blocks_per_nonce) {
  return std::max<std::uint32_t>(1, kAuthenticatedPartBlocks / (1 + blocks_per_nonce));
}

std::shared_ptr<const AuthenticatedGcm::Shape> AuthenticatedGcm::prefetch_shape(std::uint32_t nonces,
                                                                                std::uint32_t blocks_per_nonce) const {
  {
    std::lock_guard lock(mutex_);
    if (auto found = prefetch_shapes_.find({nonces, blocks_per_nonce}); found != prefetch_shapes_.end())
      return found->second;
  }
  // Inputs: the two round-key shares, the counter blocks (every N || 1 first, then each nonce's
  // keystream blocks), each blinding; outputs in the same order, the masks kept as shares.
  const std::uint32_t blocks = nonces * (1 + blocks_per_nonce);
  auto shape = std::make_shared<Shape>();
  const std::uint32_t blinding[] = {kBlindingBits, kBlindingBits};
  shape->circuit = checked_and_padded(circuits::with_extra_inputs(shared_key_aes256(blocks), blinding),
                                     2 * kRoundKeyBits + 128 * blocks, 128 * nonces);
  shape->owners = auth2::padded_owners(
      share_check_owners({Owner::First, Owner::Second, Owner::Public, Owner::First, Owner::Second}));
  shape->padded_bits = 128 * nonces * blocks_per_nonce;
  shape->slots = std::make_shared<const auth2::WireSlots>(auth2::plan_slots(shape->circuit));
  std::lock_guard lock(mutex_);
  return prefetch_shapes_.emplace(std::make_pair(nonces, blocks_per_nonce), std::move(shape)).first->second;
}

std::shared_ptr<const AuthenticatedGcm::Shape> AuthenticatedGcm::open_shape(std::uint32_t text_blocks) const {
  {
    std::lock_guard lock(mutex_);
    if (auto found = open_shapes_.find(text_blocks); found != open_shapes_.end()) return found->second;
  }
  // Inputs: the two round-key shares, N || 1 and the keystream's counter blocks, each GHASH
  // share, the tag, each blinding.
  const std::uint32_t blocks = 1 + text_blocks;
  const std::uint32_t extra[] = {128, 128, 128, kBlindingBits, kBlindingBits};
  circuits::Circuit c = circuits::with_extra_inputs(shared_key_aes256(blocks), extra);
  const std::uint32_t hash_first = 2 * kRoundKeyBits + 128 * blocks, hash_second = hash_first + 128,
                      tag = hash_second + 128;
  const std::uint32_t mask = c.first_output_wire();
  std::uint32_t next = c.num_wires;
  const auto gate = [&](circuits::GateKind kind, std::uint32_t in0, std::uint32_t in1 = 0) {
    c.gates.push_back({kind, in0, in1, next});
    return next++;
  };
  // verdict = AND over j of !(mask_j ^ hash_first_j ^ hash_second_j ^ tag_j).
  std::uint32_t verdict = 0;
  for (std::uint32_t j = 0; j < 128; ++j) {
    const std::uint32_t differs = gate(circuits::GateKind::Xor,
                                       gate(circuits::GateKind::Xor, gate(circuits::GateKind::Xor, mask + j, hash_first + j),
                                            hash_second + j),
                                       tag + j);
    const std::uint32_t same = gate(circuits::GateKind::Inv, differs);
    verdict = j == 0 ? same : gate(circuits::GateKind::And, verdict, same);
  }
  // Outputs, the last wires: the keystream blocks, then the verdict byte.
  for (std::uint32_t j = 128; j < 128 * blocks; ++j) gate(circuits::GateKind::Copy, mask + j);
  gate(circuits::GateKind::Copy, verdict);
  for (std::uint32_t k = 1; k < 8; ++k) gate(circuits::GateKind::Const, 0);
  c.num_wires = next;
  c.output_widths = {128 * text_blocks + 8};
  auto shape = std::make_shared<Shape>();
  shape->circuit = checked_and_padded(c, tag + 128, 0);
  shape->owners = auth2::padded_owners(share_check_owners({Owner::First, Owner::Second, Owner::Public, Owner::First,
                                                           Owner::Second, Owner::Public, Owner::First, Owner::Second}));
  shape->padded_bits = 128 * text_blocks + 8;
  shape->slots = std::make_shared<const auth2::WireSlots>(auth2::plan_slots(shape->circuit));
  std::lock_guard lock(mutex_);
  return open_shapes_.emplace(text_blocks, std::move(shape)).first->second;
}

std::uint64_t AuthenticatedGcm::prefetch_entries(std::uint32_t count, std::uint32_t blocks_per_nonce) const {
  const std::uint32_t per_part = gcm_nonces_per_part(blocks_per_nonce);
  const std::uint64_t whole = count / per_part, rest = count % per_part;
  std::uint64_t total = 0;
  if (whole > 0) {
    const auto part = prefetch_shape(per_part, blocks_per_nonce);
    total += whole * auth2::material_entries(part->circuit, part->owners);
  }
  if (rest > 0) {
    const auto part = prefetch_shape(static_cast<std::uint32_t>(rest), blocks_per_nonce);
    total += auth2::material_entries(part->circuit, part->owners);
  }
  return total;
}

std::uint64_t AuthenticatedGcm::open_entries(std::uint32_t text_blocks) const {
  const auto shape = open_shape(text_blocks);
  return auth2::material_entries(shape->circuit, shape->owners);
}

AuthenticatedGcm::Prefetched AuthenticatedGcm::prefetch(two_party::Channel& peer, const Inputs& inputs,
                                                        std::span<const wire::GcmNonce> nonces,
                                                        std::uint32_t blocks_per_nonce) {
  if (inputs.round_key_share.size() != wire::kGcmRoundKeyBytes)
    throw Error(Component::Server, "GCM prefetch: a round-key share of the wrong size");
  const client_checks::ShareCheck check = client_checks::parse_share_check(inputs.share_check);
  const auto count = static_cast<std::uint32_t>(nonces.size());
  AndMaterialStock::Taken taken =
      stock_.take(peer, inputs.epoch, inputs.start, prefetch_entries(count, blocks_per_nonce), inputs.wait);
  const std::uint32_t per_part = gcm_nonces_per_part(blocks_per_nonce);
  const std::size_t keystream_blocks = std::size_t{count} * blocks_per_nonce;
  Prefetched out;
  out.mask_shares = SecretBytes(std::size_t{16} * count);
  out.keystream = SecretBytes(16 * keystream_blocks);
  out.reports.part_blocks =
      keystream_blocks == 0 ? 0 : static_cast<std::uint32_t>(std::min<std::size_t>(per_part * blocks_per_nonce, keystream_blocks));
  client_checks::PadSeed job_pad{};
  std::copy(inputs.pad.begin(), inputs.pad.end(), job_pad.begin());
  std::uint64_t used = 0;
  std::uint32_t part = 0;
  for (std::uint32_t first = 0; first < count; first += per_part, ++part) {
    const std::uint32_t here = std::min(per_part, count - first);
    const auto shape = prefetch_shape(here, blocks_per_nonce);
    const std::size_t part_entries = auth2::material_entries(shape->circuit, shape->owners);
    std::vector<std::uint8_t> counters;
    counters.reserve(std::size_t{128} * here * (1 + blocks_per_nonce));
    for (std::uint32_t n = 0; n < here; ++n) append_counter_bits(counters, nonces[first + n], 1);
    for (std::uint32_t n = 0; n < here; ++n)
      for (std::uint32_t b = 0; b < blocks_per_nonce; ++b) append_counter_bits(counters, nonces[first + n], 2 + b);
    std::vector<std::uint8_t> own =
        own_inputs(inputs, check, {}, client_checks::part_pad(job_pad, part), shape->padded_bits, part == 0);
    const ot::WipeGuard own_guard(own);
    const CheckedCircuit checked{&shape->circuit, &shape->owners, {}, {}, shape->slots};
    auth2::PaddedRun run = run_checked_part(
        taken.session, party_, checked, std::span<const auth2::AndMaterial>(taken.material.data() + used, part_entries),
        inputs.start + used, own, counters);
    used += part_entries;
    const ot::WipeGuard shares_guard(run.shares);
    for (std::size_t i = 0; i < run.shares.size(); ++i)
      out.mask_shares[std::size_t{16} * first + i / 8] |= static_cast<std::uint8_t>(run.shares[i] << (i % 8));
    const std::size_t keystream_offset = std::size_t{16} * first * blocks_per_nonce;
    for (std::size_t i = 0; i < run.masked.size(); ++i)
      out.keystream[keystream_offset + i / 8] |= static_cast<std::uint8_t>(run.masked[i] << (i % 8));
    if (shape->padded_bits > 0) {
      const auto report = client_checks::serialize(run.report);
      out.reports.reports.insert(out.reports.reports.end(), report.begin(), report.end());
    }
  }
  peer.flush();
  wipe(job_pad.data(), job_pad.size());
#if defined(MPC_FAULT_INJECTION)
  // "padded-report-bit": either server hands the client its padded keystream with bit 0
  // flipped; the client's comparison of the two servers' answers catches it.
  if (keystream_blocks > 0 && fault::armed("padded-report-bit")) out.keystream[0] ^= 1;
#endif
  return out;
}

AuthenticatedGcm::Opened AuthenticatedGcm::open(two_party::Channel& peer, const Inputs& inputs,
                                                const wire::GcmNonce& nonce, std::uint32_t text_blocks,
                                                std::span<const std::uint8_t, 16> hash_share,
                                                const wire::GcmTagBytes& tag) {
  if (inputs.round_key_share.size() != wire::kGcmRoundKeyBytes)
    throw Error(Component::Server, "GCM open: a round-key share of the wrong size");
  const client_checks::ShareCheck check = client_checks::parse_share_check(inputs.share_check);
  const auto shape = open_shape(text_blocks);
  const std::size_t entries = auth2::material_entries(shape->circuit, shape->owners);
  AndMaterialStock::Taken taken = stock_.take(peer, inputs.epoch, inputs.start, entries, inputs.wait);
  // Public: the counter blocks, then the tag, in the order of the circuit's groups.
  std::vector<std::uint8_t> public_bits;
  for (std::uint32_t b = 0; b <= text_blocks; ++b) append_counter_bits(public_bits, nonce, 1 + b);
  const std::vector<std::uint8_t> tag_bits = bytes_to_bits(tag);
  public_bits.insert(public_bits.end(), tag_bits.begin(), tag_bits.end());
  // This server's GHASH share sits between its round-key share and its blinding in its own
  // inputs (group order: share, hash share, blinding, pad).
  std::vector<std::uint8_t> hash_bits = bytes_to_bits(hash_share);
  client_checks::PadSeed job_pad{};
  std::copy(inputs.pad.begin(), inputs.pad.end(), job_pad.begin());
  std::vector<std::uint8_t> own =
      own_inputs(inputs, check, hash_bits, client_checks::part_pad(job_pad, 0), shape->padded_bits, true);
  wipe(hash_bits.data(), hash_bits.size());
  wipe(job_pad.data(), job_pad.size());
  const ot::WipeGuard own_guard(own);
  const CheckedCircuit checked{&shape->circuit, &shape->owners, {}, {}, shape->slots};
  const auth2::PaddedRun run =
      run_checked_part(taken.session, party_, checked, taken.material, inputs.start, own, public_bits);
  peer.flush();
  Opened out;
  out.keystream = SecretBytes(std::size_t{16} * text_blocks);
  for (std::size_t i = 0; i < std::size_t{128} * text_blocks; ++i)
    out.keystream[i / 8] |= static_cast<std::uint8_t>(run.masked[i] << (i % 8));
  for (std::size_t k = 0; k < 8; ++k)
    out.verdict |= static_cast<std::uint8_t>(run.masked[std::size_t{128} * text_blocks + k] << k);
  out.report = run.report;
#if defined(MPC_FAULT_INJECTION)
  // "padded-report-bit": either server hands the client its padded verdict with bit 0 flipped;
  // the client's comparison of the two servers' answers catches it.
  if (fault::armed("padded-report-bit")) out.verdict ^= 1;
#endif
  return out;
}

}  // namespace mpc::two_party_engine
