// Batches in and out: each job's slice of a batch's inputs, and each finished slice's masked
// output shares back into its job's answer.
#include <cstring>

#include "common/error.hpp"
#include "engines/three_party/three_party_engine.hpp"
#include "jobs/batch_inputs.hpp"

namespace mpc::three_party_engine {
namespace {

bool is_decrypt(wire::CircuitId id) {
  switch (id) {
    case wire::CircuitId::Aes128DecryptAnd32:
    case wire::CircuitId::Aes128DecryptDepth4:
    case wire::CircuitId::Aes256DecryptAnd32:
    case wire::CircuitId::Aes256DecryptDepth4: return true;
    default: return false;
  }
}

wire::KeyAlgorithm algorithm_of(wire::CircuitId id) {
  return static_cast<std::uint8_t>(id) >= 5 ? wire::KeyAlgorithm::Aes256 : wire::KeyAlgorithm::Aes128;
}

bool is_tag_check(wire::CircuitId id) {
  return id == wire::CircuitId::Aes256EncryptEqAnd32 || id == wire::CircuitId::Aes256EncryptEqDepth4;
}

bool is_aes256_encrypt(wire::CircuitId id) {
  return id == wire::CircuitId::Aes256EncryptAnd32 || id == wire::CircuitId::Aes256EncryptDepth4;
}

}  // namespace

bool ThreePartyEngine::slice_input(const wire::BatchHeader& header, const BatchTask& task, const wire::BatchSlice& slice,
                         const Job& job, SliceInput& input) const {
  const wire::CircuitId circuit = header.circuit;
  const bool krb_circuit = wire::is_krb_circuit(circuit);
  if (static_cast<std::uint64_t>(slice.first_block) + slice.blocks > job.instances) return false;
  if (job.key_share.size() != 2 * task.key_rows / 8) return false;
  const std::size_t bytes = static_cast<std::size_t>(slice.blocks) * 16;
  switch (job.kind) {
    case JobKind::Compute:
      if (krb_circuit || slice.nonces != 0 || is_tag_check(circuit) || job.key.algorithm != algorithm_of(circuit) ||
          (job.request.operation == wire::Operation::EcbDecrypt) != is_decrypt(circuit))
        return false;
      input.public_records.resize(bytes);
      jobs::public_blocks(job.request, slice.first_block, slice.blocks, input.public_records);
      break;
    case JobKind::GcmPrefetch: {
      const std::uint64_t per_nonce = 1 + static_cast<std::uint64_t>(job.blocks_per_nonce);
      if (!is_aes256_encrypt(circuit) || slice.nonces == 0 ||
          static_cast<std::uint64_t>(slice.nonces) * per_nonce != slice.blocks)
        return false;
      input.public_records.resize(bytes);
      jobs::prefetch_blocks(header.epoch, slice.first_nonce, slice.nonces, static_cast<std::uint32_t>(per_nonce),
                      input.public_records);
      input.keep_every = static_cast<std::uint32_t>(per_nonce);
      break;
    }
    case JobKind::GcmOpen:
      if (!is_tag_check(circuit) || slice.nonces != 0 || job.tag_check.size() != 32) return false;
      input.public_records.resize(bytes);
      jobs::open_blocks(job.nonce, slice.first_block, slice.blocks, input.public_records);
      // Shares of zero everywhere but instance 0: the other instances only make keystream.
      input.secret_records.resize(2 * bytes);
      std::fill(input.secret_records.data(), input.secret_records.data() + 2 * bytes, std::uint8_t{0});
      if (slice.first_block == 0) {
        std::memcpy(input.secret_records.data(), job.tag_check.data(), 16);
        std::memcpy(input.secret_records.data() + bytes, job.tag_check.data() + 16, 16);
      }
      break;
    case JobKind::KeyGeneration:
      // One instance, kept whole by each server as its share of the new key.
      if (circuit != wire::CircuitId::GcmKeyMaterial || slice.first_block != 0 || slice.blocks != 1 ||
          slice.nonces != 0)
        return false;
      input.keep_every = 1;
      break;
    case JobKind::Krb:
      // One instance; the circuit must be the one this job's request needs.
      if (slice.first_block != 0 || slice.blocks != 1 || slice.nonces != 0) return false;
      if (jobs::KrbCircuitKey{circuit, header.data_bytes, header.krb_combine} != job.krb_circuit) return false;
      if (job.krb_data.size() != task.public_bytes) return false;
      input.public_records = job.krb_data;
      break;
  }
  input.key_share = job.key_share;
  return true;
}

bool ThreePartyEngine::prepare_task(const wire::BatchHeader& header, BatchTask& task, std::string& error) {
  if (header.circuit == wire::CircuitId::GcmKeyMaterial) {
    // The worker compiles the program (jobs/gcm_key_material_program.hpp): K's 256 bits in.
    task.key_rows = 256;
    task.public_bytes = 0;
    task.secret_bytes = 0;
    return true;
  }
  if (wire::is_krb_circuit(header.circuit)) {
    // The worker takes the program from the cache, compiling it there if needed.
    try {
      const jobs::KrbBatchLayout layout = jobs::krb_batch_layout(header.circuit, header.data_bytes, header.krb_combine);
      task.key_rows = layout.key_rows;
      task.public_bytes = layout.public_bytes;
      task.secret_bytes = 0;
      task.krb_circuits =
          wire::is_garbled(header.krb_evaluation) ? krb_garbled_circuits_ : &krb_circuits_;
      return true;
    } catch (const Error& failure) {
      error = failure.what();
      return false;
    }
  }
  // The fixed circuits live as long as the server: a pointer that owns nothing.
  task.program = std::shared_ptr<const circuits::Program>(std::shared_ptr<const circuits::Program>(),
                                                          &circuits_.program(header.circuit));
  task.key_rows = CircuitSet::key_rows(header.circuit);
  task.public_bytes = 16;
  task.secret_bytes = is_tag_check(header.circuit) ? 16 : 0;
  return true;
}

void ThreePartyEngine::add_slice_result(Job& job, const wire::BatchHeader& header, const wire::BatchSlice& slice,
                              const BatchResult& result, std::size_t slice_index, std::size_t offset) {
  const std::size_t record = result.record_bytes;
  const auto masked_x = [&](std::size_t instance) { return result.masked.x.data() + (offset + instance) * record; };
  const auto masked_a = [&](std::size_t instance) { return result.masked.a.data() + (offset + instance) * record; };
  // The AES circuits give one 16-byte block per instance (and the tag check one bit after it).
  if (job.kind != JobKind::Krb && job.kind != JobKind::KeyGeneration &&
      record != (job.kind == JobKind::GcmOpen ? 17u : 16u))
    throw Error(Component::Server, "output records of " + std::to_string(record) + " bytes for an AES job");
  switch (job.kind) {
    case JobKind::Compute: {
      if (job.masked_x.empty()) {
        job.masked_x.resize(static_cast<std::size_t>(job.instances) * 16);
        job.masked_a.resize(static_cast<std::size_t>(job.instances) * 16);
      }
      const std::size_t at = static_cast<std::size_t>(slice.first_block) * 16;
      std::memcpy(job.masked_x.data() + at, masked_x(0), slice.blocks * 16ull);
      std::memcpy(job.masked_a.data() + at, masked_a(0), slice.blocks * 16ull);
      break;
    }
    case JobKind::GcmPrefetch: {
      // Instance 0 of each nonce (AES_K(N || 1)) stays with this server; the client gets the
      // nonce and its keystream only.
      const std::size_t per_nonce = 1 + static_cast<std::size_t>(job.blocks_per_nonce);
      const std::size_t first = slice.first_block / per_nonce;
      const SecretBytes& kept = result.kept[slice_index];
      if (kept.size() != static_cast<std::size_t>(slice.nonces) * 32)
        throw Error(Component::Server, "GCM prefetch slice kept " + std::to_string(kept.size()) + " bytes for " +
                                           std::to_string(slice.nonces) + " nonces");
      for (std::size_t k = 0; k < slice.nonces; ++k) {
        const std::size_t q = first + k;
        const auto nonce = jobs::make_gcm_nonce(header.epoch, slice.first_nonce + static_cast<std::uint32_t>(k));
        std::memcpy(job.nonces.data() + q * wire::kGcmNonceBytes, nonce.data(), wire::kGcmNonceBytes);
        std::memcpy(job.nonce_shares.data() + q * 32, kept.data() + k * 32, 32);
        const std::size_t bytes = static_cast<std::size_t>(job.blocks_per_nonce) * 16;
        std::memcpy(job.masked_x.data() + q * bytes, masked_x(k * per_nonce + 1), bytes);
        std::memcpy(job.masked_a.data() + q * bytes, masked_a(k * per_nonce + 1), bytes);
      }
      break;
    }
    case JobKind::GcmOpen:
      // Only the verdict of instance 0 and the outputs of the others are answered: the output
      // of instance 0 is AES_K(N || 1), the verdicts of the others mean nothing.
      for (std::size_t t = 0; t < slice.blocks; ++t) {
        const std::size_t instance = slice.first_block + t;
        if (instance == 0) {
          // The verdict is output 128: bit 0 of the record's last byte.
          job.verdict_x = static_cast<std::uint8_t>(masked_x(t)[16] & 1);
          job.verdict_a = static_cast<std::uint8_t>(masked_a(t)[16] & 1);
        } else {
          std::memcpy(job.masked_x.data() + (instance - 1) * 16, masked_x(t), 16);
          std::memcpy(job.masked_a.data() + (instance - 1) * 16, masked_a(t), 16);
        }
      }
      break;
    case JobKind::KeyGeneration: {
      // The raw share of the material; the masked output is for no one.
      const SecretBytes& kept = result.kept[slice_index];
      if (slice.blocks != 1 || record != wire::material_bytes(job.key.algorithm) || kept.size() != 2 * record)
        throw Error(Component::Server, "a key generation kept " + std::to_string(kept.size()) + " bytes");
      job.generated = kept;
      break;
    }
    case JobKind::Krb: {
      // The output record is the result: ciphertext || MAC, plaintext || verdict byte, MAC
      // or PRF block (krb_jobs.hpp).
      const std::size_t bytes = job.krb_result_bytes;
      if (record != bytes || slice.blocks != 1)
        throw Error(Component::Server, "Kerberos output record of " + std::to_string(record) + " bytes, expected " +
                                           std::to_string(bytes));
      job.masked_x.assign(masked_x(0), masked_x(0) + bytes);
      job.masked_a.assign(masked_a(0), masked_a(0) + bytes);
      break;
    }
  }
  job.blocks_done += slice.blocks;
}

void ThreePartyEngine::complete_job(std::map<node::JobKey, Job>::iterator it) {
  Job& job = it->second;
  wire::Reply answer;
  answer.id = it->first.request;
  switch (job.kind) {
    case JobKind::Compute:
      answer.body = wire::ComputeResult{job.instances, std::move(job.masked_x), std::move(job.masked_a)};
      break;
    case JobKind::GcmPrefetch: {
      const auto now = std::chrono::steady_clock::now();
      for (std::size_t q = 0; q < job.nonce_count; ++q) {
        wire::GcmNonce nonce{};
        std::memcpy(nonce.data(), job.nonces.data() + q * wire::kGcmNonceBytes, wire::kGcmNonceBytes);
        jobs::NonceShare share;
        std::memcpy(share.x.data(), job.nonce_shares.data() + q * 32, 16);
        std::memcpy(share.a.data(), job.nonce_shares.data() + q * 32 + 16, 16);
        // The keystream shares as answered, kept for reopening the nonce's ticket.
        const std::size_t bytes = static_cast<std::size_t>(job.blocks_per_nonce) * 16;
        share.keystream.resize(2 * bytes);
        if (bytes != 0) {
          std::memcpy(share.keystream.data(), job.masked_x.data() + q * bytes, bytes);
          std::memcpy(share.keystream.data() + bytes, job.masked_a.data() + q * bytes, bytes);
        }
        if (!nonce_pool_.put(it->first.client, job.key, nonce, std::move(share), now))
          log_.warn("GCM nonce computed twice, dropped", {{"nonce", jobs::describe_nonce(nonce)}});
      }
      job.nonce_shares.clear();
      answer.body = wire::GcmPrefetchResult{job.nonce_count, job.blocks_per_nonce, std::move(job.nonces),
                                            std::move(job.masked_x), std::move(job.masked_a)};
      break;
    }
    case JobKind::GcmOpen:
      answer.body = wire::GcmOpenResult{job.instances - 1, std::move(job.masked_x), std::move(job.masked_a),
                                        job.verdict_x, job.verdict_a};
      break;
    case JobKind::Krb:
      job.key_share.clear();
      answer.body = wire::KrbResult{std::move(job.masked_x), std::move(job.masked_a)};
      break;
    case JobKind::KeyGeneration: {
      job.key_share.clear();
      const auto refused = host_.store_generated(job.key, job.generated);
      job.generated.clear();
      if (refused) {
        answer.status = refused->status;
        answer.error = refused->detail;
      }
      break;
    }
  }
  const node::JobKey key = it->first;
  jobs_.erase(it);
  host_.answer(key, std::move(answer));
}

}  // namespace mpc::three_party_engine
