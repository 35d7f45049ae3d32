#include "protocol/gc3/dual_garbling_parts.hpp"

#include <sodium.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "common/error.hpp"
#include "common/secret.hpp"
#include "protocol/gc3/batch.hpp"
#include "protocol/gc3/batch_streams.hpp"
#include "protocol/two_party/fixed_key_hash.hpp"

namespace mpc::gc3::dual {


SeededLabels::~SeededLabels() {
  wipe(&delta, sizeof delta);
  wipe(&constant, sizeof constant);
}

void draw_seeded_labels(const rss3::PrfKey& key, const BatchId& id, const Shape& shape,
                        SeededLabels& out) {
  const std::size_t blocks = 2 + 3 * shape.key + shape.pub + 2 * shape.outputs;
  const SecretBytes stream = batch_stream(key, kLabelsPurpose, id, blocks * sizeof(Block));
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

std::vector<std::uint8_t> mask_bits(const rss3::PrfKey& key, const BatchId& id, std::size_t count) {
  SecretBytes stream = batch_stream(key, kMaskPurpose, id, count);
  std::vector<std::uint8_t> bits(count);
  for (std::size_t i = 0; i < count; ++i) bits[i] = stream[i] & 1;
  return bits;
}

// Truncated hashes of `labels` under the commitment tweaks from `first` on.
namespace {

std::vector<std::uint8_t> label_hashes(std::span<const Block> labels, std::uint64_t number, std::uint64_t first) {
  Labels hashed(labels.size());
  two_party::tccr_hash(labels.data(), hashed.data(), labels.size(), number, kCommitTweakBase + first, 1);
  std::vector<std::uint8_t> out(labels.size() * kCommitBytes);
  for (std::size_t i = 0; i < labels.size(); ++i) std::memcpy(out.data() + i * kCommitBytes, &hashed[i], kCommitBytes);
  return out;
}

}  // namespace

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

void DigestSink::send(std::span<const std::uint8_t> bytes) {
  digest_.add(bytes);
  sent_ += bytes.size();
}

void DigestSink::receive(std::span<std::uint8_t>) { throw Error(Component::Server, "a digest sink receives nothing"); }

void xor_into(Labels& out, const Labels& in) {
  for (std::size_t i = 0; i < out.size(); ++i) out[i] ^= in[i];
}

Labels program_zero_labels(const SeededLabels& seeded) {
  Labels zero(seeded.z0.size() + seeded.zp.size());
  for (std::size_t i = 0; i < seeded.z0.size(); ++i) zero[i] = seeded.z0[i] ^ seeded.z1[i] ^ seeded.z2[i];
  std::copy_n(seeded.zp.data(), seeded.zp.size(), zero.data() + seeded.z0.size());
  return zero;
}

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
  if (bad != 0) blame::conclude(party, kEvaluator, "the output labels from party 2 are not labels of the garbling",
                                "output_labels", false);
  return w;
}

GarblerSide::GarblerSide(const Batch& batch, const BatchId& garbling, const rss3::PrfKey& shared_key)
    : shape(batch), number(garbling_number(garbling)) {
  draw_seeded_labels(shared_key, garbling, shape, seeded);
  garbler.emplace(seeded.delta, number);
}

Labels GarblerSide::active(const Labels& zero, std::span<const std::uint8_t> bits) const {
  return gc2::garbler_input_labels(*garbler, bits, zero);
}

Labels GarblerSide::garble(const Batch& batch, two_party::Channel& channel) {
  const Labels zero = program_zero_labels(seeded);
  Labels zero_out;
  garbler->garble(*batch.program, batch.instances, zero.span(), channel, zero_out, seeded.constant);
  return zero_out;
}

Digest receive_digest(two_party::Channel& channel) {
  Digest out{};
  channel.receive(out);
  return out;
}

SharedInputLabels shared_input_labels(const GarblerSide& side, const Batch& batch, KeyPart a2) {
  std::vector<std::uint8_t> bits = batch.inputs->key_row_bits(a2);
  SharedInputLabels labels{side.active(side.seeded.z2, bits), side.active(side.seeded.zp, batch.inputs->public_row_bits())};
  wipe(bits.data(), bits.size());
  return labels;
}

FirstGarblerLabels first_garbler_labels(const GarblerSide& side, const Batch& batch,
                                        std::span<const std::uint8_t> c_a) {
  std::vector<std::uint8_t> a0 = batch.inputs->key_row_bits(KeyPart::A);
  FirstGarblerLabels labels{side.active(side.seeded.z0, a0), side.active(side.seeded.za, c_a),
                            shared_input_labels(side, batch, KeyPart::XorA)};
  wipe(a0.data(), a0.size());
  return labels;
}

void send_first_garbler_labels(const FirstGarblerLabels& labels, two_party::Channel& to_next) {
  to_next.send(bytes_of(labels.a0));
  to_next.send(bytes_of(labels.ca));
  to_next.send(bytes_of(labels.shared.a2));
  to_next.send(bytes_of(labels.shared.pub));
}

blame::ReceivedOutcome receive_evaluator_outcome(const Batch& batch, const GarblingKeys& keys,
                                                 const blame::OutcomeForm& form, const Digest* own_digest,
                                                 two_party::Channel& to_next, two_party::Channel& from_previous,
                                                 std::chrono::milliseconds extra_wait) {
  blame::ReceivedOutcome received =
      blame::receive_from_evaluator(keys.identities, batch.id, form, from_previous, extra_wait);
  if (received.outcome == blame::Outcome::GarblingsDiffer) {
    if (own_digest == nullptr) throw Error(Component::Server, "party 2 refuses a garbling no digest covered");
    const SecretBytes key = blame::digest_key(keys.previous, batch.id);
    if (sodium_memcmp(key.data(), received.payload.data(), key.size()) != 0)
      blame::conclude(kSecondGarbler, kEvaluator,
                      "party 2 shows another key of the garbling digest than the one it shares with this party",
                      "digest_key", false);
    blame::pass_on(received, to_next);
    blame::second_garbler_concludes(keys.identities, batch.id, key.span(), *own_digest, from_previous,
                                    extra_wait + garbling_time(batch));
  }
  return received;
}

DualGarblingOutput pass_output_labels_on(const Batch& batch, const GarblingKeys& keys, const GarblerSide& side,
                                         const Labels& zero_out, std::span<const std::uint8_t> c_b,
                                         const Digest* own_digest, two_party::Channel& to_next,
                                         two_party::Channel& from_previous, std::chrono::milliseconds extra_wait) {
  const blame::OutcomeForm form{blame::Outcome::Evaluated, side.shape.outputs * sizeof(Block), own_digest != nullptr};
  const blame::ReceivedOutcome received =
      receive_evaluator_outcome(batch, keys, form, own_digest, to_next, from_previous, extra_wait);
  Labels output(side.shape.outputs);
  std::memcpy(output.data(), received.payload.data(), received.payload.size());
  DualGarblingOutput result;
  result.own = read_output(output, zero_out, side.seeded, kSecondGarbler);  // a_2 = w
  result.previous.assign(c_b.begin(), c_b.end());                        // a_1 = c_B
  blame::pass_on(received, to_next);
  return result;
}

blame::ReceivedOutcome receive_outcome(const Batch& batch, const GarblingKeys& keys, const blame::OutcomeForm& form,
                                       const blame::SecondGarblerDigest* second, const OwnDigest& own_digest,
                                       two_party::Channel& to_next, two_party::Channel& from_previous,
                                       std::chrono::milliseconds extra_wait) {
  blame::ReceivedOutcome received = blame::receive_relayed_outcome(keys.identities, batch.id, form, from_previous, extra_wait);
  if (received.outcome == blame::Outcome::GarblingsDiffer) {
    if (second == nullptr) throw Error(Component::Server, "party 1 answers differing garblings without a digest");
    blame::first_garbler_concludes(keys.identities, batch.id, received.payload.span(), *second, own_digest, to_next);
  }
  return received;
}

void refuse_differing_garblings(const Batch& batch, const GarblingKeys& keys, std::span<const std::uint8_t> digest_key,
                                const Digest& second_digest, two_party::Channel& to_next,
                                two_party::Channel& from_previous) {
  blame::send_outcome(keys.identities, batch.id, blame::Outcome::GarblingsDiffer, digest_key, to_next);
  blame::evaluator_concludes(keys.identities, batch.id, digest_key, second_digest, from_previous, to_next,
                             garbling_time(batch));
}

Labels padded_third_labels(const GarblerSide& side, const Batch& batch, std::span<const std::uint8_t> c_b,
                           const rss3::PrfKey& with_evaluator) {
  const Shape& shape = side.shape;
  std::vector<std::uint8_t> a1 = batch.inputs->key_row_bits(KeyPart::XorA);
  Labels padded(shape.key + shape.outputs);
  {
    const Labels l1 = side.active(side.seeded.z1, a1);
    const Labels lb = side.active(side.seeded.zb, c_b);
    std::copy_n(l1.data(), l1.size(), padded.data());
    std::copy_n(lb.data(), lb.size(), padded.data() + l1.size());
  }
  wipe(a1.data(), a1.size());
  const SecretBytes pad =
      batch_stream(with_evaluator, kPadPurpose, batch.id, padded.size() * sizeof(Block));
  auto padded_bytes = bytes_of(padded);
  for (std::size_t i = 0; i < pad.size(); ++i) padded_bytes[i] ^= pad[i];
  return padded;
}

ThirdLabels unpad_third_labels(const Labels& relayed, const Batch& batch, const Shape& shape,
                               const rss3::PrfKey& with_third) {
  const SecretBytes pad = batch_stream(with_third, kPadPurpose, batch.id, relayed.size() * sizeof(Block));
  ThirdLabels third{Labels(shape.key), Labels(shape.outputs)};
  const auto padded = bytes_of(relayed);
  const auto a1 = bytes_of(third.a1), cb = bytes_of(third.cb);
  for (std::size_t i = 0; i < a1.size(); ++i) a1[i] = padded[i] ^ pad[i];
  for (std::size_t i = 0; i < cb.size(); ++i) cb[i] = padded[a1.size() + i] ^ pad[a1.size() + i];
  return third;
}

void check_input_labels(const Batch& batch, const Shape& shape, const Labels& l0, const Labels& la,
                        const ThirdLabels& third, std::span<const std::uint8_t> c_a,
                        std::span<const std::uint8_t> c_b, std::span<const std::uint8_t> committed,
                        std::uint64_t number) {
  std::vector<std::uint8_t> a0 = batch.inputs->key_row_bits(KeyPart::XorA);
  std::vector<std::uint8_t> a1 = batch.inputs->key_row_bits(KeyPart::A);
  const bool from_first = labels_match(l0.span(), a0, committed, 0, number) &
                          labels_match(la.span(), c_a, committed, 2 * shape.key, number);
  const bool from_third = labels_match(third.a1.span(), a1, committed, shape.key, number) &
                          labels_match(third.cb.span(), c_b, committed, 2 * shape.key + shape.outputs, number);
  wipe(a0.data(), a0.size());
  wipe(a1.data(), a1.size());
  if (!from_first)
    blame::conclude(kEvaluator, kFirstGarbler, "input labels from party 1 fail their commitments", "label_commitments",
                    false);
  if (!from_third)
    blame::conclude(kEvaluator, kSecondGarbler, "input labels from party 3 fail their commitments",
                    "label_commitments", false);
}

DualGarblingOutput send_evaluator_output(const Batch& batch, const GarblingKeys& keys, Labels evaluated,
                                         const Labels& la, const ThirdLabels& third,
                                         std::span<const std::uint8_t> c_a, std::span<const std::uint8_t> c_b,
                                         two_party::Channel& to_next) {
  xor_into(evaluated, la);
  xor_into(evaluated, third.cb);
  blame::send_outcome(keys.identities, batch.id, blame::Outcome::Evaluated, bytes_of(evaluated), to_next);
  DualGarblingOutput result;
  result.own.assign(c_b.begin(), c_b.end());       // a_1
  result.previous.assign(c_a.begin(), c_a.end());  // a_0
  return result;
}

}  // namespace mpc::gc3::dual
