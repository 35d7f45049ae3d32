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
  GarblerSide side(task, task.header, keys.garbling_own);
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
