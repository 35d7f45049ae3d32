#include "engines/three_party/garbled_krb_dual.hpp"

#include <sodium.h>

#include <array>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "engines/three_party/garbled_krb_batch.hpp"
#include "engines/three_party/garbled_krb_inputs.hpp"
#include "engines/three_party/garbling_digest.hpp"
#include "protocol/gc2/half_gates.hpp"
#include "protocol/two_party/fixed_key_hash.hpp"

namespace mpc::three_party_engine {
namespace {

using gc2::Block;
using gc2::Labels;
using garbled::bytes_of;
using garbled::KeyPart;

constexpr int kFirstGarbler = 0;
constexpr int kEvaluator = 1;
constexpr int kSecondGarbler = 2;

constexpr std::string_view kLabelsPurpose = "dual garbling: labels";
constexpr std::string_view kPadPurpose = "dual garbling: pad of party 3's labels";
constexpr std::string_view kMaskPurpose = "dual garbling: output mask";
constexpr std::string_view kDigestPurpose = "dual garbling: digest";
constexpr std::string_view kRelayPurpose = "dual garbling: party 3 to party 2";
constexpr std::string_view kOutputPurpose = "dual garbling: output labels";

constexpr std::size_t kCommitBytes = 8;  // per label: a second label matching it is a 2^-64 event
constexpr std::uint64_t kCommitTweakBase = std::uint64_t{1} << 63;  // gate tweaks stay far below

using Digest = GarblingDigest::Value;

// The shapes of one batch's label groups.
struct Shape {
  std::size_t key = 0;      // key wires: rows x instances
  std::size_t pub = 0;      // public wires
  std::size_t outputs = 0;  // output wires: outputs x instances
  explicit Shape(const BatchTask& task)
      : key(task.key_rows * task.instances),
        pub(task.public_bytes * 8 * task.instances),
        outputs(static_cast<std::size_t>(task.program->num_outputs) * task.instances) {}
  // Commitments: a_0's and a_1's key wires, then c_A's and c_B's output wires.
  std::size_t committed() const { return 2 * key + 2 * outputs; }
};

// What both garblers draw from their shared key.
struct SeededLabels {
  Block delta;
  Block constant;
  Labels z0, z1, z2, zp, za, zb;
  ~SeededLabels() {
    wipe(&delta, sizeof delta);
    wipe(&constant, sizeof constant);
  }
};

void draw_seeded_labels(const rss3::PrfKey& key, const wire::BatchHeader& header, const Shape& shape,
                        SeededLabels& out) {
  const std::size_t blocks = 2 + 3 * shape.key + shape.pub + 2 * shape.outputs;
  const SecretBytes stream = garbled::batch_stream(key, kLabelsPurpose, header, blocks * sizeof(Block));
  const std::uint8_t* p = stream.data();
  auto take = [&p](Labels& labels, std::size_t count) {
    labels = Labels(count);
    std::memcpy(labels.data(), p, count * sizeof(Block));
    p += count * sizeof(Block);
  };
  std::memcpy(&out.delta, p, sizeof(Block));
  out.delta.lo |= 1;
  std::memcpy(&out.constant, p + sizeof(Block), sizeof(Block));
  p += 2 * sizeof(Block);
  take(out.z0, shape.key);
  take(out.z1, shape.key);
  take(out.z2, shape.key);
  take(out.zp, shape.pub);
  take(out.za, shape.outputs);
  take(out.zb, shape.outputs);
}

// An output mask's bits (0 or 1), one per output wire, from the key of the pair that holds it.
std::vector<std::uint8_t> mask_bits(const rss3::PrfKey& key, const wire::BatchHeader& header, std::size_t count) {
  SecretBytes stream = garbled::batch_stream(key, kMaskPurpose, header, count);
  std::vector<std::uint8_t> bits(count);
  for (std::size_t i = 0; i < count; ++i) bits[i] = stream[i] & 1;
  return bits;
}

// Truncated hashes of `labels` under the commitment tweaks from `first` on.
std::vector<std::uint8_t> label_hashes(std::span<const Block> labels, std::uint64_t number, std::uint64_t first) {
  Labels hashed(labels.size());
  two_party::tccr_hash(labels.data(), hashed.data(), labels.size(), number, kCommitTweakBase + first, 1);
  std::vector<std::uint8_t> out(labels.size() * kCommitBytes);
  for (std::size_t i = 0; i < labels.size(); ++i) std::memcpy(out.data() + i * kCommitBytes, &hashed[i], kCommitBytes);
  return out;
}

// Both labels' hashes of every committed wire, in Shape::committed() order: 2 x kCommitBytes each.
std::vector<std::uint8_t> commitments(const SeededLabels& seeded, std::uint64_t number) {
  std::vector<std::uint8_t> out;
  std::size_t first = 0;
  for (const Labels* zero : {&seeded.z0, &seeded.z1, &seeded.za, &seeded.zb}) {
    Labels one(zero->size());
    for (std::size_t i = 0; i < zero->size(); ++i) one[i] = (*zero)[i] ^ seeded.delta;
    const auto h0 = label_hashes(zero->span(), number, first);
    const auto h1 = label_hashes(one.span(), number, first);
    for (std::size_t i = 0; i < zero->size(); ++i) {
      out.insert(out.end(), h0.begin() + i * kCommitBytes, h0.begin() + (i + 1) * kCommitBytes);
      out.insert(out.end(), h1.begin() + i * kCommitBytes, h1.begin() + (i + 1) * kCommitBytes);
    }
    first += zero->size();
  }
  return out;
}

// Party 1: whether every active label of one committed group matches the commitment at its bit,
// without a branch on the bits. `first`: the group's first wire in Shape::committed() order.
bool labels_match(std::span<const Block> labels, std::span<const std::uint8_t> bits,
                  std::span<const std::uint8_t> committed, std::size_t first, std::uint64_t number) {
  const auto hashes = label_hashes(labels, number, first);
  std::uint8_t difference = 0;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const std::uint8_t* pair = committed.data() + (first + i) * 2 * kCommitBytes;
    const auto select = static_cast<std::uint8_t>(0 - (bits[i] & 1));
    for (std::size_t b = 0; b < kCommitBytes; ++b) {
      const auto expected = static_cast<std::uint8_t>((pair[b] & ~select) | (pair[kCommitBytes + b] & select));
      difference |= static_cast<std::uint8_t>(hashes[i * kCommitBytes + b] ^ expected);
    }
  }
  return difference == 0;
}

// The digest of the batch's garbling as the second garbler and the evaluator see it, under a key
// drawn for this batch from the key they share and the first garbler lacks (garbling_digest.hpp).
GarblingDigest garbling_digest(const rss3::PrfKey& evaluator_and_second_garbler, const wire::BatchHeader& header) {
  const SecretBytes key =
      garbled::batch_stream(evaluator_and_second_garbler, kDigestPurpose, header, GarblingDigest::kKeyBytes);
  return GarblingDigest(key.span());
}

// Party 2's garbling goes into the digest only.
class DigestSink final : public two_party::Channel {
 public:
  explicit DigestSink(GarblingDigest& digest) : digest_(digest) {}
  void send(std::span<const std::uint8_t> bytes) override {
    digest_.add(bytes);
    sent_ += bytes.size();
  }
  void flush() override {}
  void receive(std::span<std::uint8_t>) override { throw Error(Component::Server, "a digest sink receives nothing"); }
  std::uint64_t bytes_sent() const override { return sent_; }

