// The secret part of a Kerberos job's record, shared among the servers as the key is
// (KrbRecordMask in client_messages.hpp): how the client masks it and what share of the mask R
// each server holds.
//
// Secret: an encryption's confounder || plaintext and a checksum's message (the KDC's
// EncASRepPart, EncTicketPart and EncTGSRepPart carry session keys), and the caller's half of
// a KRB-FX-CF2 key (KrbCombine::mask). Public: a decryption's ciphertext (the client sent it in
// clear) and KRB-FX-CF2's PRF inputs (made of the protocol's peppers). The job's record
// carries the secret bytes XORed with R, and the circuit takes the servers' shares of R as
// secret rows and XORs them back in (jobs/krb_jobs.hpp), so no server ever holds the secret
// bytes and no AND gate is added.
//
// R = S(s_0) ^ S(s_1) [^ S(s_2)], S(s) the ChaCha20 stream of libsodium's
// randombytes_buf_deterministic under seed s. A seed is 256 uniform bits and each server
// lacks one of them, so R is uniform to it; the hashes it holds of the seeds it lacks (keyed
// BLAKE2b-256) tell it nothing more.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "common/secret.hpp"
#include "wire/client_messages.hpp"

namespace mpc::wire {

// The hash of a seed every server compares (KrbRecordMask::seed_hashes).
KrbMaskSeedHash record_mask_seed_hash(const KrbMaskSeed& seed);

// Bytes of a request's secret record, the bytes R covers: its KrbCombine mask, and its data
// but for a Decrypt.
std::size_t krb_secret_record_bytes(const KrbRequest& request);

// The client's side: fresh seeds for `components` servers (2 or 3) and R over `bytes` bytes.
class RecordMaskDeal {
 public:
  RecordMaskDeal(std::size_t components, std::size_t bytes);
  ~RecordMaskDeal();
  RecordMaskDeal(const RecordMaskDeal&) = delete;
  RecordMaskDeal& operator=(const RecordMaskDeal&) = delete;
  // XORs R into the request's secret record: its KrbCombine mask, then its data but for a
  // Decrypt. Throws Error(Client) unless that is the `bytes` R covers.
  void mask(KrbRequest& request) const;
  // What server `party` gets: every hash, and the seeds of components party and party - 1
  // (three), or of component party (two).
  KrbRecordMask for_server(int party) const;

 private:
  std::vector<KrbMaskSeed> seeds_;
  SecretBytes mask_;
};

// Why server `party` of a cluster of `servers` servers may not take this mask, or nullopt:
// not `servers` components, not this server's seeds, or a seed that does not match its hash.
std::optional<std::string> record_mask_refusal(const KrbRecordMask& mask, int party, int servers);

// This server's replicated share of R, x || a (`bytes` each): x = S(own) ^ S(previous),
// a = S(own), as the key's shares are (rss3/shares.hpp). Three components only.
SecretBytes replicated_record_mask(const KrbRecordMask& mask, std::size_t bytes);
// This server's XOR share of R between two servers: S(own) in a two-server cluster; in a pair
// of a three-server cluster (node/pair_service.hpp) the leader's x, the second member's a.
SecretBytes xor_record_mask(const KrbRecordMask& mask, bool pair_leader, std::size_t bytes);

// The seed of this server's pad on a two-party job's result (protocol/client_checks/
// output_pads.hpp): one its peer lacks. In a two-server cluster its own; in a pair of a
// three-server cluster the leader's second seed (the missing server's component, which the
// second member lacks) and the second member's own (which the leader lacks).
const KrbMaskSeed& pad_seed_of(const KrbRecordMask& mask, bool pair_leader);

}  // namespace mpc::wire
