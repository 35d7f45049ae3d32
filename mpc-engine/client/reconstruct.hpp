// Client-side reconstruction of the servers' Ok replies to one request: every length and
// count is checked against the request and across the servers, and anything that does not fit
// together is refused. Three replies (rss3) carry masked replicated output shares
// (rss3/output.hpp); two replies (a two-server cluster, gc2 or lut2) carry one XOR share each.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/secret.hpp"
#include "wire/client_messages.hpp"

namespace mpc::client {

// The servers' answers are inconsistent (output shares that do not reconstruct to one value,
// different sizes or nonce lists): the result is refused.
// One reply per server, in party order: three or two.
using Replies = std::vector<wire::Reply>;

class Disagreement : public Error {
 public:
  explicit Disagreement(const std::string& detail);
};

// A check the client runs on the servers' answers failed: one server's messages were altered.
class VerificationError : public Error {
 public:
  explicit VerificationError(const std::string& detail);
};

// Whether an Ok reply carries an XOR share (a two-server cluster, or two servers of three
// serving while the third is down) rather than a replicated one.
bool xor_form(const wire::Reply& reply);

// The seeds of the pads a client gave two servers on a job's outputs (protocol/client_checks),
// server 1's first.
using OutputPads = std::array<wire::OutputPadSeed, 2>;

// Compute: blocks * 16 output bytes. Two servers answer with XOR shares, or (security =
// "active") with the outputs under the `pads` the client gave them: both must then answer the
// same, and each pad must pass its check (VerificationError otherwise); one of each form is
// refused, since an honest server of such a cluster never sends a share.
std::vector<std::uint8_t> open_compute(const Replies& replies, std::uint32_t blocks,
                                       const OutputPads* pads = nullptr);

struct GcmPrefetched {
  std::vector<std::uint8_t> nonces;  // count * 12 bytes, as every server listed them
  SecretBytes keystream;             // count * blocks_per_nonce * 16 bytes, nonce by nonce
};

// GcmPrefetch: all three servers must list the same `count` distinct nonces in the same order.
// Two servers answer the keystream as XOR shares, or under `pads` as open_compute takes them.
GcmPrefetched open_gcm_prefetch(const Replies& replies, std::uint32_t count, std::uint32_t blocks_per_nonce,
                                const OutputPads* pads = nullptr);

// GcmTag: the 16-byte tag.
wire::GcmTagBytes open_gcm_tag(const Replies& replies);
// The chained tag of a GcmTag request: the XOR of the three servers' additive shares, each
// reply carrying one. Unchecked: gcm_check_passes of a later request tells whether it is right.
wire::GcmTagBytes open_gcm_chained(const Replies& replies);
// Whether the three check shares of a GcmTag request with a check pass the zero test.
bool gcm_check_passes(const Replies& replies);

// GcmOpen of `ciphertext`: the plaintext when the opened verdict is 1, nullopt when it is 0
// (the keystream shares are then not opened). A verdict that opens to anything else, or
// disagrees, is a Disagreement. Two servers answer XOR shares, or (security = "active") the
// keystream and the verdict under `pads`, in one part: both the same, each pad passing its
// check (VerificationError otherwise).
std::optional<SecretBytes> open_gcm_open(const Replies& replies, std::span<const std::uint8_t> ciphertext,
                                         const OutputPads* pads = nullptr);

// GcmReopen of `ciphertext`: as open_gcm_open, the verdict being whether the three check
// shares XOR to zero (rss3/zero_test.hpp), or whether two servers' XOR-form check shares are
// equal (a nonce with local masks reopened by two servers).
std::optional<SecretBytes> open_gcm_reopen(const Replies& replies, std::span<const std::uint8_t> ciphertext);

// What a Kerberos job gave two servers that their padded answers (security = "active") are
// checked by: each server's pad seed (client_checks::pad_of_seed of its record-mask seed) and
// its share of the record's mask R, which the pads' checks cover.
struct KrbPads {
  OutputPads seeds{};
  std::array<SecretBytes, 2> mask_shares;
};

// Krb Encrypt, Checksum or Prf with `data_bytes` of data under a key of `algorithm`: the
// result bytes (krb_result_bytes(operation, algorithm, data_bytes)). Two servers answer with
// XOR shares, or with the result under `pads`, as open_compute takes them.
SecretBytes open_krb(const Replies& replies, wire::KrbOperation operation, std::size_t data_bytes,
                     wire::KeyAlgorithm algorithm = wire::KeyAlgorithm::Aes128CtsHmacSha1,
                     const KrbPads* pads = nullptr);

// Krb Decrypt of `data_bytes` of ciphertext: confounder || plaintext (data_bytes - MAC bytes)
// when the opened verdict is 1, nullopt when it is 0 (the rest is then neither opened nor
// checked). A verdict that opens to anything else, or disagrees, is a Disagreement.
std::optional<SecretBytes> open_krb_decrypt(const Replies& replies, std::size_t data_bytes,
                                            wire::KeyAlgorithm algorithm = wire::KeyAlgorithm::Aes128CtsHmacSha1,
                                            const KrbPads* pads = nullptr);

}  // namespace mpc::client