 private:
  GarblingDigest& digest_;
  std::uint64_t sent_ = 0;
};

// Party 1 hashes the stream it evaluates as it arrives.
class DigestingReceiver final : public two_party::Channel {
 public:
  DigestingReceiver(two_party::Channel& inner, GarblingDigest& digest) : inner_(inner), digest_(digest) {}
  void send(std::span<const std::uint8_t>) override { throw Error(Component::Server, "a digesting receiver sends nothing"); }
  void flush() override {}
  void receive(std::span<std::uint8_t> out) override {
    inner_.receive(out);
    digest_.add(out);
  }
  std::uint64_t bytes_sent() const override { return 0; }
  void allow_extra_wait(std::chrono::milliseconds extra) override { inner_.allow_extra_wait(extra); }

 private:
  two_party::Channel& inner_;
  GarblingDigest& digest_;
};

void xor_into(Labels& out, const Labels& in) {
  for (std::size_t i = 0; i < out.size(); ++i) out[i] ^= in[i];
}

// The garblers' input zero labels for the program: key wires Z_0 ^ Z_1 ^ Z_2, then the public ones.
Labels program_zero_labels(const SeededLabels& seeded) {
  Labels zero(seeded.z0.size() + seeded.zp.size());
  for (std::size_t i = 0; i < seeded.z0.size(); ++i) zero[i] = seeded.z0[i] ^ seeded.z1[i] ^ seeded.z2[i];
  std::copy_n(seeded.zp.data(), seeded.zp.size(), zero.data() + seeded.z0.size());
  return zero;
}

// A garbler's reading of the output labels: w, or VerificationError if a label is neither
// Z_w nor Z_w ^ delta.
std::vector<std::uint8_t> read_output(const Labels& output_labels, const Labels& zero_out, const SeededLabels& seeded,
                                      int party) {
  std::vector<std::uint8_t> w(output_labels.size());
  std::uint64_t bad = 0;
  for (std::size_t i = 0; i < output_labels.size(); ++i) {
    const Block zero = zero_out[i] ^ seeded.za[i] ^ seeded.zb[i];
    const Block d0 = output_labels[i] ^ zero;
    const Block d1 = d0 ^ seeded.delta;
    const std::uint64_t is0 = ((d0.lo | d0.hi) == 0) ? 1 : 0;
    const std::uint64_t is1 = ((d1.lo | d1.hi) == 0) ? 1 : 0;
    bad |= 1 ^ (is0 | is1);
    w[i] = static_cast<std::uint8_t>(is1);
  }
  if (bad != 0)
    throw VerificationError(Component::Server, "party " + std::to_string(party + 1) +
                                                   ": the output labels from party 2 are not labels of the garbling");
  return w;
}

// What both garblers hold of a batch: its shapes, the labels drawn from their shared key and a
// garbler under that delta and the batch's number.
struct GarblerSide {
  GarblerSide(const BatchTask& task, const rss3::PrfKey& shared_key)
      : shape(task), number(batch_garbling_number(task.header)) {
    draw_seeded_labels(shared_key, task.header, shape, seeded);
    garbler.emplace(seeded.delta, number);
  }
  Labels active(const Labels& zero, std::span<const std::uint8_t> bits) const {
    return gc2::garbler_input_labels(*garbler, bits, zero);
  }
  // Garbles the batch's program into `channel`; returns the output wires' zero labels.
  Labels garble(const BatchTask& task, two_party::Channel& channel) {
    const Labels zero = program_zero_labels(seeded);
    Labels zero_out;
    garbler->garble(*task.program, task.instances, zero.span(), channel, zero_out, seeded.constant);
    return zero_out;
  }

