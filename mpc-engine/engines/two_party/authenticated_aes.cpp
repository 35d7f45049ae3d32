#include "engines/two_party/authenticated_aes.hpp"

#include <algorithm>
#include <vector>

#include "circuits/aes_shared_key.hpp"
#include "circuits/extra_inputs.hpp"
#include "common/error.hpp"
#include "engines/two_party/checked_part.hpp"
#include "protocol/auth2/authenticated_garbling.hpp"
#include "protocol/auth2/padded_circuit.hpp"
#include "protocol/client_checks/share_checks.hpp"
#include "protocol/ot/wipe_guard.hpp"
#include "wire/sealed_share.hpp"
#if defined(MPC_FAULT_INJECTION)
#include "common/fault_injection.hpp"
#endif

namespace mpc::two_party_engine {
namespace {

// The round keys' two shares, the public blocks, each server's blinding of its share's check
// (client_checks/share_checks.hpp), the checks' keys and tags, then the two pads (padded_circuit).
const auth2::InputOwners kOwners = auth2::padded_owners(share_check_owners(
    {auth2::Owner::First, auth2::Owner::Second, auth2::Owner::Public, auth2::Owner::First, auth2::Owner::Second}));
constexpr std::uint32_t kBlindingBits = client_checks::kCheckBits;

// The wires of `party`'s share, then of its blinding, in a part of `blocks` blocks.
std::vector<std::uint32_t> committed_wires(int party, std::uint32_t share_bits, std::uint32_t blocks) {
  std::vector<std::uint32_t> wires;
  wires.reserve(share_bits + kBlindingBits);
  for (std::uint32_t i = 0; i < share_bits; ++i) wires.push_back(static_cast<std::uint32_t>(party) * share_bits + i);
  const std::uint32_t blinding = 2 * share_bits + 128 * blocks + static_cast<std::uint32_t>(party) * kBlindingBits;
  for (std::uint32_t k = 0; k < kBlindingBits; ++k) wires.push_back(blinding + k);
  return wires;
}

void append_report(std::vector<std::uint8_t>& out, const client_checks::PartReport& report) {
  const auto bytes = client_checks::serialize(report);
  out.insert(out.end(), bytes.begin(), bytes.end());
}
static_assert(client_checks::kPartReportBytes == wire::kPaddedPartReportBytes);

}  // namespace

AuthenticatedAes::Part AuthenticatedAes::circuit(wire::KeyAlgorithm algorithm, bool decrypt,
                                                                  std::uint32_t blocks) const {
  std::lock_guard lock(mutex_);
  auto& slot = circuits_[{algorithm, decrypt, blocks}];
  if (!slot.circuit) {
    const std::uint32_t blinding[] = {kBlindingBits, kBlindingBits};
    const circuits::Circuit aes = circuits::with_extra_inputs(
        circuits::build_shared_key_aes_circuit(
            algorithm == wire::KeyAlgorithm::Aes256 ? circuits::AesKeySize::Aes256 : circuits::AesKeySize::Aes128,
            decrypt ? circuits::AesDirection::Decrypt : circuits::AesDirection::Encrypt, circuits::SboxVariant::And32,
            blocks),
        blinding);
    const auto share_bits = static_cast<std::uint32_t>(8 * wire::material_bytes(algorithm));
    slot.circuit = std::make_shared<const circuits::Circuit>(auth2::padded_circuit(
        with_share_checks(aes, committed_wires(0, share_bits, blocks), committed_wires(1, share_bits, blocks)), 0,
        kShareCheckVerdicts));
    slot.slots = std::make_shared<const auth2::WireSlots>(auth2::plan_slots(*slot.circuit));
  }
  return slot;
}

std::uint64_t AuthenticatedAes::entries(wire::KeyAlgorithm algorithm, std::uint32_t blocks) const {
  if (algorithm != wire::KeyAlgorithm::Aes128 && algorithm != wire::KeyAlgorithm::Aes256) return 0;
  // Encryption and decryption take the same entries: the inverse S-box has the S-box's ANDs.
  const std::uint64_t whole = blocks / kAuthenticatedPartBlocks, rest = blocks % kAuthenticatedPartBlocks;
  std::uint64_t total = 0;
  if (whole > 0) total += whole * auth2::material_entries(*circuit(algorithm, false, kAuthenticatedPartBlocks).circuit, kOwners);
  if (rest > 0) total += auth2::material_entries(*circuit(algorithm, false, static_cast<std::uint32_t>(rest)).circuit, kOwners);
  return total;
}

AuthenticatedAes::Padded AuthenticatedAes::blocks(two_party::Channel& peer, wire::KeyAlgorithm algorithm, bool decrypt,
                                                  std::span<const std::uint8_t> key_share,
                                                  std::span<const std::uint8_t> input, const wire::OutputPadSeed& pad,
                                                  std::span<const std::uint8_t> share_check, std::uint64_t epoch,
                                                  std::uint64_t start, std::chrono::milliseconds wait) {
  if (algorithm != wire::KeyAlgorithm::Aes128 && algorithm != wire::KeyAlgorithm::Aes256)
    throw Error(Component::Server, "authenticated AES: not an AES key");
  const auto total = static_cast<std::uint32_t>(input.size() / 16);
  const client_checks::ShareCheck check = client_checks::parse_share_check(share_check);
  const std::uint64_t count = entries(algorithm, total);
  AndMaterialStock::Taken taken = stock_.take(peer, epoch, start, count, wait);
  std::vector<std::uint8_t> key_bits = bytes_to_bits(key_share);
#if defined(MPC_FAULT_INJECTION)
  // "share-bit": either server feeds its share of the last round key with bit 0 flipped, which
  // shifts the output's bit 0; its peer's check of the share catches it.
  if (fault::armed("share-bit")) key_bits[key_bits.size() - 128] ^= 1;
#endif
  const std::vector<std::uint8_t> blinding = blinding_bits(check, 0), checks = share_check_inputs(check, 0);
  key_bits.insert(key_bits.end(), blinding.begin(), blinding.end());
  key_bits.insert(key_bits.end(), checks.begin(), checks.end());
  const ot::WipeGuard key_guard(key_bits);
  Padded out;
  out.bytes = SecretBytes(input.size());
  out.reports.part_blocks = std::min(kAuthenticatedPartBlocks, total);
  std::uint64_t used = 0;
  client_checks::PadSeed job_pad{};
  std::copy(pad.begin(), pad.end(), job_pad.begin());
  for (std::uint32_t first = 0; first < total; first += kAuthenticatedPartBlocks) {
    const std::uint32_t blocks = std::min(kAuthenticatedPartBlocks, total - first);
    const auto part = circuit(algorithm, decrypt, blocks);
    const std::size_t part_entries = auth2::material_entries(*part.circuit, kOwners);
    std::vector<std::uint8_t> own = key_bits;
    std::vector<std::uint8_t> part_pad = client_checks::pad_bits(
        client_checks::part_pad(job_pad, first / kAuthenticatedPartBlocks), std::size_t{128} * blocks);
#if defined(MPC_FAULT_INJECTION)
    // "output-shift": either server feeds its pad with bit 0 flipped, the one way left to it
    // to shift the client's result (by bit 0 of block 0); the client's pad check catches it.
    if (first == 0 && fault::armed("output-shift")) part_pad[0] ^= 1;
#endif
    own.insert(own.end(), part_pad.begin(), part_pad.end());
    wipe(part_pad.data(), part_pad.size());
    const CheckedCircuit checked{part.circuit.get(), &kOwners, {}, {}, part.slots};
    const auth2::PaddedRun run = run_checked_part(
        taken.session, party_, checked, std::span<const auth2::AndMaterial>(taken.material.data() + used, part_entries),
        start + used, own, bytes_to_bits(input.subspan(16 * first, 16 * blocks)));
    used += part_entries;
    wipe(own.data(), own.size());
    for (std::size_t i = 0; i < run.masked.size(); ++i)
      out.bytes[16 * first + i / 8] |= static_cast<std::uint8_t>(run.masked[i] << (i % 8));
    append_report(out.reports.reports, run.report);
  }
  peer.flush();
  wipe(job_pad.data(), job_pad.size());
#if defined(MPC_FAULT_INJECTION)
  // "padded-report-bit": either server hands the client its padded output with bit 0 flipped;
  // the client's comparison of the two servers' answers catches it.
  if (fault::armed("padded-report-bit")) out.bytes[0] ^= 1;
#endif
  return out;
}


}  // namespace mpc::two_party_engine
