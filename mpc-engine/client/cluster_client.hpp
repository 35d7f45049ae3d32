// Client side of the engine: sends each request to every server (three with rss3, two with
// gc2 and lut2), waits for their output shares within one deadline, and reconstructs, refusing
// any result the servers do not agree on. Key import deals replicated shares to three servers
// or XOR shares to two; the calls are the same for both kinds of cluster.
//
// Fork safety: connections belong to the process that opened them. After fork()
// the child opens its own on first use and never touches the parent's sockets.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "client/reconstruct.hpp"
#include "common/secret.hpp"
#include "settings/cluster_settings.hpp"
#include "wire/client_messages.hpp"

namespace mpc::client {

// A server answered with an error status (the first such answer is reported).
class ServerError : public Error {
 public:
  ServerError(int party, wire::Status status, const std::string& detail);
  int party() const noexcept { return party_; }
  wire::Status status() const noexcept { return status_; }

 private:
  int party_;
  wire::Status status_;
};

// A call whose arguments break a rule of its request (wire::validate_request: the key's
// algorithm for the call, sizes, a Kerberos usage): refused before anything is sent. The client
// checks each rule here, once; the C interface adds only what C needs (NULL pointers, buffers).
class InvalidRequest : public Error {
 public:
  explicit InvalidRequest(const std::string& detail) : Error(Component::Client, detail) {}
};

// wire::validate_key_name's refusal, as InvalidRequest.
void require_valid_key_name(const std::string& name);
// Throws InvalidRequest unless `bytes` is the key length of `algorithm`: checked on the length,
// before a key is copied.
void require_key_length(wire::KeyAlgorithm algorithm, std::size_t bytes);
// Throws InvalidRequest when GHASH over aad and text would need more hash key powers than the
// servers keep: checked on the lengths, before any input is copied.
void require_gcm_input_fits(std::size_t aad_bytes, std::size_t text_bytes);

class ClusterClient {
 public:
  explicit ClusterClient(settings::ClusterSettings settings);
  ~ClusterClient();
  ClusterClient(const ClusterClient&) = delete;
  ClusterClient& operator=(const ClusterClient&) = delete;

  // AES_k(counter + i) for i in [0, blocks), counter a 128-bit big-endian integer.
  std::vector<std::uint8_t> keystream(const wire::KeyId& key, const std::array<std::uint8_t, 16>& counter,
                                      std::uint32_t blocks);
  std::vector<std::uint8_t> ecb_encrypt(const wire::KeyId& key, std::span<const std::uint8_t> blocks);
  std::vector<std::uint8_t> ecb_decrypt(const wire::KeyId& key, std::span<const std::uint8_t> blocks);

  // AES-256-GCM jobs of an Aes256Gcm key (mpc_client.h has the contract). Each server's
  // UnknownNonce answer arrives as ServerError with that status.
  // local_masks: nonces whose masks the servers compute each from its own share (mpc_client.h,
  // mpc_client_gcm_prefetch_local).
  GcmPrefetched gcm_prefetch(const wire::KeyId& key, std::uint32_t count, std::uint32_t blocks_per_nonce,
                             bool local_masks = false);
  wire::GcmTagBytes gcm_tag(const wire::KeyId& key, const wire::GcmNonce& nonce, std::span<const std::uint8_t> aad,
                            std::span<const std::uint8_t> ciphertext);
  // The tag of aad under nonce and, in the same round trip, the tag of prefix || nonce || tag
  // under `chained` (unchecked: see mpc_client.h). Three-server clusters only.
  std::pair<wire::GcmTagBytes, wire::GcmTagBytes> gcm_tag_chained(const wire::KeyId& key, const wire::GcmNonce& nonce,
                                                                  std::span<const std::uint8_t> aad,
                                                                  const wire::GcmNonce& chained,
                                                                  std::span<const std::uint8_t> prefix);
  // gcm_tag, with `check` checked in the same round trip; throws VerificationError, and
  // returns no tag, when the check fails. Three-server clusters only.
  wire::GcmTagBytes gcm_tag_checked(const wire::KeyId& key, const wire::GcmNonce& nonce,
                                    std::span<const std::uint8_t> aad, std::span<const std::uint8_t> ciphertext,
                                    wire::GcmTagCheck check);
  // The plaintext, or nullopt when the tag is wrong.
  std::optional<SecretBytes> gcm_open(const wire::KeyId& key, const wire::GcmNonce& nonce,
                                      std::span<const std::uint8_t> aad, std::span<const std::uint8_t> ciphertext,
                                      const wire::GcmTagBytes& tag);

