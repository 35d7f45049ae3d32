#include "protocol/gc3/single_garbling.hpp"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <vector>

#include "common/secret.hpp"
#include "protocol/gc2/half_gates.hpp"
#include "protocol/gc2/labels.hpp"
#include "protocol/gc3/batch_streams.hpp"

namespace mpc::gc3 {
namespace {

using gc2::Block;
using gc2::Labels;

constexpr std::string_view kLabelsPurpose = "labels of a_1";
constexpr std::string_view kPadPurpose = "pad of a_1's labels";

// Delta (lsb set) and the zero labels Z_b of a_1's `count` wires, as parties 0 and 2 draw them.
struct SharedLabels {
  Block delta;
  Labels zero_b;
  ~SharedLabels() { wipe(&delta, sizeof delta); }
};

void draw_shared_labels(const rss3::PrfKey& key, const BatchId& id, std::size_t count, SharedLabels& out) {
  SecretBytes stream = batch_stream(key, kLabelsPurpose, id, (1 + count) * sizeof(Block));
  std::memcpy(&out.delta, stream.data(), sizeof(Block));
  out.delta.lo |= 1;
  out.zero_b = Labels(count);
  std::memcpy(out.zero_b.data(), stream.data() + sizeof(Block), count * sizeof(Block));
}

// Pads (or unpads) a_1's active labels with the stream of the key parties 1 and 2 share.
void xor_pad(Labels& labels, const rss3::PrfKey& key, const BatchId& id) {
  const SecretBytes pad = batch_stream(key, kPadPurpose, id, labels.size() * sizeof(Block));
  auto* bytes = reinterpret_cast<std::uint8_t*>(labels.data());
  for (std::size_t i = 0; i < pad.size(); ++i) bytes[i] ^= pad[i];
}

// Party 0: labels to party 1, then the tables; returns the decoding bits.
std::vector<std::uint8_t> garble(const Batch& batch, const GarblingKeys& keys, two_party::Channel& to_next,
                                 two_party::Channel& from_previous) {
  const circuits::Program& program = *batch.program;
  const std::size_t key_labels = batch.key_rows * batch.instances;
  const std::size_t public_labels = batch.public_bytes * 8 * batch.instances;
  SharedLabels shared;
  draw_shared_labels(keys.previous, batch.id, key_labels, shared);
  gc2::Garbler garbler(shared.delta, garbling_number(batch.id));

  Labels zero(key_labels + public_labels);
  const Labels zero_x = gc2::zero_labels(key_labels);
  const Labels zero_p = gc2::zero_labels(public_labels);
  for (std::size_t i = 0; i < key_labels; ++i) zero[i] = zero_x[i] ^ shared.zero_b[i];
  std::copy_n(zero_p.data(), public_labels, zero.data() + key_labels);

  std::vector<std::uint8_t> x_bits = batch.inputs->key_row_bits(KeyPart::X);
  const Labels active_x = gc2::garbler_input_labels(garbler, x_bits, zero_x);
  wipe(x_bits.data(), x_bits.size());
  const Labels active_p = gc2::garbler_input_labels(garbler, batch.inputs->public_row_bits(), zero_p);
  Labels padded_b(key_labels);
  from_previous.receive(bytes_of(padded_b));

  to_next.send(bytes_of(active_x));
  to_next.send(bytes_of(active_p));
  to_next.send(bytes_of(padded_b));
  return garbler.garble(program, batch.instances, zero.span(), to_next);
}

// Party 1: evaluates with the labels party 0 forwards; returns its output labels' colour bits.
std::vector<std::uint8_t> evaluate(const Batch& batch, const GarblingKeys& keys, two_party::Channel& from_previous) {
  const std::size_t key_labels = batch.key_rows * batch.instances;
  const std::size_t public_labels = batch.public_bytes * 8 * batch.instances;
  Labels active(key_labels + public_labels);
  Labels active_b(key_labels);
  from_previous.receive(bytes_of(active).first(key_labels * sizeof(Block)));
  from_previous.receive(bytes_of(active).subspan(key_labels * sizeof(Block)));
  from_previous.receive(bytes_of(active_b));
  xor_pad(active_b, keys.own, batch.id);
  for (std::size_t i = 0; i < key_labels; ++i) active[i] ^= active_b[i];
  return gc2::evaluate(*batch.program, batch.instances, active.span(), from_previous, garbling_number(batch.id));
}

// Party 2: a_1's active labels, padded, to party 0.
void label(const Batch& batch, const GarblingKeys& keys, two_party::Channel& to_next) {
  const std::size_t key_labels = batch.key_rows * batch.instances;
  SharedLabels shared;
  draw_shared_labels(keys.own, batch.id, key_labels, shared);
  const gc2::Garbler labeller(shared.delta);
  std::vector<std::uint8_t> b_bits = batch.inputs->key_row_bits(KeyPart::XorA);
  Labels active_b = gc2::garbler_input_labels(labeller, b_bits, shared.zero_b);
  wipe(b_bits.data(), b_bits.size());
  xor_pad(active_b, keys.previous, batch.id);
  to_next.send(bytes_of(active_b));
  to_next.flush();
}

}  // namespace

void evaluate_single_garbling(const Batch& batch, int party, const GarblingKeys& keys,
                              rss3::CorrelatedRandomness& randomness, two_party::Channel& to_next,
                              two_party::Channel& from_previous, rss3::ByteShare& out) {
  const circuits::Program& program = *batch.program;
  const std::size_t instances = batch.instances;
  const std::size_t record = (program.num_outputs + 7) / 8;
  // c_i: this party's part of the result, one bit per byte, output j of instance n at
  // j * instances + n.
  std::vector<std::uint8_t> part;
  switch (party) {
    case kGarblingParty: part = garble(batch, keys, to_next, from_previous); break;
    case kEvaluatingParty: part = evaluate(batch, keys, from_previous); break;
    default:
      label(batch, keys, to_next);
      part.assign(program.num_outputs * instances, 0);
      break;
  }
  const std::size_t bytes = instances * record;
  const std::size_t padded = (bytes + 15) / 16 * 16;
  SecretBytes mine(padded);
  for (std::size_t j = 0; j < program.num_outputs; ++j)
    for (std::size_t n = 0; n < instances; ++n)
      mine[n * record + j / 8] |= static_cast<std::uint8_t>(part[j * instances + n] << (j % 8));
  wipe(part.data(), part.size());
  SecretBytes alpha(padded);
  randomness.next_alpha(alpha.span());
  for (std::size_t i = 0; i < padded; ++i) mine[i] ^= alpha[i];
  SecretBytes theirs(padded);
  to_next.send(mine.span());
  to_next.flush();
  // Party 1 answers once it has evaluated the whole circuit: party 2 waits for the garbling
  // and its transfer too (allowing 2 M AND gates a second), and for a compile on the way.
  if (party == kLabellingParty)
    from_previous.allow_extra_wait(batch.build_grace + garbling_time(batch));
  from_previous.receive(theirs.span());
  out.x.resize(bytes);
  out.a.resize(bytes);
  for (std::size_t i = 0; i < bytes; ++i) {
    out.x[i] = static_cast<std::uint8_t>(mine[i] ^ theirs[i]);
    out.a[i] = mine[i];
  }
}

}  // namespace mpc::gc3
