#include "engines/three_party/garbled_krb_batch.hpp"

#include <functional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "jobs/krb_circuit_cache.hpp"
#include "protocol/gc3/batch.hpp"
#include "protocol/gc3/dual_garbling.hpp"
#include "protocol/gc3/prepared_garbling.hpp"
#include "protocol/gc3/single_garbling.hpp"
#include "protocol/rss3/output.hpp"

namespace mpc::three_party_engine {
namespace {

// The batch's inputs as the protocols read them: its slices' key shares and public records.
class TaskInputs final : public gc3::BatchInputs {
 public:
  explicit TaskInputs(const BatchTask& task) : task_(task) {}

  std::vector<std::uint8_t> key_row_bits(gc3::KeyPart part) const override {
    const std::size_t key_bytes = task_.key_rows / 8;
    std::vector<std::uint8_t> bits(task_.key_rows * task_.instances);
    std::size_t instance = 0;
    for (const SliceInput& slice : task_.slices) {
      if (!slice.key_share.empty()) {
        const std::uint8_t* x = slice.key_share.data();
        const std::uint8_t* a = slice.key_share.data() + key_bytes;
        for (std::size_t r = 0; r < task_.key_rows; ++r) {
          const std::size_t byte = r / 8;
          const std::uint8_t value = part == gc3::KeyPart::X   ? x[byte]
                                     : part == gc3::KeyPart::A ? a[byte]
                                                               : static_cast<std::uint8_t>(x[byte] ^ a[byte]);
          const auto bit = static_cast<std::uint8_t>((value >> (r % 8)) & 1);
          for (std::size_t n = 0; n < slice.blocks; ++n) bits[r * task_.instances + instance + n] = bit;
        }
      }
      instance += slice.blocks;
    }
    return bits;
  }

  std::vector<std::uint8_t> public_row_bits() const override {
    const std::size_t rows = task_.public_bytes * 8;
    std::vector<std::uint8_t> bits(rows * task_.instances);
    std::size_t instance = 0;
    for (const SliceInput& slice : task_.slices) {
      for (std::size_t n = 0; n < slice.blocks && !slice.key_share.empty(); ++n) {
        const std::uint8_t* record = slice.public_records.data() + n * task_.public_bytes;
        for (std::size_t r = 0; r < rows; ++r)
          bits[r * task_.instances + instance + n] = (record[r / 8] >> (r % 8)) & 1;
      }
      instance += slice.blocks;
    }
    return bits;
  }

 private:
  const BatchTask& task_;
};

// The batch as the protocols see it. A Kerberos circuit may still be built when the evaluator's
// first word is due: the parties waiting for it allow that time too.
gc3::Batch protocol_batch(const BatchTask& task, const gc3::BatchInputs* inputs) {
  gc3::Batch batch;
  batch.id = {task.header.epoch, task.header.sequence};
  batch.program = task.program.get();
  batch.key_rows = task.key_rows;
  batch.public_bytes = task.public_bytes;
  batch.instances = task.instances;
  batch.inputs = inputs;
  batch.build_grace = jobs::krb_first_layer_grace(*task.program);
  batch.program_name = {static_cast<std::uint32_t>(task.header.circuit), task.header.data_bytes,
                        task.header.krb_combine};
  batch.prepared = task.header.prepared;
  return batch;
}

// Runs this party's part of a garbled batch; what it throws becomes the batch's failure:
// VerificationFailed for a failed check of active security, Regrouping for a refusal worth
// sending again, PeerFailure for a silent or failed peer and anything else. True when it ran.
// Every message of a garbled batch comes from the previous party: a check that names no
// party is put down to `previous`, the party this server heard the failing bytes from, in the
// count of aborts; a dispute is claimed only with the parties a check shows deviated
// (protocol/gc3/garbling_blame.hpp).
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
    if (const auto* found = dynamic_cast<const DeviationFound*>(&error)) {
      result.claims = found->claims();
      result.check_concluded = found->concluded();
    }
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
  const PartyIdentities identities = prf_keys.check_identities();
  const gc3::GarblingKeys keys{prf_keys.garbling_own, prf_keys.garbling_previous, identities};
  if (!run_part(result, task.header, log, (party + 2) % 3, [&] {
        gc3::prepare_dual_garbling(protocol_batch(task, nullptr), party, keys, *prepared, to_next, from_previous);
      }))
    return result;
  result.stats.bytes_sent = to_next.bytes_sent();
  result.succeeded = true;
  result.elapsed = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started);
  return result;
}

}  // namespace

std::uint64_t batch_garbling_number(const wire::BatchHeader& header) {
  return gc3::garbling_number({header.epoch, header.sequence});
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
  const TaskInputs inputs(task);
  const gc3::Batch batch = protocol_batch(task, &inputs);
  const PartyIdentities identities = prf_keys.check_identities();
  const gc3::GarblingKeys keys{prf_keys.garbling_own, prf_keys.garbling_previous, identities};
  const bool ran = run_part(result, task.header, log, (party + 2) % 3, [&] {
    if (from_prepared)
      gc3::replicated_share(gc3::evaluate_prepared_garbling(batch, party, keys, *prepared, to_next, from_previous),
                            instances, record, result.masked);
    else if (twice)
      gc3::replicated_share(gc3::evaluate_dual_garbling(batch, party, keys, to_next, from_previous), instances,
                            record, result.masked);
    else
      gc3::evaluate_single_garbling(batch, party, keys, randomness, to_next, from_previous, result.masked);
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
