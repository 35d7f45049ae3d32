// What the two forms of a Kerberos batch garbled twice share: garbled while the batch runs
// (dual_garbling.hpp) or ahead of it (prepared_garbling.hpp). The roles, the purposes
// of the streams drawn per batch, the shapes of the label groups, the labels both
// garblers draw from the key they share, the commitments to input labels and the garblers'
// reading of the output labels. dual_garbling.hpp says why each is there.
#pragma once

#include <chrono>
#include <functional>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "protocol/gc3/batch.hpp"
#include "protocol/gc3/dual_garbling.hpp"
#include "protocol/gc3/batch_streams.hpp"
#include "protocol/gc3/garbling_blame.hpp"
#include "protocol/gc3/garbling_digest.hpp"
#include "protocol/gc2/half_gates.hpp"
#include "protocol/rss3/correlated_randomness.hpp"
#include "protocol/two_party/channel.hpp"

namespace mpc::gc3::dual {

using gc2::Block;
using gc2::Labels;
using Digest = GarblingDigest::Value;

inline constexpr int kFirstGarbler = 0;
inline constexpr int kEvaluator = 1;
inline constexpr int kSecondGarbler = 2;

inline constexpr std::string_view kLabelsPurpose = "dual garbling: labels";
inline constexpr std::string_view kPadPurpose = "dual garbling: pad of party 3's labels";
inline constexpr std::string_view kMaskPurpose = "dual garbling: output mask";
inline constexpr std::string_view kLabelsMessage = "second garbler's labels";  // signed (garbling_blame.hpp)

inline constexpr std::size_t kCommitBytes = 8;  // per label: a second label matching it is a 2^-64 event
inline constexpr std::uint64_t kCommitTweakBase = std::uint64_t{1} << 63;  // gate tweaks stay far below

// The shapes of one batch's label groups.
struct Shape {
  std::size_t key = 0;      // key wires: rows x instances
  std::size_t pub = 0;      // public wires
  std::size_t outputs = 0;  // output wires: outputs x instances
  explicit Shape(const Batch& batch)
      : key(batch.key_rows * batch.instances),
        pub(batch.public_bytes * 8 * batch.instances),
        outputs(static_cast<std::size_t>(batch.program->num_outputs) * batch.instances) {}
  // Commitments: a_0's and a_1's key wires, then c_A's and c_B's output wires.
  std::size_t committed() const { return 2 * key + 2 * outputs; }
};

// What both garblers draw from their shared key.
struct SeededLabels {
  Block delta;
  Block constant;
  Labels z0, z1, z2, zp, za, zb;
  ~SeededLabels();
};

// The labels of the garbling `id` names (its epoch and sequence seed them).
void draw_seeded_labels(const rss3::PrfKey& key, const BatchId& id, const Shape& shape,
                        SeededLabels& out);

// An output mask's bits (0 or 1), one per output wire, from the key of the pair that holds it.
std::vector<std::uint8_t> mask_bits(const rss3::PrfKey& key, const BatchId& id, std::size_t count);

// Both labels' hashes of every committed wire, in Shape::committed() order: 2 x kCommitBytes each.
std::vector<std::uint8_t> commitments(const SeededLabels& seeded, std::uint64_t number);

// Party 1: whether every active label of one committed group matches the commitment at its bit,
// without a branch on the bits. `first`: the group's first wire in Shape::committed() order.
bool labels_match(std::span<const Block> labels, std::span<const std::uint8_t> bits,
                  std::span<const std::uint8_t> committed, std::size_t first, std::uint64_t number);


// Party 3's garbling goes into the digest only.
class DigestSink final : public two_party::Channel {
 public:
  explicit DigestSink(GarblingDigest& digest) : digest_(digest) {}
  void send(std::span<const std::uint8_t> bytes) override;
  void flush() override {}
  void receive(std::span<std::uint8_t>) override;
  std::uint64_t bytes_sent() const override { return sent_; }

 private:
  GarblingDigest& digest_;
  std::uint64_t sent_ = 0;
};

void xor_into(Labels& out, const Labels& in);

// The garblers' input zero labels for the program: key wires Z_0 ^ Z_1 ^ Z_2, then the public ones.
Labels program_zero_labels(const SeededLabels& seeded);

// A garbler's reading of the output labels: w; names party 1 (garbling_blame.hpp) if a label
// is neither Z_w nor Z_w ^ delta.
std::vector<std::uint8_t> read_output(const Labels& output_labels, const Labels& zero_out, const SeededLabels& seeded,
                                      int party);

// What both garblers hold of a garbling: its shapes, the labels drawn from their shared key and
// a garbler under that delta and the garbling's number, all named by `garbling` (the batch
// that garbles: the running one, or the one that prepared the garbling ahead).
struct GarblerSide {
  GarblerSide(const Batch& batch, const BatchId& garbling, const rss3::PrfKey& shared_key);
  Labels active(const Labels& zero, std::span<const std::uint8_t> bits) const;
  // Garbles the batch's program into `channel`; returns the output wires' zero labels.
  Labels garble(const Batch& batch, two_party::Channel& channel);

