// Messages between the three servers. One ZeroMQ frame each, little-endian, every
// length checked by the decoder (FormatError(Component::Wire) on anything malformed).
//
//   u8 version (kPeerProtocolVersion) | u8 type | u64 epoch | u32 sequence | body
//
// Batch (leader -> both followers): u8 circuit | [u32 data length] | [u8 evaluation] |
//   [u32 prepared] | [u32 combine shape] | u32 slice count | slices,
//   each 32-byte client public key | 16-byte request id | 32-byte request digest |
//   u32 first block | u32 blocks | u32 first nonce | u32 nonces
//   The data length is present only for the Kerberos circuit ids (is_krb_circuit): the
//   length of every job's KrbRequest::data, which with the id fixes the circuit. Batches of
//   the other ids have no such field (the format they always had). The evaluation
//   (KrbEvaluation) follows the data length of every Kerberos id, and the prepared batch's
//   sequence follows the evaluation PreparedTwice alone. The combine shape
//   (pack_krb_combine) is present only for the KrbCf2 ids. A PrepareTwice batch has no
//   slices; every other batch has at least one.
// Layer (party i -> party i+1): u32 layer index | payload (rest of the frame)
// Abort (any party -> the other two): u16 reason | short string detail
// Notes (any party -> another; epoch and sequence 0): u32 count | notes, each 32-byte client
//   public key | 16-byte request id | 32-byte request digest | u16 status | short string detail
// Hello (any party -> another, every heartbeat; epoch and sequence 0): u8 heard (bit p: this
//   party heard party p lately) | u8 mode (ClusterMode) | u8 missing party (0xff in Full) |
//   u8 excluded party (0xff: none) | u8 distrusts (bit p: this party caught party p deviating,
//   node/disputes.hpp) | u8 flags (bit 0: a three-party check failed here or was heard of) |
//   u32 readmissions (the operators' readmissions this server has taken, node/membership.hpp)
// Degraded (between the two servers serving without the third): u8 version | u8 type | a
//   frame of the two-party engine (wire/two_server_messages.hpp) as it is, no other header
// PairChecks (a server -> another; epoch and sequence 0): u32 count | deals, each key id |
//   u8 role (0: the pair leader's checks, 1: the second member's part) | u16 length | checks
//   (protocol/client_checks/pair_checks.hpp: the sender deals them for the pair serving
//   without it)
//
// Every frame between the servers of a three-server cluster starts with the version, the
// layer frames of the data links included.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "common/secret.hpp"
#include "wire/client_messages.hpp"

