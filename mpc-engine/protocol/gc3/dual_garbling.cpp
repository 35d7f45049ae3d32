#include "protocol/gc3/dual_garbling.hpp"

#include <sodium.h>

#include <array>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "protocol/gc3/batch.hpp"
#include "protocol/gc3/batch_streams.hpp"
#include "protocol/gc3/dual_garbling_parts.hpp"
#include "protocol/gc3/garbling_digest.hpp"
#include "protocol/gc2/half_gates.hpp"
#include "protocol/two_party/fixed_key_hash.hpp"

namespace mpc::gc3 {
namespace {

using namespace dual;

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

// The digest of a garbling as party 3 makes it: the commitments, the labels of the inputs both
// garblers know, then the tables.
Digest digest_of_garbling(const Batch& batch, std::span<const std::uint8_t> key,
                          std::span<const std::uint8_t> committed, const SharedInputLabels& shared,
                          GarblerSide& side, Labels* zero_out) {
  GarblingDigest digest(key);
  digest.add(committed);
  digest.add(bytes_of(shared.a2));
  digest.add(bytes_of(shared.pub));
  DigestSink sink(digest);
  Labels zero = side.garble(batch, sink);
  if (zero_out != nullptr) *zero_out = std::move(zero);
  return digest.finish();
}

// Party 0.
DualGarblingOutput garble_first(const Batch& batch, const GarblingKeys& keys, two_party::Channel& to_next,
                                two_party::Channel& from_previous) {
  GarblerSide side(batch, batch.id, keys.previous);
  const Shape& shape = side.shape;
  const auto c_a = mask_bits(keys.own, batch.id, shape.outputs);

  const FirstGarblerLabels labels = first_garbler_labels(side, batch, c_a);
  const auto committed = commitments(side.seeded, side.number);

  Labels relayed(shape.key + shape.outputs);
  from_previous.receive(bytes_of(relayed));
  send_first_garbler_labels(labels, to_next);
  to_next.send(committed);
  to_next.send(bytes_of(relayed));

  const Labels zero_out = side.garble(batch, to_next);

  // Party 3's digest (it garbles the whole batch first, as busy as this party or more), then,
  // once party 2 has evaluated, its outcome via party 3. Both waits allow 2 M AND gates a
  // second, as party 3 allows party 2 in the passive form.
  const auto waiting = garbling_time(batch);
  const blame::SecondGarblerDigest second = blame::relay_second_garbler_digest(
      keys.identities, batch.id, {bytes_of(relayed)}, from_previous, to_next, waiting);
  const OwnDigest own_digest = [&](std::span<const std::uint8_t> key) {
    GarblerSide again(batch, batch.id, keys.previous);
    return digest_of_garbling(batch, key, committed, labels.shared, again, nullptr);
  };
  const blame::OutcomeForm form{blame::Outcome::Evaluated, shape.outputs * sizeof(Block), true};
  const blame::ReceivedOutcome outcome =
      receive_outcome(batch, keys, form, &second, own_digest, to_next, from_previous, waiting);
  Labels output(shape.outputs);
  std::memcpy(output.data(), outcome.payload.data(), outcome.payload.size());
  DualGarblingOutput result;
  result.previous = read_output(output, zero_out, side.seeded, kFirstGarbler);  // a_2 = w
  result.own = c_a;                                                         // a_0 = c_A
  return result;
}

// Party 2.
DualGarblingOutput garble_second(const Batch& batch, const GarblingKeys& keys, two_party::Channel& to_next,
                                 two_party::Channel& from_previous) {
  GarblerSide side(batch, batch.id, keys.own);
  const Shape& shape = side.shape;
  const auto c_b = mask_bits(keys.previous, batch.id, shape.outputs);

  const Labels padded = padded_third_labels(side, batch, c_b, keys.previous);
  const auto padded_bytes = bytes_of(padded);
  to_next.send(padded_bytes);
  to_next.flush();

  const SharedInputLabels shared = shared_input_labels(side, batch, KeyPart::A);
  const SecretBytes key = blame::digest_key(keys.previous, batch.id);
  Labels zero_out;
  const Digest garbling =
      digest_of_garbling(batch, key.span(), commitments(side.seeded, side.number), shared, side, &zero_out);
  blame::send_second_garbler_digest(keys.identities, batch.id, key.span(), garbling, {padded_bytes}, to_next);

  // Party 2's outcome, checked and passed on.
  return pass_output_labels_on(batch, keys, side, zero_out, c_b, &garbling, to_next, from_previous,
                               batch.build_grace + garbling_time(batch));
}

// Party 1.
DualGarblingOutput evaluate_both(const Batch& batch, const GarblingKeys& keys, two_party::Channel& to_next,
                                 two_party::Channel& from_previous) {
  const circuits::Program& program = *batch.program;
  const Shape shape(batch);
  const std::uint64_t number = garbling_number(batch.id);
  const auto c_a = mask_bits(keys.previous, batch.id, shape.outputs);
  const auto c_b = mask_bits(keys.own, batch.id, shape.outputs);

  Labels l0(shape.key), la(shape.outputs), l2(shape.key), lp(shape.pub), relayed(shape.key + shape.outputs);
  std::vector<std::uint8_t> committed(shape.committed() * 2 * kCommitBytes);
  from_previous.receive(bytes_of(l0));
  from_previous.receive(bytes_of(la));
  from_previous.receive(bytes_of(l2));
  from_previous.receive(bytes_of(lp));
  from_previous.receive(committed);
  from_previous.receive(bytes_of(relayed));
  const SecretBytes key = blame::digest_key(keys.own, batch.id);
  GarblingDigest digest(key.span());
  digest.add(committed);
  digest.add(bytes_of(l2));
  digest.add(bytes_of(lp));

  // Party 3's labels of a_1 and c_B, unpadded (its signature over the padded bytes is checked
  // with its digest).
  const ThirdLabels third = unpad_third_labels(relayed, batch, shape, keys.own);

  Labels active(shape.key + shape.pub);
  for (std::size_t i = 0; i < shape.key; ++i) active[i] = l0[i] ^ third.a1[i] ^ l2[i];
  std::copy_n(lp.data(), shape.pub, active.data() + shape.key);
  DigestingReceiver stream(from_previous, digest);
  Labels output;
  gc2::evaluate(program, batch.instances, active.span(), stream, output, number);
  const Digest evaluated = digest.finish();
  // Party 3 garbles the whole batch before its digest leaves: allow it 2 M AND gates a second.
  const blame::SecondGarblerDigest second = blame::receive_second_garbler_digest(
      keys.identities, batch.id, key.span(), {bytes_of(relayed)}, from_previous, garbling_time(batch));
  if (sodium_memcmp(evaluated.data(), second.digest.data(), evaluated.size()) != 0)
    refuse_differing_garblings(batch, keys, key.span(), second.digest, to_next, from_previous);
  check_input_labels(batch, shape, l0, la, third, c_a, c_b, committed, number);
  return send_evaluator_output(batch, keys, std::move(output), la, third, c_a, c_b, to_next);
}

}  // namespace

DualGarblingOutput evaluate_dual_garbling(const Batch& batch, int party, const GarblingKeys& keys,
                                          two_party::Channel& to_next, two_party::Channel& from_previous) {
  switch (party) {
    case kFirstGarbler: return garble_first(batch, keys, to_next, from_previous);
    case kEvaluator: return evaluate_both(batch, keys, to_next, from_previous);
    case kSecondGarbler: return garble_second(batch, keys, to_next, from_previous);
    default: throw Error(Component::Server, "party index out of range");
  }
}

void replicated_share(DualGarblingOutput parts, std::size_t instances, std::size_t record, rss3::ByteShare& out) {
  out.x.assign(instances * record, 0);
  out.a.assign(instances * record, 0);
  const std::size_t outputs = parts.own.size() / instances;
  for (std::size_t j = 0; j < outputs; ++j)
    for (std::size_t n = 0; n < instances; ++n) {
      const std::size_t i = j * instances + n;
      const auto shift = static_cast<unsigned>(j % 8);
      out.a[n * record + j / 8] |= static_cast<std::uint8_t>(parts.own[i] << shift);
      out.x[n * record + j / 8] |= static_cast<std::uint8_t>((parts.own[i] ^ parts.previous[i]) << shift);
    }
  wipe(parts.own.data(), parts.own.size());
  wipe(parts.previous.data(), parts.previous.size());
}

}  // namespace mpc::gc3
