// How a server names a client's request, and what each server says it holds of one.
#pragma once

#include <array>
#include <compare>
#include <cstddef>
#include <optional>
#include <string>

#include "wire/client_messages.hpp"
#include "wire/peer_messages.hpp"

namespace mpc::node {

// Requests are named by the authenticated client key and the client's request id, so one
// client can never refer to another client's request.
struct JobKey {
  wire::PublicKey client{};
  wire::RequestId request{};
  auto operator<=>(const JobKey&) const = default;
};

// For unordered containers of requests: SipHash (libsodium's crypto_shorthash) under a key
// drawn once per process, so a client cannot choose request ids that collide in a table.
struct JobKeyHash {
  std::size_t operator()(const JobKey& key) const noexcept;
};

// What one party said of a request: its copy's digest (status Ok) or why it refused it.
struct PartyWord {
  wire::RequestDigest digest{};
  wire::Status status = wire::Status::Ok;
  std::string detail;
};

// What a server knows of one request's copies, by party, its own included once it has it.
using CopyWords = std::array<std::optional<PartyWord>, 3>;

}  // namespace mpc::node
