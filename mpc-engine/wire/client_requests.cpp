// mpc-engine/wire/client_requests.cpp: client -> server request frames (see client_messages.hpp
// for the layout).
#include <sodium.h>

#include <type_traits>

#include "common/bytes.hpp"
#include "common/error.hpp"
#include "wire/client_checks.hpp"
#include "wire/client_messages.hpp"
#include "wire/codec.hpp"

namespace mpc::wire {
namespace {

using detail::check_blocks;
using detail::check_krb_algorithm;
using detail::check_prefetch;
using detail::fail;
using detail::krb_operation_name;
using detail::write_header;

constexpr std::size_t kHeaderBytes = 1 + 1 + 16;

Operation checked_operation(std::uint8_t value) {
  switch (value) {
    case static_cast<std::uint8_t>(Operation::CtrKeystream): return Operation::CtrKeystream;
    case static_cast<std::uint8_t>(Operation::EcbEncrypt): return Operation::EcbEncrypt;
    case static_cast<std::uint8_t>(Operation::EcbDecrypt): return Operation::EcbDecrypt;
  }
  fail("unknown operation " + std::to_string(value));
}

// Compute serves the plain AES keys; an Aes256Gcm key serves only the GCM requests.
void check_compute_algorithm(KeyAlgorithm algorithm) {
  if (algorithm == KeyAlgorithm::Aes128 || algorithm == KeyAlgorithm::Aes256) return;
  fail(std::string("compute request (keystream, ECB) for a key of algorithm ") + algorithm_name(algorithm) +
       (is_krb_algorithm(algorithm) ? ": Kerberos keys serve only the Kerberos requests"
                                    : ": aes256-gcm keys serve only the GCM requests"));
}

void check_gcm_algorithm(KeyAlgorithm algorithm) {
  if (algorithm != KeyAlgorithm::Aes256Gcm)
    fail(std::string("GCM request for a key of algorithm ") + algorithm_name(algorithm) +
         ": the GCM requests need an aes256-gcm key");
}

void check_hash_blocks(std::size_t aad_bytes, std::size_t text_bytes) {
  const std::size_t blocks = gcm_hash_blocks(aad_bytes, text_bytes);
  if (blocks > kGcmHashPowers)
    fail("GCM input of " + std::to_string(blocks) + " GHASH blocks exceeds " + std::to_string(kGcmHashPowers));
}

constexpr std::uint8_t kKrbCombineFlag = 0x80;
constexpr std::uint8_t kKrbRecordMaskFlag = 0x40;
// A Compute request's operation byte: an output pad seed ends the frame.
constexpr std::uint8_t kOutputPadFlag = 0x40;
// The same in a GCM prefetch's blocks_per_nonce word and a GCM open's text length word.
constexpr std::uint32_t kOutputPadWordFlag = 0x80000000u;
constexpr std::uint8_t kGcmTagChained = 1;
constexpr std::uint8_t kGcmTagChecked = 2;

// The optional parts of a GcmTag request after its text.
std::size_t gcm_tag_parts_bytes(const GcmTagRequest& r) {
  if (!r.chained && !r.check) return 0;
  std::size_t bytes = 1;
  if (r.chained) bytes += kGcmNonceBytes + 1 + r.chained->prefix.size();
  if (r.check) bytes += kGcmNonceBytes + 4 + r.check->aad.size() + kGcmTagBytes;
  return bytes;
}

KrbOperation checked_krb_operation(std::uint8_t value) {
  switch (value) {
    case static_cast<std::uint8_t>(KrbOperation::Encrypt): return KrbOperation::Encrypt;
    case static_cast<std::uint8_t>(KrbOperation::Decrypt): return KrbOperation::Decrypt;
    case static_cast<std::uint8_t>(KrbOperation::Checksum): return KrbOperation::Checksum;
  }
  fail("unknown Kerberos operation " + std::to_string(value) +
       (value == 4 ? " (a PRF output of a stored key is never opened: KRB-FX-CF2 runs inside the job)" : ""));
}

void check_krb_usage(KrbOperation operation, std::uint32_t usage) {
  if (auto refusal = krb_usage_refusal(operation, usage)) fail(*refusal);
}

void check_krb_combine(KrbOperation operation, std::uint32_t usage, const KrbCombine& combine) {
  if (auto refusal = krb_combine_refusal(operation, usage, combine)) fail(*refusal);
}

void check_record_mask(const KrbRecordMask& mask) {
  const std::size_t components = mask.seed_hashes.size();
  if (components != 2 && components != 3)
    fail("a Kerberos record mask of " + std::to_string(components) + " components, not 2 or 3");
  const std::size_t held = components == 3 ? 2 : 1;
  if (mask.held.size() != held || mask.seeds.size() != held)
    fail("a Kerberos record mask of " + std::to_string(components) + " components gives a server " +
         std::to_string(held) + " seeds, not " + std::to_string(mask.seeds.size()));
  for (std::size_t i = 0; i < held; ++i) {
    if (mask.held[i] >= components) fail("a Kerberos record mask seed of no component");
    for (std::size_t j = 0; j < i; ++j)
      if (mask.held[j] == mask.held[i]) fail("a Kerberos record mask names one component twice");
  }
}

std::size_t record_mask_bytes(const KrbRecordMask& mask) {
  return 1 + 32 * mask.seed_hashes.size() + 1 + (1 + kKrbMaskSeedBytes) * mask.seeds.size();
}

// The bytes that end a Krb frame and stay with the server it went to.
std::size_t private_trailer_bytes(const Request& request) {
  if (const auto* compute = std::get_if<ComputeRequest>(&request)) return compute->output_pad ? kOutputPadSeedBytes : 0;
  if (const auto* prefetch = std::get_if<GcmPrefetchRequest>(&request))
    return prefetch->output_pad ? kOutputPadSeedBytes : 0;
  if (const auto* open = std::get_if<GcmOpenRequest>(&request)) return open->output_pad ? kOutputPadSeedBytes : 0;
  const auto* krb = std::get_if<KrbRequest>(&request);
  if (krb == nullptr || !krb->record_mask) return 0;
  return 1 + (1 + kKrbMaskSeedBytes) * krb->record_mask->seeds.size();
}

// Checks everything about a Krb request but the key name.
void check_krb_request(const KrbRequest& r) {
  if (r.record_mask) check_record_mask(*r.record_mask);
  checked_krb_operation(static_cast<std::uint8_t>(r.operation));
  check_krb_algorithm(r.key.algorithm);
  if (r.combine)
    check_krb_combine(r.operation, r.usage, *r.combine);
  else
    check_krb_usage(r.operation, r.usage);
  (void)krb_result_bytes(r.operation, krb_job_algorithm(r), r.data.size());
}

void check_prefix(std::string_view prefix) {
  if (!prefix.empty()) validate_key_name(prefix);
}

// Exact encoded size, so the output vector never reallocates (an ImportKey frame
// holds a key share; a reallocation would leave an unwiped copy on the heap).
std::size_t encoded_request_bytes(const Request& request) {
  return kHeaderBytes + std::visit(
                            [](const auto& r) -> std::size_t {
                              using T = std::decay_t<decltype(r)>;
                              if constexpr (std::is_same_v<T, ComputeRequest>)
                                return 1 + encoded_key_id_bytes(r.key) + 4 + 16 + r.input.size() +
                                       (r.output_pad ? kOutputPadSeedBytes : 0);
                              else if constexpr (std::is_same_v<T, ImportKeyRequest>)
                                return encoded_key_id_bytes(r.key) + 4 + r.sealed_share.size();
                              else if constexpr (std::is_same_v<T, ListKeysRequest>)
                                return 2 + r.name_prefix.size();
                              else if constexpr (std::is_same_v<T, DeleteKeyRequest>)
                                return encoded_key_id_bytes(r.key);
                              else if constexpr (std::is_same_v<T, GenerateKeyRequest>)
                                return encoded_key_id_bytes(r.key) + r.seed.size();
                              else if constexpr (std::is_same_v<T, ExclusionRequest>)
                                return 2 + 2 + r.reason.size();
                              else if constexpr (std::is_same_v<T, GcmPrefetchRequest>)
                                return encoded_key_id_bytes(r.key) + 4 + 4 + (r.output_pad ? kOutputPadSeedBytes : 0);
                              else if constexpr (std::is_same_v<T, GcmTagRequest>)
                                return encoded_key_id_bytes(r.key) + kGcmNonceBytes + 4 + r.aad.size() + 4 +
                                       r.text.size() + gcm_tag_parts_bytes(r);
                              else if constexpr (std::is_same_v<T, GcmOpenRequest> ||
                                                 std::is_same_v<T, GcmReopenRequest>)
                                return encoded_key_id_bytes(r.key) + kGcmNonceBytes + 4 + r.aad.size() + 4 +
                                       r.text.size() + kGcmTagBytes + (r.output_pad ? kOutputPadSeedBytes : 0);
                              else if constexpr (std::is_same_v<T, KrbRequest>)
                                return 1 + encoded_key_id_bytes(r.key) + 4 + 4 + r.data.size() +
                                       (r.combine ? 1 + 2 + r.combine->pepper.size() + r.combine->mask.size() : 0) +
                                       (r.record_mask ? record_mask_bytes(*r.record_mask) : 0);
                              else
                                return 0;
                            },
                            request);
}

// The check_body overloads hold every rule a request must keep to be encoded (validate_request);
// encode_body applies them, then writes.

void check_key_id(const KeyId& key) {
  validate_key_name(key.name);
  checked_algorithm(static_cast<std::uint8_t>(key.algorithm));
}

void check_body(const ComputeRequest& r) {
  checked_operation(static_cast<std::uint8_t>(r.operation));
  check_key_id(r.key);
  check_compute_algorithm(r.key.algorithm);
  check_blocks(r.blocks);
  if (r.operation == Operation::CtrKeystream) {
    if (!r.input.empty()) fail("CTR keystream request must not carry input blocks");
  } else if (r.input.size() != static_cast<std::size_t>(r.blocks) * kBlockBytes) {
    fail("ECB input of " + std::to_string(r.input.size()) + " bytes for " + std::to_string(r.blocks) + " blocks");
  }
}

void encode_body(ByteWriter& writer, const ComputeRequest& r) {
  check_body(r);
  write_header(writer, MessageType::Compute, r.id);
  writer.u8(static_cast<std::uint8_t>(static_cast<std::uint8_t>(r.operation) | (r.output_pad ? kOutputPadFlag : 0)));
  write_key_id(writer, r.key);
  writer.u32(r.blocks);
  if (r.operation == Operation::CtrKeystream)
    writer.bytes(r.counter);
  else
    writer.bytes(r.input);
  if (r.output_pad) writer.bytes(*r.output_pad);
}

// A sealed replicated share (x then a, three-server clusters) or sealed XOR share (two-server
// clusters), with its check or without.
void check_sealed_share_length(KeyAlgorithm algorithm, std::size_t length) {
  const std::size_t material = material_bytes(algorithm), checks = share_check_bytes(algorithm);
  if (length != 2 * material + kSealedShareOverhead && length != material + kSealedShareOverhead &&
      length != material + checks + kSealedShareOverhead)
    fail("sealed key share of " + std::to_string(length) + " bytes, expected " +
         std::to_string(2 * material + kSealedShareOverhead) + " (replicated), " +
         std::to_string(material + checks + kSealedShareOverhead) + " (XOR, checked) or " +
         std::to_string(material + kSealedShareOverhead) + " (XOR)");
}

void check_body(const ImportKeyRequest& r) {
  check_key_id(r.key);
  check_sealed_share_length(r.key.algorithm, r.sealed_share.size());
}

void encode_body(ByteWriter& writer, const ImportKeyRequest& r) {
  check_body(r);
  write_header(writer, MessageType::ImportKey, r.id);
  write_key_id(writer, r.key);
  writer.u32(static_cast<std::uint32_t>(r.sealed_share.size()));
  writer.bytes(r.sealed_share);
}

void check_body(const ListKeysRequest& r) { check_prefix(r.name_prefix); }

void encode_body(ByteWriter& writer, const ListKeysRequest& r) {
  check_body(r);
  write_header(writer, MessageType::ListKeys, r.id);
  writer.short_string(r.name_prefix);
}

void check_body(const DeleteKeyRequest& r) { check_key_id(r.key); }

void encode_body(ByteWriter& writer, const DeleteKeyRequest& r) {
  write_header(writer, MessageType::DeleteKey, r.id);
  write_key_id(writer, r.key);
}

void check_body(const GenerateKeyRequest& r) {
  check_key_id(r.key);
  check_gcm_algorithm(r.key.algorithm);
}

void encode_body(ByteWriter& writer, const GenerateKeyRequest& r) {
  check_body(r);
  write_header(writer, MessageType::GenerateKey, r.id);
  write_key_id(writer, r.key);
  writer.bytes(r.seed);
}

void check_body(const StatusRequest&) {}

void encode_body(ByteWriter& writer, const StatusRequest& r) { write_header(writer, MessageType::Status, r.id); }

void check_body(const ExclusionRequest& r) {
  if (r.action != ExclusionAction::Exclude && r.action != ExclusionAction::Readmit &&
      r.action != ExclusionAction::CheckFailed)
    fail("unknown exclusion action " + std::to_string(static_cast<unsigned>(r.action)));
  if (r.action == ExclusionAction::CheckFailed) {
    if (r.party > kServedByAllThree) fail("a failed check's service without party " + std::to_string(r.party));
  } else if (r.party > 2) {
    fail("exclusion of party " + std::to_string(r.party) + " outside 0..2");
  }
  if (r.reason.size() > kMaxExclusionReasonBytes)
    fail("exclusion reason longer than " + std::to_string(kMaxExclusionReasonBytes) + " bytes");
  if (r.action == ExclusionAction::Readmit && !r.reason.empty()) fail("a readmission carries no reason");
}

void encode_body(ByteWriter& writer, const ExclusionRequest& r) {
  check_body(r);
  write_header(writer, MessageType::Exclusion, r.id);
  writer.u8(static_cast<std::uint8_t>(r.action));
  writer.u8(r.party);
  writer.short_string(r.reason);
}

void check_body(const GcmPrefetchRequest& r) {
  check_key_id(r.key);
  check_gcm_algorithm(r.key.algorithm);
  check_prefetch(r.count, r.blocks_per_nonce);
  if (r.output_pad && r.local_masks) fail("a GCM prefetch with local masks takes no output pad");
}

void encode_body(ByteWriter& writer, const GcmPrefetchRequest& r) {
  check_body(r);
  write_header(writer, r.local_masks ? MessageType::GcmPrefetchLocal : MessageType::GcmPrefetch, r.id);
  write_key_id(writer, r.key);
  writer.u32(r.count);
  writer.u32(r.blocks_per_nonce | (r.output_pad ? kOutputPadWordFlag : 0));
  if (r.output_pad) writer.bytes(*r.output_pad);
}

// key id | nonce | u32 aad length | aad | u32 text length | text, shared by GcmTag and GcmOpen.
void write_gcm_input(ByteWriter& writer, const KeyId& key, const GcmNonce& nonce, std::span<const std::uint8_t> aad,
                     std::span<const std::uint8_t> text, bool padded = false) {
  write_key_id(writer, key);
  writer.bytes(nonce);
  writer.u32(static_cast<std::uint32_t>(aad.size()));
  writer.bytes(aad);
  writer.u32(static_cast<std::uint32_t>(text.size()) | (padded ? kOutputPadWordFlag : 0));
  writer.bytes(text);
}

void check_chain_prefix(std::size_t bytes) {
  if (bytes > kMaxGcmChainPrefixBytes)
    fail("chained GCM tag prefix of " + std::to_string(bytes) + " bytes exceeds " +
         std::to_string(kMaxGcmChainPrefixBytes));
}

void check_body(const GcmTagRequest& r) {
  check_key_id(r.key);
  check_gcm_algorithm(r.key.algorithm);
  check_hash_blocks(r.aad.size(), r.text.size());
  if (r.chained) {
    check_chain_prefix(r.chained->prefix.size());
    if (r.chained->nonce == r.nonce) fail("chained GCM tag under the request's own nonce");
  }
  if (r.check) check_hash_blocks(r.check->aad.size(), 0);
}

void encode_body(ByteWriter& writer, const GcmTagRequest& r) {
  check_body(r);
  const bool parts = r.chained || r.check;
  write_header(writer, parts ? MessageType::GcmTagParts : MessageType::GcmTag, r.id);
  write_gcm_input(writer, r.key, r.nonce, r.aad, r.text);
  if (!parts) return;
  writer.u8(static_cast<std::uint8_t>((r.chained ? kGcmTagChained : 0) | (r.check ? kGcmTagChecked : 0)));
  if (r.chained) {
    writer.bytes(r.chained->nonce);
    writer.u8(static_cast<std::uint8_t>(r.chained->prefix.size()));
    writer.bytes(r.chained->prefix);
  }
  if (r.check) {
    writer.bytes(r.check->nonce);
    writer.u32(static_cast<std::uint32_t>(r.check->aad.size()));
    writer.bytes(r.check->aad);
    writer.bytes(r.check->tag);
  }
}

void check_gcm_open(const GcmOpenRequest& r, MessageType type) {
  check_key_id(r.key);
  check_gcm_algorithm(r.key.algorithm);
  check_hash_blocks(r.aad.size(), r.text.size());
  if (r.output_pad && type != MessageType::GcmOpen) fail("a GCM reopen takes no output pad");
}

void check_body(const GcmOpenRequest& r) { check_gcm_open(r, MessageType::GcmOpen); }

void check_body(const GcmReopenRequest& r) { check_gcm_open(r, MessageType::GcmReopen); }

void write_gcm_open(ByteWriter& writer, MessageType type, const GcmOpenRequest& r) {
  check_gcm_open(r, type);
  write_header(writer, type, r.id);
  write_gcm_input(writer, r.key, r.nonce, r.aad, r.text, r.output_pad.has_value());
  writer.bytes(r.tag);
  if (r.output_pad) writer.bytes(*r.output_pad);
}

void encode_body(ByteWriter& writer, const GcmOpenRequest& r) { write_gcm_open(writer, MessageType::GcmOpen, r); }

void encode_body(ByteWriter& writer, const GcmReopenRequest& r) { write_gcm_open(writer, MessageType::GcmReopen, r); }

void check_body(const KrbRequest& r) {
  check_key_id(r.key);
  check_krb_request(r);
}

void encode_body(ByteWriter& writer, const KrbRequest& r) {
  check_body(r);
  write_header(writer, MessageType::Krb, r.id);
  writer.u8(static_cast<std::uint8_t>(static_cast<std::uint8_t>(r.operation) | (r.combine ? kKrbCombineFlag : 0) |
                                      (r.record_mask ? kKrbRecordMaskFlag : 0)));
  write_key_id(writer, r.key);
  writer.u32(r.usage);
  writer.u32(static_cast<std::uint32_t>(r.data.size()));
  writer.bytes(r.data);
  if (r.combine) {
    writer.u8(static_cast<std::uint8_t>(r.combine->combined));
    writer.short_string(r.combine->pepper);
    writer.bytes(r.combine->mask);
  }
  if (r.record_mask) {
    writer.u8(static_cast<std::uint8_t>(r.record_mask->seed_hashes.size()));
    for (const auto& hash : r.record_mask->seed_hashes) writer.bytes(hash);
    writer.u8(static_cast<std::uint8_t>(r.record_mask->seeds.size()));
    for (std::size_t i = 0; i < r.record_mask->seeds.size(); ++i) {
      writer.u8(r.record_mask->held[i]);
      writer.bytes(r.record_mask->seeds[i]);
    }
  }
}

ComputeRequest decode_compute(ByteReader& reader, const RequestId& id) {
  ComputeRequest r;
  r.id = id;
  const std::uint8_t operation = reader.u8();
  r.operation = checked_operation(static_cast<std::uint8_t>(operation & ~kOutputPadFlag));
  const bool padded = (operation & kOutputPadFlag) != 0;
  r.key = read_key_id(reader);
  check_compute_algorithm(r.key.algorithm);
  r.blocks = reader.u32();
  check_blocks(r.blocks);
  if (r.operation == Operation::CtrKeystream) {
    r.counter = reader.array<16>();
  } else {
    const std::size_t expected = static_cast<std::size_t>(r.blocks) * kBlockBytes;
    if (reader.remaining() != expected + (padded ? kOutputPadSeedBytes : 0))
      fail("ECB input of " + std::to_string(reader.remaining()) + " bytes for " + std::to_string(r.blocks) +
           " blocks");
    const auto input = reader.bytes(expected);
    r.input.assign(input.begin(), input.end());
  }
  if (padded) r.output_pad = reader.array<kOutputPadSeedBytes>();
  return r;
}

ImportKeyRequest decode_import(ByteReader& reader, const RequestId& id) {
  ImportKeyRequest r;
  r.id = id;
  r.key = read_key_id(reader);
  const std::uint32_t length = reader.u32();
  check_sealed_share_length(r.key.algorithm, length);
  const auto sealed = reader.bytes(length);
  r.sealed_share.assign(sealed.begin(), sealed.end());
  return r;
}

GcmPrefetchRequest decode_gcm_prefetch(ByteReader& reader, const RequestId& id, bool local_masks) {
  GcmPrefetchRequest r;
  r.id = id;
  r.local_masks = local_masks;
  r.key = read_key_id(reader);
  check_gcm_algorithm(r.key.algorithm);
  r.count = reader.u32();
  const std::uint32_t word = reader.u32();
  r.blocks_per_nonce = word & ~kOutputPadWordFlag;
  check_prefetch(r.count, r.blocks_per_nonce);
  if ((word & kOutputPadWordFlag) != 0) {
    if (local_masks) fail("a GCM prefetch with local masks takes no output pad");
    r.output_pad = reader.array<kOutputPadSeedBytes>();
  }
  return r;
}

struct GcmInput {
  KeyId key;
  GcmNonce nonce{};
  std::vector<std::uint8_t> aad;
  std::vector<std::uint8_t> text;
};

// `padded`: where the text length may carry kOutputPadWordFlag (a GcmOpen), whether it does.
GcmInput read_gcm_input(ByteReader& reader, bool* padded = nullptr) {
  GcmInput in;
  in.key = read_key_id(reader);
  check_gcm_algorithm(in.key.algorithm);
  in.nonce = reader.array<kGcmNonceBytes>();
  const std::uint32_t aad_length = reader.u32();
  // Checked before reading so a huge length fails on the limit, not on the frame size.
  check_hash_blocks(aad_length, 0);
  const auto aad = reader.bytes(aad_length);
  in.aad.assign(aad.begin(), aad.end());
  std::uint32_t text_length = reader.u32();
  if (padded != nullptr) {
    *padded = (text_length & kOutputPadWordFlag) != 0;
    text_length &= ~kOutputPadWordFlag;
  }
  check_hash_blocks(aad_length, text_length);
  const auto text = reader.bytes(text_length);
  in.text.assign(text.begin(), text.end());
  return in;
}

GcmTagRequest decode_gcm_tag(ByteReader& reader, const RequestId& id, bool with_parts) {
  GcmInput in = read_gcm_input(reader);
  GcmTagRequest r{id, std::move(in.key), in.nonce, std::move(in.aad), std::move(in.text)};
  if (!with_parts) return r;
  const std::uint8_t parts = reader.u8();
  if (parts == 0 || (parts & ~(kGcmTagChained | kGcmTagChecked)) != 0)
    fail("GCM tag request parts " + std::to_string(parts));
  if (parts & kGcmTagChained) {
    GcmChainedTag chained;
    chained.nonce = reader.array<kGcmNonceBytes>();
    if (chained.nonce == r.nonce) fail("chained GCM tag under the request's own nonce");
    const std::uint8_t prefix_length = reader.u8();
    check_chain_prefix(prefix_length);
    const auto prefix = reader.bytes(prefix_length);
    chained.prefix.assign(prefix.begin(), prefix.end());
    r.chained = std::move(chained);
  }
  if (parts & kGcmTagChecked) {
    GcmTagCheck check;
    check.nonce = reader.array<kGcmNonceBytes>();
    const std::uint32_t aad_length = reader.u32();
    check_hash_blocks(aad_length, 0);
    const auto aad = reader.bytes(aad_length);
    check.aad.assign(aad.begin(), aad.end());
    check.tag = reader.array<kGcmTagBytes>();
    r.check = std::move(check);
  }
  return r;
}

GcmOpenRequest decode_gcm_open(ByteReader& reader, const RequestId& id, bool may_pad) {
  bool padded = false;
  GcmInput in = read_gcm_input(reader, may_pad ? &padded : nullptr);
  GcmOpenRequest r{id, std::move(in.key), in.nonce, std::move(in.aad), std::move(in.text), {}};
  r.tag = reader.array<kGcmTagBytes>();
  if (padded) r.output_pad = reader.array<kOutputPadSeedBytes>();
  return r;
}

KrbRequest decode_krb(ByteReader& reader, const RequestId& id) {
  KrbRequest r;
  r.id = id;
  const std::uint8_t operation = reader.u8();
  r.operation = checked_krb_operation(static_cast<std::uint8_t>(operation & ~(kKrbCombineFlag | kKrbRecordMaskFlag)));
  r.key = read_key_id(reader);
  check_krb_algorithm(r.key.algorithm);
  r.usage = reader.u32();
  const std::uint32_t length = reader.u32();
  // Checked before reading so a huge length fails on the limit, not on the frame size.
  if (length > kKrbMaxDataBytes) fail("Kerberos data of " + std::to_string(length) + " bytes exceeds " +
                                      std::to_string(kKrbMaxDataBytes));
  const auto data = reader.bytes(length);
  r.data.assign(data.begin(), data.end());
  if ((operation & kKrbCombineFlag) != 0) {
    KrbCombine combine;
    combine.combined = checked_algorithm(reader.u8());
    check_krb_algorithm(combine.combined);
    combine.pepper = reader.short_string(kKrbMaxPepperBytes);
    const auto mask = reader.bytes(key_bytes(combine.combined));
    combine.mask.assign(mask.begin(), mask.end());
    r.combine = std::move(combine);
  }
  if ((operation & kKrbRecordMaskFlag) != 0) {
    KrbRecordMask mask;
    const std::uint8_t components = reader.u8();
    if (components != 2 && components != 3)
      fail("a Kerberos record mask of " + std::to_string(components) + " components, not 2 or 3");
    mask.seed_hashes.resize(components);
    for (auto& hash : mask.seed_hashes) hash = reader.array<32>();
    const std::uint8_t held = reader.u8();
    if (held > 2) fail("a Kerberos record mask with " + std::to_string(held) + " seeds");
    for (std::uint8_t i = 0; i < held; ++i) {
      mask.held.push_back(reader.u8());
      mask.seeds.push_back(reader.array<kKrbMaskSeedBytes>());
    }
    r.record_mask = std::move(mask);
  }
  check_krb_request(r);
  return r;
}

}  // namespace

std::string one_line_reason(std::string_view text) {
  std::string out(text.substr(0, kMaxExclusionReasonBytes));
  for (char& c : out)
    if (c == '\n' || c == '\r') c = ' ';
  return out;
}

void validate_request(const Request& request) {
  std::visit([](const auto& r) { check_body(r); }, request);
}
void validate_request(const ComputeRequest& request) { check_body(request); }
void validate_request(const GcmPrefetchRequest& request) { check_body(request); }
void validate_request(const GcmTagRequest& request) { check_body(request); }
void validate_request(const GcmOpenRequest& request) { check_body(request); }
void validate_request(const KrbRequest& request) { check_body(request); }

std::vector<std::uint8_t> encode_request(const Request& request) {
  std::vector<std::uint8_t> out;
  out.reserve(encoded_request_bytes(request));
  ByteWriter writer(out);
  std::visit([&writer](const auto& r) { encode_body(writer, r); }, request);
  return out;
}

Request decode_request(std::span<const std::uint8_t> frame) {
  ByteReader reader(frame, Component::Wire);
  const std::uint8_t version = reader.u8();
  if (version != kProtocolVersion) fail("unsupported protocol version " + std::to_string(version));
  const std::uint8_t type = reader.u8();
  const RequestId id = reader.array<16>();
  Request request;
  switch (type) {
    case static_cast<std::uint8_t>(MessageType::Compute): request = decode_compute(reader, id); break;
    case static_cast<std::uint8_t>(MessageType::ImportKey): request = decode_import(reader, id); break;
    case static_cast<std::uint8_t>(MessageType::ListKeys): {
      ListKeysRequest r;
      r.id = id;
      r.name_prefix = reader.short_string(kMaxKeyNameBytes);
      check_prefix(r.name_prefix);
      request = std::move(r);
      break;
    }
    case static_cast<std::uint8_t>(MessageType::DeleteKey): request = DeleteKeyRequest{id, read_key_id(reader)}; break;
    case static_cast<std::uint8_t>(MessageType::Status): request = StatusRequest{id}; break;
    case static_cast<std::uint8_t>(MessageType::Exclusion): {
      ExclusionRequest r;
      r.id = id;
      r.action = static_cast<ExclusionAction>(reader.u8());
      r.party = reader.u8();
      r.reason = reader.short_string(kMaxExclusionReasonBytes);
      check_body(r);
      request = std::move(r);
      break;
    }
    case static_cast<std::uint8_t>(MessageType::GenerateKey): {
      GenerateKeyRequest r;
      r.id = id;
      r.key = read_key_id(reader);
      check_gcm_algorithm(r.key.algorithm);
      r.seed = reader.array<32>();
      request = std::move(r);
      break;
    }
    case static_cast<std::uint8_t>(MessageType::GcmPrefetch): request = decode_gcm_prefetch(reader, id, false); break;
    case static_cast<std::uint8_t>(MessageType::GcmPrefetchLocal):
      request = decode_gcm_prefetch(reader, id, true);
      break;
    case static_cast<std::uint8_t>(MessageType::GcmTag): request = decode_gcm_tag(reader, id, false); break;
    case static_cast<std::uint8_t>(MessageType::GcmTagParts): request = decode_gcm_tag(reader, id, true); break;
    case static_cast<std::uint8_t>(MessageType::GcmOpen): request = decode_gcm_open(reader, id, true); break;
    case static_cast<std::uint8_t>(MessageType::Krb): request = decode_krb(reader, id); break;
    case static_cast<std::uint8_t>(MessageType::GcmReopen):
      request = GcmReopenRequest{decode_gcm_open(reader, id, false)};
      break;
    default: fail("unknown request type " + std::to_string(type));
  }
  reader.expect_end();
  return request;
}

RequestDigest request_digest(std::span<const std::uint8_t> frame) noexcept {
  RequestDigest digest{};
  crypto_generichash(digest.data(), digest.size(), frame.data(), frame.size(), nullptr, 0);
  return digest;
}

RequestDigest request_digest(std::span<const std::uint8_t> frame, const Request& decoded) {
  const std::size_t trailer = private_trailer_bytes(decoded);
  if (trailer > frame.size()) throw FormatError(Component::Wire, "request frame shorter than its own seeds");
  return request_digest(frame.first(frame.size() - trailer));
}

const RequestId& request_id(const Request& request) {
  return std::visit([](const auto& r) -> const RequestId& { return r.id; }, request);
}

const KeyId& request_key(const Request& request) {
  return std::visit(
      [](const auto& r) -> const KeyId& {
        if constexpr (requires { r.key; })
          return r.key;
        else
          throw Error(Component::Wire, "a request that names no key");
      },
      request);
}

}  // namespace mpc::wire