  Shape shape;
  std::uint64_t number;
  SeededLabels seeded;
  std::optional<gc2::Garbler> garbler;
};

Digest receive_digest(two_party::Channel& channel);

// A garbler's active labels of the inputs both garblers know: a_2 (`a2` names the part of this
// party's key share it is) and the public record.
struct SharedInputLabels {
  Labels a2, pub;
};
SharedInputLabels shared_input_labels(const GarblerSide& side, const Batch& batch, KeyPart a2);

// Party 1's active labels for party 2: a_0, c_A (`c_a`) and the shared ones.
struct FirstGarblerLabels {
  Labels a0, ca;
  SharedInputLabels shared;
};
FirstGarblerLabels first_garbler_labels(const GarblerSide& side, const Batch& batch,
                                        std::span<const std::uint8_t> c_a);
void send_first_garbler_labels(const FirstGarblerLabels& labels, two_party::Channel& to_next);

// The first garbler's digest of its own garbling under the key party 1 shows it after
// GarblingsDiffer (garbling_blame.hpp): garbled again, as the second garbler digests it.
using OwnDigest = std::function<Digest(std::span<const std::uint8_t> key)>;

// Party 3: party 2's outcome, received (waiting `extra_wait` more than the channel's timeout),
// read and passed on: the output labels read against this garbler's zero labels `zero_out`
// (`own_digest` is this party's digest where party 2 compared digests, else null: then party 2
// may only have evaluated). Returns party 3's parts (w, c_B) of the result.
DualGarblingOutput pass_output_labels_on(const Batch& batch, const GarblingKeys& keys, const GarblerSide& side,
                                         const Labels& zero_out, std::span<const std::uint8_t> c_b,
                                         const Digest* own_digest, two_party::Channel& to_next,
                                         two_party::Channel& from_previous, std::chrono::milliseconds extra_wait);

// Party 3: party 2's outcome, checked (`own_digest`: this party's digest where party 2 compared
// digests, else null). On GarblingsDiffer it is passed on, and this party waits for party 1's
// answer and throws its conclusion; a success is returned for the caller to pass on
// (blame::pass_on) once done with it.
blame::ReceivedOutcome receive_evaluator_outcome(const Batch& batch, const GarblingKeys& keys,
                                                 const blame::OutcomeForm& form, const Digest* own_digest,
                                                 two_party::Channel& to_next, two_party::Channel& from_previous,
                                                 std::chrono::milliseconds extra_wait);

// Party 1: party 2's outcome relayed by party 3; on GarblingsDiffer it answers (`second`, the
// digest party 3 signed, and `own_digest`) and throws its conclusion.
blame::ReceivedOutcome receive_outcome(const Batch& batch, const GarblingKeys& keys, const blame::OutcomeForm& form,
                                       const blame::SecondGarblerDigest* second, const OwnDigest& own_digest,
                                       two_party::Channel& to_next, two_party::Channel& from_previous,
                                       std::chrono::milliseconds extra_wait);

// Party 2, finding the garbling party 1 sent is not the one party 3 digested: tells the garblers,
// waits for party 1's answer and throws its conclusion.
[[noreturn]] void refuse_differing_garblings(const Batch& batch, const GarblingKeys& keys,
                                             std::span<const std::uint8_t> digest_key, const Digest& second_digest,
                                             two_party::Channel& to_next, two_party::Channel& from_previous);

// Party 3: the active labels of a_1 and c_B, padded with a stream of the key it shares with
// party 2 (`with_evaluator`) drawn for the running batch.
Labels padded_third_labels(const GarblerSide& side, const Batch& batch, std::span<const std::uint8_t> c_b,
                           const rss3::PrfKey& with_evaluator);

// Party 2: party 3's labels of a_1 and c_B out of what party 1 relayed.
struct ThirdLabels {
  Labels a1, cb;
};
ThirdLabels unpad_third_labels(const Labels& relayed, const Batch& batch, const Shape& shape,
                               const rss3::PrfKey& with_third);

// Party 2: the labels of a_0 and c_A (from party 1) and of a_1 and c_B (from party 3) against
// their commitments, at the bits party 2 knows; names the sender of one that fails.
void check_input_labels(const Batch& batch, const Shape& shape, const Labels& l0, const Labels& la,
                        const ThirdLabels& third, std::span<const std::uint8_t> c_a,
                        std::span<const std::uint8_t> c_b, std::span<const std::uint8_t> committed,
                        std::uint64_t number);

// Party 2, once every check passed: the labels of w = v ^ c_A ^ c_B (the evaluated labels of v
// with those of c_A and c_B added) to party 3 in its signed outcome, and its parts (c_B, c_A) of
// the result.
DualGarblingOutput send_evaluator_output(const Batch& batch, const GarblingKeys& keys, Labels evaluated,
                                         const Labels& la, const ThirdLabels& third,
                                         std::span<const std::uint8_t> c_a, std::span<const std::uint8_t> c_b,
                                         two_party::Channel& to_next);

}  // namespace mpc::gc3::dual
