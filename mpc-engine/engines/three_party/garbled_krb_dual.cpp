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
#include "engines/three_party/garbled_krb_dual_parts.hpp"
#include "engines/three_party/garbling_digest.hpp"
#include "protocol/gc2/half_gates.hpp"
#include "protocol/two_party/fixed_key_hash.hpp"

namespace mpc::three_party_engine {
namespace {

using namespace dual;
using garbled::bytes_of;
using garbled::KeyPart;

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

// Party 0.
DualGarblingOutput garble_first(const BatchTask& task, const PartyPrfKeys& keys, two_party::Channel& to_next,
                                two_party::Channel& from_previous) {
  const circuits::Program& program = *task.program;
  GarblerSide side(task, task.header, keys.garbling_previous);
  const Shape& shape = side.shape;
  const auto c_a = mask_bits(keys.garbling_own, task.header, shape.outputs);

  const FirstGarblerLabels labels = first_garbler_labels(side, task, c_a);
  const auto committed = commitments(side.seeded, side.number);

  std::vector<std::uint8_t> relayed((shape.key + shape.outputs) * sizeof(Block));
  from_previous.receive(relayed);
  send_first_garbler_labels(labels, to_next);
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
  const Labels output = receive_output_labels(task, shape, keys.garbling_own, from_previous, garbling_time);
  DualGarblingOutput result;
  result.previous = read_output(output, zero_out, side.seeded, kFirstGarbler);  // a_2 = w
  result.own = c_a;                                                         // a_0 = c_A
  return result;
}

// Party 2.
DualGarblingOutput garble_second(const BatchTask& task, const PartyPrfKeys& keys, two_party::Channel& to_next,
                                 two_party::Channel& from_previous) {
  const circuits::Program& program = *task.program;
  GarblerSide side(task, task.header, keys.garbling_own);
  const Shape& shape = side.shape;
  const auto c_b = mask_bits(keys.garbling_previous, task.header, shape.outputs);

  const Labels padded = padded_third_labels(side, task, c_b, keys.garbling_previous);
  const auto padded_bytes = bytes_of(padded);
  to_next.send(padded_bytes);
  to_next.flush();

  const SharedInputLabels shared = shared_input_labels(side, task, KeyPart::A);
  GarblingDigest digest = garbling_digest(keys.garbling_previous, task.header);
  digest.add(commitments(side.seeded, side.number));
  digest.add(bytes_of(shared.a2));
  digest.add(bytes_of(shared.pub));
  DigestSink sink(digest);
  const Labels zero_out = side.garble(task, sink);
  const Digest garbling = digest.finish();
  const auto mac = garbled::batch_mac(keys.garbling_previous, kRelayPurpose, task.header, {padded_bytes, garbling});
  to_next.send(garbling);
  to_next.send(mac);
  to_next.flush();

  // Party 2's output labels and its MAC for party 1, checked and passed on.
  return pass_output_labels_on(side, zero_out, c_b, to_next, from_previous,
                               jobs::krb_first_layer_grace(program) +
                                   std::chrono::milliseconds(program.and_gates * task.instances / 2000));
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
  const ThirdLabels third = unpad_third_labels(relayed, task, shape, keys.garbling_own);

  Labels active(shape.key + shape.pub);
  for (std::size_t i = 0; i < shape.key; ++i) active[i] = l0[i] ^ third.a1[i] ^ l2[i];
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
    throw VerificationError(Component::Server, "party 2: party 3's messages relayed by party 1 fail their MAC",
                            "relay_mac");
  if (sodium_memcmp(evaluated.data(), garbled_by_third.data(), evaluated.size()) != 0)
    throw VerificationError(Component::Server,
                            "party 2: the garbling party 1 sent differs from party 3's (tables, labels of "
                            "shared inputs or commitments)",
                            "garbling_digest");
  check_input_labels(task, shape, l0, la, third, c_a, c_b, committed, number);
  return send_evaluator_output(task, std::move(output), la, third, c_a, c_b, keys.garbling_previous, to_next);
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
