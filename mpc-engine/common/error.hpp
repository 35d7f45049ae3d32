// Typed errors shared by every layer. Expected conditions (timeout, would-block)
// are returned as empty optionals by the layers; everything else throws one of these.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace mpc {

// Which component raised the error; printed in messages and logs.
enum class Component { Circuit, Protocol, Wire, Transport, Store, Settings, Server, Client, Tool };

const char* component_name(Component component) noexcept;

class Error : public std::runtime_error {
 public:
  Error(Component component, const std::string& message);
  Component component() const noexcept { return component_; }

 private:
  Component component_;
};

// Malformed input from a peer, a client or a file.
class FormatError : public Error {
 public:
  using Error::Error;
};

// A peer did not answer in time, went away, or aborted the computation.
class PeerError : public Error {
 public:
  using Error::Error;
};

// A peer's messages failed a check of active security: a deviating server, or a link that
// altered them. Nothing computed from them may leave.
class VerificationError : public PeerError {
 public:
  // `check` names the check that failed in a few fixed words (and_check, garbling_digest, ...;
  // "abort_notice" where a peer reported the failure), `peer` the 0-based party whose messages
  // failed it as the thrower sees them (the reporting peer for an abort notice), -1 when the
  // thrower cannot tell.
  VerificationError(Component component, const std::string& message, std::string check = "unnamed", int peer = -1)
      : PeerError(component, message), check_(std::move(check)), peer_(peer) {}
  const std::string& check() const noexcept { return check_; }
  int peer() const noexcept { return peer_; }

 private:
  std::string check_;
  int peer_;
};

// A failed check that shows which peers deviated: bit p of `claims` set when this party can hold
// party p to have deviated, each such claim a dispute with p (node/disputes.hpp). `concluded`:
// the check ran its messages to their end at every party, so no abort notice is due (one could
// overtake a last message to a peer still reading it and cut that peer's conclusion short).
class DeviationFound : public VerificationError {
 public:
  DeviationFound(Component component, const std::string& message, std::string check, int peer, std::uint8_t claims,
                 bool concluded)
      : VerificationError(component, message, std::move(check), peer), claims_(claims), concluded_(concluded) {}
  std::uint8_t claims() const noexcept { return claims_; }
  bool concluded() const noexcept { return concluded_; }

 private:
  std::uint8_t claims_;
  bool concluded_;
};

// A server refused the computation before anything was computed, for a reason that sending the
// request again under a new id avoids (wire::Status::Regrouping).
class RetryableError : public PeerError {
 public:
  using PeerError::PeerError;
};

}  // namespace mpc
