// mpc-engine/wire/client_messages.cpp: client <-> server frames (see client_messages.hpp for the layout).
#include "wire/client_messages.hpp"

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
  if (value > static_cast<std::uint16_t>(Status::NotReady)) fail("unknown status " + std::to_string(value));
  return static_cast<Status>(value);
}

void check_blocks(std::uint32_t blocks) {
  if (blocks == 0 || blocks > kMaxRequestBlocks)
    fail("block count " + std::to_string(blocks) + " outside 1.." + std::to_string(kMaxRequestBlocks));
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
                                return encoded_key_id_bytes(r.key) + 4 + r.share.size();
                              else if constexpr (std::is_same_v<T, ListKeysRequest>)
                                return 2 + r.name_prefix.size();
                              else if constexpr (std::is_same_v<T, DeleteKeyRequest>)
                                return encoded_key_id_bytes(r.key);
                              else
                                return 0;
                            },
                            request);
}

void encode_body(ByteWriter& writer, const ComputeRequest& r) {
  checked_operation(static_cast<std::uint8_t>(r.operation));
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

void encode_body(ByteWriter& writer, const ImportKeyRequest& r) {
  const std::size_t expected = 2 * material_bytes(r.key.algorithm);
  if (r.share.size() != expected)
    fail("key share of " + std::to_string(r.share.size()) + " bytes, expected " + std::to_string(expected));
  write_header(writer, MessageType::ImportKey, r.id);
  write_key_id(writer, r.key);
  writer.u32(static_cast<std::uint32_t>(r.share.size()));
  writer.bytes(r.share.span());
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

ComputeRequest decode_compute(ByteReader& reader, const RequestId& id) {
  ComputeRequest r;
  r.id = id;
  r.operation = checked_operation(reader.u8());
  r.key = read_key_id(reader);
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
  const std::size_t expected = 2 * material_bytes(r.key.algorithm);
  if (length != expected)
    fail("key share of " + std::to_string(length) + " bytes, expected " + std::to_string(expected));
  r.share = SecretBytes(reader.bytes(length));
  return r;
}

ComputeResult decode_compute_result(ByteReader& reader) {
  ComputeResult result;
  result.blocks = reader.u32();
  check_blocks(result.blocks);
  const std::size_t share_bytes = static_cast<std::size_t>(result.blocks) * kBlockBytes;
  if (reader.remaining() < 2 * share_bytes)
    fail("compute result truncated: " + std::to_string(reader.remaining()) + " bytes for " +
         std::to_string(result.blocks) + " blocks");
  const auto x = reader.bytes(share_bytes);
  const auto a = reader.bytes(share_bytes);
  result.x.assign(x.begin(), x.end());
  result.a.assign(a.begin(), a.end());
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
  return status;
}

void encode_reply_body(ByteWriter& writer, const ReplyBody& body) {
  std::visit(
      [&writer](const auto& b) {
        using T = std::decay_t<decltype(b)>;
        if constexpr (std::is_same_v<T, ComputeResult>) {
          check_blocks(b.blocks);
          const std::size_t share_bytes = static_cast<std::size_t>(b.blocks) * kBlockBytes;
          if (b.x.size() != share_bytes || b.a.size() != share_bytes)
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
        }
      },
      body);
}

}  // namespace

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
    default: fail("unknown request type " + std::to_string(type));
  }
  reader.expect_end();
  return request;
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
    case MessageType::Status: break;
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
      default: break;  // ImportKey, DeleteKey: no body
    }
  }
  reader.expect_end();
  return reply;
}

}  // namespace mpc::wire
