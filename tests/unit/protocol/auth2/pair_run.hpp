// Runs the two parties of an auth2 session on two threads over an in-memory channel and keeps
// what each returned or threw. A party that throws closes its channel, so that its peer fails
// at once instead of waiting for the timeout.
#pragma once

#include <chrono>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "common/error.hpp"
#include "protocol/auth2/auth_bits.hpp"

namespace mpc::test_support {

template <typename Result>
struct PartyOutcome {
  std::optional<Result> result;
  std::exception_ptr error;

  bool failed() const { return error != nullptr; }
  // The check a VerificationError named, "" for another error, "none" when it succeeded.
  std::string check() const {
    if (!error) return "none";
    try {
      std::rethrow_exception(error);
    } catch (const VerificationError& e) {
      return e.check();
    } catch (...) {
      return "";
    }
  }
};

template <typename Result>
struct PairOutcome {
  PartyOutcome<Result> first, second;
};

template <typename Result>
PairOutcome<Result> run_pair(const std::function<Result(auth2::Session&)>& first,
                             const std::function<Result(auth2::Session&)>& second,
                             const auth2::Deviation& first_deviates = {}, const auth2::Deviation& second_deviates = {}) {
  auto [a, b] = two_party::make_memory_channel_pair(std::chrono::milliseconds(3000));
  PairOutcome<Result> outcome;
  auto play = [](std::unique_ptr<two_party::Channel>& channel, auth2::Role role,
                 const std::function<Result(auth2::Session&)>& body, const auth2::Deviation& deviation,
                 PartyOutcome<Result>& out) {
    try {
      auth2::Session session(*channel, role);
      if (deviation) session.set_deviation(deviation);
      out.result = body(session);
    } catch (...) {
      out.error = std::current_exception();
      channel.reset();
    }
  };
  std::thread other([&] { play(b, auth2::Role::Second, second, second_deviates, outcome.second); });
  play(a, auth2::Role::First, first, first_deviates, outcome.first);
  other.join();
  return outcome;
}

}  // namespace mpc::test_support
