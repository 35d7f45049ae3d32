// Authenticated bits between two servers: the information-theoretic MACs that make a
// two-party computation actively secure (Nielsen, Nordholt, Orlandi, Burra, "A New Approach to
// Practical Active-Secure Two-Party Computation", CRYPTO 2012; the notation of Wang,
// Ranellucci, Katz, "Authenticated Garbling and Efficient Maliciously Secure Two-Party
// Computation", CCS 2017, section 2).
//
// Each party P holds a global secret delta_P. A bit b that P holds is authenticated to the
// peer Q when P holds mac = key ^ b * delta_Q and Q holds key: P cannot present the other
// value of b without guessing delta_Q. A shared bit v = b_P ^ b_Q is a pair of such bits,
// one held by each party (AuthBit is one party's half of it). Shares, MACs and keys are all
// XOR-linear, so any XOR of shared bits is a shared bit with no communication, and a public
// bit is added by one party flipping its share and the other moving its key.
//
// The bits come from the IKNP correlation with the KOS15 check (ot_extension.hpp,
// authenticated()): one OT-extension session in each direction over one channel, each party
// the sender of the session whose offset is its delta. The first party's delta has its two
// lowest bits 11, the second's 01: both deltas have the point-and-permute bit set, and their
// XOR has bit 1 set, which the leaky AND (and_triples.hpp) uses to reveal one bit of a
// difference without another message. Each delta keeps 126 secret bits.
//
// Opening checks MACs in one digest per call: each side sends its shares and a BLAKE2b hash of
// its MACs; the other recomputes the hash from its keys. A party that sends another share than
// it holds must forge the MAC of the flipped bit, which takes delta_Q: it is caught except with
// probability 2^-126 (plus the hash's collision bound), and the check names it.
//
// Tests make a party deviate through a hook that sees every message of this layer before it
// leaves (Deviation): the bytes then sent are the deviating party's, as on a real link.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "protocol/two_party/block.hpp"
#include "protocol/two_party/channel.hpp"

namespace mpc::auth2 {

using two_party::Block;
using Digest = std::array<std::uint8_t, 32>;

enum class Role : std::uint8_t { First = 0, Second = 1 };

// One party's half of a shared bit.
struct AuthBit {
  Block mac;             // of `bit`, under the peer's delta
  Block key;             // of the peer's bit, under this party's delta
  std::uint8_t bit = 0;  // this party's share

  friend AuthBit operator^(const AuthBit& a, const AuthBit& b) {
    return {a.mac ^ b.mac, a.key ^ b.key, static_cast<std::uint8_t>(a.bit ^ b.bit)};
  }
  AuthBit& operator^=(const AuthBit& other) { return *this = *this ^ other; }
};

// The messages of this layer and of the AND triples built on it, by step.
enum class Step : std::uint8_t {
  Opening,          // shares being opened and the digest of their MACs
  LeakyProducts,    // the leaky AND's one block per triple
  LeakyReveal,      // the leaky AND's bits of d = x y ^ r
  EqualityCommit,   // the first party's commitment to a digest
  EqualityDigest,   // the second party's digest
  EqualityOpening,  // the first party's digest and commitment nonce
  CoinCommit,       // the first party's commitment to its seed
  CoinShare,        // the second party's seed
  CoinOpening,      // the first party's seed
  GarbledRows,      // the garbler's four rows per AND gate
  MaskedInputs,     // a party's masked input bits
  InputLabels,      // the garbler's labels of input and constant wires
  OutputClaim,      // the evaluator's masked outputs and the digest of their labels
};
const char* step_name(Step step) noexcept;

// Sees (and may alter) each message of this party before it is sent: tests only.
using Deviation = std::function<void(Step, std::span<std::uint8_t>)>;
// Sees (and may alter) the labels a garbler sends for the evaluator's input wires, beside the
// masked bits the evaluator sent for them: tests only (a garbler probing by selective failure).
using InputLabelDeviation = std::function<void(std::span<const std::uint8_t> masked, std::span<Block> labels)>;

class Session {
 public:
  // Both parties over one channel, one in each role. Nothing is sent before the first call.
  Session(two_party::Channel& channel, Role role);
  ~Session();
  Session(Session&&) noexcept;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  Role role() const noexcept { return role_; }
  two_party::Channel& channel() noexcept { return *channel_; }
  // This party's global delta (runs the base OTs on first use). Secret.
  const Block& delta();

