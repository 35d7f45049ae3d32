#include "protocol/gc3/prepared_garbling.hpp"

#include <sodium.h>

#include <array>
#include <chrono>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "protocol/gc3/batch.hpp"
#include "protocol/gc3/dual_garbling_parts.hpp"
#include "protocol/gc3/batch_streams.hpp"
#include "protocol/gc2/half_gates.hpp"
#include "protocol/two_party/buffer_channel.hpp"

namespace mpc::gc3 {
namespace {

using namespace dual;

// The batch that prepared the garbling a batch evaluates: its epoch and sequence seed the garbling.
BatchId garbling_of(const Batch& batch) { return {batch.id.epoch, batch.prepared}; }

void keep(PreparedGarblings& store, const Batch& batch, int party, PreparedGarbling entry) {
  entry.program = batch.program_name;
  if (!store.put(batch.id.epoch, batch.id.sequence, std::move(entry), std::chrono::steady_clock::now()))
    throw Error(Component::Server, "party " + std::to_string(party + 1) +
                                       " has no room for another prepared garbling (prepared_circuits_mib)");
}

PreparedGarbling take(PreparedGarblings& store, const Batch& batch, int party) {
  auto entry = store.take(batch.id.epoch, batch.prepared, std::chrono::steady_clock::now());
  if (!entry)
    throw PreparedGarblingMissing(Component::Server, "party " + std::to_string(party + 1) +
                                                         " holds no garbling prepared by batch " +
                                                         std::to_string(batch.prepared));
  if (entry->program != batch.program_name)
    throw Error(Component::Server, "party " + std::to_string(party + 1) + ": the garbling prepared by batch " +
                                       std::to_string(batch.prepared) + " is of another circuit");
  return std::move(*entry);
}

// The digest of a prepared garbling as party 3 makes it: the commitments, then the tables.
Digest digest_of_preparation(const Batch& batch, std::span<const std::uint8_t> key, GarblerSide& side,
                             Labels* zero_out) {
  GarblingDigest digest(key);
  digest.add(commitments(side.seeded, side.number));
  DigestSink sink(digest);
  Labels zero = side.garble(batch, sink);
  if (zero_out != nullptr) *zero_out = std::move(zero);
  return digest.finish();
}

// Party 0, preparing.
void prepare_first(const Batch& batch, const GarblingKeys& keys, PreparedGarblings& store,
                   two_party::Channel& to_next, two_party::Channel& from_previous) {
  GarblerSide side(batch, batch.id, keys.previous);
  to_next.send(commitments(side.seeded, side.number));
  PreparedGarbling entry;
  entry.zero_out = side.garble(batch, to_next);

  const blame::SecondGarblerDigest second =
      blame::relay_second_garbler_digest(keys.identities, batch.id, {}, from_previous, to_next, garbling_time(batch));
  const OwnDigest own_digest = [&](std::span<const std::uint8_t> key) {
    GarblerSide again(batch, batch.id, keys.previous);
    return digest_of_preparation(batch, key, again, nullptr);
  };
  const blame::OutcomeForm form{blame::Outcome::Kept, 0, true};
  receive_outcome(batch, keys, form, &second, own_digest, to_next, from_previous, garbling_time(batch));
  keep(store, batch, kFirstGarbler, std::move(entry));
}

// Party 2, preparing.
void prepare_second(const Batch& batch, const GarblingKeys& keys, PreparedGarblings& store,
                    two_party::Channel& to_next, two_party::Channel& from_previous) {
  GarblerSide side(batch, batch.id, keys.own);
  const SecretBytes key = blame::digest_key(keys.previous, batch.id);
  PreparedGarbling entry;
  const Digest garbling = digest_of_preparation(batch, key.span(), side, &entry.zero_out);
  blame::send_second_garbler_digest(keys.identities, batch.id, key.span(), garbling, {}, to_next);

  // Party 2's word that it kept the garbling: this party keeps its part before passing it on,
  // so that party 1, the leader, names the garbling only once all three hold it.
  const blame::OutcomeForm form{blame::Outcome::Kept, 0, true};
  const blame::ReceivedOutcome outcome =
      receive_evaluator_outcome(batch, keys, form, &garbling, to_next, from_previous, garbling_time(batch));
  keep(store, batch, kSecondGarbler, std::move(entry));
  blame::pass_on(outcome, to_next);
}

// Party 1, preparing.
void prepare_evaluator(const Batch& batch, const GarblingKeys& keys, PreparedGarblings& store,
                       two_party::Channel& to_next, two_party::Channel& from_previous) {
  const Shape shape(batch);
  PreparedGarbling entry;
  entry.committed.resize(shape.committed() * 2 * kCommitBytes);
  from_previous.receive(entry.committed);
  entry.tables = store.table_buffer(kStreamLead + gc2::garbled_bytes(*batch.program, batch.instances));
  from_previous.receive(entry.stream());
  const SecretBytes key = blame::digest_key(keys.own, batch.id);
  GarblingDigest digest(key.span());
  digest.add(entry.committed);
  digest.add(entry.stream());
  const Digest received = digest.finish();

  const blame::SecondGarblerDigest second = blame::receive_second_garbler_digest(
      keys.identities, batch.id, key.span(), {}, from_previous, garbling_time(batch));
  if (sodium_memcmp(received.data(), second.digest.data(), received.size()) != 0)
    refuse_differing_garblings(batch, keys, key.span(), second.digest, to_next, from_previous);
  keep(store, batch, kEvaluator, std::move(entry));
  blame::send_outcome(keys.identities, batch.id, blame::Outcome::Kept, {}, to_next);
}

// Party 0, using.
DualGarblingOutput use_first(const Batch& batch, const GarblingKeys& keys, PreparedGarblings& store,
                             two_party::Channel& to_next, two_party::Channel& from_previous) {
  const PreparedGarbling entry = take(store, batch, kFirstGarbler);
  GarblerSide side(batch, garbling_of(batch), keys.previous);
  const Shape& shape = side.shape;
  const auto c_a = mask_bits(keys.own, batch.id, shape.outputs);
  const FirstGarblerLabels labels = first_garbler_labels(side, batch, c_a);

  // This party's labels leave first: party 2 reads them while party 3's are on their way and
  // their signature is checked here.
  send_first_garbler_labels(labels, to_next);
  to_next.flush();
  Labels relayed(shape.key + shape.outputs);
  IdentitySignature signature{};
  from_previous.receive(bytes_of(relayed));
  from_previous.receive(signature);
  if (!blame::signed_by(keys.identities, kSecondGarbler, kLabelsMessage, batch.id,
                        {bytes_of(relayed), bytes_of(labels.shared.a2), bytes_of(labels.shared.pub)}, signature))
    blame::conclude(kFirstGarbler, kSecondGarbler, "party 3's labels are not signed by party 3", "relay_signature",
                    false);
  to_next.send(bytes_of(relayed));
  to_next.send(signature);
  to_next.flush();

  const blame::OutcomeForm form{blame::Outcome::Evaluated, shape.outputs * sizeof(Block), false};
  const blame::ReceivedOutcome outcome =
      receive_outcome(batch, keys, form, nullptr, {}, to_next, from_previous, garbling_time(batch));
  Labels output(shape.outputs);
  std::memcpy(output.data(), outcome.payload.data(), outcome.payload.size());
  DualGarblingOutput result;
  result.previous = read_output(output, entry.zero_out, side.seeded, kFirstGarbler);  // a_2 = w
  result.own = c_a;                                                                  // a_0 = c_A
  return result;
}

// Party 2, using.
DualGarblingOutput use_second(const Batch& batch, const GarblingKeys& keys, PreparedGarblings& store,
                              two_party::Channel& to_next, two_party::Channel& from_previous) {
  const PreparedGarbling entry = take(store, batch, kSecondGarbler);
  GarblerSide side(batch, garbling_of(batch), keys.own);
  const Shape& shape = side.shape;
  const auto c_b = mask_bits(keys.previous, batch.id, shape.outputs);
  const Labels padded = padded_third_labels(side, batch, c_b, keys.previous);
  const auto padded_bytes = bytes_of(padded);
  const SharedInputLabels shared = shared_input_labels(side, batch, KeyPart::A);
  const auto signature = blame::sign(keys.identities, kLabelsMessage, batch.id,
                                     {padded_bytes, bytes_of(shared.a2), bytes_of(shared.pub)});
  to_next.send(padded_bytes);
  to_next.send(signature);
  to_next.flush();

  return pass_output_labels_on(batch, keys, side, entry.zero_out, c_b, nullptr, to_next, from_previous,
                               garbling_time(batch));
}

// Party 1, using.
DualGarblingOutput use_evaluator(const Batch& batch, const GarblingKeys& keys, PreparedGarblings& store,
                                 two_party::Channel& to_next, two_party::Channel& from_previous) {
  PreparedGarbling entry = take(store, batch, kEvaluator);
  const circuits::Program& program = *batch.program;
  const Shape shape(batch);
  const std::uint64_t number = garbling_number(garbling_of(batch));
  const auto c_a = mask_bits(keys.previous, batch.id, shape.outputs);
  const auto c_b = mask_bits(keys.own, batch.id, shape.outputs);
  if (entry.committed.size() != shape.committed() * 2 * kCommitBytes)
    throw Error(Component::Server, "party 2: a prepared garbling's commitments do not fit its batch");

  Labels l0(shape.key), la(shape.outputs), l2(shape.key), lp(shape.pub), relayed(shape.key + shape.outputs);
  IdentitySignature signature{};
  from_previous.receive(bytes_of(l0));
  from_previous.receive(bytes_of(la));
  from_previous.receive(bytes_of(l2));
  from_previous.receive(bytes_of(lp));
  from_previous.receive(bytes_of(relayed));
  from_previous.receive(signature);
  if (!blame::signed_by(keys.identities, kSecondGarbler, kLabelsMessage, batch.id,
                        {bytes_of(relayed), bytes_of(l2), bytes_of(lp)}, signature))
    blame::conclude(kEvaluator, kFirstGarbler,
                    "party 3's labels relayed by party 1, or the labels of shared inputs, are not signed by party 3",
                    "relay_signature", false);

  const ThirdLabels third = unpad_third_labels(relayed, batch, shape, keys.own);
  check_input_labels(batch, shape, l0, la, third, c_a, c_b, entry.committed, number);

  Labels active(shape.key + shape.pub);
  for (std::size_t i = 0; i < shape.key; ++i) active[i] = l0[i] ^ third.a1[i] ^ l2[i];
  std::copy_n(lp.data(), shape.pub, active.data() + shape.key);
  two_party::ReplayChannel tables(entry.stream());
  Labels output;
  gc2::evaluate(program, batch.instances, active.span(), tables, output, number);
  store.recycle(std::move(entry.tables));
  return send_evaluator_output(batch, keys, std::move(output), la, third, c_a, c_b, to_next);
}

}  // namespace

void prepare_dual_garbling(const Batch& batch, int party, const GarblingKeys& keys, PreparedGarblings& store,
                           two_party::Channel& to_next, two_party::Channel& from_previous) {
  switch (party) {
    case kFirstGarbler: return prepare_first(batch, keys, store, to_next, from_previous);
    case kEvaluator: return prepare_evaluator(batch, keys, store, to_next, from_previous);
    case kSecondGarbler: return prepare_second(batch, keys, store, to_next, from_previous);
    default: throw Error(Component::Server, "party index out of range");
  }
}

DualGarblingOutput evaluate_prepared_garbling(const Batch& batch, int party, const GarblingKeys& keys,
                                              PreparedGarblings& store, two_party::Channel& to_next,
                                              two_party::Channel& from_previous) {
  switch (party) {
    case kFirstGarbler: return use_first(batch, keys, store, to_next, from_previous);
    case kEvaluator: return use_evaluator(batch, keys, store, to_next, from_previous);
    case kSecondGarbler: return use_second(batch, keys, store, to_next, from_previous);
    default: throw Error(Component::Server, "party index out of range");
  }
}

}  // namespace mpc::gc3
