// The shell's part in excluding a server (wire::ExclusionRequest, node/membership.hpp): the
// operator's word, kept on disk (store/exclusion_file.hpp), what follows from the peers' word
// and from disputes (node/disputes.hpp), and what the excluded server answers meanwhile.
#include <string>

#include "common/error.hpp"
#include "node/node.hpp"
#include "store/exclusion_file.hpp"

namespace mpc::node {
namespace {

std::string server_name(int party) { return "server " + std::to_string(party + 1); }

constexpr std::chrono::seconds kFollowPeersRetry{5};

}  // namespace

void Node::load_exclusion() {
  if (!membership_) return;
  disputes_on_disk_ = store::read_disputes(store::disputes_path(settings_.storage_path));
  if (disputes_on_disk_) {
    membership_->restore_disputes(disputes_on_disk_->distrusts, disputes_on_disk_->three_party_suspended,
                                  disputes_on_disk_->failed_pairs, disputes_on_disk_->readmissions);
    known_distrusts_ = membership_->distrusts();
  }
  if (disputes_on_disk_ && (disputes_on_disk_->distrusts != 0 || disputes_on_disk_->three_party_suspended ||
                            disputes_on_disk_->failed_pairs != 0)) {
    dispute_reason_ = disputes_on_disk_->reason;
    log_.warn("disputes held until an operator readmits a server",
              {{"distrusted", static_cast<std::uint64_t>(disputes_on_disk_->distrusts)},
               {"three_party_suspended", disputes_on_disk_->three_party_suspended},
               {"failed_pairs", static_cast<std::uint64_t>(disputes_on_disk_->failed_pairs)},
               {"reason", disputes_on_disk_->reason}});
  }
  exclusion_ = store::read_exclusion(store::exclusion_path(settings_.storage_path));
  if (!exclusion_) return;
  membership_->set_excluded(exclusion_->party, std::chrono::steady_clock::now());
  log_.warn("excluded from service until an operator readmits it",
            {{"server", exclusion_->party + 1},
             {"since_unix_ms", exclusion_->since_unix_ms},
             {"reason", exclusion_->reason}});
  if (!membership_->two_party_allowed())
    log_.error("a server is excluded but degraded_service is not two-party: no pair can serve without it",
               {{"server", exclusion_->party + 1}});
}

bool Node::write_exclusion_file(const std::optional<store::Exclusion>& exclusion) {
  try {
    store::write_exclusion(store::exclusion_path(settings_.storage_path), exclusion);
    return true;
  } catch (const Error& error) {
    log_.error("exclusion not recorded", {{"error", error.what()}});
    return false;
  }
}

bool Node::record_exclusion(std::optional<store::Exclusion> exclusion) {
  if (!write_exclusion_file(exclusion)) return false;
  const bool excluding = exclusion.has_value();
  if (excluding) {
    ++exclusions_;
    log_.error("server excluded from service until an operator readmits it",
               {{"server", exclusion->party + 1}, {"reason", exclusion->reason}});
  } else if (exclusion_) {
    log_.warn("server readmitted to service", {{"server", exclusion_->party + 1}});
  }
  exclusion_ = std::move(exclusion);
  const auto now = std::chrono::steady_clock::now();
  membership_->set_excluded(excluding ? exclusion_->party : -1, now);
  if (!pending_change_) pending_change_ = membership_->update(now);
  send_hello(now);
  return true;
}

wire::Reply Node::answer_exclusion(const wire::ExclusionRequest& request, const std::string& role) {
  wire::Reply reply;
  reply.id = request.id;
  const auto refuse = [&](wire::Status status, std::string detail) {
    reply.status = status;
    reply.error = std::move(detail);
    return reply;
  };
  if (request.action == wire::ExclusionAction::CheckFailed) return answer_failed_check(request, role);
  if (role != "admin") return refuse(wire::Status::Unauthorized, "excluding or readmitting a server needs an admin client key");
  if (!membership_) return refuse(wire::Status::BadRequest, "only a three-server cluster excludes a server");
  if (!membership_->two_party_allowed())
    return refuse(wire::Status::BadRequest,
                  "excluding a server needs degraded_service = \"two-party\": the other two serve as a pair");
  const int party = request.party;
  if (request.action == wire::ExclusionAction::Readmit) {
    // The operator vouches for the cluster again: disputes go with the exclusion they led to,
    // or stand alone (a pair serving after a failed check, nobody excluded yet).
    clear_disputes(Clearing::Readmission);
    if (!exclusion_) return reply;  // nobody excluded: already done
    if (exclusion_->party != party)
      return refuse(wire::Status::BadRequest, server_name(party) + " is not excluded; " +
                                                  server_name(exclusion_->party) + " is");
    if (!record_exclusion(std::nullopt)) return refuse(wire::Status::Internal, "the readmission could not be recorded");
    return reply;
  }
  if (exclusion_) {
    if (exclusion_->party == party) {
      // Already excluded: taken from both peers a moment before the operator's word came here,
      // or given twice. The record keeps its time and takes the operator's reason.
      if (!request.reason.empty() && exclusion_->reason != request.reason) {
        store::Exclusion updated = *exclusion_;
        updated.reason = request.reason;
        if (!write_exclusion_file(updated))
          return refuse(wire::Status::Internal, server_name(party) + " is excluded, but the reason could not be recorded");
        exclusion_ = std::move(updated);
      }
      return reply;
    }
    return refuse(wire::Status::BadRequest, server_name(exclusion_->party) +
                                                " is excluded already: readmit it before excluding another");
  }
  if (request.reason.empty()) return refuse(wire::Status::BadRequest, "an exclusion needs a reason");
  if (!record_exclusion(store::Exclusion{party, unix_ms_now(), request.reason}))
    return refuse(wire::Status::Internal, "the exclusion could not be recorded");
  return reply;
}

wire::Reply Node::answer_failed_check(const wire::ExclusionRequest& request, const std::string& role) {
  wire::Reply reply;
  reply.id = request.id;
  if (role != "admin" && role != "compute") {
    reply.status = wire::Status::Unauthorized;
    reply.error = "reporting a failed check needs a compute or admin client key";
    return reply;
  }
  // Nothing to serve otherwise with: a two-server cluster, or one that serves no pair.
  if (!membership_ || !membership_->two_party_allowed()) return reply;
  const std::string what = wire::one_line_reason(request.reason);
  const int served = request.party == wire::kServedByAllThree ? -1 : request.party;
  const int serving = membership_->mode() == wire::ClusterMode::Full ? -1 : membership_->missing();
  // Answered Regrouping when another service serves from now on: the client sends its job again.
  const auto another_service = [&](std::string why) {
    reply.status = wire::Status::Regrouping;
    reply.error = std::move(why);
    return reply;
  };
  // Only a report on the service this server runs counts: one on a service left since changes
  // nothing, so a client that reports falsely buys at most one change of service per change.
  if (served != serving) {
    log_.info("a client's failed check on another service than this server's changes nothing",
              {{"served_without", served < 0 ? std::string("none") : server_name(served)}, {"check", what}});
    return another_service("the cluster serves otherwise already");
  }
  if (served < 0) {
    if (!membership_->three_party_failed()) deviation_caught(-1, "client_check", "a client's job: " + what);
    return another_service("three-party service is suspended: a pair serves");
  }
  pair_failed(served, "client_check", "a client's job: " + what);
  const int next = membership_->disputes(std::chrono::steady_clock::now()).missing;
  if (next >= 0 && next != served) return another_service("the pair without " + server_name(next) + " serves");
  // The pair serves for an outage (or every pair failed): no other can serve.
  return reply;
}

static_assert(static_cast<std::size_t>(JobKind::Count) <= ServiceStall::kKinds, "a watch for every kind of job");

void Node::note_answer(JobKind kind, wire::Status status) {
  const auto now = std::chrono::steady_clock::now();
  if (now - mode_entered_ < kStallGrace) return;
  if (status == wire::Status::Ok) stall_.answered(static_cast<std::size_t>(kind), true, now);
  else if (status == wire::Status::PeerFailure) stall_.answered(static_cast<std::size_t>(kind), false, now);
}

void Node::follow_stall(std::chrono::steady_clock::time_point now) {
  if (!membership_ || !membership_->two_party_allowed()) return;
  const auto stalled = stall_.stalled(now);
  if (!stalled) return;
  // A server gone quiet is the outage path's (cluster_mode.cpp); a pair serving for an outage
  // has no other to hand over to.
  for (int party = 0; party < 3; ++party)
    if (party != settings_.party && !peer_alive(party)) return;
  const std::string where = std::string(job_kind_name(static_cast<JobKind>(stalled->kind))) + " jobs: " +
                            std::to_string(stalled->failures) + " failed on a peer's timeout and " +
                            std::to_string(stalled->served) + " served in " + std::to_string(kStallWindow.count()) +
                            " s while every server was heard";
  stall_.reset();
  log_.error("the service serves nothing while every server is heard: one of them withholds its part; it is left "
             "as after a failed check that names nobody",
             {{"detail", where}});
  if (membership_->mode() == wire::ClusterMode::Full) {
    deviation_caught(-1, "service_stall", where);
  } else {
    pair_failed(membership_->missing(), "service_stall", where);
  }
}

void Node::pair_failed(int missing, const std::string& check, const std::string& where) {
  if (!membership_ || !membership_->two_party_allowed() || missing < 0 || missing > 2) return;
  if ((membership_->failed_pairs() & (1u << missing)) != 0) return;
  const auto now = std::chrono::steady_clock::now();
  ++disputes_;
  dispute_reason_ = check + " failed in " + where + " (the pair without " + server_name(missing) + ")";
  if (dispute_reason_.size() > wire::kMaxExclusionReasonBytes) dispute_reason_.resize(wire::kMaxExclusionReasonBytes);
  membership_->pair_failed(missing);
  log_.error("a check of a pair's service failed that names neither of its servers: one of the three deviated; while "
             "three-party service is suspended the next pair serves, until an operator readmits "
             "(mpcctl cluster readmit)",
             {{"pair_without", missing + 1}, {"check", check}, {"where", where},
              {"three_party_suspended", membership_->three_party_failed()}});
  if (membership_->failed_pairs_known(now) == 0b111)
    log_.error("every pair has failed a check: more than one server deviates, or the checks of one pair were dealt "
               "falsely when its keys were imported; servers 1 and 2 serve",
               {});
  record_disputes();
  if (!pending_change_) pending_change_ = membership_->update(now);
  send_hello(now);
}

void Node::follow_peers_exclusion(std::chrono::steady_clock::time_point now) {
  if (!membership_ || now < follow_peers_not_before_) return;
  const auto said = membership_->peers_exclusion(now);
  if (!said) return;
  // Both peers hold it, so at least one honest server does: the operator's word this server
  // missed (it was down or restarting when it was given), or disputes it has not seen.
  bool recorded = false;
  if (*said < 0) {
    log_.warn("readmission taken from both peers", {{"server", exclusion_ ? exclusion_->party + 1 : 0}});
    clear_disputes(Clearing::FromPeers);
    recorded = record_exclusion(std::nullopt);
  } else {
    log_.warn("exclusion taken from both peers", {{"server", *said + 1}});
    recorded = record_exclusion(
        store::Exclusion{*said, unix_ms_now(), "as both other servers hold"});
  }
  if (!recorded) follow_peers_not_before_ = now + kFollowPeersRetry;
}

void Node::follow_peers_readmission(std::chrono::steady_clock::time_point now) {
  if (!membership_) return;
  const auto readmissions = membership_->peers_readmissions(now);
  if (!readmissions) return;
  // Both peers took readmissions this server did not: it was down or restarting when the
  // operator gave the word, and the disputes it holds are as of before.
  clear_disputes(Clearing::ReadmissionOfPeers, *readmissions);
  if (!pending_change_) pending_change_ = membership_->update(now);
}

void Node::deviation_caught(int party, const std::string& check, const std::string& where) {
  if (!membership_ || !membership_->two_party_allowed()) return;
  const auto now = std::chrono::steady_clock::now();
  ++disputes_;
  if (party < 0) {
    dispute_reason_ = "three-party check " + check + " failed in " + where;
    if (!membership_->three_party_failed())
      log_.error("three-party service suspended: a check of active security failed, so one of the other two servers "
                 "deviated; servers 1 and 2 serve as a pair until an operator readmits (mpcctl cluster readmit)",
                 {{"check", check}, {"where", where}});
    membership_->three_party_check_failed();
  } else {
    dispute_reason_ = check + " failed in " + where + " with " + server_name(party);
    log_.error("dispute: a check of active security failed between this server and a peer, so the peer deviated; "
               "this server serves without it",
               {{"server", party + 1}, {"check", check}, {"where", where}});
    membership_->caught(party);
    known_distrusts_ = membership_->distrusts();
  }
  if (dispute_reason_.size() > wire::kMaxExclusionReasonBytes) dispute_reason_.resize(wire::kMaxExclusionReasonBytes);
  if (!pending_change_) pending_change_ = membership_->update(now);
  send_hello(now);
}

void Node::follow_disputes(std::chrono::steady_clock::time_point now) {
  if (!membership_) return;
  // Disputes taken from a peer's hello: it says it caught this server, which it cannot have.
  const std::uint8_t claimed = static_cast<std::uint8_t>(membership_->distrusts() & ~known_distrusts_);
  for (int party = 0; party < 3; ++party) {
    if ((claimed & (1u << party)) == 0) continue;
    ++disputes_;
    dispute_reason_ = server_name(party) + " claimed a dispute with this server";
    log_.error("dispute: a peer claims it caught this server deviating, which it did not, so the peer deviated; "
               "this server serves without it",
               {{"server", party + 1}});
  }
  known_distrusts_ = membership_->distrusts();
  record_disputes();
  if (exclusion_ || now < follow_peers_not_before_) return;
  const int party = membership_->disputes(now).exclude;
  if (party < 0) return;
  // In a dispute with both others: the one server that deviated, as every honest server finds.
  std::string reason = "in disputes with both other servers";
  if (!dispute_reason_.empty()) reason += "; last here: " + dispute_reason_;
  if (reason.size() > wire::kMaxExclusionReasonBytes) reason.resize(wire::kMaxExclusionReasonBytes);
  if (!record_exclusion(store::Exclusion{party, unix_ms_now(), reason}))
    follow_peers_not_before_ = now + kFollowPeersRetry;
}

void Node::clear_disputes(Clearing clearing, std::uint32_t peers_readmissions) {
  if (!membership_) return;
  if (membership_->distrusts() != 0 || membership_->three_party_failed() || membership_->failed_pairs() != 0) {
    const char* event = clearing == Clearing::Readmission ? "disputes cleared by an operator's readmission"
                        : clearing == Clearing::ReadmissionOfPeers
                            ? "disputes cleared by a readmission taken from both peers"
                            : "disputes cleared as both peers readmitted the excluded server";
    log_.warn(event, {{"distrusted", static_cast<std::uint64_t>(membership_->distrusts())},
                      {"three_party_suspended", membership_->three_party_failed()},
                      {"failed_pairs", static_cast<std::uint64_t>(membership_->failed_pairs())}});
  }
  switch (clearing) {
    case Clearing::Readmission: membership_->clear_disputes(); break;
    case Clearing::ReadmissionOfPeers: membership_->adopt_readmissions(peers_readmissions); break;
    case Clearing::FromPeers: membership_->drop_disputes(); break;
  }
  dispute_reason_.clear();
  known_distrusts_ = 0;
  record_disputes();
}

bool Node::disputes_recorded() const {
  const std::uint8_t distrusts = membership_->distrusts();
  const bool suspended = membership_->three_party_failed();
  const std::uint8_t failed_pairs = membership_->failed_pairs();
  const std::uint32_t readmissions = membership_->readmissions();
  if (distrusts == 0 && !suspended && failed_pairs == 0 && readmissions == 0) return !disputes_on_disk_;
  return disputes_on_disk_ && disputes_on_disk_->distrusts == distrusts &&
         disputes_on_disk_->three_party_suspended == suspended && disputes_on_disk_->failed_pairs == failed_pairs &&
         disputes_on_disk_->readmissions == readmissions && disputes_on_disk_->reason == dispute_reason_;
}

void Node::record_disputes() {
  if (disputes_recorded()) return;
  const auto now = std::chrono::steady_clock::now();
  if (now < record_disputes_not_before_) return;
  std::optional<store::Disputes> held;
  if (membership_->distrusts() != 0 || membership_->three_party_failed() || membership_->failed_pairs() != 0 ||
      membership_->readmissions() != 0)
    held = store::Disputes{membership_->distrusts(), membership_->three_party_failed(), membership_->failed_pairs(),
                           membership_->readmissions(), dispute_reason_};
  try {
    store::write_disputes(store::disputes_path(settings_.storage_path), held);
    disputes_on_disk_ = std::move(held);
  } catch (const Error& error) {
    // Held in memory all the same; written again by a later turn of the shell's loop.
    log_.error("disputes not recorded", {{"error", error.what()}});
    record_disputes_not_before_ = now + kFollowPeersRetry;
  }
}

std::optional<Refusal> Node::excluded_self_refusal() const {
  if (membership_ && !exclusion_ && membership_->set_aside(std::chrono::steady_clock::now()))
    return Refusal{wire::Status::Regrouping,
                   server_name(settings_.party) + " is in a dispute (" + dispute_reason_ +
                       "): the other two serve without it until an operator runs `mpcctl cluster readmit`"};
  if (!exclusion_ || exclusion_->party != settings_.party) return std::nullopt;
  return Refusal{wire::Status::Regrouping,
                 server_name(settings_.party) + " is excluded from service (" + exclusion_->reason +
                     "): the other two serve without it until an operator runs `mpcctl cluster readmit " +
                     std::to_string(settings_.party + 1) + "`"};
}

}  // namespace mpc::node
