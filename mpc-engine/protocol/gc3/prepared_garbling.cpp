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

constexpr std::string_view kKeptPurpose = "prepared garbling: kept by party 2";

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

std::array<std::uint8_t, 32> kept_mac(const rss3::PrfKey& first_garbler_and_evaluator, const BatchId& id) {
  return batch_mac(first_garbler_and_evaluator, kKeptPurpose, id, {});
}

// Party 0, preparing.
void prepare_first(const Batch& batch, const GarblingKeys& keys, PreparedGarblings& store,
                   two_party::Channel& to_next, two_party::Channel& from_previous) {
  GarblerSide side(batch, batch.id, keys.previous);
  to_next.send(commitments(side.seeded, side.number));
  PreparedGarbling entry;
  entry.zero_out = side.garble(batch, to_next);

  std::vector<std::uint8_t> digest_and_mac(GarblingDigest::kBytes + 32);
  from_previous.allow_extra_wait(garbling_time(batch));
  from_previous.receive(digest_and_mac);
  to_next.send(digest_and_mac);
  to_next.flush();

  std::array<std::uint8_t, 32> confirmation{};
  from_previous.allow_extra_wait(garbling_time(batch));
  from_previous.receive(confirmation);
  const auto expected = kept_mac(keys.own, batch.id);
  if (sodium_memcmp(confirmation.data(), expected.data(), expected.size()) != 0)
    throw VerificationError(Component::Server, "party 1: party 2's word that it kept the garbling fails its MAC",
                            "kept_mac");
  keep(store, batch, kFirstGarbler, std::move(entry));
}

// Party 2, preparing.
void prepare_second(const Batch& batch, const GarblingKeys& keys, PreparedGarblings& store,
                    two_party::Channel& to_next, two_party::Channel& from_previous) {
  GarblerSide side(batch, batch.id, keys.own);
  GarblingDigest digest = garbling_digest(keys.previous, batch.id);
  digest.add(commitments(side.seeded, side.number));
  DigestSink sink(digest);
  PreparedGarbling entry;
  entry.zero_out = side.garble(batch, sink);
  const Digest garbling = digest.finish();
  const auto mac = batch_mac(keys.previous, kRelayPurpose, batch.id, {garbling});
  to_next.send(garbling);
  to_next.send(mac);
  to_next.flush();

  std::array<std::uint8_t, 32> confirmation{};
  from_previous.allow_extra_wait(garbling_time(batch));
  from_previous.receive(confirmation);
  keep(store, batch, kSecondGarbler, std::move(entry));
  to_next.send(confirmation);
  to_next.flush();
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
  GarblingDigest digest = garbling_digest(keys.own, batch.id);
  digest.add(entry.committed);
  digest.add(entry.stream());
  const Digest received = digest.finish();

  from_previous.allow_extra_wait(garbling_time(batch));
  const Digest garbled_by_third = receive_digest(from_previous);
  std::array<std::uint8_t, 32> relay_mac{};
  from_previous.receive(relay_mac);
  const auto expected = batch_mac(keys.own, kRelayPurpose, batch.id, {garbled_by_third});
  if (sodium_memcmp(relay_mac.data(), expected.data(), expected.size()) != 0)
    throw VerificationError(Component::Server, "party 2: party 3's digest relayed by party 1 fails its MAC",
                            "relay_mac");
  if (sodium_memcmp(received.data(), garbled_by_third.data(), received.size()) != 0)
    throw VerificationError(Component::Server,
                            "party 2: the garbling party 1 prepared differs from party 3's (tables or commitments)",
                            "garbling_digest");
  keep(store, batch, kEvaluator, std::move(entry));
  to_next.send(kept_mac(keys.previous, batch.id));
  to_next.flush();
}

// Party 0, using.
DualGarblingOutput use_first(const Batch& batch, const GarblingKeys& keys, PreparedGarblings& store,
                             two_party::Channel& to_next, two_party::Channel& from_previous) {
  const PreparedGarbling entry = take(store, batch, kFirstGarbler);
  GarblerSide side(batch, garbling_of(batch), keys.previous);
  const Shape& shape = side.shape;
  const auto c_a = mask_bits(keys.own, batch.id, shape.outputs);
  const FirstGarblerLabels labels = first_garbler_labels(side, batch, c_a);

  std::vector<std::uint8_t> relayed((shape.key + shape.outputs) * sizeof(Block) + 32);
  from_previous.receive(relayed);
  send_first_garbler_labels(labels, to_next);
  to_next.send(relayed);
  to_next.flush();

  const Labels output = receive_output_labels(batch, shape, keys.own, from_previous, garbling_time(batch));
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
  const auto mac = batch_mac(keys.previous, kRelayPurpose, batch.id,
                                      {padded_bytes, bytes_of(shared.a2), bytes_of(shared.pub)});
  to_next.send(padded_bytes);
  to_next.send(mac);
  to_next.flush();

  return pass_output_labels_on(side, entry.zero_out, c_b, to_next, from_previous, garbling_time(batch));
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
  std::array<std::uint8_t, 32> relay_mac{};
  from_previous.receive(bytes_of(l0));
  from_previous.receive(bytes_of(la));
  from_previous.receive(bytes_of(l2));
  from_previous.receive(bytes_of(lp));
  from_previous.receive(bytes_of(relayed));
  from_previous.receive(relay_mac);
  const auto expected_mac = batch_mac(keys.own, kRelayPurpose, batch.id,
                                               {bytes_of(relayed), bytes_of(l2), bytes_of(lp)});
  if (sodium_memcmp(relay_mac.data(), expected_mac.data(), relay_mac.size()) != 0)
    throw VerificationError(Component::Server,
                            "party 2: party 3's labels relayed by party 1, or the labels of shared inputs, fail their MAC",
                            "relay_mac");

  const ThirdLabels third = unpad_third_labels(relayed, batch, shape, keys.own);
  check_input_labels(batch, shape, l0, la, third, c_a, c_b, entry.committed, number);

  Labels active(shape.key + shape.pub);
  for (std::size_t i = 0; i < shape.key; ++i) active[i] = l0[i] ^ third.a1[i] ^ l2[i];
  std::copy_n(lp.data(), shape.pub, active.data() + shape.key);
  two_party::ReplayChannel tables(entry.stream());
  Labels output;
  gc2::evaluate(program, batch.instances, active.span(), tables, output, number);
  store.recycle(std::move(entry.tables));
  return send_evaluator_output(batch, std::move(output), la, third, c_a, c_b, keys.previous, to_next);
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
