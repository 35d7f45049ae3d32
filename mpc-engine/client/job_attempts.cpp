// ClusterClient::serve_job: a job against a three-server cluster that may be serving with two
// servers (cluster_client.hpp).
#include <algorithm>
#include <array>
#include <exception>
#include <span>
#include <thread>

#include "client/cluster_client.hpp"
#include "client/cluster_links.hpp"
#include "transport/zmq_link.hpp"

namespace mpc::client {
namespace {

// Between attempts: the servers switch modes within a heartbeat or two.
constexpr std::chrono::milliseconds kRetryPause{20};
// After a busy answer: a login's largest job takes AND material the servers make over a good
// part of a second, so asking again at once would only be refused again.
constexpr std::chrono::milliseconds kBusyPause{100};
constexpr std::chrono::milliseconds kPollInterval{20};
// After a failed check of active security: the servers learn of the dispute within a heartbeat
// and serve without the deviating server, or in the suspended service's pair, after at most
// three such failures (node/disputes.hpp); each is sent again after two heartbeats.
constexpr int kVerificationRetries = 3;
constexpr std::chrono::milliseconds kAfterAbortPause{200};
// How long the others may take to answer once a server went away holding the request: the
// two that remain regroup (and answer Regrouping) well within it; a cluster that does not
// regroup may never answer the lost request, and the call then fails as it always did.
constexpr std::chrono::milliseconds kAfterLossGrace{1500};
// How long the others may take once one server answered Regrouping. A request that reached that
// server in one service and the others in the next is held by them until that server switches
// too and passes its refusal on (Node::pass_on_refusals); should that note be lost with a link,
// they would hold it past the timeout, so the request is sent again instead.
constexpr std::chrono::milliseconds kAfterRegroupingGrace{1500};

std::chrono::milliseconds send_grace(std::chrono::milliseconds timeout) {
  return std::min(std::chrono::milliseconds(500), timeout / 2);
}

enum class Copy { Unsent, Waiting, Answered, Failed };

}  // namespace

std::chrono::milliseconds ClusterClient::timeout_of(wire::MessageType type) const {
  // The jobs two servers garble (while a third server is down, or in a two-server cluster)
  // take the Kerberos jobs' time: a GCM prefetch of AES_K masks and a GCM open wait behind them.
  const bool garbled = type == wire::MessageType::Krb || type == wire::MessageType::GcmPrefetch ||
                       type == wire::MessageType::GcmOpen;
  return garbled ? std::max(settings_.timeout, settings_.krb_timeout) : settings_.timeout;
}

struct ClusterClient::Attempt {
  std::optional<Replies> replies;
  std::exception_ptr error;
  bool retry = false;
  int regrouping_party = -1;  // a server that answered Regrouping, or went away
  // An attempt the others refused for want of a copy this client never got out: should the
  // call run out of time on retries, its error names that server, not the others' refusal
  // ("no answer from server(s) N in time: server N (endpoint)").
  std::string unreached;
  int missing = -1;  // replies of a pair: the server it served without
  bool busy = false;  // a server answered busy
  bool peer_failure = false;  // a server answered that a peer failed the job's batch
  bool aborted = false;  // a server answered that a check of active security failed
};

Replies ClusterClient::serve_job(wire::MessageType type, const std::function<Frames(const wire::RequestId&)>& encode,
                                 bool service_bound, int* missing) {
  if (missing != nullptr) *missing = -1;
  // Set once this job has replies: a refusal before them (a regrouping race) is no deviation.
  served_without_ = kNotServed;
  const auto wipe_frames = [](Frames& frames) {
    for (auto& frame : frames) wipe(frame.data(), frame.size());
  };
  if (settings_.protocol != settings::Protocol::Rss3) {
    // Two servers answer regrouping when a restarted server 2 refuses the leader's GCM nonce
    // epoch (the leader takes a new one for the next prefetch): asked again until the timeout.
    // Busy is the caller's to handle: asked again at once, a job whose preprocessing is not
    // made yet takes a range further ahead, and a burst of such retries would outrun the pool.
    const auto deadline = std::chrono::steady_clock::now() + timeout_of(type);
    bool peer_failure_retried = false;
    for (;;) {
      const wire::RequestId id = fresh_request_id();
      Frames frames = encode(id);
      try {
        auto replies = round_trip(frames, id, type);
        wipe_frames(frames);
        served_without_ = -1;
        return replies;
      } catch (const ServerError& error) {
        wipe_frames(frames);
        const bool retry_peer_failure = error.status() == wire::Status::PeerFailure && !peer_failure_retried;
        if ((error.status() != wire::Status::Regrouping && !retry_peer_failure) || service_bound ||
            std::chrono::steady_clock::now() + kRetryPause >= deadline)
          throw;
        peer_failure_retried = peer_failure_retried || retry_peer_failure;
      } catch (...) {
        wipe_frames(frames);
        throw;
      }
      std::this_thread::sleep_for(kRetryPause);
    }
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout_of(type);
  bool peer_failure_retried = false;
  int aborts_retried = 0;
  for (;;) {
    const wire::RequestId id = fresh_request_id();
    Frames frames = encode(id);
    Attempt attempt;
    try {
      attempt = attempt_job(frames, id, type, deadline);
    } catch (...) {
      wipe_frames(frames);
      throw;
    }
    wipe_frames(frames);
    if (attempt.replies) {
      if (missing != nullptr) *missing = attempt.missing;
      served_without_ = attempt.missing;
      return std::move(*attempt.replies);
    }
    // A nonce is tagged once: a tag is never sent again. Asked while the servers regroup, its
    // nonce belongs to the service they leave (each keeps its own nonces): the caller learns
    // it as an unknown nonce, and prefetches a fresh one from the service they join.
    // A held nonce's reopen likewise needs the service it was tagged in: gcm_open then opens
    // in full instead.
    if (service_bound) {
      const bool tag = type == wire::MessageType::GcmTag || type == wire::MessageType::GcmTagParts;
      if (attempt.retry && !attempt.busy && !attempt.peer_failure && !attempt.aborted)
        throw ServerError(std::max(attempt.regrouping_party, 0), wire::Status::UnknownNonce,
                          "a server went away or the servers regrouped while the request was answered; its "
                          "nonce is not served any more: " +
                              std::string(tag ? "prefetch a fresh one" : "open the ticket in full"));
      std::rethrow_exception(attempt.error);
    }
    if (attempt.peer_failure) {
      if (peer_failure_retried) std::rethrow_exception(attempt.error);
      peer_failure_retried = true;
    }
    if (attempt.aborted && ++aborts_retried > kVerificationRetries) std::rethrow_exception(attempt.error);
    if (!attempt.retry) std::rethrow_exception(attempt.error);
    const auto pause = attempt.busy ? kBusyPause : attempt.aborted ? kAfterAbortPause : kRetryPause;
    if (std::chrono::steady_clock::now() + pause >= deadline) {
      if (!attempt.unreached.empty())
        throw Error(Component::Client, attempt.unreached + " could not be reached from this client");
      std::rethrow_exception(attempt.error);
    }
    std::this_thread::sleep_for(pause);
  }
}

ClusterClient::Attempt ClusterClient::attempt_job(const Frames& frames, const wire::RequestId& id,
                                                  wire::MessageType type,
                                                  std::chrono::steady_clock::time_point deadline) {
  Links& link = links();
  constexpr std::size_t kServers = 3;
  const auto send_deadline = std::chrono::steady_clock::now() + send_grace(settings_.timeout);
  std::array<Copy, kServers> copies{};
  std::array<std::optional<wire::Reply>, kServers> replies;
  std::array<ServerChannel::Carrier, kServers> carriers{};  // of each copy sent
  std::array<bool, kServers> sent{};
  std::array<bool, kServers> unreachable{};
  std::exception_ptr first_failure;
  bool regrouping = false;
  int regrouping_party = -1;
  std::optional<std::chrono::steady_clock::time_point> lost_at;  // a session lost while it held the request
  std::optional<std::chrono::steady_clock::time_point> regrouping_at;  // the first Regrouping answer
  const auto fail = [&](std::size_t party, bool gone, const std::string& why) {
    copies[party] = Copy::Failed;
    unreachable[party] = gone;
    if (!first_failure) first_failure = std::make_exception_ptr(Error(Component::Client, why));
  };
  const auto server = [&](std::size_t party) {
    return "server " + std::to_string(party + 1) + " (" + settings_.servers[party].endpoint + ")";
  };
  const bool small_answer = type != wire::MessageType::Compute;
  for (std::size_t party = 0; party < kServers; ++party) link.connections[party]->prepare(small_answer, send_deadline);
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    for (std::size_t party = 0; party < kServers; ++party) {
      if (copies[party] == Copy::Unsent) {
        if (const auto carrier = link.connections[party]->send(frames[party], small_answer, send_deadline)) {
          copies[party] = Copy::Waiting;
          carriers[party] = *carrier;
          sent[party] = true;
        } else if (now >= send_deadline) {
          fail(party, true, server(party) + " is unreachable");
        }
      } else if (copies[party] == Copy::Waiting && link.connections[party]->last_request_lost()) {
        fail(party, true, server(party) + " is unreachable: it went away before answering, and the request with it");
        if (!lost_at) lost_at = now;
      }
    }
    if (lost_at && now - *lost_at >= kAfterLossGrace)
      return {std::nullopt, first_failure, false, -1};
    if (regrouping && !regrouping_at) regrouping_at = now;
    // The servers this attempt never reached, for an error should the call run out of time.
    const auto unreached_servers = [&] {
      std::string numbers, names;
      for (std::size_t party = 0; party < kServers; ++party)
        if (!sent[party]) {
          numbers += (numbers.empty() ? "" : ", ") + std::to_string(party + 1);
          names += (names.empty() ? "" : " and ") + server(party);
        }
      return names.empty() ? names : "no answer from server(s) " + numbers + " in time: " + names;
    };
    if (regrouping_at && now - *regrouping_at >= kAfterRegroupingGrace)
      return {std::nullopt, first_failure, true, regrouping_party, unreached_servers()};
    const auto gone = static_cast<std::size_t>(std::count(unreachable.begin(), unreachable.end(), true));
    if (gone >= 2) {
      std::string names;
      for (std::size_t party = 0; party < kServers; ++party)
        if (unreachable[party]) names += (names.empty() ? "" : " and ") + std::to_string(party + 1);
      return {std::nullopt,
              std::make_exception_ptr(Error(Component::Client, "servers " + names +
                                                                   " are unreachable: no two servers can serve")),
              false, -1};
    }
    std::vector<std::size_t> xor_answers;
    std::size_t replicated_answers = 0;
    std::size_t pending = 0;
    for (std::size_t party = 0; party < kServers; ++party) {
      if (copies[party] == Copy::Unsent || copies[party] == Copy::Waiting) ++pending;
      if (copies[party] != Copy::Answered) continue;
      if (xor_form(*replies[party])) xor_answers.push_back(party);
      else ++replicated_answers;
    }
    if (replicated_answers == kServers) {
      Replies out;
      for (auto& reply : replies) out.push_back(std::move(*reply));
      return {std::move(out), nullptr, false, -1};
    }
    if (xor_answers.size() >= 2) {
      // In the pair's order: its leader serves as the two-party engine's first party.
      const int without = 3 - static_cast<int>(xor_answers[0] + xor_answers[1]);
      if (static_cast<int>(xor_answers[0]) != (without + 1) % 3) std::swap(xor_answers[0], xor_answers[1]);
      Replies out;
      for (std::size_t i = 0; i < 2; ++i) out.push_back(std::move(*replies[xor_answers[i]]));
      Attempt served{std::move(out), nullptr, false, -1};
      served.missing = without;
      return served;
    }
    const bool three_possible = xor_answers.empty() && replicated_answers + pending == kServers;
    const bool two_possible = xor_answers.size() + pending >= 2;
    // One server gone with no word from the others yet is worth another try too: they are
    // about to regroup, or say why not.
    if (!three_possible && !two_possible) {
      if (regrouping_party < 0 && gone == 1)
        regrouping_party = static_cast<int>(std::find(unreachable.begin(), unreachable.end(), true) - unreachable.begin());
      if (!first_failure)
        first_failure = std::make_exception_ptr(
            Disagreement("the servers answered in different forms (three-party and two-party): result refused"));
      return {std::nullopt, first_failure, regrouping || gone == 1, regrouping_party, unreached_servers()};
    }
    if (now >= deadline) {
      // A copy never sent names the server this client cannot reach (the others may have been
      // refusing the request for want of it until the timeout).
      std::string silent, unreached;
      for (std::size_t party = 0; party < kServers; ++party) {
        if (copies[party] == Copy::Unsent) unreached += (unreached.empty() ? "" : " and ") + server(party);
        if (copies[party] == Copy::Unsent || copies[party] == Copy::Waiting)
          silent += (silent.empty() ? "" : ", ") + std::to_string(party + 1);
      }
      const std::string why = "no answer from server(s) " + silent + " in time" +
                              (unreached.empty() ? "" : ": " + unreached + " could not be reached from this client");
      return {std::nullopt, std::make_exception_ptr(Error(Component::Client, why)), false, -1};
    }
    const bool sending = std::find(copies.begin(), copies.end(), Copy::Unsent) != copies.end();
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    const auto wait = std::max(std::chrono::milliseconds(0),
                               std::min(left, sending ? std::chrono::milliseconds(2) : kPollInterval));
    // Only the carriers of copies still unanswered: with every copy on a data link, the wait is
    // one poll(2) of three sockets, without ZeroMQ.
    std::array<void*, kServers> sockets{};
    std::array<int, kServers> descriptors{};
    std::array<std::size_t, 2 * kServers> waiting_on{};  // the party of each socket, then of each descriptor
    std::size_t socket_count = 0, descriptor_count = 0;
    for (std::size_t party = 0; party < kServers; ++party)
      if (copies[party] == Copy::Waiting && carriers[party] == ServerChannel::Carrier::CurveZmq) {
        waiting_on[socket_count] = party;
        sockets[socket_count++] = link.connections[party]->socket();
      }
    for (std::size_t party = 0; party < kServers; ++party)
      if (copies[party] == Copy::Waiting && carriers[party] == ServerChannel::Carrier::DataLink &&
          link.connections[party]->descriptor() >= 0) {
        waiting_on[socket_count + descriptor_count] = party;
        descriptors[descriptor_count++] = link.connections[party]->descriptor();
      }
    for (std::size_t index : transport::wait_readable(std::span(sockets).first(socket_count),
                                                      std::span(descriptors).first(descriptor_count), wait)) {
      const std::size_t ready = waiting_on[index];
      const auto carrier = ChannelDescriptors::carrier(index, socket_count);
      while (auto received = link.connections[ready]->receive(carrier)) {
        wire::Reply reply;
        try {
          reply = wire::decode_reply(*received, type);
        } catch (const FormatError&) {
          continue;  // a late answer to an earlier request of another type, or garbage
        }
        if (reply.id != id || copies[ready] != Copy::Waiting) continue;
        if (reply.status == wire::Status::Regrouping) {
          // The servers are changing which of them serve: worth another try.
          copies[ready] = Copy::Failed;
          regrouping = true;
          regrouping_party = static_cast<int>(ready);
          if (!first_failure)
            first_failure = std::make_exception_ptr(ServerError(static_cast<int>(ready), reply.status, reply.error));
          continue;
        }
        // A refusal that ends this attempt; `retry` when another try may be served.
        Attempt refused{std::nullopt,
                        std::make_exception_ptr(ServerError(static_cast<int>(ready), reply.status, reply.error)),
                        false, -1};
        if (reply.status == wire::Status::Busy) {
          // Two servers of security = "active" answer busy when a job's AND material was not
          // made in time (a pair just formed, or a burst): worth another try a little later.
          // The job reserved none, so a try asked again takes no material from the next.
          refused.retry = refused.busy = true;
          return refused;
        }
        if (reply.status == wire::Status::PeerFailure) {
          // A peer's part of the batch did not come within the peer timeout: most often a host
          // starved of CPU for a moment, or a server that went away mid-batch. Nothing was
          // opened, so the job is worth one more try (served once the stall has passed, or by
          // the servers that regrouped meanwhile); only one, so that a lasting failure is still
          // reported within about twice the time it takes to show.
          refused.retry = refused.peer_failure = true;
          return refused;
        }
        if (reply.status == wire::Status::VerificationFailed) {
          // A server deviated and the batch was refused everywhere before anything was opened:
          // worth sending again once the others serve without it.
          refused.retry = refused.aborted = true;
          return refused;
        }
        if (reply.status != wire::Status::Ok) return refused;
        replies[ready] = std::move(reply);
        copies[ready] = Copy::Answered;
        break;  // its one answer: nothing more to read from it for this request
      }
    }
  }
}

}  // namespace mpc::client
