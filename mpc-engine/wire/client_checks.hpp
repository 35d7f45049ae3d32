// What every client <-> server frame must satisfy, shared by the request and reply codecs
// (client_requests.cpp, client_replies.cpp) and the Kerberos job rules (client_checks.cpp).
// Internal to wire/; everything throws FormatError(Wire).
#pragma once

#include <cstdint>
#include <string>

#include "wire/client_messages.hpp"
#include "wire/codec.hpp"

namespace mpc::wire::detail {

[[noreturn]] void fail(const std::string& message);

void check_blocks(std::uint32_t blocks);
void check_prefetch(std::uint32_t count, std::uint32_t blocks_per_nonce);
// Krb requests serve only the Kerberos keys, whose material holds the derived keys.
void check_krb_algorithm(KeyAlgorithm algorithm);
const char* krb_operation_name(KrbOperation operation);

// Protocol version, message type and request id: every frame starts with them.
void write_header(ByteWriter& writer, MessageType type, const RequestId& id);

}  // namespace mpc::wire::detail
