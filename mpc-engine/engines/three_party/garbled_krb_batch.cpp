#include "engines/three_party/garbled_krb_batch.hpp"

#include <sodium.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "protocol/gc2/half_gates.hpp"
#include "protocol/gc2/labels.hpp"
#include "protocol/rss3/output.hpp"
#include "engines/three_party/garbled_krb_dual.hpp"
#include "engines/three_party/garbled_krb_prepared.hpp"
#include "engines/three_party/garbled_krb_inputs.hpp"
#include "jobs/krb_circuit_cache.hpp"

namespace mpc::three_party_engine {
namespace {

using gc2::Block;
using gc2::Labels;
using garbled::bytes_of;
using garbled::KeyPart;

constexpr std::string_view kLabelsPurpose = "labels of a_1";
constexpr std::string_view kPadPurpose = "pad of a_1's labels";

// Delta (lsb set) and the zero labels Z_b of a_1's `count` wires, as parties 0 and 2 draw them.
struct SharedLabels {
  Block delta;
  Labels zero_b;
  ~SharedLabels() { wipe(&delta, sizeof delta); }
};

void draw_shared_labels(const rss3::PrfKey& key, const wire::BatchHeader& header, std::size_t count,
                        SharedLabels& out) {
  SecretBytes stream = garbled::batch_stream(key, kLabelsPurpose, header, (1 + count) * sizeof(Block));
  std::memcpy(&out.delta, stream.data(), sizeof(Block));
  out.delta.lo |= 1;
  out.zero_b = Labels(count);
  std::memcpy(out.zero_b.data(), stream.data() + sizeof(Block), count * sizeof(Block));
}

// Pads (or unpads) a_1's active labels with the stream of the key parties 1 and 2 share.
void xor_pad(Labels& labels, const rss3::PrfKey& key, const wire::BatchHeader& header) {
  const SecretBytes pad = garbled::batch_stream(key, kPadPurpose, header, labels.size() * sizeof(Block));
  auto* bytes = reinterpret_cast<std::uint8_t*>(labels.data());
  for (std::size_t i = 0; i < pad.size(); ++i) bytes[i] ^= pad[i];
}

// Party 0: labels to party 1, then the tables; returns the decoding bits.
std::vector<std::uint8_t> garble(const BatchTask& task, const PartyPrfKeys& keys, two_party::Channel& to_next,
                                 two_party::Channel& from_previous) {
  const circuits::Program& program = *task.program;
  const std::size_t key_labels = task.key_rows * task.instances;
  const std::size_t public_labels = task.public_bytes * 8 * task.instances;
  SharedLabels shared;
  draw_shared_labels(keys.garbling_previous, task.header, key_labels, shared);
  gc2::Garbler garbler(shared.delta, batch_garbling_number(task.header));

  Labels zero(key_labels + public_labels);
  const Labels zero_x = gc2::zero_labels(key_labels);
  const Labels zero_p = gc2::zero_labels(public_labels);
  for (std::size_t i = 0; i < key_labels; ++i) zero[i] = zero_x[i] ^ shared.zero_b[i];
  std::copy_n(zero_p.data(), public_labels, zero.data() + key_labels);

  std::vector<std::uint8_t> x_bits = garbled::key_row_bits(task, KeyPart::X);
  const Labels active_x = gc2::garbler_input_labels(garbler, x_bits, zero_x);
  wipe(x_bits.data(), x_bits.size());
  const Labels active_p = gc2::garbler_input_labels(garbler, garbled::public_row_bits(task), zero_p);
  Labels padded_b(key_labels);
  from_previous.receive(bytes_of(padded_b));

  to_next.send(bytes_of(active_x));
  to_next.send(bytes_of(active_p));
  to_next.send(bytes_of(padded_b));
  return garbler.garble(program, task.instances, zero.span(), to_next);
}

// Party 1: evaluates with the labels party 0 forwards; returns its output labels' colour bits.
std::vector<std::uint8_t> evaluate(const BatchTask& task, const PartyPrfKeys& keys, two_party::Channel& from_previous) {
  const std::size_t key_labels = task.key_rows * task.instances;
  const std::size_t public_labels = task.public_bytes * 8 * task.instances;
  Labels active(key_labels + public_labels);
  Labels active_b(key_labels);
  from_previous.receive(bytes_of(active).first(key_labels * sizeof(Block)));
  from_previous.receive(bytes_of(active).subspan(key_labels * sizeof(Block)));
  from_previous.receive(bytes_of(active_b));
  xor_pad(active_b, keys.garbling_own, task.header);
  for (std::size_t i = 0; i < key_labels; ++i) active[i] ^= active_b[i];
  return gc2::evaluate(*task.program, task.instances, active.span(), from_previous,
                       batch_garbling_number(task.header));
}

// Party 2: a_1's active labels, padded, to party 0.
void label(const BatchTask& task, const PartyPrfKeys& keys, two_party::Channel& to_next) {
  const std::size_t key_labels = task.key_rows * task.instances;
  SharedLabels shared;
  draw_shared_labels(keys.garbling_own, task.header, key_labels, shared);
  const gc2::Garbler labeller(shared.delta);
  std::vector<std::uint8_t> b_bits = garbled::key_row_bits(task, KeyPart::XorA);
  Labels active_b = gc2::garbler_input_labels(labeller, b_bits, shared.zero_b);
  wipe(b_bits.data(), b_bits.size());
  xor_pad(active_b, keys.garbling_previous, task.header);
  to_next.send(bytes_of(active_b));
  to_next.flush();
}


// Garbled once (party 0 garbles, party 1 evaluates, party 2 labels), then reshared: r_i = c_i ^
// alpha_i to party i+1; x_i = r_i ^ r_{i-1}, a_i = r_i. Writes the unmasked output shares.
void run_single_garbling(const BatchTask& task, int party, const PartyPrfKeys& prf_keys,
                         rss3::CorrelatedRandomness& randomness, two_party::Channel& to_next,
                         two_party::Channel& from_previous, rss3::ByteShare& out) {
  const circuits::Program& program = *task.program;
  const std::size_t instances = task.instances;
  const std::size_t record = (program.num_outputs + 7) / 8;
  // c_i: this party's part of the result, one bit per byte, output j of instance n at
  // j * instances + n.
  std::vector<std::uint8_t> part;
  switch (party) {
    case kGarblingParty: part = garble(task, prf_keys, to_next, from_previous); break;
    case kEvaluatingParty: part = evaluate(task, prf_keys, from_previous); break;
    default:
      label(task, prf_keys, to_next);
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
    from_previous.allow_extra_wait(jobs::krb_first_layer_grace(program) +
                                   std::chrono::milliseconds(program.and_gates * instances / 2000));
  from_previous.receive(theirs.span());
  out.x.resize(bytes);
  out.a.resize(bytes);
  for (std::size_t i = 0; i < bytes; ++i) {
    out.x[i] = static_cast<std::uint8_t>(mine[i] ^ theirs[i]);
    out.a[i] = mine[i];
  }
}

// Garbled twice: the replicated shares (x_i, a_i) = (a_{i-1} ^ a_i, a_i) of the parts.
void take_dual_output(DualGarblingOutput parts, std::size_t instances, std::size_t record, rss3::ByteShare& out) {
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

// Runs this party's part of a garbled batch; what it throws becomes the batch's failure:
// VerificationFailed for a failed check of active security, Regrouping for a refusal worth
// sending again, PeerFailure for a silent or failed peer and anything else. True when it ran.
// Every message of a garbled batch comes from the previous party: a check that names no
// party is put down to `previous`, the party this server heard the failing bytes from.
bool run_part(BatchResult& result, const wire::BatchHeader& header, const Logger& log, int previous,
              const std::function<void()>& part) {
  try {
    part();
    return true;
  } catch (const VerificationError& error) {
    result.failure = wire::Status::VerificationFailed;
    result.error = error.what();
    result.failed_check = error.check();
    result.failed_peer = error.peer() >= 0 ? error.peer() : previous;
    log.error("garbled batch refused: a check of active security failed",
              {{"sequence", header.sequence}, {"error", error.what()}});
  } catch (const RetryableError& error) {
    result.failure = wire::Status::Regrouping;
    result.error = error.what();
    log.error("garbled batch failed", {{"sequence", header.sequence}, {"error", error.what()}});
  } catch (const PeerError& error) {
    result.error = error.what();
  } catch (const Error& error) {
    result.error = error.what();
    log.error("garbled batch failed", {{"sequence", header.sequence}, {"error", error.what()}});
  }
  return false;
}

// A PrepareTwice batch: no jobs, one instance, nothing to answer; `result` has its shape.
BatchResult prepare_garbled_batch(BatchTask& task, int party, settings::Security security, const PartyPrfKeys& prf_keys,
                                  PreparedGarblings* prepared, two_party::Channel& to_next,
                                  two_party::Channel& from_previous, const Logger& log, BatchResult result,
                                  std::chrono::steady_clock::time_point started) {
  auto fail = [&](const std::string& error) {
    result.error = error;
    log.error("garbling ahead failed", {{"sequence", task.header.sequence}, {"error", error}});
    return std::move(result);
  };
  if (prepared == nullptr || !task.slices.empty() || task.instances != 1 || task.secret_bytes != 0)
    return fail("a garbling is prepared for one instance, no job, at a server that keeps them");
  if (security != settings::Security::Active) {
    result.failure = wire::Status::VerificationFailed;
    result.failed_check = "security_setting";
    return fail("party " + std::to_string(party + 1) + " runs security = \"passive\" and prepares no garbling");
  }
  if (!run_part(result, task.header, log, (party + 2) % 3,
                [&] { prepare_dual_garbling(task, party, prf_keys, *prepared, to_next, from_previous); }))
    return result;
  result.stats.bytes_sent = to_next.bytes_sent();
  result.succeeded = true;
  result.elapsed = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started);
  return result;
}

}  // namespace

std::uint64_t batch_garbling_number(const wire::BatchHeader& header) {
  return ((header.epoch & 0x7fffffffu) << 32) | header.sequence;
}

BatchResult evaluate_garbled_batch(BatchTask& task, int party, settings::Security security,
                                   const PartyPrfKeys& prf_keys, two_party::Channel& to_next,
                                   two_party::Channel& from_previous, const Logger& log, PreparedGarblings* prepared) {
  const auto started = std::chrono::steady_clock::now();
  BatchResult result;
  result.header = task.header;
  auto fail = [&](const std::string& error) {
    result.error = error;
    log.error("garbled batch failed", {{"sequence", task.header.sequence}, {"error", error}});
    return std::move(result);
  };
  if (!task.program) return fail("batch without a program");
  const circuits::Program& program = *task.program;
  const std::size_t record = (program.num_outputs + 7) / 8;
  result.record_bytes = record;
  result.and_gates = program.and_gates;
  result.and_depth = program.and_depth;
  if (task.key_rows % 8 != 0 || task.secret_bytes != 0 || record == 0 ||
      program.num_inputs != task.key_rows + 8 * task.public_bytes)
    return fail("circuit of " + std::to_string(program.num_inputs) + " inputs does not fit " +
                std::to_string(task.key_rows) + " key rows and " + std::to_string(task.public_bytes) +
                " public bytes without secret records");
  if (task.header.krb_evaluation == wire::KrbEvaluation::PrepareTwice)
    return prepare_garbled_batch(task, party, security, prf_keys, prepared, to_next, from_previous, log,
                                 std::move(result), started);
  std::size_t instances = 0;
  const std::size_t key_bytes = task.key_rows / 8;
  for (const SliceInput& slice : task.slices) {
    const bool used = !slice.key_share.empty();
    if (slice.keep_every != 0) return fail("a garbled batch keeps no instances");
    if (used && (slice.key_share.size() != 2 * key_bytes ||
                 slice.public_records.size() != static_cast<std::size_t>(slice.blocks) * task.public_bytes ||
                 !slice.secret_records.empty()))
      return fail("slice inputs of " + std::to_string(slice.key_share.size()) + " key and " +
                  std::to_string(slice.public_records.size()) + " public bytes do not fit the batch's circuit");
    result.slice_used.push_back(used);
    result.kept.emplace_back();
    instances += slice.blocks;
  }
  if (instances != task.instances || instances == 0) return fail("slices do not add up to the batch's instances");

  const bool twice = wire::is_garbled_twice(task.header.krb_evaluation);
  const bool from_prepared = task.header.krb_evaluation == wire::KrbEvaluation::PreparedTwice;
  if (from_prepared && (prepared == nullptr || instances != 1))
    return fail("a prepared garbling is evaluated for one job, at a server that keeps them");
  if (security == settings::Security::Active && !twice) {
    result.failure = wire::Status::VerificationFailed;
    result.failed_check = "security_setting";
    return fail("party " + std::to_string(party + 1) +
                " runs security = \"active\" and refuses a Kerberos batch garbled by one server");
  }
  const std::size_t bytes = instances * record;
  rss3::CorrelatedRandomness randomness(prf_keys.own, prf_keys.previous, {task.header.epoch, task.header.sequence});
  const bool ran = run_part(result, task.header, log, (party + 2) % 3, [&] {
    if (from_prepared)
      take_dual_output(evaluate_prepared_garbling(task, party, prf_keys, *prepared, to_next, from_previous), instances,
                       record, result.masked);
    else if (twice)
      take_dual_output(evaluate_dual_garbling(task, party, prf_keys, to_next, from_previous), instances, record,
                       result.masked);
    else
      run_single_garbling(task, party, prf_keys, randomness, to_next, from_previous, result.masked);
  });
  if (!ran) return result;
  if (result.masked.x.size() != bytes || result.masked.a.size() != bytes) return fail("garbled batch output misshapen");
  rss3::mask_output_share(randomness, 0, result.masked);
  // Bits past the last output are cleared in both components, as evaluate_batch does.
  if (const std::size_t used_bits = program.num_outputs % 8; used_bits != 0) {
    const auto keep = static_cast<std::uint8_t>((1u << used_bits) - 1);
    for (std::size_t n = 0; n < instances; ++n) {
      result.masked.x[n * record + record - 1] &= keep;
      result.masked.a[n * record + record - 1] &= keep;
    }
  }
  result.stats.bytes_sent = to_next.bytes_sent();
  result.succeeded = true;
  result.elapsed = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started);
  return result;
}

}  // namespace mpc::three_party_engine
