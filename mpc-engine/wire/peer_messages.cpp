// mpc-engine/wire/peer_messages.cpp: server <-> server frames (see peer_messages.hpp for the layout).
#include "wire/peer_messages.hpp"

#include "common/bytes.hpp"
#include "common/error.hpp"
#include "wire/codec.hpp"
#include "wire/sealed_share.hpp"

namespace mpc::wire {
namespace {

[[noreturn]] void fail(const std::string& message) { throw FormatError(Component::Wire, message); }

constexpr std::size_t kPeerHeaderBytes = 1 + 1 + 8 + 4;
constexpr std::size_t kSliceBytes = 32 + 16 + 32 + 4 + 4 + 4 + 4;
static_assert(kLayerHeaderBytes == kPeerHeaderBytes + 4);

void write_header(ByteWriter& writer, PeerMessageType type, std::uint64_t epoch, std::uint32_t sequence) {
  writer.u8(kPeerProtocolVersion);
  writer.u8(static_cast<std::uint8_t>(type));
  writer.u64(epoch);
  writer.u32(sequence);
}

void check_slice(const BatchSlice& slice) {
  if (slice.blocks == 0) fail("batch slice with zero blocks");
  if (static_cast<std::uint64_t>(slice.first_block) + slice.blocks > 0xffffffffull)
    fail("batch slice block range overflows");
  if (slice.nonces == 0) {
    if (slice.first_nonce != 0) fail("batch slice without nonces names a first nonce");
    return;
  }
  if (slice.blocks % slice.nonces != 0)
    fail("batch slice of " + std::to_string(slice.blocks) + " blocks does not split into " +
         std::to_string(slice.nonces) + " whole nonces");
  if (slice.first_block % (slice.blocks / slice.nonces) != 0) fail("batch slice does not start on a whole nonce");
  // The 32-bit nonce counter never wraps inside an epoch.
  if (static_cast<std::uint64_t>(slice.first_nonce) + slice.nonces > 0x100000000ull)
    fail("batch slice nonce range overflows");
}

// A Kerberos batch runs one instance per job, and every job has the batch's data length
// (and combine shape).
void check_krb_batch(CircuitId circuit, std::uint32_t data_bytes, std::uint32_t combine) {
  if (!is_krb_cf2_circuit(circuit) && combine != 0) fail("batch of a non-KRB-FX-CF2 circuit with a combine shape");
  if (!is_krb_circuit(circuit)) {
    if (data_bytes != 0) fail("batch of a non-Kerberos circuit with a data length");
    return;
  }
  const KeyAlgorithm algorithm =
      is_krb_cf2_circuit(circuit) ? unpack_krb_combine(combine).combined : krb_algorithm_of(circuit);
  (void)krb_result_bytes(krb_operation_of(circuit), algorithm, data_bytes);
}

void check_krb_slice(CircuitId circuit, const BatchSlice& slice) {
  if ((is_krb_circuit(circuit) || circuit == CircuitId::GcmKeyMaterial) &&
      (slice.first_block != 0 || slice.blocks != 1 || slice.nonces != 0))
    fail("Kerberos or key material batch slice of blocks " + std::to_string(slice.first_block) + " + " +
         std::to_string(slice.blocks) + " with " + std::to_string(slice.nonces) + " nonces; each is one whole job");
}

void check_slice_count(std::size_t count, KrbEvaluation evaluation) {
  if (evaluation == KrbEvaluation::PrepareTwice) {
    if (count != 0) fail("a batch that prepares a garbling has no slices");
    return;
  }
  if (count == 0) fail("batch without slices");
  if (count > kMaxBatchSlices)
    fail("batch of " + std::to_string(count) + " slices exceeds " + std::to_string(kMaxBatchSlices));
}

void check_reason(std::uint16_t reason) {
  if (reason > static_cast<std::uint16_t>(kLastStatus)) fail("unknown abort reason " + std::to_string(reason));
}

void check_note_count(std::size_t count) {
  if (count == 0) fail("notes message without notes");
  if (count > kMaxNotesPerMessage)
    fail("notes message of " + std::to_string(count) + " notes exceeds " + std::to_string(kMaxNotesPerMessage));
}

std::vector<RequestNote> decode_notes(ByteReader& reader) {
  const std::uint32_t count = reader.u32();
  check_note_count(count);
  std::vector<RequestNote> notes(count);
  for (auto& note : notes) {
    note.client = reader.array<32>();
    note.request = reader.array<16>();
    note.digest = reader.array<32>();
    const std::uint16_t status = reader.u16();
    check_reason(status);
    note.status = static_cast<Status>(status);
    note.detail = reader.short_string(kMaxErrorBytes);
  }
  return notes;
}

void check_pair_check_count(std::size_t count) {
  if (count == 0) fail("pair checks message without checks");
  if (count > kMaxPairChecksPerMessage)
    fail("pair checks message of " + std::to_string(count) + " deals exceeds " +
         std::to_string(kMaxPairChecksPerMessage));
}

void check_pair_check_bytes(const KeyId& key, std::size_t bytes) {
  if (bytes != share_check_bytes(key.algorithm))
    fail("pair checks of " + std::to_string(bytes) + " bytes for a key that takes " +
         std::to_string(share_check_bytes(key.algorithm)));
}

std::vector<PairCheckDeal> decode_pair_checks(ByteReader& reader) {
  const std::uint32_t count = reader.u32();
  check_pair_check_count(count);
  std::vector<PairCheckDeal> deals(count);
  for (auto& deal : deals) {
    deal.key = read_key_id(reader);
    const std::uint8_t role = reader.u8();
    if (role > 2) fail("pair checks for an unknown role " + std::to_string(role));
    deal.for_leader = role == 0;
    deal.mutual = role == 2;
    const std::uint16_t bytes = reader.u16();
    check_pair_check_bytes(deal.key, bytes);
    const auto checks = reader.bytes(bytes);
    deal.checks = SecretBytes(checks);
  }
  return deals;
}

// A prepared garbling is evaluated once, by a batch of one job after the one that made it.
void check_prepared(KrbEvaluation evaluation, std::uint32_t prepared, std::uint32_t sequence, std::size_t slices) {
  if (evaluation != KrbEvaluation::PreparedTwice) {
    if (prepared != 0) fail("a prepared garbling named by a batch that does not evaluate one");
    return;
  }
  if (prepared == 0 || prepared >= sequence) fail("a batch names a prepared garbling that is not an earlier batch's");
  if (slices != 1) fail("a prepared garbling evaluated for more than one job");
}

BatchHeader decode_batch(ByteReader& reader, std::uint64_t epoch, std::uint32_t sequence) {
  BatchHeader header;
  header.epoch = epoch;
  header.sequence = sequence;
  const std::uint8_t circuit = reader.u8();
  if (!is_valid_circuit_id(circuit)) fail("unknown circuit id " + std::to_string(circuit));
  header.circuit = static_cast<CircuitId>(circuit);
  if (is_krb_circuit(header.circuit)) {
    header.data_bytes = reader.u32();
    const std::uint8_t evaluation = reader.u8();
    if (evaluation > static_cast<std::uint8_t>(KrbEvaluation::PreparedTwice))
      fail("unknown Kerberos batch evaluation " + std::to_string(evaluation));
    header.krb_evaluation = static_cast<KrbEvaluation>(evaluation);
    if (header.krb_evaluation == KrbEvaluation::PreparedTwice) header.prepared = reader.u32();
  }
  if (is_krb_cf2_circuit(header.circuit)) header.krb_combine = reader.u32();
  check_krb_batch(header.circuit, header.data_bytes, header.krb_combine);
  const std::uint32_t count = reader.u32();
  check_slice_count(count, header.krb_evaluation);
  check_prepared(header.krb_evaluation, header.prepared, header.sequence, count);
  if (reader.remaining() != static_cast<std::size_t>(count) * kSliceBytes)
    fail("batch of " + std::to_string(count) + " slices has " + std::to_string(reader.remaining()) + " slice bytes");
  header.slices.resize(count);
  for (auto& slice : header.slices) {
    slice.client = reader.array<32>();
    slice.request = reader.array<16>();
    slice.digest = reader.array<32>();
    slice.first_block = reader.u32();
    slice.blocks = reader.u32();
    slice.first_nonce = reader.u32();
    slice.nonces = reader.u32();
    check_slice(slice);
    check_krb_slice(header.circuit, slice);
  }
  return header;
}

}  // namespace

const char* evaluation_name(KrbEvaluation evaluation) {
  switch (evaluation) {
    case KrbEvaluation::Layered: return "layered";
    case KrbEvaluation::Garbled: return "garbled";
    case KrbEvaluation::GarbledTwice: return "garbled twice";
    case KrbEvaluation::PrepareTwice: return "garbled twice ahead";
    case KrbEvaluation::PreparedTwice: return "garbled twice, prepared";
  }
  return "unknown";
}

bool is_valid_circuit_id(std::uint8_t value) {
  return value >= static_cast<std::uint8_t>(CircuitId::Aes128EncryptAnd32) &&
         value <= static_cast<std::uint8_t>(CircuitId::GcmKeyMaterial);
}

bool is_krb_circuit(CircuitId id) {
  return static_cast<std::uint8_t>(id) >= static_cast<std::uint8_t>(CircuitId::KrbEncryptAes128) &&
         static_cast<std::uint8_t>(id) <= static_cast<std::uint8_t>(CircuitId::KrbCf2Checksum);
}

bool is_krb_cf2_circuit(CircuitId id) {
  return id == CircuitId::KrbCf2Encrypt || id == CircuitId::KrbCf2Decrypt || id == CircuitId::KrbCf2Checksum;
}

CircuitId krb_cf2_circuit(KrbOperation operation) {
  switch (operation) {
    case KrbOperation::Encrypt: return CircuitId::KrbCf2Encrypt;
    case KrbOperation::Decrypt: return CircuitId::KrbCf2Decrypt;
    case KrbOperation::Checksum: return CircuitId::KrbCf2Checksum;
  }
  fail("unknown Kerberos operation " + std::to_string(static_cast<unsigned>(operation)));
}

std::uint32_t pack_krb_combine(const KrbCombineShape& shape) {
  if (!is_krb_algorithm(shape.stored) || !is_krb_algorithm(shape.combined))
    fail("KRB-FX-CF2 shape with a non-Kerberos algorithm");
  if (shape.usage > 0xff) fail("KRB-FX-CF2 shape with usage " + std::to_string(shape.usage));
  if (shape.pepper_bytes == 0 || shape.pepper_bytes > kKrbMaxPepperBytes)
    fail("KRB-FX-CF2 shape with a pepper of " + std::to_string(shape.pepper_bytes) + " bytes");
  return static_cast<std::uint32_t>(shape.stored) | static_cast<std::uint32_t>(shape.combined) << 8 |
         shape.usage << 16 | shape.pepper_bytes << 24;
}

KrbCombineShape unpack_krb_combine(std::uint32_t packed) {
  KrbCombineShape shape;
  shape.stored = checked_algorithm(static_cast<std::uint8_t>(packed));
  shape.combined = checked_algorithm(static_cast<std::uint8_t>(packed >> 8));
  shape.usage = (packed >> 16) & 0xff;
  shape.pepper_bytes = packed >> 24;
  (void)pack_krb_combine(shape);  // the same checks
  return shape;
}

KrbOperation krb_operation_of(CircuitId id) {
  switch (id) {
    case CircuitId::KrbEncryptAes128:
    case CircuitId::KrbEncryptAes256: return KrbOperation::Encrypt;
    case CircuitId::KrbDecryptAes128:
    case CircuitId::KrbDecryptAes256: return KrbOperation::Decrypt;
    case CircuitId::KrbChecksum: return KrbOperation::Checksum;
    case CircuitId::KrbSha2EncryptAes128:
    case CircuitId::KrbSha2EncryptAes256: return KrbOperation::Encrypt;
    case CircuitId::KrbSha2DecryptAes128:
    case CircuitId::KrbSha2DecryptAes256: return KrbOperation::Decrypt;
    case CircuitId::KrbSha2ChecksumSha256:
    case CircuitId::KrbSha2ChecksumSha384: return KrbOperation::Checksum;
    case CircuitId::KrbCf2Encrypt: return KrbOperation::Encrypt;
    case CircuitId::KrbCf2Decrypt: return KrbOperation::Decrypt;
    case CircuitId::KrbCf2Checksum: return KrbOperation::Checksum;
    default: break;
  }
  fail("circuit id " + std::to_string(static_cast<unsigned>(id)) + " is not a Kerberos circuit");
}

KeyAlgorithm krb_algorithm_of(CircuitId id) {
  switch (id) {
    case CircuitId::KrbEncryptAes128:
    case CircuitId::KrbDecryptAes128:
    case CircuitId::KrbChecksum: return KeyAlgorithm::Aes128CtsHmacSha1;
    case CircuitId::KrbEncryptAes256:
    case CircuitId::KrbDecryptAes256: return KeyAlgorithm::Aes256CtsHmacSha1;
    case CircuitId::KrbSha2EncryptAes128:
    case CircuitId::KrbSha2DecryptAes128:
    case CircuitId::KrbSha2ChecksumSha256: return KeyAlgorithm::Aes128CtsHmacSha256;
    case CircuitId::KrbSha2EncryptAes256:
    case CircuitId::KrbSha2DecryptAes256:
    case CircuitId::KrbSha2ChecksumSha384: return KeyAlgorithm::Aes256CtsHmacSha384;
    default: break;
  }
  fail("circuit id " + std::to_string(static_cast<unsigned>(id)) + " is not a Kerberos circuit");
}

std::vector<std::uint8_t> encode_batch(const BatchHeader& header) {
  if (!is_valid_circuit_id(static_cast<std::uint8_t>(header.circuit))) fail("unknown circuit id");
  check_krb_batch(header.circuit, header.data_bytes, header.krb_combine);
  if (!is_krb_circuit(header.circuit) && header.krb_evaluation != KrbEvaluation::Layered)
    fail("batch of a non-Kerberos circuit evaluated as a garbled circuit");
  check_slice_count(header.slices.size(), header.krb_evaluation);
  check_prepared(header.krb_evaluation, header.prepared, header.sequence, header.slices.size());
  const bool krb = is_krb_circuit(header.circuit);
  const bool cf2 = is_krb_cf2_circuit(header.circuit);
  std::vector<std::uint8_t> out;
  const bool prepared = header.krb_evaluation == KrbEvaluation::PreparedTwice;
  out.reserve(kPeerHeaderBytes + 1 + (krb ? 5 : 0) + (prepared ? 4 : 0) + (cf2 ? 4 : 0) + 4 +
              header.slices.size() * kSliceBytes);
  ByteWriter writer(out);
  write_header(writer, PeerMessageType::Batch, header.epoch, header.sequence);
  writer.u8(static_cast<std::uint8_t>(header.circuit));
  if (krb) {
    writer.u32(header.data_bytes);
    writer.u8(static_cast<std::uint8_t>(header.krb_evaluation));
    if (prepared) writer.u32(header.prepared);
  }
  if (cf2) writer.u32(header.krb_combine);
  writer.u32(static_cast<std::uint32_t>(header.slices.size()));
  for (const auto& slice : header.slices) {
    check_slice(slice);
    check_krb_slice(header.circuit, slice);
    writer.bytes(slice.client);
    writer.bytes(slice.request);
    writer.bytes(slice.digest);
    writer.u32(slice.first_block);
    writer.u32(slice.blocks);
    writer.u32(slice.first_nonce);
    writer.u32(slice.nonces);
  }
  return out;
}

std::vector<std::uint8_t> encode_abort(const AbortNotice& notice) {
  check_reason(notice.reason);
  if (notice.detail.size() > kMaxErrorBytes)
    fail("abort detail of " + std::to_string(notice.detail.size()) + " bytes exceeds " +
         std::to_string(kMaxErrorBytes));
  std::vector<std::uint8_t> out;
  ByteWriter writer(out);
  write_header(writer, PeerMessageType::Abort, notice.epoch, notice.sequence);
  writer.u16(notice.reason);
  writer.short_string(notice.detail);
  return out;
}

std::vector<std::uint8_t> encode_notes(std::span<const RequestNote> notes) {
  check_note_count(notes.size());
  std::vector<std::uint8_t> out;
  ByteWriter writer(out);
  write_header(writer, PeerMessageType::Notes, 0, 0);
  writer.u32(static_cast<std::uint32_t>(notes.size()));
  for (const auto& note : notes) {
    check_reason(static_cast<std::uint16_t>(note.status));
    if (note.detail.size() > kMaxErrorBytes)
      fail("note detail of " + std::to_string(note.detail.size()) + " bytes exceeds " + std::to_string(kMaxErrorBytes));
    writer.bytes(note.client);
    writer.bytes(note.request);
    writer.bytes(note.digest);
    writer.u16(static_cast<std::uint16_t>(note.status));
    writer.short_string(note.detail);
  }
  return out;
}

std::vector<std::uint8_t> encode_pair_checks(std::span<const PairCheckDeal> deals) {
  check_pair_check_count(deals.size());
  std::vector<std::uint8_t> out;
  ByteWriter writer(out);
  write_header(writer, PeerMessageType::PairChecks, 0, 0);
  writer.u32(static_cast<std::uint32_t>(deals.size()));
  for (const auto& deal : deals) {
    check_pair_check_bytes(deal.key, deal.checks.size());
    write_key_id(writer, deal.key);
    writer.u8(deal.mutual ? 2 : deal.for_leader ? 0 : 1);
    writer.u16(static_cast<std::uint16_t>(deal.checks.size()));
    writer.bytes(deal.checks.span());
  }
  return out;
}

std::vector<std::uint8_t> encode_hello(const Hello& hello) {
  if ((hello.heard & ~0x7u) != 0) fail("hello names a party beyond 3");
  if (!missing_fits_mode(hello.mode, hello.missing))
    fail("hello's missing party does not go with its mode");
  std::vector<std::uint8_t> out;
  ByteWriter writer(out);
  write_header(writer, PeerMessageType::Hello, 0, 0);
  writer.u8(hello.heard);
  writer.u8(static_cast<std::uint8_t>(hello.mode));
  writer.u8(hello.missing);
  if (hello.excluded > 2 && hello.excluded != kNoParty) fail("hello excludes a party beyond 3");
  writer.u8(hello.excluded);
  if ((hello.distrusts & ~0x7u) != 0) fail("hello distrusts a party beyond 3");
  writer.u8(hello.distrusts);
  writer.u8(hello.three_party_failed ? 1 : 0);
  if ((hello.failed_pairs & ~0x7u) != 0) fail("hello's failed pairs name a party beyond 3");
  writer.u8(hello.failed_pairs);
  writer.u32(hello.readmissions);
  return out;
}

std::vector<std::uint8_t> wrap_degraded(std::span<const std::uint8_t> inner) {
  std::vector<std::uint8_t> out;
  out.reserve(2 + inner.size());
  out.push_back(kPeerProtocolVersion);
  out.push_back(static_cast<std::uint8_t>(PeerMessageType::Degraded));
  out.insert(out.end(), inner.begin(), inner.end());
  return out;
}

std::optional<std::span<const std::uint8_t>> unwrap_degraded(std::span<const std::uint8_t> frame) {
  if (frame.size() < 2 || frame[0] != kPeerProtocolVersion ||
      frame[1] != static_cast<std::uint8_t>(PeerMessageType::Degraded))
    return std::nullopt;
  return frame.subspan(2);
}

void write_layer_header(const LayerHeader& header, std::span<std::uint8_t> frame) {
  if (frame.size() < kLayerHeaderBytes)
    fail("layer frame of " + std::to_string(frame.size()) + " bytes has no room for the header");
  std::vector<std::uint8_t> bytes;
  bytes.reserve(kLayerHeaderBytes);
  ByteWriter writer(bytes);
  write_header(writer, PeerMessageType::Layer, header.epoch, header.sequence);
  writer.u32(header.layer);
  for (std::size_t i = 0; i < kLayerHeaderBytes; ++i) frame[i] = bytes[i];
}

PeerMessage decode_peer_message(std::span<const std::uint8_t> frame) {
  ByteReader reader(frame, Component::Wire);
  const std::uint8_t version = reader.u8();
  if (version != kPeerProtocolVersion) fail("unsupported peer protocol version " + std::to_string(version));
  const std::uint8_t type = reader.u8();
  const std::uint64_t epoch = reader.u64();
  const std::uint32_t sequence = reader.u32();
  switch (type) {
    case static_cast<std::uint8_t>(PeerMessageType::Batch): {
      BatchHeader header = decode_batch(reader, epoch, sequence);
      reader.expect_end();
      return header;
    }
    case static_cast<std::uint8_t>(PeerMessageType::Layer): {
      DecodedLayer layer;
      layer.header.epoch = epoch;
      layer.header.sequence = sequence;
      layer.header.layer = reader.u32();
      layer.payload = reader.rest();
      return layer;
    }
    case static_cast<std::uint8_t>(PeerMessageType::Abort): {
      AbortNotice notice;
      notice.epoch = epoch;
      notice.sequence = sequence;
      notice.reason = reader.u16();
      check_reason(notice.reason);
      notice.detail = reader.short_string(kMaxErrorBytes);
      reader.expect_end();
      return notice;
    }
    case static_cast<std::uint8_t>(PeerMessageType::Hello): {
      if (epoch != 0 || sequence != 0) fail("hello with a batch id");
      Hello hello;
      hello.heard = reader.u8();
      if ((hello.heard & ~0x7u) != 0) fail("hello names a party beyond 3");
      const std::uint8_t mode = reader.u8();
      if (mode > static_cast<std::uint8_t>(ClusterMode::TwoParty)) fail("hello with an unknown mode");
      hello.mode = static_cast<ClusterMode>(mode);
      hello.missing = reader.u8();
      if (!missing_fits_mode(hello.mode, hello.missing))
        fail("hello's missing party does not go with its mode");
      hello.excluded = reader.u8();
      if (hello.excluded > 2 && hello.excluded != kNoParty) fail("hello excludes a party beyond 3");
      hello.distrusts = reader.u8();
      if ((hello.distrusts & ~0x7u) != 0) fail("hello distrusts a party beyond 3");
      const std::uint8_t flags = reader.u8();
      if ((flags & ~0x1u) != 0) fail("hello with unknown flags");
      hello.three_party_failed = (flags & 1u) != 0;
      hello.failed_pairs = reader.u8();
      if ((hello.failed_pairs & ~0x7u) != 0) fail("hello's failed pairs name a party beyond 3");
      hello.readmissions = reader.u32();
      reader.expect_end();
      return hello;
    }
    case static_cast<std::uint8_t>(PeerMessageType::Notes): {
      if (epoch != 0 || sequence != 0) fail("notes message with a batch id");
      auto notes = decode_notes(reader);
      reader.expect_end();
      return notes;
    }
    case static_cast<std::uint8_t>(PeerMessageType::PairChecks): {
      if (epoch != 0 || sequence != 0) fail("pair checks message with a batch id");
      auto deals = decode_pair_checks(reader);
      reader.expect_end();
      return deals;
    }
    default: fail("unknown peer message type " + std::to_string(type));
  }
}

}  // namespace mpc::wire