  // Later calls, the OT extension's too, go over `channel` (the peer's next job stream): bits
  // made in different jobs share this session's delta.
  void use_channel(two_party::Channel& channel);
  // A session for one job over `channel` with this session's role and delta (which must be
  // made: its bits exist) and no OT extension of its own: it opens, reveals, checks and
  // garbles, and random_bits() is an Error. Job sessions and this one may run on different
  // threads; none of them touches the others' state.
  Session job_session(two_party::Channel& channel) const;

  // n fresh random shared bits, uniform and unknown to either party alone. Both call with the same n.
  std::vector<AuthBit> random_bits(std::size_t n);
  // The same into `out` (out.size() bits), in OT-extension calls of at most kBitsPerCall bits:
  // the buffers stay a few MiB whatever the batch.
  void random_bits(std::span<AuthBit> out);
  static constexpr std::size_t kBitsPerCall = std::size_t{1} << 18;

  // The values of shared bits: both parties call with the same count and get own ^ peer for
  // each. Throws VerificationError (check "mac_check") when the peer's shares do not carry its
  // MACs: nothing of the call's values may then be used.
  std::vector<std::uint8_t> open(std::span<const AuthBit> bits);

  // The values of shared bits to party `to` alone: the other party sends its shares and the
  // digest of their MACs and gets an empty vector back; `to` gets own ^ peer for each bit, or
  // VerificationError ("mac_check") as for open().
  std::vector<std::uint8_t> reveal_to(Role to, std::span<const AuthBit> bits);

  // Adds a public bit to a shared bit: the first party flips its share, the second moves its
  // key of it. No branch on the bit. Inline: the leaky AND calls it once per triple.
  void add_public(AuthBit& bit, std::uint8_t value) {
    const std::uint8_t v = value & 1;
    if (role_ == Role::First) bit.bit ^= v;
    else bit.key ^= (ready_ ? delta_ : delta()) & two_party::select_mask(v != 0);
  }

  // Throws VerificationError (check `check`) unless the peer's digest equals this one; the
  // first party commits first, so neither can pick its digest after seeing the other's.
  void check_equal(const Digest& digest, const char* check);

  // A seed neither party chose: the first commits to its half, the second answers with its
  // own, the first opens. VerificationError (check "coin_toss") when the opening fails.
  Digest coin_toss();

  // A run of n fresh hash tweaks of this session (both parties advance alike).
  std::uint64_t take_tweaks(std::size_t n);
  // The next tweak: where several sessions share a delta, each takes a range of its own (a
  // pool's batch or job numbers its range from the entries it covers).
  void set_next_tweak(std::uint64_t next) noexcept { tweaks_ = next; }

  // Sends one message of `step` (after the deviation hook, if any).
  void send(Step step, std::span<std::uint8_t> message);

  void set_deviation(Deviation deviation) { deviation_ = std::move(deviation); }
  void set_input_label_deviation(InputLabelDeviation deviation) { input_label_deviation_ = std::move(deviation); }
  const InputLabelDeviation& input_label_deviation() const noexcept { return input_label_deviation_; }

  struct Extension;

 private:
  std::vector<std::uint8_t> check_opening(std::span<const AuthBit> bits, std::span<const std::uint8_t> message);
  // A job session (no OT extension): job_session() fills in the delta.
  Session(two_party::Channel& channel, Role role, std::nullptr_t);

  two_party::Channel* channel_;
  Role role_;
  std::unique_ptr<Extension> extension_;  // none in a job session
  Block delta_{};
  bool ready_ = false;
  std::uint64_t tweaks_ = 0;
  Deviation deviation_;
  InputLabelDeviation input_label_deviation_;
};

// Packs bits (0/1 bytes) eight to a byte, little-endian within each byte, and back.
std::vector<std::uint8_t> pack_bits(std::span<const std::uint8_t> bits);
std::vector<std::uint8_t> unpack_bits(std::span<const std::uint8_t> packed, std::size_t count);

}  // namespace mpc::auth2
