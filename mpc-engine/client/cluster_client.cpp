#include "client/cluster_client.hpp"

#include <openssl/evp.h>
#include <sodium.h>
#include <unistd.h>

#include <algorithm>
#include <thread>
#include <variant>

#include "client/cluster_links.hpp"
#include "client/reply_failures.hpp"
#include "common/error.hpp"
#include "keys/algorithm_list.hpp"
#include "protocol/client_checks/output_pads.hpp"
#include "transport/zmq_link.hpp"
#include "wire/krb_record_mask.hpp"

namespace mpc::client {

void require_valid_key_name(const std::string& name) {
  try {
    wire::validate_key_name(name);
  } catch (const FormatError& invalid) {
    throw InvalidRequest(invalid.what());
  }
}

void require_key_length(wire::KeyAlgorithm algorithm, std::size_t bytes) {
  if (bytes != wire::key_bytes(algorithm))
    throw InvalidRequest(std::string(wire::algorithm_name(algorithm)) + " keys are " +
                         std::to_string(wire::key_bytes(algorithm)) + " bytes, not " + std::to_string(bytes));
}

void require_gcm_input_fits(std::size_t aad_bytes, std::size_t text_bytes) {
  if (wire::gcm_hash_blocks(aad_bytes, text_bytes) > wire::kGcmHashPowers)
    throw InvalidRequest("GCM aad and text need more than " + std::to_string(wire::kGcmHashPowers) + " GHASH blocks");
}

ServerError::ServerError(int party, wire::Status status, const std::string& detail)
    : Error(Component::Client, "server " + std::to_string(party + 1) + " answered " + wire::status_name(status) +
                                   (detail.empty() ? "" : ": " + detail)),
      party_(party),
      status_(status) {}

namespace {

// wire::validate_request's refusal of a request built from a call's arguments, as the caller's
// error: nothing has been sent.
template <typename Request>
void require_valid(const Request& request) {
  try {
    wire::validate_request(request);
  } catch (const FormatError& invalid) {
    throw InvalidRequest(invalid.what());
  }
}

// How long a send may wait for a connection to come up (a server just restarted)
// before the call fails as unreachable.
std::chrono::milliseconds connect_grace(std::chrono::milliseconds timeout) {
  return std::min(std::chrono::milliseconds(500), timeout / 2);
}

// How often a call waiting for answers looks for servers that went away meanwhile.
constexpr std::chrono::milliseconds kSessionCheckInterval{50};

// After a failed check reported: the servers switch within a heartbeat or two.
constexpr std::chrono::milliseconds kAfterFailedCheckPause{200};

}  // namespace

wire::RequestId fresh_request_id() {
  wire::RequestId id{};
  randombytes_buf(id.data(), id.size());
  return id;
}

ClusterClient::ClusterClient(settings::ClusterSettings settings) : settings_(std::move(settings)) {
  if (settings_.servers.size() != static_cast<std::size_t>(settings::party_count(settings_.protocol)))
    throw Error(Component::Client, std::string("a ") + settings::protocol_name(settings_.protocol) + " cluster needs " +
                                       std::to_string(settings::party_count(settings_.protocol)) + " servers");
}

int ClusterClient::parties() const { return static_cast<int>(settings_.servers.size()); }

std::vector<std::vector<std::uint8_t>> ClusterClient::same_frame(const std::vector<std::uint8_t>& frame) const {
  return std::vector<std::vector<std::uint8_t>>(settings_.servers.size(), frame);
}

std::vector<bool> ClusterClient::all_servers() const { return std::vector<bool>(settings_.servers.size(), true); }

void ClusterClient::set_timeout(std::chrono::milliseconds timeout) {
  if (timeout.count() <= 0 || timeout.count() > settings::kMaxTimeoutMs)
    throw InvalidRequest("timeout must be 1.." + std::to_string(settings::kMaxTimeoutMs) + " ms");
  std::lock_guard lock(mutex_);
  settings_.timeout = timeout;
}

ClusterClient::~ClusterClient() {
  // A child must not tear down sockets its parent still uses: leave them alone.
  if (links_ && links_->owner != getpid()) (void)links_.release();
}

ClusterClient::Links& ClusterClient::links() {
  if (links_ && links_->owner == getpid()) return *links_;
  if (links_) (void)links_.release();  // inherited across fork(): abandoned, never closed here
  auto fresh = std::make_unique<Links>();
  fresh->owner = getpid();
  fresh->own = transport::read_secret_key_file(settings_.secret_key_file);
  fresh->context = std::make_unique<transport::Context>();
  fresh->connections.resize(settings_.servers.size());
  transport::LinkOptions options;
  // The largest reply: two shares of kMaxRequestBlocks blocks, plus a prefetch's nonce list.
  options.max_message_bytes = static_cast<std::int64_t>(wire::kMaxRequestBlocks) * 32 +
                              static_cast<std::int64_t>(wire::kMaxGcmPrefetchCount) * wire::kGcmNonceBytes + 4096;
  for (const auto& server : settings_.servers)
    fresh->connections[static_cast<std::size_t>(server.party)] =
        std::make_unique<ServerChannel>(*fresh->context, server, fresh->own, options);
  links_ = std::move(fresh);
  return *links_;
}

Replies ClusterClient::round_trip(const std::vector<std::vector<std::uint8_t>>& frames,
                                                     const wire::RequestId& id, wire::MessageType type) {
  auto replies = exchange(frames, id, type, all_servers(), true);
  for (int party = 0; party < parties(); ++party) {
    const auto& reply = replies[static_cast<std::size_t>(party)];
    if (reply.status != wire::Status::Ok) throw ServerError(party, reply.status, reply.error);
  }
  return replies;
}

Replies ClusterClient::exchange(const std::vector<std::vector<std::uint8_t>>& frames, const wire::RequestId& id,
                                wire::MessageType type, std::vector<bool> targets, bool stop_on_error,
                                bool tolerate_unreachable, std::vector<bool>* unreachable_out) {
  Links& link = links();
  const auto start = std::chrono::steady_clock::now();
  // Kerberos jobs run deep circuits (compiled first for a new length): they get the longer of
  // the two timeouts. A dead server still fails them early: the other two answer PeerFailure.
  // A key generation compiles and runs a circuit of about 8 M operations: at least two minutes.
  const auto timeout = type == wire::MessageType::GenerateKey ? std::max({settings_.timeout, settings_.krb_timeout,
                                                                          std::chrono::milliseconds(kGenerateKeyTimeout)})
                       : type == wire::MessageType::Krb ? std::max(settings_.timeout, settings_.krb_timeout)
                                                        : settings_.timeout;
  const auto deadline = start + timeout;
  const auto send_deadline = start + connect_grace(settings_.timeout);
  // A request sent as a server goes away (killed, restarted) is lost with its session, and
  // the other servers wait for it too: rather than wait out the timeout, a lost session
  // before the answer fails the call at once.
  std::vector<std::uint64_t> sessions_lost(settings_.servers.size());
  for (int party = 0; party < parties(); ++party)
    if (targets[static_cast<std::size_t>(party)])
      sessions_lost[static_cast<std::size_t>(party)] = link.connections[static_cast<std::size_t>(party)]->sessions_lost();
  // Every reachable server gets its copy at once: a server still reconnecting (just restarted)
  // must not hold up the others' copies, or their batch may run without this request.
  std::vector<bool> unsent = targets;
  const bool small_answer = type != wire::MessageType::Compute;
  for (int party = 0; party < parties(); ++party)
    if (targets[static_cast<std::size_t>(party)])
      link.connections[static_cast<std::size_t>(party)]->prepare(small_answer, send_deadline);
  for (;;) {
    for (int party = 0; party < parties(); ++party) {
      const auto index = static_cast<std::size_t>(party);
      if (unsent[index] && link.connections[index]->send(frames[index], small_answer, send_deadline))
        unsent[index] = false;
    }
    const auto waiting = std::find(unsent.begin(), unsent.end(), true);
    if (waiting == unsent.end()) break;
    if (std::chrono::steady_clock::now() >= send_deadline) {
      const auto index = static_cast<std::size_t>(waiting - unsent.begin());
      if (!tolerate_unreachable)
        throw Error(Component::Client, "server " + std::to_string(index + 1) + " (" +
                                           settings_.servers[index].endpoint + ") is unreachable");
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  std::vector<std::optional<wire::Reply>> replies(settings_.servers.size());
  const auto unreachable = [&](std::size_t index, const std::string& why) {
    wire::Reply reply;
    reply.id = id;
    reply.status = wire::Status::PeerFailure;
    reply.error = "server " + std::to_string(index + 1) + " (" + settings_.servers[index].endpoint + ") " + why;
    replies[index] = std::move(reply);
    if (unreachable_out != nullptr) (*unreachable_out)[index] = true;
  };
  if (unreachable_out != nullptr) unreachable_out->assign(settings_.servers.size(), false);
  for (int party = 0; party < parties(); ++party) {
    const auto index = static_cast<std::size_t>(party);
    if (!targets[index]) replies[index] = wire::Reply{};
    else if (unsent[index]) unreachable(index, "is unreachable");
  }
  std::vector<void*> sockets(settings_.servers.size());
  for (std::size_t party = 0; party < sockets.size(); ++party) sockets[party] = link.connections[party]->socket();
  for (;;) {
    const bool complete = std::all_of(replies.begin(), replies.end(), [](const auto& r) { return r.has_value(); });
    if (complete) break;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 && tolerate_unreachable) {
      for (std::size_t index = 0; index < replies.size(); ++index)
        if (!replies[index]) unreachable(index, "did not answer within " + std::to_string(timeout.count()) + " ms");
      break;
    }
    if (left.count() <= 0) {
      std::string missing;
      for (int party = 0; party < parties(); ++party)
        if (!replies[static_cast<std::size_t>(party)]) missing += (missing.empty() ? "" : ", ") + std::to_string(party + 1);
      throw Error(Component::Client, "no answer from server(s) " + missing + " within " +
                                         std::to_string(timeout.count()) + " ms");
    }
    for (int party = 0; party < parties(); ++party) {
      const auto index = static_cast<std::size_t>(party);
      if (replies[index] || link.connections[index]->sessions_lost() == sessions_lost[index]) continue;
      if (tolerate_unreachable) {
        unreachable(index, "went away before answering");
        continue;
      }
      throw Error(Component::Client, "server " + std::to_string(party + 1) + " (" + settings_.servers[index].endpoint +
                                           ") is unreachable: it went away before answering, and the request with it");
    }
    const ChannelDescriptors descriptors(link);
    const auto wait = std::min(left, kSessionCheckInterval);
    for (std::size_t index : transport::wait_readable(sockets, descriptors.descriptors, wait)) {
      const std::size_t ready = descriptors.party(index, sockets.size());
      const auto carrier = ChannelDescriptors::carrier(index, sockets.size());
      while (auto frame = link.connections[ready]->receive(carrier)) {
        wire::Reply reply;
        try {
          reply = wire::decode_reply(*frame, type);
        } catch (const FormatError&) {
          // A late answer to an earlier request of another type fails to decode; so does garbage.
          continue;
        }
        if (reply.id != id) continue;  // late answer to an earlier request
        if (stop_on_error && reply.status != wire::Status::Ok)
          throw ServerError(static_cast<int>(ready), reply.status, reply.error);
        replies[ready] = std::move(reply);
      }
    }
  }
  Replies out(settings_.servers.size());
  for (int party = 0; party < parties(); ++party) out[static_cast<std::size_t>(party)] = std::move(*replies[static_cast<std::size_t>(party)]);
  return out;
}

template <typename Request>
Replies ClusterClient::ask_all(Request& request, wire::MessageType type) {
  // A tag spends a nonce of the service it reaches, and a reopen needs the nonce the service
  // holds unless the nonce has local masks, which any service computes again.
  bool service_bound = false;
  if constexpr (std::is_same_v<Request, wire::GcmTagRequest>) service_bound = true;
  if constexpr (std::is_same_v<Request, wire::GcmReopenRequest>)
    service_bound = !wire::is_local_mask_nonce(request.nonce);
  return serve_job(
      type,
      [&](const wire::RequestId& id) {
        request.id = id;
        return same_frame(wire::encode_request(request));
      },
      service_bound);
}

template <typename Request>
Replies ClusterClient::ask_padded(Request& request, wire::MessageType type, OutputPads& pads) {
  std::array<wire::OutputPadSeed, 3> seeds{};  // each server's
  const auto wipe_seeds = [&seeds] {
    for (auto& seed : seeds) wipe(seed.data(), seed.size());
  };
  int missing = -1;
  Replies replies;
  try {
    replies = serve_job(
        type,
        [&](const wire::RequestId& id) {
          request.id = id;
          // Fresh pads for every attempt: a job asked again (a busy pool) may compute on other
          // inputs (a prefetch's nonces), and two outputs under one pad would tell the servers
          // their XOR. The replies are those of the last attempt, under the last pads.
          Frames frames;
          for (int party = 0; party < parties(); ++party) {
            auto& seed = seeds[static_cast<std::size_t>(party)];
            randombytes_buf(seed.data(), seed.size());
            request.output_pad = seed;
            frames.push_back(wire::encode_request(request));
          }
          wipe(request.output_pad->data(), request.output_pad->size());
          return frames;
        },
        false, &missing);
  } catch (...) {
    wipe_seeds();
    throw;
  }
  // A two-server cluster's pads in party order; a pair's in its order, its leader's first.
  const int first = missing < 0 ? 0 : (missing + 1) % 3;
  const int second = missing < 0 ? 1 : (missing + 2) % 3;
  pads = {seeds[static_cast<std::size_t>(first)], seeds[static_cast<std::size_t>(second)]};
  wipe_seeds();
  return replies;
}

namespace {

// The pads of one job's two servers (ask_padded draws them), wiped when it ends.
struct JobPads {
  OutputPads seeds{};
  JobPads() = default;
  ~JobPads() {
    for (auto& seed : seeds) wipe(seed.data(), seed.size());
  }
  JobPads(const JobPads&) = delete;
  JobPads& operator=(const JobPads&) = delete;
};

}  // namespace

bool ClusterClient::report_failed_check(int served_without, const std::string& what) {
  wire::ExclusionRequest report;
  report.id = fresh_request_id();
  report.action = wire::ExclusionAction::CheckFailed;
  report.party = served_without < 0 ? wire::kServedByAllThree : static_cast<std::uint8_t>(served_without);
  report.reason = wire::one_line_reason(what);
  // The servers that answered the job: a pair's third may be down, and learns of it from the
  // pair's members (node/disputes.hpp).
  std::vector<bool> targets = all_servers();
  if (served_without >= 0) targets[static_cast<std::size_t>(served_without)] = false;
  try {
    const Replies replies = exchange(same_frame(wire::encode_request(report)), report.id,
                                     wire::MessageType::Exclusion, targets, false, true);
    for (std::size_t party = 0; party < replies.size(); ++party)
      if (targets[party] && replies[party].status == wire::Status::Regrouping) return true;
    return false;
  } catch (const Error&) {
    // What the caller learns is the job's own failure.
    return false;
  }
}

template <typename Job>
auto ClusterClient::checked(Job&& job, bool once) -> decltype(job()) {
  for (int failures = 0;; ++failures) {
    served_without_ = kNotServed;
    try {
      return job();
    } catch (const Error& error) {
      const bool refused_by_client = dynamic_cast<const Disagreement*>(&error) != nullptr ||
                                     dynamic_cast<const VerificationError*>(&error) != nullptr;
      // A refusal before any replies (the servers answered in different forms while they
      // regrouped) is no deviation; nor is anything of a two-server cluster, with no third.
      if (!refused_by_client || served_without_ == kNotServed || parties() != 3) throw;
      const bool served_otherwise = report_failed_check(served_without_, error.what());
      if (once || !served_otherwise || failures >= kFailedCheckRetries) throw;
    }
    std::this_thread::sleep_for(kAfterFailedCheckPause);
  }
}

std::vector<std::uint8_t> ClusterClient::compute(wire::ComputeRequest request) {
  require_valid(request);
  std::lock_guard lock(mutex_);
  // Each server gets a pad of its own on the outputs (protocol/client_checks): two servers of
  // security = "active" (a two-server cluster, or a pair serving while a third is down) answer
  // under both, so that neither can shift the result. Three servers serving leave them unused.
  return checked([&] {
    JobPads pads;
    return open_compute(ask_padded(request, wire::MessageType::Compute, pads.seeds), request.blocks, &pads.seeds);
  });
}

GcmPrefetched ClusterClient::gcm_prefetch(const wire::KeyId& key, std::uint32_t count,
                                          std::uint32_t blocks_per_nonce, bool local_masks) {
  wire::GcmPrefetchRequest request;
  request.key = key;
  request.count = count;
  request.blocks_per_nonce = blocks_per_nonce;
  request.local_masks = local_masks;
  require_valid(request);
  std::lock_guard lock(mutex_);
  return checked([&] {
    GcmPrefetched out;
    if (!local_masks) {
      // The keystream padded for the client, as a Compute job's outputs.
      JobPads pads;
      out = open_gcm_prefetch(ask_padded(request, wire::MessageType::GcmPrefetch, pads.seeds), count,
                              blocks_per_nonce, &pads.seeds);
    } else {
      out = open_gcm_prefetch(ask_all(request, wire::MessageType::GcmPrefetchLocal), count, blocks_per_nonce);
    }
    // The mark tells the servers how to open the nonce's tickets: it must be the one asked for.
    for (std::size_t n = 0; n < count; ++n) {
      wire::GcmNonce nonce{};
      std::copy_n(out.nonces.data() + n * wire::kGcmNonceBytes, wire::kGcmNonceBytes, nonce.begin());
      if (wire::is_local_mask_nonce(nonce) != local_masks)
        throw Disagreement(std::string("the servers returned nonces ") + (local_masks ? "without" : "with") +
                           " local masks for a prefetch " + (local_masks ? "with" : "without") + " them");
    }
    return out;
  });
}

wire::GcmTagBytes ClusterClient::gcm_tag(const wire::KeyId& key, const wire::GcmNonce& nonce,
                                         std::span<const std::uint8_t> aad, std::span<const std::uint8_t> ciphertext) {
  require_gcm_input_fits(aad.size(), ciphertext.size());
  wire::GcmTagRequest request;
  request.key = key;
  request.nonce = nonce;
  request.aad.assign(aad.begin(), aad.end());
  request.text.assign(ciphertext.begin(), ciphertext.end());
  require_valid(request);
  std::lock_guard lock(mutex_);
  return checked([&] { return open_gcm_tag(ask_all(request, wire::MessageType::GcmTag)); }, true);
}

namespace {

void require_rss3(const settings::ClusterSettings& settings, const char* what) {
  if (settings.protocol != settings::Protocol::Rss3)
    throw ServerError(0, wire::Status::BadRequest, std::string(what) + " need three servers");
}

}  // namespace

std::pair<wire::GcmTagBytes, wire::GcmTagBytes> ClusterClient::gcm_tag_chained(const wire::KeyId& key,
                                                                               const wire::GcmNonce& nonce,
                                                                               std::span<const std::uint8_t> aad,
                                                                               const wire::GcmNonce& chained,
                                                                               std::span<const std::uint8_t> prefix) {
  require_rss3(settings_, "chained GCM tags");
  require_gcm_input_fits(aad.size(), 0);
  wire::GcmTagRequest request;
  request.key = key;
  request.nonce = nonce;
  request.aad.assign(aad.begin(), aad.end());
  request.chained = wire::GcmChainedTag{chained, {prefix.begin(), prefix.end()}};
  require_valid(request);
  std::lock_guard lock(mutex_);
  return checked(
      [&] {
        const Replies replies = ask_all(request, wire::MessageType::GcmTagParts);
        return std::pair{open_gcm_tag(replies), open_gcm_chained(replies)};
      },
      true);
}

wire::GcmTagBytes ClusterClient::gcm_tag_checked(const wire::KeyId& key, const wire::GcmNonce& nonce,
                                                 std::span<const std::uint8_t> aad,
                                                 std::span<const std::uint8_t> ciphertext, wire::GcmTagCheck check) {
  require_rss3(settings_, "checked GCM tags");
  require_gcm_input_fits(aad.size(), ciphertext.size());
  wire::GcmTagRequest request;
  request.key = key;
  request.nonce = nonce;
  request.aad.assign(aad.begin(), aad.end());
  request.text.assign(ciphertext.begin(), ciphertext.end());
  request.check = std::move(check);
  require_valid(request);
  std::lock_guard lock(mutex_);
  return checked(
      [&] {
        const Replies replies = ask_all(request, wire::MessageType::GcmTagParts);
        const wire::GcmTagBytes tag = open_gcm_tag(replies);
        if (!gcm_check_passes(replies))
          throw VerificationError("the tag checked beside this one (a chained tag, made from the servers' additive "
                                  "shares) is wrong: one server's share was altered; the new tag is withheld");
        return tag;
      },
      true);
}

std::optional<SecretBytes> ClusterClient::gcm_open(const wire::KeyId& key, const wire::GcmNonce& nonce,
                                                   std::span<const std::uint8_t> aad,
                                                   std::span<const std::uint8_t> ciphertext,
                                                   const wire::GcmTagBytes& tag) {
  require_gcm_input_fits(aad.size(), ciphertext.size());
  wire::GcmOpenRequest request;
  request.key = key;
  request.nonce = nonce;
  request.aad.assign(aad.begin(), aad.end());
  request.text.assign(ciphertext.begin(), ciphertext.end());
  request.tag = tag;
  require_valid(request);
  std::lock_guard lock(mutex_);
  return checked([&]() -> std::optional<SecretBytes> {
    // A nonce with local masks reopens wherever it is asked, from the servers' shares alone (one
    // round trip, three servers or two; a regrouping is retried like any job's). A tag that
    // fails there may still be AES-GCM's under K (a ciphertext made elsewhere whose nonce has
    // the mark's bit): it opens in full below, as any nonce the servers did not tag.
    const bool local = wire::is_local_mask_nonce(nonce);
    if (local) {
      wire::GcmReopenRequest reopen{request};
      if (auto plaintext = open_gcm_reopen(ask_all(reopen, wire::MessageType::GcmReopen), request.text))
        return plaintext;
    }
    // A ticket the three servers tagged reopens without AES (one round trip); where any of them
    // does not hold its nonce (restarted, evicted, two-server service) or does not know the
    // request (a server of an earlier release: BadRequest), it opens in full.
    if (settings_.protocol == settings::Protocol::Rss3 && !local) {
      wire::GcmReopenRequest reopen{request};
      try {
        return open_gcm_reopen(ask_all(reopen, wire::MessageType::GcmReopen), request.text);
      } catch (const ServerError& error) {
        const auto status = error.status();
        if (status != wire::Status::UnknownNonce && status != wire::Status::Regrouping &&
            status != wire::Status::BadRequest)
          throw;
      }
    }
    // The keystream and the verdict padded for the client, as a Compute job's outputs.
    JobPads pads;
    return open_gcm_open(ask_padded(request, wire::MessageType::GcmOpen, pads.seeds), request.text, &pads.seeds);
  });
}

namespace {

wire::KrbRequest krb_request(const wire::KeyId& key, wire::KrbOperation operation, std::uint32_t usage,
                             const std::optional<wire::KrbCombine>& combine) {
  wire::KrbRequest request;
  request.key = key;
  request.operation = operation;
  request.usage = usage;
  request.combine = combine;
  return request;
}

// The rules of a Krb request (wire::validate_request's) from its parts, before its data is copied
// in: a round trip wipes the request, so it is built afresh for each try.
void check_krb_request(const wire::KeyId& key, wire::KrbOperation operation, std::uint32_t usage,
                       const std::optional<wire::KrbCombine>& combine, std::size_t data_bytes) {
  if (!wire::is_krb_algorithm(key.algorithm))
    throw InvalidRequest("the Kerberos jobs need an " + keys::algorithm_list(keys::AlgorithmSet::Kerberos) +
                         " key, not " + wire::algorithm_name(key.algorithm));
  require_valid_key_name(key.name);
  if (auto refusal = wire::krb_usage_refusal(operation, usage, combine)) throw InvalidRequest(*refusal);
  try {
    (void)wire::krb_result_bytes(operation, combine ? combine->combined : key.algorithm, data_bytes);
  } catch (const FormatError& invalid) {
    throw InvalidRequest(invalid.what());
  }
}


}  // namespace

Replies ClusterClient::krb_round_trip(wire::KrbRequest& request, KrbPads* pads) {
  // The secret record goes out masked, and each server gets its own seeds of the mask
  // (wire/krb_record_mask.hpp). A retry changes only the id: every copy a server sees carries
  // the same masked record and seeds.
  const wire::RecordMaskDeal deal(settings_.servers.size(), wire::krb_secret_record_bytes(request));
  const auto wipe_seeds = [&request] {
    if (request.record_mask)
      for (auto& seed : request.record_mask->seeds) wipe(seed.data(), seed.size());
  };
  const auto wipe_request = [&request, &wipe_seeds] {
    wipe(request.data.data(), request.data.size());
    if (request.combine) wipe(request.combine->mask.data(), request.combine->mask.size());
    wipe_seeds();
  };
  try {
    deal.mask(request);
    int missing = -1;
    auto replies = serve_job(
        wire::MessageType::Krb,
        [&](const wire::RequestId& id) {
          request.id = id;
          Frames frames;
          for (int party = 0; party < parties(); ++party) {
            wipe_seeds();
            request.record_mask = deal.for_server(party);
            frames.push_back(wire::encode_request(request));
          }
          return frames;
        },
        false, &missing);
    wipe_request();
    // Two servers of security = "active" (a two-server cluster, or a pair serving while a third
    // is down, in its order) answer under pads of seeds the other lacks, checked with their
    // shares of R (protocol/client_checks/output_pads.hpp).
    if (pads != nullptr && replies.size() == 2)
      for (int index = 0; index < 2; ++index) {
        const int party = missing < 0 ? index : (missing + 1 + index) % 3;
        wire::KrbRecordMask mask = deal.for_server(party);
        pads->seeds[static_cast<std::size_t>(index)] = client_checks::pad_of_seed(wire::pad_seed_of(mask, index == 0));
        pads->mask_shares[static_cast<std::size_t>(index)] =
            wire::xor_record_mask(mask, index == 0, wire::krb_secret_record_bytes(request));
        for (auto& seed : mask.seeds) wipe(seed.data(), seed.size());
      }
    return replies;
  } catch (...) {
    wipe_request();
    throw;
  }
}

std::vector<std::uint8_t> ClusterClient::krb_encrypt(const wire::KeyId& key, std::uint32_t usage,
                                                     std::span<const std::uint8_t, wire::kKrbConfounderBytes> confounder,
                                                     std::span<const std::uint8_t> plaintext,
                                                     const std::optional<wire::KrbCombine>& combine) {
  // Saturated, so that no plaintext length wraps past the limit.
  const std::size_t data_bytes = std::min(plaintext.size(), wire::kKrbMaxDataBytes + std::size_t{1}) +
                                 wire::kKrbConfounderBytes;
  check_krb_request(key, wire::KrbOperation::Encrypt, usage, combine, data_bytes);
  std::lock_guard lock(mutex_);
  // The request afresh for each try: a round trip wipes its data.
  return checked([&] {
    wire::KrbRequest request = krb_request(key, wire::KrbOperation::Encrypt, usage, combine);
    request.data.reserve(data_bytes);
    request.data.assign(confounder.begin(), confounder.end());
    request.data.insert(request.data.end(), plaintext.begin(), plaintext.end());
    const wire::KeyAlgorithm algorithm = wire::krb_job_algorithm(request);
    KrbPads pads;
    const Replies replies = krb_round_trip(request, &pads);
    const SecretBytes result = open_krb(replies, wire::KrbOperation::Encrypt, data_bytes, algorithm, &pads);
    return std::vector<std::uint8_t>(result.span().begin(), result.span().end());
  });
}

std::optional<SecretBytes> ClusterClient::krb_decrypt(const wire::KeyId& key, std::uint32_t usage,
                                                      std::span<const std::uint8_t> ciphertext,
                                                      const std::optional<wire::KrbCombine>& combine) {
  check_krb_request(key, wire::KrbOperation::Decrypt, usage, combine, ciphertext.size());
  const wire::KeyAlgorithm algorithm = combine ? combine->combined : key.algorithm;
  std::lock_guard lock(mutex_);
  return checked([&]() -> std::optional<SecretBytes> {
    wire::KrbRequest request = krb_request(key, wire::KrbOperation::Decrypt, usage, combine);
    request.data.assign(ciphertext.begin(), ciphertext.end());
    KrbPads pads;
    const Replies replies = krb_round_trip(request, &pads);
    const auto opened = open_krb_decrypt(replies, ciphertext.size(), algorithm, &pads);
    if (!opened) return std::nullopt;
    return SecretBytes(opened->span().subspan(wire::kKrbConfounderBytes));
  });
}

std::vector<std::uint8_t> ClusterClient::krb_checksum(const wire::KeyId& key, std::uint32_t usage,
                                                      std::span<const std::uint8_t> data,
                                                      const std::optional<wire::KrbCombine>& combine) {
  check_krb_request(key, wire::KrbOperation::Checksum, usage, combine, data.size());
  std::lock_guard lock(mutex_);
  return checked([&] {
    wire::KrbRequest request = krb_request(key, wire::KrbOperation::Checksum, usage, combine);
    request.data.assign(data.begin(), data.end());
    const wire::KeyAlgorithm algorithm = wire::krb_job_algorithm(request);
    KrbPads pads;
    const Replies replies = krb_round_trip(request, &pads);
    const SecretBytes result = open_krb(replies, wire::KrbOperation::Checksum, data.size(), algorithm, &pads);
    return std::vector<std::uint8_t>(result.span().begin(), result.span().end());
  });
}

std::vector<std::uint8_t> ClusterClient::keystream(const wire::KeyId& key, const std::array<std::uint8_t, 16>& counter,
                                                   std::uint32_t blocks) {
  wire::ComputeRequest request;
  request.key = key;
  request.operation = wire::Operation::CtrKeystream;
  request.counter = counter;
  request.blocks = blocks;
  return compute(std::move(request));
}

std::vector<std::uint8_t> ClusterClient::ecb_encrypt(const wire::KeyId& key, std::span<const std::uint8_t> blocks) {
  return ecb(key, wire::Operation::EcbEncrypt, blocks);
}

std::vector<std::uint8_t> ClusterClient::ecb_decrypt(const wire::KeyId& key, std::span<const std::uint8_t> blocks) {
  return ecb(key, wire::Operation::EcbDecrypt, blocks);
}

// Checked before the copy: a length no request may carry is refused on the length alone.
std::vector<std::uint8_t> ClusterClient::ecb(const wire::KeyId& key, wire::Operation operation,
                                             std::span<const std::uint8_t> blocks) {
  if (blocks.empty() || blocks.size() % 16 != 0 || blocks.size() / 16 > wire::kMaxRequestBlocks)
    throw InvalidRequest("ECB input must be 1.." + std::to_string(wire::kMaxRequestBlocks) + " whole 16-byte blocks");
  wire::ComputeRequest request;
  request.key = key;
  request.operation = operation;
  request.blocks = static_cast<std::uint32_t>(blocks.size() / 16);
  request.input.assign(blocks.begin(), blocks.end());
  return compute(std::move(request));
}

}  // namespace mpc::client