  Shape shape;
  std::uint64_t number;
  SeededLabels seeded;
  std::optional<gc2::Garbler> garbler;
};

Digest receive_digest(two_party::Channel& channel) {
  Digest out{};
  channel.receive(out);
  return out;
}

// Party 0.
DualGarblingOutput garble_first(const BatchTask& task, const PartyPrfKeys& keys, two_party::Channel& to_next,
                                two_party::Channel& from_previous) {
  const circuits::Program& program = *task.program;
  GarblerSide side(task, keys.garbling_previous);
  const Shape& shape = side.shape;
  const auto c_a = mask_bits(keys.garbling_own, task.header, shape.outputs);

  std::vector<std::uint8_t> a0 = garbled::key_row_bits(task, KeyPart::A);
  std::vector<std::uint8_t> a2 = garbled::key_row_bits(task, KeyPart::XorA);
  const Labels l0 = side.active(side.seeded.z0, a0);
  const Labels l2 = side.active(side.seeded.z2, a2);
  wipe(a0.data(), a0.size());
  wipe(a2.data(), a2.size());
  const Labels lp = side.active(side.seeded.zp, garbled::public_row_bits(task));
  const Labels la = side.active(side.seeded.za, c_a);
  const auto committed = commitments(side.seeded, side.number);

  std::vector<std::uint8_t> relayed((shape.key + shape.outputs) * sizeof(Block));
  from_previous.receive(relayed);
  to_next.send(bytes_of(l0));
  to_next.send(bytes_of(la));
  to_next.send(bytes_of(l2));
  to_next.send(bytes_of(lp));
  to_next.send(committed);
  to_next.send(relayed);

  const Labels zero_out = side.garble(task, to_next);

  // Party 3's digest and MAC (it garbles the whole batch first, as busy as this party or more),
  // then, once party 2 has evaluated, the output labels via party 3. Both waits allow 2 M AND
  // gates a second, as party 3 allows party 2 in the passive form.
  const auto garbling_time = std::chrono::milliseconds(program.and_gates * task.instances / 2000);
  std::vector<std::uint8_t> digest_and_mac(GarblingDigest::kBytes + 32);
  from_previous.allow_extra_wait(garbling_time);
  from_previous.receive(digest_and_mac);
  to_next.send(digest_and_mac);
  to_next.flush();
  Labels output(shape.outputs);
  std::array<std::uint8_t, 32> mac{};
  from_previous.allow_extra_wait(garbling_time);
  from_previous.receive(bytes_of(output));
  from_previous.receive(mac);
  const auto expected = garbled::batch_mac(keys.garbling_own, kOutputPurpose, task.header, {bytes_of(output)});
  if (sodium_memcmp(mac.data(), expected.data(), mac.size()) != 0)
    throw VerificationError(Component::Server,
                            "party 1: the output labels relayed by party 3 fail party 2's MAC");
  DualGarblingOutput result;
  result.previous = read_output(output, zero_out, side.seeded, kFirstGarbler);  // a_2 = w
  result.own = c_a;                                                         // a_0 = c_A
  return result;
}

// Party 2.
DualGarblingOutput garble_second(const BatchTask& task, const PartyPrfKeys& keys, two_party::Channel& to_next,
                                 two_party::Channel& from_previous) {
  const circuits::Program& program = *task.program;
  GarblerSide side(task, keys.garbling_own);
  const Shape& shape = side.shape;
  const auto c_b = mask_bits(keys.garbling_previous, task.header, shape.outputs);

  std::vector<std::uint8_t> a1 = garbled::key_row_bits(task, KeyPart::XorA);
  std::vector<std::uint8_t> a2 = garbled::key_row_bits(task, KeyPart::A);
  Labels padded(shape.key + shape.outputs);
  {
    const Labels l1 = side.active(side.seeded.z1, a1);
    const Labels lb = side.active(side.seeded.zb, c_b);
    std::copy_n(l1.data(), l1.size(), padded.data());
    std::copy_n(lb.data(), lb.size(), padded.data() + l1.size());
  }
  wipe(a1.data(), a1.size());
  const SecretBytes pad = garbled::batch_stream(keys.garbling_previous, kPadPurpose, task.header, padded.size() * sizeof(Block));
  auto padded_bytes = bytes_of(padded);
  for (std::size_t i = 0; i < pad.size(); ++i) padded_bytes[i] ^= pad[i];
  to_next.send(padded_bytes);
  to_next.flush();

  const Labels l2 = side.active(side.seeded.z2, a2);
  wipe(a2.data(), a2.size());
  const Labels lp = side.active(side.seeded.zp, garbled::public_row_bits(task));
  GarblingDigest digest = garbling_digest(keys.garbling_previous, task.header);
  digest.add(commitments(side.seeded, side.number));
  digest.add(bytes_of(l2));
  digest.add(bytes_of(lp));
  DigestSink sink(digest);
  const Labels zero_out = side.garble(task, sink);
  const Digest garbling = digest.finish();
  const auto mac = garbled::batch_mac(keys.garbling_previous, kRelayPurpose, task.header, {padded_bytes, garbling});
  to_next.send(garbling);
  to_next.send(mac);
  to_next.flush();

  // Party 2's output labels and its MAC for party 1, checked and passed on.
  Labels output(shape.outputs);
  std::array<std::uint8_t, 32> output_mac{};
  from_previous.allow_extra_wait(jobs::krb_first_layer_grace(program) +
                                 std::chrono::milliseconds(program.and_gates * task.instances / 2000));
  from_previous.receive(bytes_of(output));
  from_previous.receive(output_mac);
  DualGarblingOutput result;
  result.own = read_output(output, zero_out, side.seeded, kSecondGarbler);  // a_2 = w
  result.previous = c_b;                                                // a_1 = c_B
  to_next.send(bytes_of(output));
  to_next.send(output_mac);
  to_next.flush();
  return result;
}

// Party 1.
DualGarblingOutput evaluate_both(const BatchTask& task, const PartyPrfKeys& keys, two_party::Channel& to_next,
                                 two_party::Channel& from_previous) {
  const circuits::Program& program = *task.program;
  const Shape shape(task);
  const std::uint64_t number = batch_garbling_number(task.header);
  const auto c_a = mask_bits(keys.garbling_previous, task.header, shape.outputs);
  const auto c_b = mask_bits(keys.garbling_own, task.header, shape.outputs);

  Labels l0(shape.key), la(shape.outputs), l2(shape.key), lp(shape.pub), relayed(shape.key + shape.outputs);
  std::vector<std::uint8_t> committed(shape.committed() * 2 * kCommitBytes);
  from_previous.receive(bytes_of(l0));
  from_previous.receive(bytes_of(la));
  from_previous.receive(bytes_of(l2));
  from_previous.receive(bytes_of(lp));
  from_previous.receive(committed);
  from_previous.receive(bytes_of(relayed));
  GarblingDigest digest = garbling_digest(keys.garbling_own, task.header);
  digest.add(committed);
  digest.add(bytes_of(l2));
  digest.add(bytes_of(lp));

  // Party 3's labels of a_1 and c_B, unpadded (the padded bytes' MAC is checked with the digest).
  const SecretBytes pad =
      garbled::batch_stream(keys.garbling_own, kPadPurpose, task.header, relayed.size() * sizeof(Block));
  Labels l1(shape.key), lb(shape.outputs);
  const auto padded = bytes_of(relayed);
  const auto unpadded_a1 = bytes_of(l1), unpadded_cb = bytes_of(lb);
  for (std::size_t i = 0; i < unpadded_a1.size(); ++i) unpadded_a1[i] = padded[i] ^ pad[i];
  for (std::size_t i = 0; i < unpadded_cb.size(); ++i)
    unpadded_cb[i] = padded[unpadded_a1.size() + i] ^ pad[unpadded_a1.size() + i];

  Labels active(shape.key + shape.pub);
  for (std::size_t i = 0; i < shape.key; ++i) active[i] = l0[i] ^ l1[i] ^ l2[i];
  std::copy_n(lp.data(), shape.pub, active.data() + shape.key);
  DigestingReceiver stream(from_previous, digest);
  Labels output;
  gc2::evaluate(program, task.instances, active.span(), stream, output, number);
  const Digest evaluated = digest.finish();
  // Party 3 garbles the whole batch before its digest leaves: allow it 2 M AND gates a second.
  from_previous.allow_extra_wait(std::chrono::milliseconds(program.and_gates * task.instances / 2000));
  const Digest garbled_by_third = receive_digest(from_previous);
  std::array<std::uint8_t, 32> relay_mac{};
  from_previous.receive(relay_mac);

  const auto expected_mac =
      garbled::batch_mac(keys.garbling_own, kRelayPurpose, task.header, {bytes_of(relayed), garbled_by_third});
  if (sodium_memcmp(relay_mac.data(), expected_mac.data(), relay_mac.size()) != 0)
    throw VerificationError(Component::Server, "party 2: party 3's messages relayed by party 1 fail their MAC");
  if (sodium_memcmp(evaluated.data(), garbled_by_third.data(), evaluated.size()) != 0)
    throw VerificationError(Component::Server,
                            "party 2: the garbling party 1 sent differs from party 3's (tables, labels of "
                            "shared inputs or commitments)");
  std::vector<std::uint8_t> a0 = garbled::key_row_bits(task, KeyPart::XorA);
  std::vector<std::uint8_t> a1 = garbled::key_row_bits(task, KeyPart::A);
  const bool from_first = labels_match(l0.span(), a0, committed, 0, number) &
                          labels_match(la.span(), c_a, committed, 2 * shape.key, number);
  const bool from_third = labels_match(l1.span(), a1, committed, shape.key, number) &
                          labels_match(lb.span(), c_b, committed, 2 * shape.key + shape.outputs, number);
  wipe(a0.data(), a0.size());
  wipe(a1.data(), a1.size());
  if (!from_first)
    throw VerificationError(Component::Server, "party 2: input labels from party 1 fail their commitments");
  if (!from_third)
    throw VerificationError(Component::Server, "party 2: input labels from party 3 fail their commitments");

  xor_into(output, la);
  xor_into(output, lb);
  const auto mac = garbled::batch_mac(keys.garbling_previous, kOutputPurpose, task.header, {bytes_of(output)});
  to_next.send(bytes_of(output));
  to_next.send(mac);
  to_next.flush();
  DualGarblingOutput result;
  result.own = c_b;       // a_1
  result.previous = c_a;  // a_0
  return result;
}

}  // namespace

DualGarblingOutput evaluate_dual_garbling(const BatchTask& task, int party, const PartyPrfKeys& keys,
                                          two_party::Channel& to_next, two_party::Channel& from_previous) {
  switch (party) {
    case kFirstGarbler: return garble_first(task, keys, to_next, from_previous);
    case kEvaluator: return evaluate_both(task, keys, to_next, from_previous);
    case kSecondGarbler: return garble_second(task, keys, to_next, from_previous);
    default: throw Error(Component::Server, "party index out of range");
  }
}

}  // namespace mpc::three_party_engine
