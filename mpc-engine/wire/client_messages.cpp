// mpc-engine/wire/client_messages.cpp: client <-> server frames (see client_messages.hpp for the layout).
#include "wire/client_messages.hpp"

#include <sodium.h>

#include <type_traits>

#include "common/bytes.hpp"
#include "common/error.hpp"
#include "wire/codec.hpp"

namespace mpc::wire {
namespace {

[[noreturn]] void fail(const std::string& message) { throw FormatError(Component::Wire, message); }

constexpr std::size_t kHeaderBytes = 1 + 1 + 16;

Operation checked_operation(std::uint8_t value) {
  switch (value) {
    case static_cast<std::uint8_t>(Operation::CtrKeystream): return Operation::CtrKeystream;
    case static_cast<std::uint8_t>(Operation::EcbEncrypt): return Operation::EcbEncrypt;
    case static_cast<std::uint8_t>(Operation::EcbDecrypt): return Operation::EcbDecrypt;
  }
  fail("unknown operation " + std::to_string(value));
}

Status checked_status(std::uint16_t value) {
  if (value > static_cast<std::uint16_t>(kLastStatus)) fail("unknown status " + std::to_string(value));
  return static_cast<Status>(value);
}

void check_blocks(std::uint32_t blocks) {
  if (blocks == 0 || blocks > kMaxRequestBlocks)
    fail("block count " + std::to_string(blocks) + " outside 1.." + std::to_string(kMaxRequestBlocks));
}

// Compute serves the plain AES keys; an Aes256Gcm key serves only the GCM requests.
void check_compute_algorithm(KeyAlgorithm algorithm) {
  if (algorithm != KeyAlgorithm::Aes128 && algorithm != KeyAlgorithm::Aes256)
    fail(std::string("compute request for a key of algorithm ") + algorithm_name(algorithm));
}

void check_gcm_algorithm(KeyAlgorithm algorithm) {
  if (algorithm != KeyAlgorithm::Aes256Gcm)
    fail(std::string("GCM request for a key of algorithm ") + algorithm_name(algorithm));
}

void check_prefetch(std::uint32_t count, std::uint32_t blocks_per_nonce) {
  if (count == 0 || count > kMaxGcmPrefetchCount)
    fail("nonce count " + std::to_string(count) + " outside 1.." + std::to_string(kMaxGcmPrefetchCount));
  if (blocks_per_nonce > kMaxGcmBlocksPerNonce)
    fail("blocks per nonce " + std::to_string(blocks_per_nonce) + " outside 0.." +
         std::to_string(kMaxGcmBlocksPerNonce));
  if (static_cast<std::uint64_t>(count) * blocks_per_nonce > kMaxRequestBlocks)
    fail(std::to_string(count) + " nonces of " + std::to_string(blocks_per_nonce) + " blocks exceed " +
         std::to_string(kMaxRequestBlocks) + " blocks");
}

void check_hash_blocks(std::size_t aad_bytes, std::size_t text_bytes) {
  const std::size_t blocks = gcm_hash_blocks(aad_bytes, text_bytes);
  if (blocks > kGcmHashPowers)
    fail("GCM input of " + std::to_string(blocks) + " GHASH blocks exceeds " + std::to_string(kGcmHashPowers));
}

constexpr std::uint8_t kKrbCombineFlag = 0x80;

KrbOperation checked_krb_operation(std::uint8_t value) {
  switch (value) {
    case static_cast<std::uint8_t>(KrbOperation::Encrypt): return KrbOperation::Encrypt;
    case static_cast<std::uint8_t>(KrbOperation::Decrypt): return KrbOperation::Decrypt;
    case static_cast<std::uint8_t>(KrbOperation::Checksum): return KrbOperation::Checksum;
  }
  fail("unknown Kerberos operation " + std::to_string(value) +
       (value == 4 ? " (a PRF output of a stored key is never opened: KRB-FX-CF2 runs inside the job)" : ""));
}

const char* krb_operation_name(KrbOperation operation) {
  switch (operation) {
    case KrbOperation::Encrypt: return "encrypt";
    case KrbOperation::Decrypt: return "decrypt";
    case KrbOperation::Checksum: return "checksum";
  }
  return "unknown";
}

// Krb requests serve only the Kerberos keys, whose material holds the derived keys.
void check_krb_algorithm(KeyAlgorithm algorithm) {
  if (!is_krb_algorithm(algorithm))
    fail(std::string("Kerberos request for a key of algorithm ") + algorithm_name(algorithm));
}

void check_krb_usage(KrbOperation operation, std::uint32_t usage) {
  if (!krb_usage_index(usage))
    fail(std::string("Kerberos ") + krb_operation_name(operation) + " request for usage " + std::to_string(usage) +
         ", whose keys no server holds");
  if (!krb_usage_allows(operation, usage))
    fail(std::string("Kerberos ") + krb_operation_name(operation) + " under usage " + std::to_string(usage) +
         " refused: a KDC never does it" +
         (usage == 1 ? " (an encrypted timestamp under a client's key would be that client's preauthentication)"
                     : ""));
}

void check_krb_combine(KrbOperation operation, std::uint32_t usage, const KrbCombine& combine) {
  if (auto refusal = krb_combine_refusal(operation, usage, combine)) fail(*refusal);
}

// Checks everything about a Krb request but the key name.
void check_krb_request(const KrbRequest& r) {
  checked_krb_operation(static_cast<std::uint8_t>(r.operation));
  check_krb_algorithm(r.key.algorithm);
  if (r.combine)
    check_krb_combine(r.operation, r.usage, *r.combine);
  else
    check_krb_usage(r.operation, r.usage);
  (void)krb_result_bytes(r.operation, krb_job_algorithm(r), r.data.size());
}

// Result lengths a Krb reply can carry: from an RFC 3962 checksum (12 bytes) to the
// encryption of the longest data with the longest MAC.
constexpr std::size_t kMinKrbResultBytes = algorithm_row(KeyAlgorithm::Aes128CtsHmacSha1).mac_bytes;
constexpr std::size_t kMaxKrbResultBytes = kKrbMaxDataBytes + kKrbMaxMacBytes;

void check_krb_result_length(std::size_t length) {
  if (length < kMinKrbResultBytes || length > kMaxKrbResultBytes)
    fail("Kerberos result of " + std::to_string(length) + " bytes outside " + std::to_string(kMinKrbResultBytes) +
         ".." + std::to_string(kMaxKrbResultBytes));
}

// Most text blocks a GCM open can have: the GHASH input also holds the length block.
constexpr std::uint32_t kMaxGcmOpenBlocks = kGcmHashPowers - 1;

std::size_t padded_blocks(std::size_t bytes) { return bytes / kBlockBytes + (bytes % kBlockBytes != 0 ? 1 : 0); }

void check_verdict_share(std::uint8_t share) {
  if ((share & 0xfe) != 0) fail("verdict share byte " + std::to_string(share) + " has bits beyond bit 0");
}

void check_prefix(std::string_view prefix) {
  if (!prefix.empty()) validate_key_name(prefix);
}

void write_header(ByteWriter& writer, MessageType type, const RequestId& id) {
  writer.u8(kProtocolVersion);
  writer.u8(static_cast<std::uint8_t>(type));
  writer.bytes(id);
}

// Exact encoded size, so the output vector never reallocates (an ImportKey frame
// holds a key share; a reallocation would leave an unwiped copy on the heap).
std::size_t encoded_request_bytes(const Request& request) {
  return kHeaderBytes + std::visit(
                            [](const auto& r) -> std::size_t {
                              using T = std::decay_t<decltype(r)>;
                              if constexpr (std::is_same_v<T, ComputeRequest>)
                                return 1 + encoded_key_id_bytes(r.key) + 4 + 16 + r.input.size();
                              else if constexpr (std::is_same_v<T, ImportKeyRequest>)
                                return encoded_key_id_bytes(r.key) + 4 + r.sealed_share.size();
                              else if constexpr (std::is_same_v<T, ListKeysRequest>)
                                return 2 + r.name_prefix.size();
                              else if constexpr (std::is_same_v<T, DeleteKeyRequest>)
                                return encoded_key_id_bytes(r.key);
                              else if constexpr (std::is_same_v<T, GcmPrefetchRequest>)
                                return encoded_key_id_bytes(r.key) + 4 + 4;
                              else if constexpr (std::is_same_v<T, GcmTagRequest>)
                                return encoded_key_id_bytes(r.key) + kGcmNonceBytes + 4 + r.aad.size() + 4 +
                                       r.text.size();
                              else if constexpr (std::is_same_v<T, GcmOpenRequest>)
                                return encoded_key_id_bytes(r.key) + kGcmNonceBytes + 4 + r.aad.size() + 4 +
                                       r.text.size() + kGcmTagBytes;
                              else if constexpr (std::is_same_v<T, KrbRequest>)
                                return 1 + encoded_key_id_bytes(r.key) + 4 + 4 + r.data.size();
                              else
                                return 0;
                            },
                            request);
}

void encode_body(ByteWriter& writer, const ComputeRequest& r) {
  checked_operation(static_cast<std::uint8_t>(r.operation));
  checked_algorithm(static_cast<std::uint8_t>(r.key.algorithm));
  check_compute_algorithm(r.key.algorithm);
  check_blocks(r.blocks);
  write_header(writer, MessageType::Compute, r.id);
  writer.u8(static_cast<std::uint8_t>(r.operation));
  write_key_id(writer, r.key);
  writer.u32(r.blocks);
  if (r.operation == Operation::CtrKeystream) {
    if (!r.input.empty()) fail("CTR keystream request must not carry input blocks");
    writer.bytes(r.counter);
  } else {
    if (r.input.size() != static_cast<std::size_t>(r.blocks) * kBlockBytes)
      fail("ECB input of " + std::to_string(r.input.size()) + " bytes for " + std::to_string(r.blocks) + " blocks");
    writer.bytes(r.input);
  }
}

// A sealed replicated share (x then a, three-server clusters) or sealed XOR share (two-server
// clusters).
void check_sealed_share_length(KeyAlgorithm algorithm, std::size_t length) {
  const std::size_t material = material_bytes(algorithm);
  if (length != 2 * material + kSealedShareOverhead && length != material + kSealedShareOverhead)
    fail("sealed key share of " + std::to_string(length) + " bytes, expected " +
         std::to_string(2 * material + kSealedShareOverhead) + " (replicated) or " +
         std::to_string(material + kSealedShareOverhead) + " (XOR)");
}

void encode_body(ByteWriter& writer, const ImportKeyRequest& r) {
  check_sealed_share_length(r.key.algorithm, r.sealed_share.size());
  write_header(writer, MessageType::ImportKey, r.id);
  write_key_id(writer, r.key);
  writer.u32(static_cast<std::uint32_t>(r.sealed_share.size()));
  writer.bytes(r.sealed_share);
}

void encode_body(ByteWriter& writer, const ListKeysRequest& r) {
  check_prefix(r.name_prefix);
  write_header(writer, MessageType::ListKeys, r.id);
  writer.short_string(r.name_prefix);
}

void encode_body(ByteWriter& writer, const DeleteKeyRequest& r) {
  write_header(writer, MessageType::DeleteKey, r.id);
  write_key_id(writer, r.key);
}

void encode_body(ByteWriter& writer, const StatusRequest& r) { write_header(writer, MessageType::Status, r.id); }

void encode_body(ByteWriter& writer, const GcmPrefetchRequest& r) {
  check_gcm_algorithm(r.key.algorithm);
  check_prefetch(r.count, r.blocks_per_nonce);
  write_header(writer, MessageType::GcmPrefetch, r.id);
  write_key_id(writer, r.key);
  writer.u32(r.count);
  writer.u32(r.blocks_per_nonce);
}

// key id | nonce | u32 aad length | aad | u32 text length | text, shared by GcmTag and GcmOpen.
void write_gcm_input(ByteWriter& writer, const KeyId& key, const GcmNonce& nonce, std::span<const std::uint8_t> aad,
                     std::span<const std::uint8_t> text) {
  write_key_id(writer, key);
  writer.bytes(nonce);
  writer.u32(static_cast<std::uint32_t>(aad.size()));
  writer.bytes(aad);
  writer.u32(static_cast<std::uint32_t>(text.size()));
  writer.bytes(text);
}

void encode_body(ByteWriter& writer, const GcmTagRequest& r) {
  check_gcm_algorithm(r.key.algorithm);
  check_hash_blocks(r.aad.size(), r.text.size());
  write_header(writer, MessageType::GcmTag, r.id);
  write_gcm_input(writer, r.key, r.nonce, r.aad, r.text);
}

void encode_body(ByteWriter& writer, const GcmOpenRequest& r) {
  check_gcm_algorithm(r.key.algorithm);
  check_hash_blocks(r.aad.size(), r.text.size());
  write_header(writer, MessageType::GcmOpen, r.id);
  write_gcm_input(writer, r.key, r.nonce, r.aad, r.text);
  writer.bytes(r.tag);
}

void encode_body(ByteWriter& writer, const KrbRequest& r) {
  check_krb_request(r);
  write_header(writer, MessageType::Krb, r.id);
  writer.u8(static_cast<std::uint8_t>(static_cast<std::uint8_t>(r.operation) | (r.combine ? kKrbCombineFlag : 0)));
  write_key_id(writer, r.key);
  writer.u32(r.usage);
  writer.u32(static_cast<std::uint32_t>(r.data.size()));
  writer.bytes(r.data);
  if (r.combine) {
    writer.u8(static_cast<std::uint8_t>(r.combine->combined));
    writer.short_string(r.combine->pepper);
    writer.bytes(r.combine->mask);
  }
}

ComputeRequest decode_compute(ByteReader& reader, const RequestId& id) {
  ComputeRequest r;
  r.id = id;
  r.operation = checked_operation(reader.u8());
  r.key = read_key_id(reader);
  check_compute_algorithm(r.key.algorithm);
  r.blocks = reader.u32();
  check_blocks(r.blocks);
  if (r.operation == Operation::CtrKeystream) {
    r.counter = reader.array<16>();
  } else {
    const std::size_t expected = static_cast<std::size_t>(r.blocks) * kBlockBytes;
    if (reader.remaining() != expected)
      fail("ECB input of " + std::to_string(reader.remaining()) + " bytes for " + std::to_string(r.blocks) +
           " blocks");
    const auto input = reader.bytes(expected);
    r.input.assign(input.begin(), input.end());
  }
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

GcmPrefetchRequest decode_gcm_prefetch(ByteReader& reader, const RequestId& id) {
  GcmPrefetchRequest r;
  r.id = id;
  r.key = read_key_id(reader);
  check_gcm_algorithm(r.key.algorithm);
  r.count = reader.u32();
  r.blocks_per_nonce = reader.u32();
  check_prefetch(r.count, r.blocks_per_nonce);
  return r;
}

struct GcmInput {
  KeyId key;
  GcmNonce nonce{};
  std::vector<std::uint8_t> aad;
  std::vector<std::uint8_t> text;
};

GcmInput read_gcm_input(ByteReader& reader) {
  GcmInput in;
  in.key = read_key_id(reader);
  check_gcm_algorithm(in.key.algorithm);
  in.nonce = reader.array<kGcmNonceBytes>();
  const std::uint32_t aad_length = reader.u32();
  // Checked before reading so a huge length fails on the limit, not on the frame size.
  check_hash_blocks(aad_length, 0);
  const auto aad = reader.bytes(aad_length);
  in.aad.assign(aad.begin(), aad.end());
  const std::uint32_t text_length = reader.u32();
  check_hash_blocks(aad_length, text_length);
  const auto text = reader.bytes(text_length);
  in.text.assign(text.begin(), text.end());
  return in;
}

GcmTagRequest decode_gcm_tag(ByteReader& reader, const RequestId& id) {
  GcmInput in = read_gcm_input(reader);
  return GcmTagRequest{id, std::move(in.key), in.nonce, std::move(in.aad), std::move(in.text)};
}

GcmOpenRequest decode_gcm_open(ByteReader& reader, const RequestId& id) {
  GcmInput in = read_gcm_input(reader);
  GcmOpenRequest r{id, std::move(in.key), in.nonce, std::move(in.aad), std::move(in.text), {}};
  r.tag = reader.array<kGcmTagBytes>();
  return r;
}

KrbRequest decode_krb(ByteReader& reader, const RequestId& id) {
  KrbRequest r;
  r.id = id;
  const std::uint8_t operation = reader.u8();
  r.operation = checked_krb_operation(static_cast<std::uint8_t>(operation & ~kKrbCombineFlag));
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
  check_krb_request(r);
  return r;
}

ComputeResult decode_compute_result(ByteReader& reader) {
  ComputeResult result;
  result.blocks = reader.u32();
  check_blocks(result.blocks);
  const std::size_t share_bytes = static_cast<std::size_t>(result.blocks) * kBlockBytes;
  // Two-server clusters send only x, their XOR share.
  if (reader.remaining() != 2 * share_bytes && reader.remaining() != share_bytes)
    fail("compute result of " + std::to_string(reader.remaining()) + " bytes for " + std::to_string(result.blocks) +
         " blocks");
  const auto x = reader.bytes(share_bytes);
  result.x.assign(x.begin(), x.end());
  if (reader.remaining() != 0) {
    const auto a = reader.bytes(share_bytes);
    result.a.assign(a.begin(), a.end());
  }
  return result;
}

KeyList decode_key_list(ByteReader& reader) {
  KeyList list;
  const std::uint32_t count = reader.u32();
  if (count > reader.remaining() / (kMinKeyIdBytes + 8))
    fail("key list of " + std::to_string(count) + " entries does not fit in " + std::to_string(reader.remaining()) +
         " bytes");
  list.keys.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    KeyInfo info;
    info.key = read_key_id(reader);
    info.created_unix = reader.u64();
    list.keys.push_back(std::move(info));
  }
  return list;
}

GcmPrefetchResult decode_gcm_prefetch_result(ByteReader& reader) {
  GcmPrefetchResult result;
  result.count = reader.u32();
  result.blocks_per_nonce = reader.u32();
  check_prefetch(result.count, result.blocks_per_nonce);
  const std::size_t nonce_bytes = static_cast<std::size_t>(result.count) * kGcmNonceBytes;
  const std::size_t share_bytes =
      static_cast<std::size_t>(result.count) * result.blocks_per_nonce * kBlockBytes;
  // Two-server clusters send only x, their XOR share.
  if (reader.remaining() != nonce_bytes + 2 * share_bytes && reader.remaining() != nonce_bytes + share_bytes)
    fail("GCM prefetch result of " + std::to_string(reader.remaining()) + " bytes for " +
         std::to_string(result.count) + " nonces of " + std::to_string(result.blocks_per_nonce) + " blocks");
  const auto nonces = reader.bytes(nonce_bytes);
  const auto x = reader.bytes(share_bytes);
  result.nonces.assign(nonces.begin(), nonces.end());
  result.x.assign(x.begin(), x.end());
  if (reader.remaining() != 0) {
    const auto a = reader.bytes(share_bytes);
    result.a.assign(a.begin(), a.end());
  }
  return result;
}

GcmTagResult decode_gcm_tag_result(ByteReader& reader) {
  GcmTagResult result;
  result.x = reader.array<kGcmTagBytes>();
  result.replicated = reader.remaining() != 0;  // two-server clusters send x alone
  if (result.replicated) result.a = reader.array<kGcmTagBytes>();
  return result;
}

void check_open_blocks(std::uint32_t blocks) {
  if (blocks > kMaxGcmOpenBlocks)
    fail("GCM open result of " + std::to_string(blocks) + " blocks exceeds " + std::to_string(kMaxGcmOpenBlocks));
}

GcmOpenResult decode_gcm_open_result(ByteReader& reader) {
  GcmOpenResult result;
  result.blocks = reader.u32();
  check_open_blocks(result.blocks);
  const std::size_t share_bytes = static_cast<std::size_t>(result.blocks) * kBlockBytes;
  // Two-server clusters send x and verdict x alone, their XOR shares.
  result.replicated = reader.remaining() == 2 * share_bytes + 2;
  if (!result.replicated && reader.remaining() != share_bytes + 1)
    fail("GCM open result of " + std::to_string(reader.remaining()) + " bytes for " + std::to_string(result.blocks) +
         " blocks");
  const auto x = reader.bytes(share_bytes);
  result.x.assign(x.begin(), x.end());
  if (result.replicated) {
    const auto a = reader.bytes(share_bytes);
    result.a.assign(a.begin(), a.end());
  }
  result.verdict_x = reader.u8();
  if (result.replicated) result.verdict_a = reader.u8();
  check_verdict_share(result.verdict_x);
  check_verdict_share(result.verdict_a);
  return result;
}

KrbResult decode_krb_result(ByteReader& reader) {
  const std::uint32_t length = reader.u32();
  check_krb_result_length(length);
  // Two-server clusters send only x, their XOR share.
  if (reader.remaining() != 2 * static_cast<std::size_t>(length) && reader.remaining() != length)
    fail("Kerberos result of " + std::to_string(reader.remaining()) + " share bytes for " + std::to_string(length) +
         " result bytes");
  KrbResult result;
  const auto x = reader.bytes(length);
  result.x.assign(x.begin(), x.end());
  if (reader.remaining() != 0) {
    const auto a = reader.bytes(length);
    result.a.assign(a.begin(), a.end());
  }
  return result;
}

ServerStatus decode_server_status(ByteReader& reader) {
  ServerStatus status;
  status.party = reader.u8();
  if (status.party > 2) fail("party " + std::to_string(status.party) + " outside 0..2");
  status.epoch = reader.u64();
  status.batches = reader.u64();
  status.jobs = reader.u64();
  status.stored_keys = reader.u32();
  status.payload_bytes_sent = reader.u64();
  status.layer_messages_sent = reader.u64();
  status.and_gates_evaluated = reader.u64();
  status.request_mismatches = reader.u64();
  return status;
}

void encode_reply_body(ByteWriter& writer, const ReplyBody& body) {
  std::visit(
      [&writer](const auto& b) {
        using T = std::decay_t<decltype(b)>;
        if constexpr (std::is_same_v<T, ComputeResult>) {
          check_blocks(b.blocks);
          const std::size_t share_bytes = static_cast<std::size_t>(b.blocks) * kBlockBytes;
          if (b.x.size() != share_bytes || (b.a.size() != share_bytes && !b.a.empty()))
            fail("compute result shares do not match " + std::to_string(b.blocks) + " blocks");
          writer.u32(b.blocks);
          writer.bytes(b.x);
          writer.bytes(b.a);
        } else if constexpr (std::is_same_v<T, KeyList>) {
          if (b.keys.size() > 0xffffffffu) fail("key list too long");
          writer.u32(static_cast<std::uint32_t>(b.keys.size()));
          for (const auto& info : b.keys) {
            write_key_id(writer, info.key);
            writer.u64(info.created_unix);
          }
        } else if constexpr (std::is_same_v<T, ServerStatus>) {
          if (b.party > 2) fail("party " + std::to_string(b.party) + " outside 0..2");
          writer.u8(b.party);
          writer.u64(b.epoch);
          writer.u64(b.batches);
          writer.u64(b.jobs);
          writer.u32(b.stored_keys);
          writer.u64(b.payload_bytes_sent);
          writer.u64(b.layer_messages_sent);
          writer.u64(b.and_gates_evaluated);
          writer.u64(b.request_mismatches);
        } else if constexpr (std::is_same_v<T, GcmPrefetchResult>) {
          check_prefetch(b.count, b.blocks_per_nonce);
          const std::size_t share_bytes = static_cast<std::size_t>(b.count) * b.blocks_per_nonce * kBlockBytes;
          if (b.nonces.size() != static_cast<std::size_t>(b.count) * kGcmNonceBytes)
            fail("GCM prefetch result nonces do not match " + std::to_string(b.count) + " nonces");
          if (b.x.size() != share_bytes || (b.a.size() != share_bytes && !b.a.empty()))
            fail("GCM prefetch result shares do not match " + std::to_string(b.count) + " nonces of " +
                 std::to_string(b.blocks_per_nonce) + " blocks");
          writer.u32(b.count);
          writer.u32(b.blocks_per_nonce);
          writer.bytes(b.nonces);
          writer.bytes(b.x);
          writer.bytes(b.a);
        } else if constexpr (std::is_same_v<T, GcmTagResult>) {
          writer.bytes(b.x);
          if (b.replicated) writer.bytes(b.a);
        } else if constexpr (std::is_same_v<T, GcmOpenResult>) {
          check_open_blocks(b.blocks);
          const std::size_t share_bytes = static_cast<std::size_t>(b.blocks) * kBlockBytes;
          if (b.x.size() != share_bytes || b.a.size() != (b.replicated ? share_bytes : 0))
            fail("GCM open result shares do not match " + std::to_string(b.blocks) + " blocks");
          check_verdict_share(b.verdict_x);
          check_verdict_share(b.verdict_a);
          writer.u32(b.blocks);
          writer.bytes(b.x);
          writer.bytes(b.a);
          writer.u8(b.verdict_x);
          if (b.replicated) writer.u8(b.verdict_a);
        } else if constexpr (std::is_same_v<T, KrbResult>) {
          check_krb_result_length(b.x.size());
          if (b.a.size() != b.x.size() && !b.a.empty())
            fail("Kerberos result shares of " + std::to_string(b.x.size()) + " and " + std::to_string(b.a.size()) +
                 " bytes");
          writer.u32(static_cast<std::uint32_t>(b.x.size()));
          writer.bytes(b.x);
          writer.bytes(b.a);
        }
      },
      body);
}

}  // namespace

std::size_t gcm_hash_blocks(std::size_t aad_bytes, std::size_t text_bytes) noexcept {
  // Each term is at most SIZE_MAX / 16 + 1, so the sum cannot overflow.
  return padded_blocks(aad_bytes) + padded_blocks(text_bytes) + 1;
}

bool krb_usage_allows(KrbOperation operation, std::uint32_t usage) noexcept {
  switch (usage) {
    case 1: return operation == KrbOperation::Decrypt;
    case 2: return operation == KrbOperation::Encrypt || operation == KrbOperation::Decrypt;
    case 3: return operation == KrbOperation::Encrypt;
    case 17:
    case 56: return operation == KrbOperation::Checksum;
    default: return false;
  }
}

std::optional<std::string> krb_combine_refusal(KrbOperation operation, std::uint32_t usage, const KrbCombine& combine) {
  if (!is_krb_algorithm(combine.combined))
    return std::string("KRB-FX-CF2 with a first key of algorithm ") + algorithm_name(combine.combined);
  if (combine.mask.size() != key_bytes(combine.combined))
    return "KRB-FX-CF2 mask of " + std::to_string(combine.mask.size()) + " bytes for a " +
           algorithm_name(combine.combined) + " key of " + std::to_string(key_bytes(combine.combined));
  struct Use {
    const char* pepper;
    KrbOperation operation;
    std::uint32_t usage;
  };
  // krb5kdc 1.20.1: the encrypted challenge (kdc_preauth_ec.c) and the FAST reply key
  // (fast_util.c, kdc_util.c). Anything else would let a KDC make what only a client makes
  // (its encrypted challenge, usage 54) or read what only a client reads.
  static constexpr Use kUses[] = {{"challengelongterm", KrbOperation::Decrypt, 54},
                                  {"challengelongterm", KrbOperation::Encrypt, 55},
                                  {"replykey", KrbOperation::Encrypt, 3},
                                  {"replykey", KrbOperation::Checksum, 56}};
  for (const Use& use : kUses)
    if (combine.pepper == use.pepper && operation == use.operation && usage == use.usage) return std::nullopt;
  return std::string("Kerberos ") + krb_operation_name(operation) + " under KRB-FX-CF2 with pepper \"" +
         combine.pepper + "\" and usage " + std::to_string(usage) +
         " refused: only the encrypted challenge (\"challengelongterm\": decrypt 54, encrypt 55) and the FAST "
         "reply key (\"replykey\": encrypt 3, checksum 56) are served";
}

KeyAlgorithm krb_job_algorithm(const KrbRequest& request) noexcept {
  return request.combine ? request.combine->combined : request.key.algorithm;
}

std::size_t krb_result_bytes(KrbOperation operation, KeyAlgorithm algorithm, std::size_t data_bytes) {
  const char* name = krb_operation_name(operation);
  check_krb_algorithm(algorithm);
  const std::size_t mac_bytes = krb_mac_bytes(algorithm);
  if (data_bytes > kKrbMaxDataBytes)
    fail(std::string("Kerberos ") + name + " of " + std::to_string(data_bytes) + " bytes exceeds " +
         std::to_string(kKrbMaxDataBytes));
  switch (operation) {
    case KrbOperation::Encrypt:
      if (data_bytes < kKrbConfounderBytes)
        fail("Kerberos encrypt of " + std::to_string(data_bytes) + " bytes, shorter than the " +
             std::to_string(kKrbConfounderBytes) + "-byte confounder");
      return data_bytes + mac_bytes;
    case KrbOperation::Decrypt:
      if (data_bytes < kKrbConfounderBytes + mac_bytes)
        fail("Kerberos decrypt of " + std::to_string(data_bytes) + " bytes, shorter than confounder and MAC (" +
             std::to_string(kKrbConfounderBytes + mac_bytes) + ")");
      return data_bytes - mac_bytes + 1;
    case KrbOperation::Checksum: return mac_bytes;
  }
  fail("unknown Kerberos operation " + std::to_string(static_cast<unsigned>(operation)));
}

std::size_t krb_result_bytes(KrbOperation operation, std::size_t data_bytes) {
  return krb_result_bytes(operation, KeyAlgorithm::Aes128CtsHmacSha1, data_bytes);
}

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
    case static_cast<std::uint8_t>(MessageType::GcmPrefetch): request = decode_gcm_prefetch(reader, id); break;
    case static_cast<std::uint8_t>(MessageType::GcmTag): request = decode_gcm_tag(reader, id); break;
    case static_cast<std::uint8_t>(MessageType::GcmOpen): request = decode_gcm_open(reader, id); break;
    case static_cast<std::uint8_t>(MessageType::Krb): request = decode_krb(reader, id); break;
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

const RequestId& request_id(const Request& request) {
  return std::visit([](const auto& r) -> const RequestId& { return r.id; }, request);
}

const char* status_name(Status status) {
  switch (status) {
    case Status::Ok: return "ok";
    case Status::BadRequest: return "bad_request";
    case Status::UnknownKey: return "unknown_key";
    case Status::TooLarge: return "too_large";
    case Status::Busy: return "busy";
    case Status::PeerFailure: return "peer_failure";
    case Status::Unauthorized: return "unauthorized";
    case Status::KeyExists: return "key_exists";
    case Status::Internal: return "internal";
    case Status::NotReady: return "not_ready";
    case Status::UnknownNonce: return "unknown_nonce";
    case Status::RequestMismatch: return "request_mismatch";
  }
  return "unknown";
}

// The body is written only when status == Ok (a failed reply carries none, whatever
// `reply.body` holds); an Ok reply must have an empty error string.
std::vector<std::uint8_t> encode_reply(const Reply& reply) {
  checked_status(static_cast<std::uint16_t>(reply.status));
  if (reply.error.size() > kMaxErrorBytes)
    fail("error string of " + std::to_string(reply.error.size()) + " bytes exceeds " + std::to_string(kMaxErrorBytes));
  if (reply.status == Status::Ok && !reply.error.empty()) fail("Ok reply with an error string");
  std::vector<std::uint8_t> out;
  ByteWriter writer(out);
  write_header(writer, MessageType::Reply, reply.id);
  writer.u16(static_cast<std::uint16_t>(reply.status));
  writer.short_string(reply.error);
  if (reply.status == Status::Ok) encode_reply_body(writer, reply.body);
  return out;
}

Reply decode_reply(std::span<const std::uint8_t> frame, MessageType request_type) {
  switch (request_type) {
    case MessageType::Compute:
    case MessageType::ImportKey:
    case MessageType::ListKeys:
    case MessageType::DeleteKey:
    case MessageType::Status:
    case MessageType::GcmPrefetch:
    case MessageType::GcmTag:
    case MessageType::GcmOpen:
    case MessageType::Krb: break;
    default: fail("no reply is defined for message type " + std::to_string(static_cast<unsigned>(request_type)));
  }
  ByteReader reader(frame, Component::Wire);
  const std::uint8_t version = reader.u8();
  if (version != kProtocolVersion) fail("unsupported protocol version " + std::to_string(version));
  const std::uint8_t type = reader.u8();
  if (type != static_cast<std::uint8_t>(MessageType::Reply)) fail("expected a reply, got type " + std::to_string(type));
  Reply reply;
  reply.id = reader.array<16>();
  reply.status = checked_status(reader.u16());
  reply.error = reader.short_string(kMaxErrorBytes);
  if (reply.status == Status::Ok) {
    if (!reply.error.empty()) fail("Ok reply with an error string");
    switch (request_type) {
      case MessageType::Compute: reply.body = decode_compute_result(reader); break;
      case MessageType::ListKeys: reply.body = decode_key_list(reader); break;
      case MessageType::Status: reply.body = decode_server_status(reader); break;
      case MessageType::GcmPrefetch: reply.body = decode_gcm_prefetch_result(reader); break;
      case MessageType::GcmTag: reply.body = decode_gcm_tag_result(reader); break;
      case MessageType::GcmOpen: reply.body = decode_gcm_open_result(reader); break;
      case MessageType::Krb: reply.body = decode_krb_result(reader); break;
      default: break;  // ImportKey, DeleteKey: no body
    }
  }
  reader.expect_end();
  return reply;
}

}  // namespace mpc::wire
