// libFuzzer target: reply frames as a client reads them, for every request type.
// Any accepted frame must re-encode to exactly the same bytes (the encoding is canonical).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

#include "common/error.hpp"
#include "wire/client_messages.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using mpc::wire::MessageType;
  const std::span<const std::uint8_t> frame(data, size);
  for (MessageType type : {MessageType::Compute, MessageType::ImportKey, MessageType::ListKeys,
                           MessageType::DeleteKey, MessageType::Status, MessageType::GcmPrefetch,
                           MessageType::GcmPrefetchLocal, MessageType::GcmTag, MessageType::GcmTagParts,
                           MessageType::GcmOpen, MessageType::GcmReopen, MessageType::Krb}) {
    mpc::wire::Reply reply;
    try {
      reply = mpc::wire::decode_reply(frame, type);
    } catch (const mpc::FormatError&) {
      continue;
    }
    if (reply.error.size() > 1024) std::abort();
    const std::vector<std::uint8_t> encoded = mpc::wire::encode_reply(reply);
    if (encoded.size() != size || std::memcmp(encoded.data(), data, size) != 0) std::abort();
  }
  return 0;
}