  // Kerberos jobs of a Kerberos key (RFC 3962 or RFC 8009 algorithm) with the results of
  // libk5crypto (mpc_client.h has the contract); usage is one the operation allows
  // (wire::krb_usage_allows). With `combine`, the job runs under KRB-FX-CF2(K1, pepper1, key,
  // combine->pepper) instead, whose algorithm is combine->combined (wire::KrbCombine: the
  // mask is PRF+(K1, pepper1); only the uses krb_combine_refusal allows). Arguments outside
  // the contract throw Error(Client) before anything is sent. MAC lengths are
  // wire::krb_mac_bytes of the job's algorithm (12, 16 or 24).
  // confounder || plaintext encrypted under Ke_usage, then the MAC under Ki_usage.
  std::vector<std::uint8_t> krb_encrypt(const wire::KeyId& key, std::uint32_t usage,
                                        std::span<const std::uint8_t, wire::kKrbConfounderBytes> confounder,
                                        std::span<const std::uint8_t> plaintext,
                                        const std::optional<wire::KrbCombine>& combine = std::nullopt);
  // The plaintext (confounder removed), or nullopt when the MAC does not match.
  std::optional<SecretBytes> krb_decrypt(const wire::KeyId& key, std::uint32_t usage,
                                         std::span<const std::uint8_t> ciphertext,
                                         const std::optional<wire::KrbCombine>& combine = std::nullopt);
  std::vector<std::uint8_t> krb_checksum(const wire::KeyId& key, std::uint32_t usage,
                                         std::span<const std::uint8_t> data,
                                         const std::optional<wire::KrbCombine>& combine = std::nullopt);

  // Administration (needs an admin client key). import_key splits the key material
  // (build_key_material in key_material.hpp) into replicated shares; no server ever sees
  // the key.
  void import_key(const wire::KeyId& key, const SecretBytes& aes_key);
  // Has the three servers make an aes256-gcm key none of them knows and store their shares of
  // it under `key` (wire::GenerateKeyRequest); all or nothing as import_key. Throws for a
  // two-server cluster (Error(Client)) and ServerError for a refusal (KeyExists for an id
  // stored or ever deleted, PeerFailure with a server down).
  void generate_key(const wire::KeyId& key);
  // Whether generate_key can serve: a three-server cluster.
  bool generates_keys() const { return parties() == 3; }
  std::vector<wire::KeyInfo> list_keys(const std::string& name_prefix = "");
  void delete_key(const wire::KeyId& key);
  // Deletes the key from every server that holds it: a server that does not is no failure
  // (an earlier deletion, or a failed import, may have reached only some). Returns whether
  // any server held it.
  bool delete_key_everywhere(const wire::KeyId& key);
  std::vector<wire::ServerStatus> status();  // in party order; throws unless every server answers
  // Each server's status, or why it gave none (unreachable, silent, an error): in party order.
  struct StatusOrError {
    std::optional<wire::ServerStatus> status;
    std::string error;
  };
  std::vector<StatusOrError> status_each();
  // Gives every server an operator's exclusion or readmission (wire::ExclusionRequest; needs an
  // admin client key): for each server in party order, empty when it took it, else why not
  // (unreachable or silent, or its refusal).
  std::vector<std::string> exclusion_each(const wire::ExclusionRequest& request);

  std::chrono::milliseconds timeout() const { return settings_.timeout; }
  // For every later call: how long it may take, all servers together (1 ms .. 600 s).
  void set_timeout(std::chrono::milliseconds timeout);

  struct Links;