namespace mpc::wire {

// What the servers of a three-server cluster must share to compute together: these frames,
// the layer messages and the AND check's proof. A release that changes any of them raises
// it. A server leaves out a peer whose frames carry another version, as if it were down
// (node/peer_links.hpp), so that during a rolling upgrade the two servers of one release
// serve in two-party service. Releases before this number was compared sent 1, the client
// protocol's version.
inline constexpr std::uint8_t kPeerProtocolVersion = 10;

enum class PeerMessageType : std::uint8_t {
  Batch = 1,
  Layer = 2,
  Abort = 3,
  Notes = 4,
  Hello = 5,
  Degraded = 6,
  PairChecks = 7
};

using PublicKey = std::array<std::uint8_t, 32>;

// Which compiled circuit a batch runs: AES key size x direction x S-box variant.
enum class CircuitId : std::uint8_t {
  Aes128EncryptAnd32 = 1,
  Aes128EncryptDepth4 = 2,
  Aes128DecryptAnd32 = 3,
  Aes128DecryptDepth4 = 4,
  Aes256EncryptAnd32 = 5,
  Aes256EncryptDepth4 = 6,
  Aes256DecryptAnd32 = 7,
  Aes256DecryptDepth4 = 8,
  // AES-256 encryption whose output is also compared with a secret block (GCM open).
  Aes256EncryptEqAnd32 = 9,
  Aes256EncryptEqDepth4 = 10,
  // Kerberos jobs (circuits/kerberos.hpp, KrbRequest), compiled per data length; they use
  // the depth-4 S-box. Every slice is one job of one instance (first block 0, 1 block, no
  // nonces). A PRF job runs an AES encryption circuit above.
  KrbEncryptAes128 = 11,
  KrbEncryptAes256 = 12,
  KrbDecryptAes128 = 13,
  KrbDecryptAes256 = 14,
  KrbChecksum = 15,  // HMAC only: the same circuit for both key sizes
  // RFC 8009 jobs (circuits/kerberos_sha2.hpp): aes128-cts-hmac-sha256-128 and
  // aes256-cts-hmac-sha384-192, compiled per data length like the ids above.
  KrbSha2EncryptAes128 = 16,
  KrbSha2EncryptAes256 = 17,
  KrbSha2DecryptAes128 = 18,
  KrbSha2DecryptAes256 = 19,
  KrbSha2ChecksumSha256 = 20,
  KrbSha2ChecksumSha384 = 21,
  // Jobs under KRB-FX-CF2 of a stored key and a caller's key (KrbRequest::combine,
  // circuits/kerberos_cf2.hpp), compiled per data length and per BatchHeader::krb_combine.
  KrbCf2Encrypt = 22,
  KrbCf2Decrypt = 23,
  KrbCf2Checksum = 24,
  // No circuit: a batch of GCM prefetches with local masks (jobs/gcm_masks.hpp), which every
  // server computes from its own share. The header gives all three the same nonces.
  GcmLocalMasks = 25,
  // The material of an aes256-gcm key made by the servers (GenerateKeyRequest,
  // circuits/gcm_key_material.hpp): one slice of one instance, its output kept by each server
  // as its share, never opened.
  GcmKeyMaterial = 26,
};
bool is_valid_circuit_id(std::uint8_t value);
bool is_krb_circuit(CircuitId id);  // any Kerberos id, KrbCf2 ones included
bool is_krb_cf2_circuit(CircuitId id);
// The Kerberos operation a Kerberos circuit id runs.
KrbOperation krb_operation_of(CircuitId id);
CircuitId krb_cf2_circuit(KrbOperation operation);
// A key algorithm whose jobs run a Kerberos circuit id other than a KrbCf2 one: the one it is
// built for, or Aes128CtsHmacSha1 for KrbChecksum (whose results have the same length under
// both RFC 3962 algorithms). For krb_result_bytes of a batch.
KeyAlgorithm krb_algorithm_of(CircuitId id);

// What fixes a KrbCf2 circuit besides its operation and data length: the stored key's
// algorithm, the combined key's, the usage and the pepper's length (every job of the batch
// has the same). Packed into 32 bits: stored | combined << 8 | usage << 16 | pepper << 24.
struct KrbCombineShape {
  KeyAlgorithm stored = KeyAlgorithm::Aes256CtsHmacSha1;
  KeyAlgorithm combined = KeyAlgorithm::Aes256CtsHmacSha1;
  std::uint32_t usage = 0;         // < 256
  std::uint32_t pepper_bytes = 0;  // 1..kKrbMaxPepperBytes
  bool operator==(const KrbCombineShape&) const = default;
};
std::uint32_t pack_krb_combine(const KrbCombineShape& shape);
// Throws FormatError(Wire) for algorithms that are not Kerberos ones or lengths out of range.
KrbCombineShape unpack_krb_combine(std::uint32_t packed);

inline constexpr std::uint32_t kMaxBatchSlices = 1u << 16;

// A slice of a GCM prefetch job carries the nonces the leader assigned to it: the 96-bit
// nonces epoch (the batch's, 64 bits big-endian) || first_nonce + k (32 bits big-endian),
// k = 0..nonces-1, in the job's order from nonce first_block / (blocks / nonces) on. A
// slice covers whole nonces, blocks / nonces instances each (AES_K(N || 1), then the
// nonce's keystream blocks), so every party derives the same nonces from the slice alone,
// even for a job it does not hold. The leader's counter only grows within an epoch (it
// moves to a fresh random epoch rather than wrap), and followers refuse a batch whose
// ranges do not lie strictly above those they already used in that epoch. Every other
// slice has first_nonce = nonces = 0.
// `digest` is request_digest() of the job's request as the leader received it: a follower
// runs the slice only if its own copy has the same digest.
struct BatchSlice {
  PublicKey client{};
  RequestId request{};
  RequestDigest digest{};
  std::uint32_t first_block = 0;
  std::uint32_t blocks = 0;
  std::uint32_t first_nonce = 0;
  std::uint32_t nonces = 0;
};

// How the three servers run a Kerberos batch: the rss3 protocol layer by layer (a round per
// AND layer: thousands for HMAC-SHA1), or as a garbled circuit that server 1 garbles and
// server 2 evaluates (constant rounds; engines/three_party/garbled_krb_batch.hpp), or garbled by
// servers 1 and 3 alike and compared by server 2 before anything leaves (GarbledTwice: active
// security, protocol/gc3/dual_garbling.hpp). The leader chooses; the followers do
// what the header says, except that one running active security refuses Garbled.
// GarbledTwice also comes in two halves (protocol/gc3/prepared_garbling.hpp): a
// PrepareTwice batch, with no jobs, garbles one instance of its circuit ahead of time and
// leaves it with the servers; a PreparedTwice batch of one job then evaluates that garbling,
// named by the preparing batch's sequence in the same epoch (BatchHeader::prepared).
enum class KrbEvaluation : std::uint8_t { Layered = 0, Garbled = 1, GarbledTwice = 2, PrepareTwice = 3, PreparedTwice = 4 };
inline bool is_garbled(KrbEvaluation evaluation) { return evaluation != KrbEvaluation::Layered; }
// Garbled by two servers and checked by the third, whenever the garbling is made.
inline bool is_garbled_twice(KrbEvaluation evaluation) {
  return evaluation == KrbEvaluation::GarbledTwice || evaluation == KrbEvaluation::PrepareTwice ||
         evaluation == KrbEvaluation::PreparedTwice;
}
const char* evaluation_name(KrbEvaluation evaluation);

struct BatchHeader {
  std::uint64_t epoch = 0;
  std::uint32_t sequence = 0;
  CircuitId circuit = CircuitId::Aes128EncryptAnd32;
  // Kerberos circuits: the data length of every job (valid for krb_result_bytes of the
  // circuit's operation). 0 for every other circuit.
  std::uint32_t data_bytes = 0;
  // Kerberos circuits: how the batch is evaluated. Layered for every other circuit.
  KrbEvaluation krb_evaluation = KrbEvaluation::Layered;
  // KrbCf2 circuits: pack_krb_combine of every job's shape. 0 for every other circuit.
  std::uint32_t krb_combine = 0;
  // PreparedTwice: the sequence of the PrepareTwice batch (same epoch, earlier) whose garbling
  // this batch evaluates. 0 for every other batch.
  std::uint32_t prepared = 0;
  std::vector<BatchSlice> slices;
};

struct LayerHeader {
  std::uint64_t epoch = 0;
  std::uint32_t sequence = 0;
  std::uint32_t layer = 0;
};
inline constexpr std::size_t kLayerHeaderBytes = 1 + 1 + 8 + 4 + 4;

struct AbortNotice {
  std::uint64_t epoch = 0;
  std::uint32_t sequence = 0;
  std::uint16_t reason = 0;  // a Status value
  std::string detail;        // at most 1024 bytes
};

// What one server holds of one request, told to the others so that no server computes with a
// request unless all hold the same copy (node/request_agreement.hpp). Status Ok: this
// server holds a copy with `digest` and will compute it; any other status: it refused the
// request, or (from the leader) gave it up, for `detail`; the digest is then all zero unless
// the server holds a copy.
struct RequestNote {
  PublicKey client{};
  RequestId request{};
  RequestDigest digest{};
  Status status = Status::Ok;
  std::string detail;  // at most 1024 bytes
  bool operator==(const RequestNote&) const = default;
};
inline constexpr std::size_t kMaxNotesPerMessage = 4096;

// What a server tells the others every heartbeat (node/membership.hpp).
struct Hello {
  std::uint8_t heard = 0;  // bit p set: this server heard party p (0-based) lately
  ClusterMode mode = ClusterMode::Full;
  std::uint8_t missing = kNoParty;  // the party the two-party service runs without
  std::uint8_t excluded = kNoParty;  // the party this server holds excluded (ExclusionRequest)
  std::uint8_t distrusts = 0;  // bit p set: this server is in a dispute with party p
  bool three_party_failed = false;  // three-party service is suspended (node/disputes.hpp)
  std::uint8_t failed_pairs = 0;     // bit m: the pair serving without party m failed a check (node/disputes.hpp)
  std::uint32_t readmissions = 0;    // operators' readmissions taken: the disputes said are as of then
  bool operator==(const Hello&) const = default;
};
std::vector<std::uint8_t> encode_hello(const Hello& hello);

// Checks of one key's share that the sender deals for the pair serving without it, to one of
// that pair's members, or (mutual) the tags the sender makes for its partner in a pair whose
// third server is proven to have deviated (protocol/client_checks/pair_checks.hpp).
struct PairCheckDeal {
  KeyId key;
  bool for_leader = true;  // the leader's checks, or the part of the second member's
  SecretBytes checks;      // share_check_bytes(key.algorithm) bytes
  bool mutual = false;     // the partner's tags (for_leader then unused)
};
inline constexpr std::size_t kMaxPairChecksPerMessage = 1024;
// Throws FormatError(Wire) for none, more than kMaxPairChecksPerMessage, or checks of another
// length than the key's algorithm takes.
std::vector<std::uint8_t> encode_pair_checks(std::span<const PairCheckDeal> deals);

// The two-party engine's frames between the two servers serving without the third, told apart
// from the three-party engine's by this wrapping. unwrap_degraded: the inner frame, or
// nullopt when `frame` is not a wrapped one.
std::vector<std::uint8_t> wrap_degraded(std::span<const std::uint8_t> inner);
std::optional<std::span<const std::uint8_t>> unwrap_degraded(std::span<const std::uint8_t> frame);

std::vector<std::uint8_t> encode_batch(const BatchHeader& header);
// Throws FormatError(Wire) for more than kMaxNotesPerMessage notes, none, or a detail too long.
std::vector<std::uint8_t> encode_notes(std::span<const RequestNote> notes);
std::vector<std::uint8_t> encode_abort(const AbortNotice& notice);
// Writes the layer header into the first kLayerHeaderBytes of `frame`; the payload follows.
void write_layer_header(const LayerHeader& header, std::span<std::uint8_t> frame);

struct DecodedLayer {
  LayerHeader header;
  std::span<const std::uint8_t> payload;  // points into the decoded frame
};
using PeerMessage =
    std::variant<BatchHeader, DecodedLayer, AbortNotice, std::vector<RequestNote>, Hello, std::vector<PairCheckDeal>>;
PeerMessage decode_peer_message(std::span<const std::uint8_t> frame);

}  // namespace mpc::wire
