// mpc-engine/wire/client_replies.cpp: server -> client reply frames (see client_messages.hpp
// for the layout).
#include <type_traits>

#include "common/error.hpp"
#include "wire/client_checks.hpp"
#include "wire/client_messages.hpp"
#include "wire/codec.hpp"

namespace mpc::wire {
namespace {

using detail::check_blocks;
using detail::check_prefetch;
using detail::fail;
using detail::write_header;

Status checked_status(std::uint16_t value) {
  if (value > static_cast<std::uint16_t>(kLastStatus)) fail("unknown status " + std::to_string(value));
  return static_cast<Status>(value);
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

void check_verdict_share(std::uint8_t share) {
  if ((share & 0xfe) != 0) fail("verdict share byte " + std::to_string(share) + " has bits beyond bit 0");
}

// The top bit of a Compute reply's block count: outputs padded for the client follow.
constexpr std::uint32_t kPaddedResultFlag = 0x80000000u;

std::size_t padded_report_bytes(std::uint32_t blocks, std::uint32_t part_blocks) {
  if (part_blocks == 0 || part_blocks > blocks)
    fail("padded compute result in parts of " + std::to_string(part_blocks) + " blocks for " + std::to_string(blocks));
  return ((static_cast<std::size_t>(blocks) + part_blocks - 1) / part_blocks) * kPaddedPartReportBytes;
}

ComputeResult decode_compute_result(ByteReader& reader) {
  ComputeResult result;
  const std::uint32_t word = reader.u32();
  result.blocks = word & ~kPaddedResultFlag;
  check_blocks(result.blocks);
  const std::size_t share_bytes = static_cast<std::size_t>(result.blocks) * kBlockBytes;
  if ((word & kPaddedResultFlag) != 0) {
    PaddedReports padded;
    padded.part_blocks = reader.u32();
    const std::size_t report_bytes = padded_report_bytes(result.blocks, padded.part_blocks);
    if (reader.remaining() != share_bytes + report_bytes)
      fail("padded compute result of " + std::to_string(reader.remaining()) + " bytes for " +
           std::to_string(result.blocks) + " blocks");
    const auto x = reader.bytes(share_bytes);
    result.x.assign(x.begin(), x.end());
    const auto reports = reader.bytes(report_bytes);
    padded.reports.assign(reports.begin(), reports.end());
    result.padded = std::move(padded);
    return result;
  }
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
  const std::uint32_t word = reader.u32();
  result.blocks_per_nonce = word & ~kPaddedResultFlag;
  check_prefetch(result.count, result.blocks_per_nonce);
  const std::size_t nonce_bytes = static_cast<std::size_t>(result.count) * kGcmNonceBytes;
  const std::size_t share_bytes =
      static_cast<std::size_t>(result.count) * result.blocks_per_nonce * kBlockBytes;
  if ((word & kPaddedResultFlag) != 0) {
    PaddedReports padded;
    padded.part_blocks = reader.u32();
    const auto keystream_blocks = static_cast<std::uint32_t>(share_bytes / kBlockBytes);
    const std::size_t report_bytes = keystream_blocks == 0 && padded.part_blocks == 0
                                         ? 0
                                         : padded_report_bytes(keystream_blocks, padded.part_blocks);
    if (reader.remaining() != nonce_bytes + share_bytes + report_bytes)
      fail("padded GCM prefetch result of " + std::to_string(reader.remaining()) + " bytes for " +
           std::to_string(result.count) + " nonces of " + std::to_string(result.blocks_per_nonce) + " blocks");
    const auto nonces = reader.bytes(nonce_bytes);
    const auto x = reader.bytes(share_bytes);
    const auto reports = reader.bytes(report_bytes);
    result.nonces.assign(nonces.begin(), nonces.end());
    result.x.assign(x.begin(), x.end());
    padded.reports.assign(reports.begin(), reports.end());
    result.replicated = false;
    result.padded = std::move(padded);
    return result;
  }
  // Two servers send only x, their XOR share, and with no keystream a form byte.
  const std::size_t remaining = reader.remaining();
  const bool with_form_byte = share_bytes == 0 && remaining == nonce_bytes + 1;
  result.replicated = remaining == nonce_bytes + 2 * share_bytes;
  if (!result.replicated && !with_form_byte && !(share_bytes != 0 && remaining == nonce_bytes + share_bytes))
    fail("GCM prefetch result of " + std::to_string(remaining) + " bytes for " + std::to_string(result.count) +
         " nonces of " + std::to_string(result.blocks_per_nonce) + " blocks");
  const auto nonces = reader.bytes(nonce_bytes);
  const auto x = reader.bytes(share_bytes);
  result.nonces.assign(nonces.begin(), nonces.end());
  result.x.assign(x.begin(), x.end());
  if (result.replicated) {
    const auto a = reader.bytes(share_bytes);
    result.a.assign(a.begin(), a.end());
  } else if (with_form_byte && reader.u8() != 1) {
    fail("GCM prefetch result with an unknown form byte");
  }
  return result;
}

GcmTagResult decode_gcm_tag_result(ByteReader& reader, bool with_parts) {
  GcmTagResult result;
  result.x = reader.array<kGcmTagBytes>();
  result.replicated = reader.remaining() != 0;  // two-server clusters send x alone
  if (result.replicated) result.a = reader.array<kGcmTagBytes>();
  if (!with_parts) return result;
  if (!result.replicated) fail("a GCM tag result with parts from a two-server cluster");
  const std::uint8_t parts = reader.u8();
  if (parts == 0 || (parts & ~3u) != 0) fail("GCM tag result parts " + std::to_string(parts));
  if (parts & 1) result.chained = reader.array<kGcmTagBytes>();
  if (parts & 2) result.check = reader.array<kGcmTagBytes>();
  return result;
}

void check_open_blocks(std::uint32_t blocks) {
  if (blocks > kMaxGcmOpenBlocks)
    fail("GCM open result of " + std::to_string(blocks) + " blocks exceeds " + std::to_string(kMaxGcmOpenBlocks));
}

GcmOpenResult decode_gcm_open_result(ByteReader& reader) {
  GcmOpenResult result;
  const std::uint32_t word = reader.u32();
  result.blocks = word & ~kPaddedResultFlag;
  check_open_blocks(result.blocks);
  const std::size_t share_bytes = static_cast<std::size_t>(result.blocks) * kBlockBytes;
  if ((word & kPaddedResultFlag) != 0) {
    if (reader.remaining() != share_bytes + 1 + kPaddedPartReportBytes)
      fail("padded GCM open result of " + std::to_string(reader.remaining()) + " bytes for " +
           std::to_string(result.blocks) + " blocks");
    const auto x = reader.bytes(share_bytes);
    result.x.assign(x.begin(), x.end());
    result.verdict_x = reader.u8();
    result.replicated = false;
    result.padded_report = reader.array<kPaddedPartReportBytes>();
    return result;
  }
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

GcmReopenResult decode_gcm_reopen_result(ByteReader& reader) {
  GcmReopenResult result;
  result.blocks = reader.u32();
  check_open_blocks(result.blocks);
  const std::size_t share_bytes = static_cast<std::size_t>(result.blocks) * kBlockBytes;
  // An XOR share ends in a form byte, so the two forms differ in length even with no text.
  result.replicated = reader.remaining() != share_bytes + kGcmTagBytes + 1;
  if (result.replicated && reader.remaining() != 2 * share_bytes + kGcmTagBytes)
    fail("GCM reopen result of " + std::to_string(reader.remaining()) + " bytes for " +
         std::to_string(result.blocks) + " blocks");
  const auto x = reader.bytes(share_bytes);
  result.x.assign(x.begin(), x.end());
  if (result.replicated) {
    const auto a = reader.bytes(share_bytes);
    result.a.assign(a.begin(), a.end());
  }
  result.check = reader.array<kGcmTagBytes>();
  if (!result.replicated && reader.u8() != 1) fail("GCM reopen result with an unknown form byte");
  return result;
}

KrbResult decode_krb_result(ByteReader& reader) {
  const std::uint32_t word = reader.u32();
  const std::uint32_t length = word & ~kPaddedResultFlag;
  check_krb_result_length(length);
  if ((word & kPaddedResultFlag) != 0) {
    if (reader.remaining() != static_cast<std::size_t>(length) + kPaddedPartReportBytes)
      fail("padded Kerberos result of " + std::to_string(reader.remaining()) + " bytes for " + std::to_string(length) +
           " result bytes");
    KrbResult result;
    const auto x = reader.bytes(length);
    result.x.assign(x.begin(), x.end());
    result.padded_report = reader.array<kPaddedPartReportBytes>();
    return result;
  }
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
  const std::uint8_t mode = reader.u8();
  if (mode > static_cast<std::uint8_t>(ClusterMode::TwoParty)) fail("unknown cluster mode " + std::to_string(mode));
  status.mode = static_cast<ClusterMode>(mode);
  status.missing_party = reader.u8();
  if (!missing_fits_mode(status.mode, status.missing_party))
    fail("missing party " + std::to_string(status.missing_party) + " does not go with the cluster mode");
  status.mode_since_unix_ms = reader.u64();
  status.mode_switches = reader.u64();
  status.verification_failures = reader.u64();
  status.excluded_party = reader.u8();
  if (status.excluded_party > 2 && status.excluded_party != kNoParty)
    fail("excluded party " + std::to_string(status.excluded_party) + " outside 0..2");
  status.excluded_since_unix_ms = reader.u64();
  status.exclusion_reason = reader.short_string(kMaxExclusionReasonBytes);
  status.exclusions = reader.u64();
  status.distrusts = reader.u8();
  if ((status.distrusts & ~0x7u) != 0) fail("status distrusts a party beyond 3");
  const std::uint8_t suspended = reader.u8();
  if (suspended > 1) fail("status with a suspension flag of " + std::to_string(suspended));
  status.three_party_suspended = suspended == 1;
  status.failed_pairs = reader.u8();
  if ((status.failed_pairs & ~0x7u) != 0) fail("status with failed pairs beyond 3");
  status.dispute_reason = reader.short_string(kMaxExclusionReasonBytes);
  status.disputes = reader.u64();
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
          if (b.padded) {
            if (!b.a.empty()) fail("a padded compute result carries one share");
            if (b.padded->reports.size() != padded_report_bytes(b.blocks, b.padded->part_blocks))
              fail("padded compute result reports do not match " + std::to_string(b.blocks) + " blocks");
            writer.u32(b.blocks | kPaddedResultFlag);
            writer.u32(b.padded->part_blocks);
            writer.bytes(b.x);
            writer.bytes(b.padded->reports);
            return;
          }
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
          if (!missing_fits_mode(b.mode, b.missing_party))
            fail("missing party " + std::to_string(b.missing_party) + " does not go with the cluster mode");
          writer.u8(static_cast<std::uint8_t>(b.mode));
          writer.u8(b.missing_party);
          writer.u64(b.mode_since_unix_ms);
          writer.u64(b.mode_switches);
          writer.u64(b.verification_failures);
          if (b.excluded_party > 2 && b.excluded_party != kNoParty)
            fail("excluded party " + std::to_string(b.excluded_party) + " outside 0..2");
          if (b.exclusion_reason.size() > kMaxExclusionReasonBytes) fail("exclusion reason too long");
          writer.u8(b.excluded_party);
          writer.u64(b.excluded_since_unix_ms);
          writer.short_string(b.exclusion_reason);
          writer.u64(b.exclusions);
          if ((b.distrusts & ~0x7u) != 0) fail("status distrusts a party beyond 3");
          if (b.dispute_reason.size() > kMaxExclusionReasonBytes) fail("dispute reason too long");
          writer.u8(b.distrusts);
          writer.u8(b.three_party_suspended ? 1 : 0);
          if ((b.failed_pairs & ~0x7u) != 0) fail("status with failed pairs beyond 3");
          writer.u8(b.failed_pairs);
          writer.short_string(b.dispute_reason);
          writer.u64(b.disputes);
        } else if constexpr (std::is_same_v<T, GcmPrefetchResult>) {
          check_prefetch(b.count, b.blocks_per_nonce);
          const std::size_t share_bytes = static_cast<std::size_t>(b.count) * b.blocks_per_nonce * kBlockBytes;
          if (b.nonces.size() != static_cast<std::size_t>(b.count) * kGcmNonceBytes)
            fail("GCM prefetch result nonces do not match " + std::to_string(b.count) + " nonces");
          if (b.x.size() != share_bytes || b.a.size() != (b.replicated ? share_bytes : 0))
            fail("GCM prefetch result shares do not match " + std::to_string(b.count) + " nonces of " +
                 std::to_string(b.blocks_per_nonce) + " blocks");
          if (b.padded) {
            if (b.replicated || !b.a.empty()) fail("a padded GCM prefetch result carries one share");
            const auto keystream_blocks = static_cast<std::uint32_t>(share_bytes / kBlockBytes);
            const std::size_t report_bytes = keystream_blocks == 0 && b.padded->part_blocks == 0
                                                 ? 0
                                                 : padded_report_bytes(keystream_blocks, b.padded->part_blocks);
            if (b.padded->reports.size() != report_bytes)
              fail("padded GCM prefetch result reports do not match its keystream");
            writer.u32(b.count);
            writer.u32(b.blocks_per_nonce | kPaddedResultFlag);
            writer.u32(b.padded->part_blocks);
            writer.bytes(b.nonces);
            writer.bytes(b.x);
            writer.bytes(b.padded->reports);
            return;
          }
          writer.u32(b.count);
          writer.u32(b.blocks_per_nonce);
          writer.bytes(b.nonces);
          writer.bytes(b.x);
          writer.bytes(b.a);
          if (!b.replicated && share_bytes == 0) writer.u8(1);
        } else if constexpr (std::is_same_v<T, GcmTagResult>) {
          writer.bytes(b.x);
          if (b.replicated) writer.bytes(b.a);
          if (b.chained || b.check) {
            if (!b.replicated) fail("a two-server GCM tag result carries no chained tag or check");
            writer.u8(static_cast<std::uint8_t>((b.chained ? 1 : 0) | (b.check ? 2 : 0)));
            if (b.chained) writer.bytes(*b.chained);
            if (b.check) writer.bytes(*b.check);
          }
        } else if constexpr (std::is_same_v<T, GcmOpenResult>) {
          check_open_blocks(b.blocks);
          const std::size_t share_bytes = static_cast<std::size_t>(b.blocks) * kBlockBytes;
          if (b.x.size() != share_bytes || b.a.size() != (b.replicated ? share_bytes : 0))
            fail("GCM open result shares do not match " + std::to_string(b.blocks) + " blocks");
          if (b.padded_report) {
            if (b.replicated) fail("a padded GCM open result carries one share");
            writer.u32(b.blocks | kPaddedResultFlag);
            writer.bytes(b.x);
            writer.u8(b.verdict_x);
            writer.bytes(*b.padded_report);
            return;
          }
          check_verdict_share(b.verdict_x);
          check_verdict_share(b.verdict_a);
          writer.u32(b.blocks);
          writer.bytes(b.x);
          writer.bytes(b.a);
          writer.u8(b.verdict_x);
          if (b.replicated) writer.u8(b.verdict_a);
        } else if constexpr (std::is_same_v<T, GcmReopenResult>) {
          check_open_blocks(b.blocks);
          const std::size_t share_bytes = static_cast<std::size_t>(b.blocks) * kBlockBytes;
          if (b.x.size() != share_bytes || b.a.size() != (b.replicated ? share_bytes : 0))
            fail("GCM reopen result shares do not match " + std::to_string(b.blocks) + " blocks");
          writer.u32(b.blocks);
          writer.bytes(b.x);
          writer.bytes(b.a);
          writer.bytes(b.check);
          if (!b.replicated) writer.u8(1);
        } else if constexpr (std::is_same_v<T, KrbResult>) {
          check_krb_result_length(b.x.size());
          if (b.a.size() != b.x.size() && !b.a.empty())
            fail("Kerberos result shares of " + std::to_string(b.x.size()) + " and " + std::to_string(b.a.size()) +
                 " bytes");
          if (b.padded_report) {
            if (!b.a.empty()) fail("a padded Kerberos result carries one share");
            writer.u32(static_cast<std::uint32_t>(b.x.size()) | kPaddedResultFlag);
            writer.bytes(b.x);
            writer.bytes(*b.padded_report);
            return;
          }
          writer.u32(static_cast<std::uint32_t>(b.x.size()));
          writer.bytes(b.x);
          writer.bytes(b.a);
        }
      },
      body);
}

}  // namespace

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
    case Status::VerificationFailed: return "verification_failed";
    case Status::Regrouping: return "regrouping";
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
    case MessageType::GcmPrefetchLocal:
    case MessageType::GcmTag:
    case MessageType::GcmTagParts:
    case MessageType::GcmOpen:
    case MessageType::GcmReopen:
    case MessageType::GenerateKey:
    case MessageType::Exclusion:
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
      case MessageType::GcmPrefetch:
      case MessageType::GcmPrefetchLocal: reply.body = decode_gcm_prefetch_result(reader); break;
      case MessageType::GcmTag: reply.body = decode_gcm_tag_result(reader, false); break;
      case MessageType::GcmTagParts: reply.body = decode_gcm_tag_result(reader, true); break;
      case MessageType::GcmOpen: reply.body = decode_gcm_open_result(reader); break;
      case MessageType::GcmReopen: reply.body = decode_gcm_reopen_result(reader); break;
      case MessageType::Krb: reply.body = decode_krb_result(reader); break;
      default: break;  // ImportKey, DeleteKey, GenerateKey, Exclusion: no body
    }
  }
  reader.expect_end();
  return reply;
}

}  // namespace mpc::wire
