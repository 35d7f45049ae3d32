#include "engines/two_party/authenticated_aes.hpp"

#include <algorithm>
#include <vector>

#include "circuits/aes_shared_key.hpp"
#include "circuits/extra_inputs.hpp"
#include "common/error.hpp"
#include "protocol/auth2/authenticated_garbling.hpp"
#include "protocol/auth2/padded_circuit.hpp"
#include "protocol/auth2/share_check_protocol.hpp"
#include "protocol/client_checks/share_checks.hpp"
#include "wire/sealed_share.hpp"
#if defined(MPC_FAULT_INJECTION)
#include "common/fault_injection.hpp"
#endif

namespace mpc::two_party_engine {
namespace {

// The round keys' two shares, the public blocks, each server's blinding of its share's check
// (client_checks/share_checks.hpp), then the two pads (padded_circuit).
const auth2::InputOwners kOwners = auth2::padded_owners(
    {auth2::Owner::First, auth2::Owner::Second, auth2::Owner::Public, auth2::Owner::First, auth2::Owner::Second});
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
// Tweaks per entry: a batch's leaky ANDs take two per leaky triple, at most 16 per entry.
constexpr std::uint64_t kBatchTweaksPerEntry = 32;
constexpr std::uint64_t kJobTweaksPerEntry = 4;

std::vector<std::uint8_t> bits_of(std::span<const std::uint8_t> bytes) {
  std::vector<std::uint8_t> bits(8 * bytes.size());
  for (std::size_t i = 0; i < bits.size(); ++i) bits[i] = (bytes[i / 8] >> (i % 8)) & 1;
  return bits;
}

void append_report(std::vector<std::uint8_t>& out, const client_checks::PartReport& report) {
  out.insert(out.end(), report.check_seed.begin(), report.check_seed.end());
  out.insert(out.end(), report.first_check.begin(), report.first_check.end());
  out.insert(out.end(), report.second_check.begin(), report.second_check.end());
}
static_assert(client_checks::kPartReportBytes == wire::kPaddedPartReportBytes);
static_assert(client_checks::kShareCheckBytes == wire::kShareCheckBytes);

#if defined(MPC_FAULT_INJECTION)
// A deviating server 1 (test server only, common/fault_injection.hpp):
// - "auth2-garbled-rows": flips a bit of the MAC part in all four rows (24 bytes each) of its
//   first 64 AND gates of a job, so whichever row server 2 opens is wrong;
// - "auth2-opened-mask": opens its first shared bit of a job (its masks' preparation) with the
//   other value;
// - "auth2-leaky-products": alters its leaky-AND products in every preprocessing batch.
void deviate_in_job(auth2::Session& session) {
  if (fault::armed("auth2-garbled-rows"))
    session.set_deviation([](auth2::Step step, std::span<std::uint8_t> message) {
      if (step != auth2::Step::GarbledRows) return;
      for (std::size_t gate = 0; gate < 64; ++gate)
        for (std::size_t row = 0; row < 4; ++row)
          if (const std::size_t byte = 96 * gate + 24 * row + 5; byte < message.size()) message[byte] ^= 1;
    });
  if (fault::armed("auth2-opened-mask"))
    session.set_deviation([done = false](auth2::Step step, std::span<std::uint8_t> message) mutable {
      if (step != auth2::Step::Opening || message.empty() || done) return;
      message[0] ^= 1;
      done = true;
    });
}

void deviate_in_batches(auth2::Session& session) {
  if (fault::armed("auth2-leaky-products"))
    session.set_deviation([](auth2::Step step, std::span<std::uint8_t> message) {
      if (step == auth2::Step::LeakyProducts)
        for (std::size_t byte = 0; byte < message.size(); byte += 16) message[byte] ^= 0x40;
    });
}
#endif

}  // namespace

std::shared_ptr<const circuits::Circuit> AuthenticatedAes::circuit(wire::KeyAlgorithm algorithm, bool decrypt,
                                                                  std::uint32_t blocks) const {
  std::lock_guard lock(mutex_);
  auto& slot = circuits_[{algorithm, decrypt, blocks}];
  if (!slot) {
    const std::uint32_t blinding[] = {kBlindingBits, kBlindingBits};
    slot = std::make_shared<const circuits::Circuit>(auth2::padded_circuit(circuits::with_extra_inputs(
        circuits::build_shared_key_aes_circuit(
            algorithm == wire::KeyAlgorithm::Aes256 ? circuits::AesKeySize::Aes256 : circuits::AesKeySize::Aes128,
            decrypt ? circuits::AesDirection::Decrypt : circuits::AesDirection::Encrypt, circuits::SboxVariant::And32,
            blocks),
        blinding)));
  }
  return slot;
}

std::uint64_t AuthenticatedAes::entries(wire::KeyAlgorithm algorithm, std::uint32_t blocks) const {
  if (algorithm != wire::KeyAlgorithm::Aes128 && algorithm != wire::KeyAlgorithm::Aes256) return 0;
  // Encryption and decryption take the same entries: the inverse S-box has the S-box's ANDs.
  const std::uint64_t whole = blocks / kAuthenticatedPartBlocks, rest = blocks % kAuthenticatedPartBlocks;
  std::uint64_t total = 0;
  if (whole > 0) total += whole * auth2::material_entries(*circuit(algorithm, false, kAuthenticatedPartBlocks), kOwners);
  if (rest > 0) total += auth2::material_entries(*circuit(algorithm, false, static_cast<std::uint32_t>(rest)), kOwners);
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
  // The entries first (they wait for a batch still being made), then the session that made
  // them: its epoch's, which exists once any of its entries does.
  std::vector<auth2::AndMaterial> material;
  std::shared_ptr<auth2::Session> session;
  try {
    material = pool_.take(epoch, start, count, wait);
    std::lock_guard lock(mutex_);
    if (epoch == epoch_) session = session_;
    if (!session) throw two_party::PoolEmpty(Component::Protocol, "AND-material pool restarted under the job");
  } catch (const two_party::PoolEmpty&) {
    wipe(material.data(), material.size() * sizeof(auth2::AndMaterial));
    pool_.abandon(epoch, start, count);
    throw;
  }
  const auto wipe_material = [&] { wipe(material.data(), material.size() * sizeof(auth2::AndMaterial)); };
  try {
    auth2::Session job = session->job_session(peer);
#if defined(MPC_FAULT_INJECTION)
    if (party_ == 0) deviate_in_job(job);
#endif
    std::vector<std::uint8_t> key_bits = bits_of(key_share);
#if defined(MPC_FAULT_INJECTION)
    // "share-bit": either server feeds its share of the last round key with bit 0 flipped, which
    // shifts the output's bit 0; its peer's check of the share catches it.
    if (fault::armed("share-bit")) key_bits[key_bits.size() - 128] ^= 1;
#endif
    for (std::size_t k = 0; k < kBlindingBits; ++k) key_bits.push_back((check.own_blinding[k / 8] >> (k % 8)) & 1);
    const auto share_bits = static_cast<std::uint32_t>(8 * key_share.size());
    Padded out;
    out.bytes = SecretBytes(input.size());
    out.reports.part_blocks = std::min(kAuthenticatedPartBlocks, total);
    std::uint64_t used = 0;
    client_checks::PadSeed job_pad{};
    std::copy(pad.begin(), pad.end(), job_pad.begin());
    for (std::uint32_t first = 0; first < total; first += kAuthenticatedPartBlocks) {
      const std::uint32_t blocks = std::min(kAuthenticatedPartBlocks, total - first);
      const auto part = circuit(algorithm, decrypt, blocks);
      const std::size_t part_entries = auth2::material_entries(*part, kOwners);
      job.set_next_tweak(kJobTweaksPerEntry * (start + used));
      const auth2::CircuitMasks masks = auth2::prepare_masks(
          job, *part, kOwners, std::span<const auth2::AndMaterial>(material.data() + used, part_entries));
      used += part_entries;
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
      const auth2::PaddedRun run =
          auth2::evaluate_padded(job, *part, kOwners, masks, own, bits_of(input.subspan(16 * first, 16 * blocks)));
      wipe(own.data(), own.size());
      // Each server held to the share the client dealt it, before anything leaves.
      auth2::check_committed_shares(job, masks, run.masked_inputs, committed_wires(party_, share_bits, blocks),
                                    committed_wires(1 - party_, share_bits, blocks), check.peer_rows,
                                    check.peer_sketch);
      for (std::size_t i = 0; i < run.masked.size(); ++i)
        out.bytes[16 * first + i / 8] |= static_cast<std::uint8_t>(run.masked[i] << (i % 8));
      append_report(out.reports.reports, run.report);
    }
    peer.flush();
    wipe_material();
    wipe(job_pad.data(), job_pad.size());
#if defined(MPC_FAULT_INJECTION)
    // "padded-report-bit": either server hands the client its padded output with bit 0 flipped;
    // the client's comparison of the two servers' answers catches it.
    if (fault::armed("padded-report-bit")) out.bytes[0] ^= 1;
#endif
    return out;
  } catch (...) {
    wipe_material();
    throw;
  }
}

void AuthenticatedAes::preprocess(two_party::Channel& peer, std::uint64_t epoch, std::uint64_t start,
                                  std::uint64_t count) {
  std::shared_ptr<auth2::Session> session;
  {
    std::lock_guard lock(mutex_);
    if (epoch != epoch_) throw Error(Component::Server, "AND material for a pool epoch this server has left");
    if (!session_) {
      session_ = std::make_shared<auth2::Session>(peer, party_ == 0 ? auth2::Role::First : auth2::Role::Second);
#if defined(MPC_FAULT_INJECTION)
      if (party_ == 0) deviate_in_batches(*session_);
#endif
    }
    session = session_;
  }
  session->use_channel(peer);
  session->set_next_tweak(kBatchTweaksPerEntry * start);
  if (auth2::bucket_size(count) > kBatchTweaksPerEntry / 2)
    throw Error(Component::Server, "AND material: a batch too small for its tweaks");
  pool_.store(epoch, start, auth2::and_material(*session, count));
  peer.flush();
}

void AuthenticatedAes::reset(std::uint64_t epoch) {
  std::lock_guard lock(mutex_);
  epoch_ = epoch;
  session_.reset();
  pool_.reset(epoch);
}

std::string AuthenticatedAes::describe() const {
  return "AND material available " + std::to_string(pool_.available()) + ", produced " +
         std::to_string(pool_.produced()) + ", consumed " + std::to_string(pool_.consumed());
}

}  // namespace mpc::two_party_engine
