// A Kerberos batch garbled twice, for security against one *active* server (the default,
// security = "active"): the honest-majority garbling of Mohassel, Rosulek and Zhang ("Fast and
// Secure Three-party Computation: The Garbled Circuit Approach", CCS 2015), in which two
// servers garble the same circuit from a seed they share and the third evaluates only what
// both agree on. No single garbler chooses the function, the input labels or the outputs.
//
// Roles, fixed by party: party 0 and party 2 garble, party 1 evaluates. Messages go from party i
// to party i+1 only (as layer messages do), so what party 2 says to party 1 travels through
// party 0, and what party 1 says to party 0 through party 2, each signed by its maker under its
// X25519 identity (garbling_blame.hpp): the server in between cannot alter it, checks it too,
// and a failed check names a server that deviated.
//
// Inputs. Party i's key share (x_i, a_i) gives it a_i and a_{i-1} = x_i ^ a_i of the XOR sharing
// v = a_0 ^ a_1 ^ a_2: party 0 knows a_0 and a_2, party 1 a_0 and a_1, party 2 a_1 and a_2. The
// garblers draw delta, constant 0's label and every zero label (Z_0, Z_1, Z_2 of the three
// components, Z_p of the public record, Z_A, Z_B of two output masks) from their shared key, so
// they garble bit for bit alike; a key wire's zero label is Z_0 ^ Z_1 ^ Z_2 (free XOR). Party 0
// sends party 1 the active labels of a_0, a_2, the public record and c_A; party 2 those of a_1
// and c_B, padded with a stream of the key it shares with party 1. The output masks c_A and c_B
// are bits of the keys of parties 0-1 and 1-2.
//
// What party 1 checks before anything leaves it:
// - the tables: party 0 streams them, party 2 garbles into a digest; party 1 digests what it
//   evaluated (the stream's header, with the batch's garbling number and constant label, and
//   every table) and compares with party 2's digest. The digest also covers the active labels
//   of a_2 and the public record, which both garblers know, and the commitments below. It is a
//   GMAC under a key drawn for the batch from the key parties 1 and 2 share, which party 0 does
//   not hold (garbling_digest.hpp): party 0 cannot find another stream with the same digest;
// - the input labels of a_0, a_1, c_A and c_B, each known to party 1 and one garbler: party 0
//   sends, for every such wire, both labels' hashes H(Z), H(Z ^ delta) (the fixed-key TCCR
//   hash, protocol/two_party/fixed_key_hash.hpp, under tweaks no gate uses, 8 bytes each);
//   party 2's digest covers the same list, so it is right unless both garblers lie; party 1
//   checks each active label against the hash at the position of the bit it knows;
// - party 2's messages: its signature, over its padded labels, its digest and a commitment to
//   the digest's key, which party 0 checks before passing them on.
// A failed check throws DeviationFound naming the server it shows deviated, and party 1 sends
// nothing more; the batch is refused at all three (the engine answers VerificationFailed). When
// the digests differ, party 1 cannot tell which garbler deviated: it shows both the digest's key
// in a signed refusal, party 0 answers from its own garbling, and each server concludes
// (garbling_blame.hpp).
//
// Outputs. Party 1 evaluates to the labels of v and XORs those of c_A and c_B: the labels L_w of
// w = v ^ c_A ^ c_B. It sends them to party 2 in its signed outcome; party 2 checks each is
// one of its two labels Z_w, Z_w ^ delta, reads w and forwards them; party 0 checks the
// signature and the labels likewise. Party 1 cannot forge the other label of a wire
// (a garbled circuit's authenticity), so w is right at both garblers or the batch is refused.
// The result is then the XOR sharing (a_0, a_1, a_2) = (c_A, c_B, w), each part held by two
// servers as replicated shares require: party i returns (x_i, a_i) = (a_{i-1} ^ a_i, a_i), and a
// server that lies in its reply is caught by the client's three reconstructions.
//
// What a deviation can learn. Every check compares what a garbler sent with what an honest
// garbler computes from the shared seed, so whether it fails depends only on what the deviating
// server itself sent and knows (a label it altered, a table it changed), never on a secret bit
// it does not know: the refusal tells it nothing it did not know. In particular the commitments
// are checked as a whole against the other garbler's digest before their positions matter, so a
// garbler cannot spoil one position and watch whether the batch fails.
//
// Views (one server, following the protocol or not). Party 1 sees one label per wire, the
// tables, the hashes of both labels of its own input wires (under TCCR, the other one's hash is
// pseudorandom) and no decoding information: w stays unknown to it. Party 0 sees party 2's
// labels under a pad it cannot compute and L_w, whose value w is masked by c_B, unknown to it;
// party 2 likewise, w masked by c_A. Each view is simulated without the key.
//
// Cost. Party 2 garbles the whole circuit into its digest, party 1 digests what it evaluates
// (GHASH, a small share of garbling's cost); two signatures per batch (party 2's digest, party
// 1's outcome) and four checks of one; on the wire, the signed messages, the commitments (16
// bytes per key wire and per output) and the output labels, against one garbled table stream.
// Only a refusal costs more: party 0 garbles the batch once again to answer it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "protocol/gc3/batch.hpp"
#include "protocol/rss3/shares.hpp"
#include "protocol/two_party/channel.hpp"

namespace mpc::gc3 {

// This party's parts of the result's XOR sharing, one bit per byte, output j of instance n at
// j * instances + n: own = a_i, previous = a_{i-1}.
struct DualGarblingOutput {
  std::vector<std::uint8_t> own;
  std::vector<std::uint8_t> previous;
};

// Runs `batch` (program set, checked by the caller) as party `party`'s role above. Throws
// DeviationFound when a check fails, PeerError when a peer is silent past the channel's timeout,
// Error for anything else.
DualGarblingOutput evaluate_dual_garbling(const Batch& batch, int party, const GarblingKeys& keys,
                                          two_party::Channel& to_next, two_party::Channel& from_previous);

// The replicated share (x_i, a_i) = (a_{i-1} ^ a_i, a_i) of the parts, instance n's record of
// `record` bytes at n * record; the parts are wiped.
void replicated_share(DualGarblingOutput parts, std::size_t instances, std::size_t record, rss3::ByteShare& out);

}  // namespace mpc::gc3
