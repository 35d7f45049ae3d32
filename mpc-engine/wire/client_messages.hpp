// Messages between a client (the KDC's client library, mpcctl) and one server.
// One ZeroMQ frame each; little-endian; every decoder checks every length and
// throws FormatError(Component::Wire) on anything malformed, including trailing bytes.
//
// Request frame:  u8 version (=1) | u8 type | 16-byte request id | body
// Reply frame:    u8 version (=1) | u8 type (=Reply) | 16-byte request id | u16 status |
//                 short string error | body (per request type, only when status == Ok)
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/secret.hpp"
#include "wire/key_id.hpp"
#include "wire/sealed_share.hpp"

namespace mpc::wire {

inline constexpr std::uint8_t kProtocolVersion = 1;
inline constexpr std::size_t kBlockBytes = 16;
// Hard ceiling on blocks in one request frame; servers apply their own lower limit.
inline constexpr std::uint32_t kMaxRequestBlocks = 1u << 22;

using RequestId = std::array<std::uint8_t, 16>;

enum class MessageType : std::uint8_t {
  Compute = 1,
  ImportKey = 2,
  ListKeys = 3,
  DeleteKey = 4,
  Status = 5,
  GcmPrefetch = 6,
  GcmTag = 7,
  GcmOpen = 8,
  Krb = 9,
  GcmReopen = 10,
  GcmTagParts = 11,  // a GcmTag request with a chained tag or a check (GcmTagRequest)
  GcmPrefetchLocal = 12,  // a GcmPrefetch request with local masks (GcmPrefetchRequest)
  GenerateKey = 13,
  Exclusion = 14,
  Reply = 0x80,
};

enum class Operation : std::uint8_t {
  CtrKeystream = 1,  // blocks of AES_k(counter + i), counter a 128-bit big-endian integer (as OpenSSL CTR)
  EcbEncrypt = 2,    // AES_k(input block i)
  EcbDecrypt = 3,    // AES_k^-1(input block i)
};

// The seed of one server's one-time pad on a two-server job's outputs (protocol/client_checks):
// each server gets its own, the other never sees it.
inline constexpr std::size_t kOutputPadSeedBytes = 32;
using OutputPadSeed = std::array<std::uint8_t, kOutputPadSeedBytes>;

// Body: u8 operation (| 0x40 with an output pad) | key id | u32 blocks | CTR: 16-byte counter |
// ECB: blocks * 16 bytes, then with an output pad, last and outside what request_digest
// covers: its seed.
// The key is Aes128 or Aes256 (an Aes256Gcm key serves only the Gcm* requests).
struct ComputeRequest {
  RequestId id{};
  KeyId key;
  Operation operation = Operation::CtrKeystream;
  std::uint32_t blocks = 0;                    // 1..kMaxRequestBlocks
  std::array<std::uint8_t, 16> counter{};      // CtrKeystream only
  std::vector<std::uint8_t> input;             // ECB only: blocks * 16 bytes
  // This server's pad seed: a two-server cluster of security = "active" answers with the
  // outputs padded (ComputeResult::padded) and refuses a job without one; others ignore it.
  std::optional<OutputPadSeed> output_pad{};
};

// Body: key id | u32 length | this server's share of the material, sealed to the server's
// public key for this key id (wire/sealed_share.hpp): x then a, each material_bytes long
// (three-server clusters), or its XOR share, material_bytes (two-server).
struct ImportKeyRequest {
  RequestId id{};
  KeyId key;
  // (2 or 1) * material_bytes(key.algorithm) + kSealedShareOverhead bytes
  std::vector<std::uint8_t> sealed_share;
};

// Body: short string name prefix (may be empty)
struct ListKeysRequest {
  RequestId id{};
  std::string name_prefix;
};

// Body: key id
struct DeleteKeyRequest {
  RequestId id{};
  KeyId key;
};

// Body: key id | 32-byte seed. The servers make an aes256-gcm key none of them knows and
// store their shares of its material under the id: a job (every server computes on the same
// copy), answered with no body. The key's shares come from keys the servers share pairwise and
// the request's digest, which the seed (fresh randomness of the requester's) makes unique to
// the request: two servers' long-term keys alone do not recompute a key deleted since.
struct GenerateKeyRequest {
  RequestId id{};
  KeyId key;
  std::array<std::uint8_t, 32> seed{};
};

// Body: u8 action | u8 party (0-based) | short string reason (empty for a readmission). An
// operator's exclusion of one server of a three-server cluster (admin client key): the other
// two serve as a pair without it until it is readmitted, whatever it does meanwhile
// (node/membership.hpp). Answered with no body.
//
// CheckFailed: a client's report (admin or compute client key) that the servers' answers to
// one of its jobs failed its checks (inconsistent shares, a padded output that is not the
// pads', a chained tag): `party` is the server the pair serving the job ran without, or
// kServedByAllThree; `reason` the check. One of the servers deviated, and none of the checks
// the servers run names it: three-party service is suspended, or the pair set aside, as for a
// check that names nobody (node/disputes.hpp).
enum class ExclusionAction : std::uint8_t { Exclude = 1, Readmit = 2, CheckFailed = 3 };
inline constexpr std::size_t kMaxExclusionReasonBytes = 200;
// A reason as the servers keep it in their records: at most kMaxExclusionReasonBytes, one line.
std::string one_line_reason(std::string_view text);
inline constexpr std::uint8_t kServedByAllThree = 3;
struct ExclusionRequest {
  RequestId id{};
  ExclusionAction action = ExclusionAction::Exclude;
  std::uint8_t party = 0;
  std::string reason;
};

// Body: empty
struct StatusRequest {
  RequestId id{};
};

// AES-256-GCM jobs (NIST SP 800-38D, 96-bit nonces): keystream block j of nonce N is
// AES_K(N || j + 2), the tag is GHASH_H(aad, text) ^ AES_K(N || 1). Their key is Aes256Gcm.
inline constexpr std::uint32_t kMaxGcmPrefetchCount = 65536;
inline constexpr std::uint32_t kMaxGcmBlocksPerNonce = 4096;

using GcmNonce = std::array<std::uint8_t, kGcmNonceBytes>;
using GcmTagBytes = std::array<std::uint8_t, kGcmTagBytes>;

// A nonce is the servers' 64-bit epoch || a 32-bit counter (jobs/nonce_pool.hpp). A nonce of a
// prefetch with local masks (GcmPrefetchRequest::local_masks) has the counter's top bit set;
// every other nonce has it clear, so counters run to 2^31 per epoch. Its masks and keystream
// are M(N || j), computed by each server from its own share (jobs/gcm_masks.hpp), instead of
// AES_K(N || j).
inline constexpr std::uint32_t kLocalMaskCounterBit = 0x80000000u;
inline constexpr std::uint64_t kGcmCountersPerEpoch = kLocalMaskCounterBit;
bool is_local_mask_nonce(const GcmNonce& nonce) noexcept;

// GHASH input blocks for GCM with these lengths: padded AAD, padded text and the length
// block. Requests whose count exceeds kGcmHashPowers are malformed.
std::size_t gcm_hash_blocks(std::size_t aad_bytes, std::size_t text_bytes) noexcept;

// Body: key id | u32 count | u32 blocks_per_nonce (| 0x80000000 with an output pad), then with
// an output pad, last and outside what request_digest covers: its seed. The servers pick
// `count` fresh nonces and compute blocks_per_nonce keystream blocks for each;
// count * blocks_per_nonce is at most kMaxRequestBlocks.
struct GcmPrefetchRequest {
  RequestId id{};
  KeyId key;
  std::uint32_t count = 0;             // 1..kMaxGcmPrefetchCount
  std::uint32_t blocks_per_nonce = 0;  // 0..kMaxGcmBlocksPerNonce
  // Local masks (message type GcmPrefetchLocal): nonces marked with kLocalMaskCounterBit whose
  // masks and keystream each server computes from its share alone, with no AES between them.
  bool local_masks = false;
  // This server's pad seed, as ComputeRequest::output_pad: a two-server cluster of security =
  // "active" answers the keystream padded (GcmPrefetchResult::padded). None with local masks.
  std::optional<OutputPadSeed> output_pad{};
};

// A second tag made in the same round trip, over prefix || N || T where (N, T) is the
// request's own nonce and tag (a PAC's KDC checksum, made over its server checksum). T is
// never opened to the servers: each answers an additive share of the second tag, which has
// no redundancy, so the client checks it in a later request (GcmTagCheck) before anything
// carrying it leaves.
struct GcmChainedTag {
  GcmNonce nonce{};
  std::vector<std::uint8_t> prefix;  // at most kMaxGcmChainPrefixBytes
};

// A tag of an earlier request to check (the zero test of GCM reopen, rss3/zero_test.hpp)
// alongside this one: tag over aad under nonce, a nonce these servers tagged.
struct GcmTagCheck {
  GcmNonce nonce{};
  std::vector<std::uint8_t> aad;
  GcmTagBytes tag{};
};

inline constexpr std::size_t kMaxGcmChainPrefixBytes = 32;

// Body: key id | 12-byte nonce | u32 aad length | aad | u32 text length | text. With a chained
// tag or a check the message type is GcmTagParts instead, and the body goes on: u8 parts (bit 0:
// chained, bit 1: check) | chained: 12-byte nonce | u8 prefix length | prefix | check: 12-byte
// nonce | u32 aad length | aad | 16-byte tag.
// Tags ciphertext `text` under a prefetched nonce, consuming it (and the chained tag's).
struct GcmTagRequest {
  RequestId id{};
  KeyId key;
  GcmNonce nonce{};
  std::vector<std::uint8_t> aad;
  std::vector<std::uint8_t> text;
  std::optional<GcmChainedTag> chained{};
  std::optional<GcmTagCheck> check{};
};

// Body: key id | 12-byte nonce | u32 aad length | aad | u32 text length (| 0x80000000 with an
// output pad) | text | 16-byte tag, then with an output pad, last and outside what
// request_digest covers: its seed. Checks `tag` over ciphertext `text` and returns its
// keystream with the verdict.
struct GcmOpenRequest {
  RequestId id{};
  KeyId key;
  GcmNonce nonce{};
  std::vector<std::uint8_t> aad;
  std::vector<std::uint8_t> text;
  GcmTagBytes tag{};
  // This server's pad seed, as ComputeRequest::output_pad: a two-server cluster of security =
  // "active" answers the keystream and the verdict padded (GcmOpenResult::padded_report).
  // A GcmReopen carries none.
  std::optional<OutputPadSeed> output_pad{};
};

// Body: as GcmOpen's. Opens a ticket the servers tagged and still hold the tag mask of
// (docs/ticket-format.md): each server answers from what it kept, without AES, or refuses
// with UnknownNonce when it holds nothing for the nonce (the client then sends a GcmOpen).
struct GcmReopenRequest : GcmOpenRequest {};

// Kerberos jobs under a Kerberos key: Aes128CtsHmacSha1 or Aes256CtsHmacSha1 (RFC 3961,
// RFC 3962), Aes128CtsHmacSha256 or Aes256CtsHmacSha384 (RFC 8009). Each is one evaluation of
// a circuit fixed by the operation, the algorithm and the data length (circuits/kerberos.hpp,
// circuits/kerberos_sha2.hpp, circuits/kerberos_cf2.hpp); `usage` picks the derived keys. M
// below is krb_mac_bytes of the algorithm the job runs under: 12 (HMAC-SHA1-96), 16
// (HMAC-SHA256-128) or 24 (HMAC-SHA384-192).
//
// Only outputs a Kerberos client reads are ever opened: ciphertexts, checksums, and
// plaintexts whose MAC verified. A PRF output of a stored key is never one (it is as good
// as the key for FAST), so there is no PRF job: KRB-FX-CF2 runs inside (KrbCombine).
enum class KrbOperation : std::uint8_t {
  // data = confounder (16 bytes, chosen by the caller) || plaintext. Result: the ciphertext
  // (CBC-CTS under Ke, data.size() bytes) || the M-byte MAC under Ki (RFC 3962: of data;
  // RFC 8009: of 16 zero bytes || ciphertext): what krb5_c_encrypt writes.
  Encrypt = 1,
  // data = what krb5_c_encrypt wrote (at least 16 + M bytes). Result: confounder || plaintext
  // (data.size() - M bytes) when the MAC matches, all zeros otherwise, then one verdict byte
  // (1 = the MAC matches, 0 = it does not). The MAC is compared inside the computation.
  Decrypt = 2,
  // data = the message (may be empty). Result: the M-byte HMAC under Kc.
  Checksum = 3,
};

// Whether a KDC does `operation` under `usage` with a stored Kerberos key: the usage rows of
// keys/key_algorithms.h (mpc_key_usage_operations). Jobs under a combined key (KrbCombine)
// have their own list: krb_combine_refusal().
bool krb_usage_allows(KrbOperation operation, std::uint32_t usage) noexcept;

// A job under KRB-FX-CF2(K1, pepper1, key, pepper) (RFC 6113 5.1) instead of the stored key
// itself: FAST's challenge keys and strengthened reply key, where K1 (the armor key or the
// strengthen key) is a key the caller holds in clear. The caller sends its half, the mask
// PRF+(K1, pepper1) of the combined key's length; the servers compute PRF+(key, pepper),
// the combined key and its derived keys inside the circuit and open only the operation's
// result, which is that of the same job under the combined key (of algorithm `combined`, the
// algorithm M and the result lengths follow). Allowed, as krb5kdc 1.20.1 uses them:
// pepper "challengelongterm" with Decrypt usage 54 (the client's encrypted challenge) and
// Encrypt usage 55 (the KDC's), pepper "replykey" with Encrypt usage 3 (the AS-REP) and
// Checksum usage 56.
inline constexpr std::size_t kKrbMaxPepperBytes = 64;
struct KrbCombine {
  KeyAlgorithm combined = KeyAlgorithm::Aes256CtsHmacSha1;  // K1's: a Kerberos algorithm
  std::string pepper;                                       // 1..kKrbMaxPepperBytes printable bytes
  std::vector<std::uint8_t> mask;                           // key_bytes(combined) bytes
  bool operator==(const KrbCombine&) const = default;
};
// Why a combined job may not run, or nullopt when it may.
std::optional<std::string> krb_combine_refusal(KrbOperation operation, std::uint32_t usage, const KrbCombine& combine);
// Why a Kerberos job may not run under `usage` (with `combine`, krb_combine_refusal's answer),
// or nullopt when it may: the one wording of the rule for the client library and the servers.
std::optional<std::string> krb_usage_refusal(KrbOperation operation, std::uint32_t usage,
                                             const std::optional<KrbCombine>& combine = std::nullopt);

// How the secret bytes of a Kerberos job's record reach the servers: shared, never in clear.
// An encryption's plaintext (an EncASRepPart holds the session key of the TGT it comes with),
// a checksummed message and a KrbCombine's mask travel masked by R = S(s_0) ^ S(s_1) [^ S(s_2)],
// where S is a stream keyed by a seed (jobs/krb_record_mask.hpp) and the client draws one seed
// per component: three for a three-server cluster, two for a two-server one. Server i gets
// the seeds of components i and i - 1 (three components) or of component i (two), so the
// seeds form a sharing of R as the servers' key shares form one of the key, and every server
// gets the hashes of all seeds: two servers that hold one seed check it against the same
// hash, so the client cannot hand them different ones. The hashes are part of the request all
// servers compare (request_digest); the seeds are not, and are different at every server.
inline constexpr std::size_t kKrbMaskSeedBytes = 32;
using KrbMaskSeed = std::array<std::uint8_t, kKrbMaskSeedBytes>;
using KrbMaskSeedHash = std::array<std::uint8_t, 32>;
struct KrbRecordMask {
  std::vector<KrbMaskSeedHash> seed_hashes;  // one per component: 2 or 3
  std::vector<std::uint8_t> held;            // the components of `seeds`: this server's own first
  std::vector<KrbMaskSeed> seeds;            // this server's seeds (2 of 3, or 1 of 2)
  bool operator==(const KrbRecordMask&) const = default;
};

// Body: u8 operation (| 0x80 with a KrbCombine, | 0x40 with a KrbRecordMask) | key id |
// u32 usage | u32 length | data, then with a KrbCombine: u8 combined algorithm | short string
// pepper | mask (its algorithm's key bytes), then with a KrbRecordMask: u8 components | the
// seed hashes, and last, outside what request_digest covers: u8 held | (u8 component | seed)
// per held seed.
struct KrbRequest {
  RequestId id{};
  KeyId key;
  KrbOperation operation = KrbOperation::Encrypt;
  std::uint32_t usage = 0;
  std::vector<std::uint8_t> data;  // at most kKrbMaxDataBytes; length rules per operation above
  std::optional<KrbCombine> combine;
  std::optional<KrbRecordMask> record_mask;  // the servers refuse a job without one
};

// The algorithm a Krb request's job runs under: the combined key's, or the stored key's.
KeyAlgorithm krb_job_algorithm(const KrbRequest& request) noexcept;

// Result bytes of a Krb request under a key of `algorithm` (a Kerberos algorithm) with
// `data_bytes` of data (the lengths above); throws FormatError(Wire) for data the operation
// cannot take or a non-Kerberos algorithm.
std::size_t krb_result_bytes(KrbOperation operation, KeyAlgorithm algorithm, std::size_t data_bytes);
// The same for the RFC 3962 keys (either size: their result lengths are the same).
std::size_t krb_result_bytes(KrbOperation operation, std::size_t data_bytes);

// What every server compares before computing anything with a request: BLAKE2b-256 of the
// request frame exactly as it arrived. The client sends all servers the same frame; copies
// that differ in any byte (key id, operation, usage, combine, public inputs, request id)
// have different digests.
// A Krb request's seeds (KrbRecordMask) end the frame and differ at every server by design:
// the digest leaves them out and covers their hashes instead.
using RequestDigest = std::array<std::uint8_t, 32>;
RequestDigest request_digest(std::span<const std::uint8_t> frame) noexcept;

using Request = std::variant<ComputeRequest, ImportKeyRequest, ListKeysRequest, DeleteKeyRequest, StatusRequest,
                             GcmPrefetchRequest, GcmTagRequest, GcmOpenRequest, KrbRequest, GcmReopenRequest,
                             GenerateKeyRequest, ExclusionRequest>;
// request_digest of `frame` without the bytes `decoded` (decode_request of it) keeps to the
// server it went to: a Krb request's seeds.
RequestDigest request_digest(std::span<const std::uint8_t> frame, const Request& decoded);

// Key ids are encoded as: short string name | u32 version | u8 algorithm.
std::vector<std::uint8_t> encode_request(const Request& request);
// Throws FormatError(Wire) for whatever encode_request would refuse, without encoding: a client
// checks a request with it before it opens a connection. One overload per request a client
// builds, so that checking one copies nothing.
void validate_request(const Request& request);
void validate_request(const ComputeRequest& request);
void validate_request(const GcmPrefetchRequest& request);
void validate_request(const GcmTagRequest& request);
void validate_request(const GcmOpenRequest& request);
void validate_request(const KrbRequest& request);
Request decode_request(std::span<const std::uint8_t> frame);
const RequestId& request_id(const Request& request);
// The key a job request names; throws Error(Wire) for a request that names none (Status).
const KeyId& request_key(const Request& request);

enum class Status : std::uint16_t {
  Ok = 0,
  BadRequest = 1,     // malformed or unsupported request
  UnknownKey = 2,     // no such key id in the store
  TooLarge = 3,       // request over a configured limit
  Busy = 4,           // queue full; retry later
  PeerFailure = 5,    // another server timed out, went away or aborted
  Unauthorized = 6,   // the client's key is not allowed to do this
  KeyExists = 7,      // import of a key id that is already stored
  Internal = 8,       // anything else; details in the server log
  NotReady = 9,       // server is starting or refusing to serve
  UnknownNonce = 10,  // GCM tag for a nonce this server does not hold (used, expired, evicted)
  // The servers received different copies of the request (or one never received it):
  // refused before anything was computed with it.
  RequestMismatch = 11,
  // Not served, nothing computed, and worth sending again under a new id (client/
  // job_attempts.cpp): the cluster is changing which servers serve (one went down or came
  // back), a peer still heard from was late to confirm the request (a starved host), or the
  // leader never received its copy (the client's link to it still coming up).
  Regrouping = 12,
  // A server's messages failed a check of active security (a deviating server, or a link
  // that altered them): the batch was refused everywhere and no output share left.
  VerificationFailed = 13,
};
inline constexpr Status kLastStatus = Status::VerificationFailed;

// Why a server refuses a request: the status and the detail the client hears.
struct Refusal {
  Status status = Status::BadRequest;
  std::string detail;
};

const char* status_name(Status status);

// Outputs padded for the client (protocol/client_checks) by a two-server cluster of security =
// "active": the job ran in parts of part_blocks blocks (the last may be shorter), each with its
// report, kPaddedPartReportBytes: the seed of its pads' check, then the two servers' checks.
inline constexpr std::size_t kPaddedPartReportBytes = 48;
using PaddedReport = std::array<std::uint8_t, kPaddedPartReportBytes>;
struct PaddedReports {
  std::uint32_t part_blocks = 0;
  std::vector<std::uint8_t> reports;  // ceil(blocks / part_blocks) * kPaddedPartReportBytes
  bool operator==(const PaddedReports&) const = default;
};

// Body of a successful Compute reply: u32 blocks | masked x share (blocks*16) | masked a share
// (blocks*16). A two-server cluster's servers send x alone: each one's XOR share of the output.
// Padded outputs: u32 blocks | 0x80000000 | u32 part_blocks | x (the outputs XOR both pads,
// the same from both servers) | the parts' reports.
struct ComputeResult {
  std::uint32_t blocks = 0;
  std::vector<std::uint8_t> x;
  std::vector<std::uint8_t> a;  // empty from a two-server cluster
  std::optional<PaddedReports> padded{};
};

struct KeyInfo {
  KeyId key;
  std::uint64_t created_unix = 0;
};

// Body of a successful ListKeys reply: u32 count | count * (key id | u64 created_unix)
struct KeyList {
  std::vector<KeyInfo> keys;
};

// Body of a successful Status reply: u8 party | u64 epoch-or-0 | u64 batches | u64 jobs | u32 stored keys |
// u64 payload bytes sent | u64 layer messages sent | u64 AND gates evaluated (ANDs x instances)
enum class ClusterMode : std::uint8_t { Full = 0, TwoParty = 1 };
inline constexpr std::uint8_t kNoParty = 0xff;
// A missing party (0..2) goes with two-party service, and only with it.
constexpr bool missing_fits_mode(ClusterMode mode, std::uint8_t missing) {
  return mode == ClusterMode::TwoParty ? missing <= 2 : missing == kNoParty;
}

struct ServerStatus {
  std::uint8_t party = 0;  // 0, 1 or 2
  std::uint64_t batches = 0;
  std::uint64_t jobs = 0;
  std::uint32_t stored_keys = 0;
  std::uint64_t epoch = 0;  // the "epoch-or-0" field on the wire (second in the body)
  // Since start: AND-layer payload bytes this server sent to the next party, the number of
  // those messages (each adds framing), and the AND gates it evaluated, counting every
  // instance. bits per AND = 8 * payload_bytes_sent / and_gates_evaluated.
  std::uint64_t payload_bytes_sent = 0;
  std::uint64_t layer_messages_sent = 0;
  std::uint64_t and_gates_evaluated = 0;
  // Since start: requests refused because the servers' copies of them differed.
  std::uint64_t request_mismatches = 0;
  // Since start: requests refused because a server's messages failed verification.
  std::uint64_t verification_failures = 0;
  // How the cluster serves, as this server sees it: all three servers, or the two that still
  // hear each other (missing_party the third, 0-based) since mode_since_unix_ms; and how
  // often it has switched since start.
  ClusterMode mode = ClusterMode::Full;
  std::uint8_t missing_party = kNoParty;
  std::uint64_t mode_since_unix_ms = 0;
  std::uint64_t mode_switches = 0;
  // The server taken out of service until an operator readmits it (kNoParty: none), as this
  // server holds it, since when and why; and how many exclusions this server took since start.
  std::uint8_t excluded_party = kNoParty;
  std::uint64_t excluded_since_unix_ms = 0;
  std::string exclusion_reason;
  std::uint64_t exclusions = 0;
  // Checks of active security that failed here (node/disputes.hpp): the servers this one is in
  // a dispute with (bit p: party p), whether three-party service is suspended, the pairs set
  // aside (bit m: the pair without party m failed a check), what failed last (the check, the
  // job or batch, the server), and how many disputes it took since start.
  std::uint8_t distrusts = 0;
  bool three_party_suspended = false;
  std::uint8_t failed_pairs = 0;
  std::string dispute_reason;
  std::uint64_t disputes = 0;
};

// Body of a successful GcmPrefetch reply: u32 count | u32 blocks_per_nonce | count * 12 nonce
// bytes | masked x share | masked a share (each count * blocks_per_nonce * 16 bytes, the
// keystream nonce by nonce). Two servers (a two-server cluster, or two of three serving) send
// x alone, their XOR share (replicated = false), and when there is no keystream
// (blocks_per_nonce 0) then u8 1: without that form byte the two forms would be the same bytes.
// Keystream padded for the client (security = "active", two servers): u32 count | u32
// blocks_per_nonce | 0x80000000 | u32 part_blocks | nonces | x (the keystream XOR both pads,
// the same from both servers) | the parts' reports (PaddedReports, over the keystream's
// count * blocks_per_nonce blocks; none when there are none).
struct GcmPrefetchResult {
  std::uint32_t count = 0;
  std::uint32_t blocks_per_nonce = 0;
  std::vector<std::uint8_t> nonces;
  std::vector<std::uint8_t> x;
  std::vector<std::uint8_t> a;
  bool replicated = true;
  std::optional<PaddedReports> padded{};
};

// Body of a successful GcmTag reply: masked x share | masked a share of the tag (16 bytes each);
// of a GcmTagParts reply, then u8 parts (as the request's) | the chained tag's additive share |
// the check's zero-test share.
// A two-server cluster's servers send x alone, their XOR share (replicated = false).
struct GcmTagResult {
  GcmTagBytes x{};
  GcmTagBytes a{};
  bool replicated = true;
  std::optional<GcmTagBytes> chained{};
  std::optional<GcmTagBytes> check{};
};

// Body of a successful GcmOpen reply: u32 blocks | masked x share | masked a share (each
// blocks * 16 bytes of keystream) | u8 verdict x | u8 verdict a. The verdict shares open to
// 1 when the tag is right; only bit 0 of each is used and the other bits must be zero.
// A two-server cluster's servers send x and verdict x alone, their XOR shares
// (replicated = false): u32 blocks | x | u8 verdict x.
// Padded for the client (security = "active", two servers): u32 blocks | 0x80000000 | x (the
// keystream XOR both pads) | u8 the verdict byte XOR both pads (the verdict in bit 0, zeros
// above) | the report (kPaddedPartReportBytes), the same from both servers.
struct GcmOpenResult {
  std::uint32_t blocks = 0;  // text blocks; 0 for an empty text
  std::vector<std::uint8_t> x;
  std::vector<std::uint8_t> a;
  std::uint8_t verdict_x = 0;
  std::uint8_t verdict_a = 0;
  bool replicated = true;
  std::optional<PaddedReport> padded_report{};
};

// Body of a successful GcmReopen reply: u32 blocks | x share | a share of the keystream (each
// blocks * 16 bytes) | 16-byte check share. The three check shares XOR to zero exactly when
// the tag is right (to a random-looking block otherwise).
// Two servers (a two-server cluster, or two of three serving) reopen only nonces with local
// masks and send XOR shares (replicated = false): u32 blocks | x | check share | u8 1; their
// two check shares XOR to zero exactly when the tag is right.
struct GcmReopenResult {
  std::uint32_t blocks = 0;
  std::vector<std::uint8_t> x;
  std::vector<std::uint8_t> a;
  GcmTagBytes check{};
  bool replicated = true;
};

// Body of a successful Krb reply: u32 length | masked x share | masked a share (length bytes
// each; length = krb_result_bytes of the request). The client reconstructs the result bytes.
// A two-server cluster's servers send x alone (a empty), their XOR share.
// Outputs padded for the client (two servers of security = "active"): x is the result under both
// servers' pads, the same from both, and one report (kPaddedPartReportBytes) follows it:
// u32 length | 0x80000000 | x | report.
struct KrbResult {
  std::vector<std::uint8_t> x;
  std::vector<std::uint8_t> a;
  std::optional<PaddedReport> padded_report{};
};

// Import and Delete replies carry no body.
using ReplyBody = std::variant<std::monostate, ComputeResult, KeyList, ServerStatus, GcmPrefetchResult, GcmTagResult,
                               GcmOpenResult, KrbResult, GcmReopenResult>;

struct Reply {
  RequestId id{};
  Status status = Status::Ok;
  std::string error;  // at most 1024 bytes; empty when Ok
  ReplyBody body;
};

std::vector<std::uint8_t> encode_reply(const Reply& reply);
// The request type tells the decoder which body to expect.
Reply decode_reply(std::span<const std::uint8_t> frame, MessageType request_type);

}  // namespace mpc::wire