 private:
  std::vector<std::uint8_t> compute(wire::ComputeRequest request);
  std::vector<std::uint8_t> ecb(const wire::KeyId& key, wire::Operation operation, std::span<const std::uint8_t> blocks);
  // Sends a Krb request (serve_job) and returns the replies; the request's data and the
  // encoded frames are wiped whatever happens.
  // With `pads`, what two servers' padded answers are checked by (reconstruct.hpp, KrbPads).
  Replies krb_round_trip(wire::KrbRequest& request, KrbPads* pads = nullptr);
  // A job's replies: every server's Ok with gc2 and lut2 (round_trip); with rss3, all three
  // servers' Ok replies, or two XOR-form Ok replies from the two servers serving while the
  // third is down (node/membership.hpp). A three-server job whose servers regroup or one of
  // which went away is sent again under a fresh id (encode makes the frame for an id; each
  // frame is wiped after its attempt) until it is served or the timeout passes: a server
  // going down costs a retry, not a failure. A job answered PeerFailure (a peer's part of
  // its batch came too late: nothing was opened) is sent again once, with any protocol: a
  // host starved of CPU for a moment costs a retry, a lasting failure is still reported.
  // Two servers unreachable fail at once. encode
  // gives each server's frame (same_frame, but for a Krb request's own seeds).
  // service_bound: the answer needs what the servers serving now hold (a tag's nonce, a held
  // nonce's reopen): a retry would reach another service, so the call fails as an unknown
  // nonce instead.
  // Two XOR-form replies of a pair come in the pair's order, its leader's first
  // (node/pair_service.hpp), and *missing (when given) names the server the pair served
  // without; it is -1 for three replies and for a two-server cluster.
  using Frames = std::vector<std::vector<std::uint8_t>>;
  Replies serve_job(wire::MessageType type, const std::function<Frames(const wire::RequestId&)>& encode,
                    bool service_bound = false, int* missing = nullptr);
  struct Attempt;
  // How long a job of `type` may take, every attempt together.
  std::chrono::milliseconds timeout_of(wire::MessageType type) const;
  // One try of serve_job against a three-server cluster.
  Attempt attempt_job(const Frames& frames, const wire::RequestId& id, wire::MessageType type,
                      std::chrono::steady_clock::time_point deadline);
  // Encodes `request` with a fresh id and returns the replies (serve_job).
  template <typename Request>
  Replies ask_all(Request& request, wire::MessageType type);
  // The same, each frame with a pad seed of its server's own (Request::output_pad), drawn afresh
  // for each attempt: on return, the pads the two-party replies are under (a two-server
  // cluster's, or the pair's that served while a third server was down, its leader's first).
  template <typename Request>
  Replies ask_padded(Request& request, wire::MessageType type, OutputPads& pads);
  // Sends frames[i] to each server i with targets[i] set and collects their replies
  // (any status). Throws Error(Client) if a target is unreachable or silent past the
  // deadline. With stop_on_error, the first error reply is thrown as ServerError at once:
  // the result is lost anyway, so the caller does not wait for the others. With
  // tolerate_unreachable, an unreachable or silent server's reply is a PeerFailure instead
  // (marked in *unreachable when given).
  Replies exchange(const std::vector<std::vector<std::uint8_t>>& frames, const wire::RequestId& id,
                   wire::MessageType type, std::vector<bool> targets, bool stop_on_error,
                   bool tolerate_unreachable = false, std::vector<bool>* unreachable = nullptr);
  // exchange() with every server, then throws ServerError unless all three answered Ok.
  Replies round_trip(const std::vector<std::vector<std::uint8_t>>& frames,
                                        const wire::RequestId& id, wire::MessageType type);
  // After a key change sent to every server: returns if all stored it; else deletes it where it
  // was stored and throws the first failure.
  void all_or_nothing(const wire::KeyId& key, const Replies& replies, const std::vector<bool>& unreachable);
  static constexpr int kGenerateKeyTimeout = 120000;  // ms
  static constexpr int kGenerateKeyAttempts = 5;
  Links& links();
  int parties() const;  // servers in the cluster: 3 (rss3) or 2 (gc2, lut2)
  std::vector<std::vector<std::uint8_t>> same_frame(const std::vector<std::uint8_t>& frame) const;
  std::vector<bool> all_servers() const;

  // Runs `job` (its round trips and the opening of their replies). When the opening refuses
  // what the servers answered (Disagreement, VerificationError: one of them deviated where only
  // this client sees it), every server hears of it (report_failed_check) and, unless `once`, the
  // job runs again, at most kFailedCheckRetries times: the servers then serve without the
  // deviating server's help, or in a pair without it (node/disputes.hpp). `once`: a job a retry
  // cannot serve (a tag spends its nonce) is reported only.
  template <typename Job>
  auto checked(Job&& job, bool once = false) -> decltype(job());
  // Tells every server of a three-server cluster that a job served by the pair without
  // `served_without` (-1: by all three) failed this client's check `what`
  // (wire::ExclusionAction::CheckFailed), to the servers that answered it. Best effort: a
  // server that does not hear it learns it from its peers. Whether a server answered that
  // another service serves from now on (a pair serving for an outage has none to hand over
  // to: the job is not sent again).
  bool report_failed_check(int served_without, const std::string& what);
  static constexpr int kFailedCheckRetries = 3;
  // The server the last job's replies came without (serve_job's *missing); kNotServed while
  // the call under way has had no replies.
  static constexpr int kNotServed = -2;
  int served_without_ = kNotServed;

  settings::ClusterSettings settings_;
  std::mutex mutex_;
  std::unique_ptr<Links> links_;
};

}  // namespace mpc::client
