// libFuzzer target: client request frames (untrusted input at every server).
// Any accepted frame must re-encode to exactly the same bytes (the encoding is canonical).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

#include "common/error.hpp"
#include "wire/client_messages.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> frame(data, size);
  mpc::wire::Request request;
  try {
    request = mpc::wire::decode_request(frame);
  } catch (const mpc::FormatError&) {
    return 0;
  }
  const auto& id = mpc::wire::request_id(request);
  if (size < 18 || std::memcmp(id.data(), data + 2, id.size()) != 0) std::abort();
  const std::vector<std::uint8_t> encoded = mpc::wire::encode_request(request);
  if (encoded.size() != size || std::memcmp(encoded.data(), data, size) != 0) std::abort();
  return 0;
}
