// Batches as the server evaluates them (evaluate_batch), run by three in-process parties
// over a memory ring, opened as a client opens replies, and compared with OpenSSL:
// Kerberos encrypt, decrypt, checksum and PRF jobs from shares of key material built from
// random derived keys (Ke round keys, Ki and Kc HMAC states, PRF round keys), several jobs
// with their own keys and data per batch; and the AES and GCM tag-check batches, whose
// outputs are opened as the same per-instance records.
#include <gtest/gtest.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sodium.h>

#include <array>
#include <optional>
#include <string>
#include <thread>

#include "circuits/aes_reference.hpp"
#include "circuits/n_fold.hpp"
#include "circuits/sha1_reference.hpp"
#include "common/log.hpp"
#include "protocol/rss3/memory_ring.hpp"
#include "protocol/rss3/output.hpp"
#include "protocol/two_party/channel.hpp"
#include "engines/three_party/batch_worker.hpp"
#include "engines/three_party/circuit_set.hpp"
#include "engines/three_party/garbled_krb_batch.hpp"
#include "jobs/krb_circuit_cache.hpp"
#include "jobs/krb_jobs.hpp"
#include "wire/krb_record_mask.hpp"
#include "support/party_prf_keys.hpp"

namespace mpc::three_party_engine {
namespace {

using Bytes = std::vector<std::uint8_t>;
using wire::CircuitId;
using wire::KeyAlgorithm;
using wire::KrbOperation;

Bytes random_bytes(std::size_t n) {
  if (sodium_init() < 0) ADD_FAILURE() << "libsodium initialisation failed";
  Bytes out(n);
  if (n != 0) randombytes_buf(out.data(), n);
  return out;
}

// ---- cleartext reference: OpenSSL ----

// RFC 3962 encryption: CBC with ciphertext stealing (CS3), zero IV.
Bytes cts_encrypt(const Bytes& key, const Bytes& data) {
  const char* name = key.size() == 16 ? "AES-128-CBC-CTS" : "AES-256-CBC-CTS";
  EVP_CIPHER* cipher = EVP_CIPHER_fetch(nullptr, name, nullptr);
  EXPECT_NE(cipher, nullptr);
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  const std::array<std::uint8_t, 16> iv{};
  char mode[] = "CS3";
  const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_CIPHER_PARAM_CTS_MODE, mode, 0),
                               OSSL_PARAM_construct_end()};
  Bytes out(data.size());
  int length = 0;
  EXPECT_EQ(EVP_EncryptInit_ex2(ctx, cipher, key.data(), iv.data(), params), 1);
  EXPECT_EQ(EVP_EncryptUpdate(ctx, out.data(), &length, data.data(), static_cast<int>(data.size())), 1);
  EXPECT_EQ(static_cast<std::size_t>(length), data.size());
  EVP_CIPHER_CTX_free(ctx);
  EVP_CIPHER_free(cipher);
  return out;
}

Bytes hmac_sha1_96(const Bytes& key, const Bytes& data) {
  std::array<std::uint8_t, 20> mac{};
  unsigned length = 0;
  HMAC(EVP_sha1(), key.data(), static_cast<int>(key.size()), data.data(), data.size(), mac.data(), &length);
  return Bytes(mac.begin(), mac.begin() + 12);
}

Bytes aes_ecb(const Bytes& key, const Bytes& block) {
  const auto out =
      circuits::aes_encrypt_block(circuits::aes_expand_key(key), std::span<const std::uint8_t, 16>(block.data(), 16));
  return Bytes(out.begin(), out.end());
}

// The HMAC state of wire/key_id.hpp: SHA-1 chaining values after key ^ ipad, after key ^ opad.
Bytes hmac_state(const Bytes& key) {
  Bytes out;
  for (std::uint8_t pad : {0x36, 0x5c}) {
    std::array<std::uint8_t, 64> block{};
    for (std::size_t i = 0; i < 64; ++i) block[i] = static_cast<std::uint8_t>((i < key.size() ? key[i] : 0) ^ pad);
    circuits::Sha1State state = circuits::sha1_initial_state();
    circuits::sha1_compress(state, block);
    const auto bytes = circuits::sha1_state_bytes(state);
    out.insert(out.end(), bytes.begin(), bytes.end());
  }
  return out;
}

// A Kerberos key as the dealer stores it: random derived keys per usage and a PRF key,
// the material built from them, and each party's share (x || a) of that material.
struct KrbKey {
  KeyAlgorithm algorithm;
  std::array<Bytes, wire::kKrbUsageCount> ke, ki, kc;
  Bytes prf;
  std::array<SecretBytes, 3> shares;

  explicit KrbKey(KeyAlgorithm which) : algorithm(which) {
    const std::size_t key_bytes = which == KeyAlgorithm::Aes256CtsHmacSha1 ? 32 : 16;
    Bytes material;
    for (std::size_t u = 0; u < wire::kKrbUsageCount; ++u) {
      ke[u] = random_bytes(key_bytes);
      ki[u] = random_bytes(key_bytes);
      kc[u] = random_bytes(key_bytes);
      const Bytes round_keys = circuits::aes_expand_key(ke[u]);
      material.insert(material.end(), round_keys.begin(), round_keys.end());
      for (const Bytes& hmac_key : {ki[u], kc[u]}) {
        const Bytes state = hmac_state(hmac_key);
        material.insert(material.end(), state.begin(), state.end());
      }
    }
    prf = random_bytes(key_bytes);
    const Bytes prf_round_keys = circuits::aes_expand_key(prf);
    material.insert(material.end(), prf_round_keys.begin(), prf_round_keys.end());
    EXPECT_EQ(material.size(), wire::material_bytes(which));
    auto split = rss3::share_bytes(material);
    for (std::size_t p = 0; p < 3; ++p) {
      shares[p] = SecretBytes(2 * material.size());
      std::copy(split[p].x.begin(), split[p].x.end(), shares[p].data());
      std::copy(split[p].a.begin(), split[p].a.end(), shares[p].data() + material.size());
      split[p].wipe();
    }
  }

  std::size_t index(std::uint32_t usage) const { return *wire::krb_usage_index(usage); }
};

// What krb5_c_encrypt, krb5_c_decrypt, krb5_c_make_checksum and the PRF give, from the keys.
Bytes reference(const KrbKey& key, KrbOperation operation, std::uint32_t usage, const Bytes& data) {
  switch (operation) {
    case KrbOperation::Encrypt: {
      Bytes out = cts_encrypt(key.ke[key.index(usage)], data);
      const Bytes mac = hmac_sha1_96(key.ki[key.index(usage)], data);
      out.insert(out.end(), mac.begin(), mac.end());
      return out;
    }
    case KrbOperation::Decrypt: {
      ADD_FAILURE() << "decryption references are made from encryptions";
      return {};
    }
    case KrbOperation::Checksum: return hmac_sha1_96(key.kc[key.index(usage)], data);
  }
  return {};
}

struct Job {
  const KrbKey* key = nullptr;  // nullptr: a slice this party evaluates on zeros (job absent)
  std::uint32_t usage = 0;
  Bytes data;  // the public record
};


// Evaluates each party's task over an in-memory ring, one thread per party: layer by layer
// (evaluate_batch) or garbled (evaluate_garbled_batch), as the tasks' headers say.
// `timeout`: how long a party waits for a message (a party that refuses its task sends none).
std::array<BatchResult, 3> evaluate_at_three_parties(std::array<BatchTask, 3>& tasks,
                                                     std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
  rss3::MemoryRing ring(timeout);
  // Garbled: the stream from party i to party i+1 is edges[i].
  std::array<std::pair<std::unique_ptr<two_party::Channel>, std::unique_ptr<two_party::Channel>>, 3> edges;
  for (auto& edge : edges) edge = two_party::make_memory_channel_pair(timeout);
  const Logger log("krb_batch_test", LogLevel::Error);
  std::array<BatchResult, 3> results;
  auto party = [&](int p) {
    const auto i = static_cast<std::size_t>(p);
    const PartyPrfKeys keys = test_support::party_prf_keys(p);
    if (wire::is_garbled(tasks[i].header.krb_evaluation)) {
      const auto security = tasks[i].header.krb_evaluation == wire::KrbEvaluation::GarbledTwice
                                ? settings::Security::Active
                                : settings::Security::Passive;
      results[i] =
          evaluate_garbled_batch(tasks[i], p, security, keys, *edges[i].first, *edges[(i + 2) % 3].second, log);
      return;
    }
    auto evaluator = rss3::make_cpu_evaluator(rss3::best_simd_level());
    rss3::ShareMatrix inputs, outputs;
    results[i] = evaluate_batch(tasks[i], *evaluator, keys, ring.endpoint(p), inputs, outputs, p,
                                settings::Security::Active, log);
    if (!results[i].succeeded) ring.abort();
  };
  std::thread second(party, 1);
  std::thread third(party, 2);
  party(0);
  second.join();
  third.join();
  return results;
}

struct Batch {
  std::shared_ptr<const circuits::Program> program;
  std::size_t key_rows = 0;
  std::size_t public_bytes = 0;
  std::size_t secret_bytes = 0;
  jobs::KrbMaskedRange masked;  // of each job's record: masked as a client masks it
};

// Each party's own copy of a batch: its jobs and its header's sequence number.
struct PartyCopies {
  std::array<std::vector<Job>, 3> jobs;
  std::array<std::uint32_t, 3> sequence{};
};

// Runs one batch (one instance per job) at three parties, each with its own copy; returns each
// party's result. `range`: the secret rows of every job, when not those of its usage's keys.
std::array<BatchResult, 3> run_krb_batch_copies(const Batch& batch, wire::KrbEvaluation evaluation,
                                                KrbOperation operation, const PartyCopies& copies,
                                                const std::optional<jobs::KrbSecretRange>& range = std::nullopt,
                                                std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
  // A client's mask per job (wire/krb_record_mask.hpp): the record's secret bytes travel
  // masked by R and each party holds its seeds' share of R as rows after the key's.
  std::size_t most_jobs = 0;
  for (const auto& jobs : copies.jobs) most_jobs = std::max(most_jobs, jobs.size());
  std::vector<std::unique_ptr<wire::RecordMaskDeal>> deals;
  std::vector<Bytes> masks;
  for (std::size_t j = 0; j < most_jobs; ++j) {
    deals.push_back(std::make_unique<wire::RecordMaskDeal>(3, batch.masked.bytes));
    const SecretBytes own = wire::replicated_record_mask(deals.back()->for_server(0), batch.masked.bytes);
    const SecretBytes previous = wire::replicated_record_mask(deals.back()->for_server(2), batch.masked.bytes);
    Bytes r(batch.masked.bytes);
    for (std::size_t i = 0; i < r.size(); ++i) r[i] = own[batch.masked.bytes + i] ^ previous[i];
    masks.push_back(std::move(r));
  }
  std::array<BatchTask, 3> tasks;
  for (int p = 0; p < 3; ++p) {
    BatchTask& task = tasks[static_cast<std::size_t>(p)];
    const std::vector<Job>& jobs = copies.jobs[static_cast<std::size_t>(p)];
    task.header.epoch = 0x5eed;
    task.header.sequence = copies.sequence[static_cast<std::size_t>(p)];
    task.header.krb_evaluation = evaluation;
    task.program = batch.program;
    task.key_rows = batch.key_rows;
    task.public_bytes = batch.public_bytes;
    task.secret_bytes = batch.secret_bytes;
    task.instances = jobs.size();
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      const Job& job = jobs[j];
      task.header.slices.push_back(wire::BatchSlice{{}, {}, {}, 0, 1, 0, 0});
      SliceInput input;
      input.blocks = 1;
      if (job.key != nullptr) {
        const SecretBytes& share = job.key->shares[static_cast<std::size_t>(p)];
        const jobs::KrbSecretRange rows =
            range ? *range : jobs::krb_secret_range(job.key->algorithm, operation, job.usage);
        input.key_share = jobs::krb_secret_rows(
            share, job.key->algorithm, rows,
            wire::replicated_record_mask(deals[j]->for_server(p), batch.masked.bytes));
        input.public_records = job.data;
        for (std::size_t i = 0; i < batch.masked.bytes && batch.masked.offset + i < job.data.size(); ++i)
          input.public_records[batch.masked.offset + i] ^= masks[j][i];
      }
      task.slices.push_back(std::move(input));
    }
  }
  return evaluate_at_three_parties(tasks, timeout);
}

// The same batch of `jobs` at every party.
std::array<BatchResult, 3> run_krb_batch(const Batch& batch, wire::KrbEvaluation evaluation, KrbOperation operation,
                                         const std::vector<Job>& jobs, std::uint32_t sequence,
                                         const std::optional<jobs::KrbSecretRange>& range = std::nullopt) {
  return run_krb_batch_copies(batch, evaluation, operation, {{jobs, jobs, jobs}, {sequence, sequence, sequence}},
                              range);
}

// The opened result records of all instances.
Bytes open_records(std::array<BatchResult, 3>& results) {
  for (const auto& result : results) EXPECT_TRUE(result.succeeded) << result.error;
  return rss3::open_output({results[0].masked, results[1].masked, results[2].masked});
}

Batch krb_batch(jobs::KrbCircuitCache& cache, CircuitId id, std::uint32_t data_bytes) {
  const jobs::KrbBatchLayout layout = jobs::krb_batch_layout(id, data_bytes);
  return Batch{cache.program(id, data_bytes), layout.key_rows, layout.public_bytes, 0,
               jobs::krb_masked_range({id, data_bytes, 0})};
}

// Every Kerberos test runs both ways, each with the circuits a server builds for it.
class KrbBatch : public ::testing::TestWithParam<wire::KrbEvaluation> {
 protected:
  jobs::KrbCircuitCache cache{jobs::KrbCircuitCache::kDefaultBudgetOps, [](const jobs::KrbCircuitKey& key) {
                          return jobs::build_krb_circuit(key, wire::is_garbled(GetParam())
                                                            ? circuits::CircuitCost::FewestAnds
                                                            : circuits::CircuitCost::FewestLayers);
                        }};
};

INSTANTIATE_TEST_SUITE_P(Evaluations, KrbBatch,
                         ::testing::Values(wire::KrbEvaluation::Layered, wire::KrbEvaluation::Garbled,
                                           wire::KrbEvaluation::GarbledTwice),
                         [](const ::testing::TestParamInfo<wire::KrbEvaluation>& info) {
                           return info.param == wire::KrbEvaluation::GarbledTwice ? "GarbledTwice"
                                  : info.param == wire::KrbEvaluation::Garbled    ? "Garbled"
                                                                                  : "Layered";
                         });

TEST_P(KrbBatch, EncryptJobsMatchOpenSsl) {
  const KrbKey user(KeyAlgorithm::Aes256CtsHmacSha1);
  const KrbKey service(KeyAlgorithm::Aes256CtsHmacSha1);
  // 45 bytes: confounder and a 29-byte plaintext, a partial last block (ciphertext stealing).
  const std::uint32_t length = 45;
  const Batch batch = krb_batch(cache, CircuitId::KrbEncryptAes256, length);
  const std::vector<Job> jobs = {{&user, 3, random_bytes(length)},
                                 {&service, 2, random_bytes(length)},
                                 {&user, 1, random_bytes(length)}};
  auto results = run_krb_batch(batch, GetParam(), KrbOperation::Encrypt, jobs, 1);
  const Bytes opened = open_records(results);
  const std::size_t record = length + 12;
  ASSERT_EQ(results[0].record_bytes, record);
  ASSERT_EQ(opened.size(), jobs.size() * record);
  for (std::size_t j = 0; j < jobs.size(); ++j)
    EXPECT_EQ(Bytes(opened.begin() + j * record, opened.begin() + (j + 1) * record),
              reference(*jobs[j].key, KrbOperation::Encrypt, jobs[j].usage, jobs[j].data))
        << "job " << j;
}

TEST_P(KrbBatch, EncryptOfWholeBlocksAndOneBlockAes128) {
  const KrbKey key(KeyAlgorithm::Aes128CtsHmacSha1);
  std::uint32_t sequence = 10;
  // One block (plain CBC), two whole blocks (the last two swapped), and a longer message.
  for (std::uint32_t length : {16u, 32u, 81u}) {
    const Batch batch = krb_batch(cache, CircuitId::KrbEncryptAes128, length);
    const std::vector<Job> jobs = {{&key, 56, random_bytes(length)}};
    auto results = run_krb_batch(batch, GetParam(), KrbOperation::Encrypt, jobs, ++sequence);
    EXPECT_EQ(open_records(results), reference(key, KrbOperation::Encrypt, 56, jobs[0].data)) << length;
  }
}

TEST_P(KrbBatch, DecryptChecksTheMacInside) {
  const KrbKey key(KeyAlgorithm::Aes128CtsHmacSha1);
  const KrbKey other(KeyAlgorithm::Aes128CtsHmacSha1);
  const std::uint32_t plain = 16 + 21;
  const Bytes message = random_bytes(plain);
  const Bytes sealed = reference(key, KrbOperation::Encrypt, 2, message);  // ciphertext || MAC
  Bytes forged = sealed;
  forged[5] ^= 0x01;
  Bytes bad_mac = sealed;
  bad_mac.back() ^= 0x80;
  const Batch batch = krb_batch(cache, CircuitId::KrbDecryptAes128, static_cast<std::uint32_t>(sealed.size()));
  const std::vector<Job> jobs = {{&key, 2, sealed}, {&key, 2, forged}, {&key, 2, bad_mac}, {&other, 2, sealed},
                                 {&key, 3, sealed}};
  auto results = run_krb_batch(batch, GetParam(), KrbOperation::Decrypt, jobs, 20);
  const Bytes opened = open_records(results);
  const std::size_t record = plain + 1;
  ASSERT_EQ(opened.size(), jobs.size() * record);
  Bytes accepted = message;
  accepted.push_back(1);
  EXPECT_EQ(Bytes(opened.begin(), opened.begin() + record), accepted);
  // Wrong data, wrong MAC, wrong key, wrong usage: all zeros and verdict 0.
  for (std::size_t j = 1; j < jobs.size(); ++j)
    EXPECT_EQ(Bytes(opened.begin() + j * record, opened.begin() + (j + 1) * record), Bytes(record, 0)) << "job " << j;
  // Every party's verdict byte share has only bit 0 in use.
  for (const auto& result : results)
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      EXPECT_EQ(result.masked.x[j * record + record - 1] & 0xfe, 0);
      EXPECT_EQ(result.masked.a[j * record + record - 1] & 0xfe, 0);
    }
}

TEST_P(KrbBatch, ChecksumOfEmptyAndLongMessages) {
  const KrbKey key128(KeyAlgorithm::Aes128CtsHmacSha1);
  const KrbKey key256(KeyAlgorithm::Aes256CtsHmacSha1);
  std::uint32_t sequence = 30;
  for (std::uint32_t length : {0u, 55u, 56u, 200u}) {  // 55/56: the inner hash's padding boundary
    const Batch batch = krb_batch(cache, CircuitId::KrbChecksum, length);
    // One circuit for both key sizes: they share a batch.
    const std::vector<Job> jobs = {{&key128, 17, random_bytes(length)}, {&key256, 17, random_bytes(length)}};
    auto results = run_krb_batch(batch, GetParam(), KrbOperation::Checksum, jobs, ++sequence);
    const Bytes opened = open_records(results);
    ASSERT_EQ(opened.size(), 24u);
    EXPECT_EQ(Bytes(opened.begin(), opened.begin() + 12), reference(key128, KrbOperation::Checksum, 17, jobs[0].data));
    EXPECT_EQ(Bytes(opened.begin() + 12, opened.end()), reference(key256, KrbOperation::Checksum, 17, jobs[1].data));
  }
}

// RFC 3961 DK with RFC 3962's parameters: E_K(n-fold(constant)) for a 16-byte key.
Bytes derive_aes128(const Bytes& key, std::uint32_t usage, std::uint8_t role) {
  const Bytes constant = {static_cast<std::uint8_t>(usage >> 24), static_cast<std::uint8_t>(usage >> 16),
                          static_cast<std::uint8_t>(usage >> 8), static_cast<std::uint8_t>(usage), role};
  return aes_ecb(key, circuits::n_fold(constant, 16));
}

TEST_P(KrbBatch, Cf2JobComputesTheCombinedKeyInside) {
  // The client's aes256 key with an aes128 armor key: the combined key is aes128, and its
  // stored half is AES under the client's PRF key of SHA-1(1 || pepper)[0..16).
  const KrbKey key(KeyAlgorithm::Aes256CtsHmacSha1);
  wire::KrbRequest request;
  request.key = wire::KeyId{"alice", 1, KeyAlgorithm::Aes256CtsHmacSha1};
  request.operation = KrbOperation::Encrypt;
  request.usage = 55;
  request.data = random_bytes(16 + 26);
  request.combine = wire::KrbCombine{KeyAlgorithm::Aes128CtsHmacSha1, "challengelongterm", random_bytes(16)};
  const jobs::KrbJobPlan plan = jobs::plan_krb_job(request);
  ASSERT_EQ(plan.circuit.id, CircuitId::KrbCf2Encrypt);
  const jobs::KrbBatchLayout layout = jobs::krb_batch_layout(plan.circuit.id, plan.circuit.data_bytes, plan.circuit.combine);
  ASSERT_EQ(layout.public_bytes, plan.public_record.size());
  ASSERT_EQ(layout.output_bytes, plan.result_bytes);
  const Batch batch{cache.program(plan.circuit.id, plan.circuit.data_bytes, plan.circuit.combine), layout.key_rows,
                    layout.public_bytes, 0, jobs::krb_masked_range(plan.circuit)};
  const std::vector<Job> jobs = {{&key, 55, plan.public_record}};
  auto results = run_krb_batch(batch, GetParam(), KrbOperation::Encrypt, jobs, 40, plan.secret);
  const Bytes opened = open_records(results);

  std::string input = "\x01" "challengelongterm";
  std::array<std::uint8_t, 20> digest{};
  ASSERT_EQ(EVP_Digest(input.data(), input.size(), digest.data(), nullptr, EVP_sha1(), nullptr), 1);
  Bytes combined = aes_ecb(key.prf, Bytes(digest.begin(), digest.begin() + 16));
  for (std::size_t i = 0; i < combined.size(); ++i) combined[i] ^= request.combine->mask[i];
  Bytes expected = cts_encrypt(derive_aes128(combined, 55, 0xAA), request.data);
  const Bytes mac = hmac_sha1_96(derive_aes128(combined, 55, 0x55), request.data);
  expected.insert(expected.end(), mac.begin(), mac.end());
  EXPECT_EQ(opened, expected);
}

TEST_P(KrbBatch, AbsentJobIsEvaluatedOnZerosWithoutDisturbingTheOthers) {
  const KrbKey key(KeyAlgorithm::Aes128CtsHmacSha1);
  const Batch batch = krb_batch(cache, CircuitId::KrbChecksum, 20);
  const std::vector<Job> jobs = {{nullptr, 0, {}}, {&key, 1, random_bytes(20)}};
  auto results = run_krb_batch(batch, GetParam(), KrbOperation::Checksum, jobs, 50);
  for (const auto& result : results) EXPECT_EQ(result.slice_used, (std::vector<bool>{false, true}));
  const Bytes opened = open_records(results);
  EXPECT_EQ(Bytes(opened.begin() + 12, opened.end()), reference(key, KrbOperation::Checksum, 1, jobs[1].data));
}

TEST_P(KrbBatch, MismatchedInputsFailTheBatchAtEveryParty) {
  const KrbKey key(KeyAlgorithm::Aes128CtsHmacSha1);
  const Batch batch = krb_batch(cache, CircuitId::KrbChecksum, 20);
  const Bytes data = random_bytes(20);
  const Bytes short_data(data.begin(), data.end() - 1);
  // One party's copy of the job is a byte short of the batch's length, the other two are
  // right: that party refuses before it sends anything, the party after it (which waits for
  // its message) fails, and at most one party is left with a share, from which no client
  // opens anything. (Garbled, party 0 completes when party 1 refuses: party 2 has sent it all
  // it needs before waiting for party 1.)
  for (std::size_t odd = 0; odd < 3; ++odd) {
    PartyCopies copies;
    for (std::size_t p = 0; p < 3; ++p) {
      copies.jobs[p] = {{&key, 1, p == odd ? short_data : data}};
      copies.sequence[p] = 60;
    }
    auto results = run_krb_batch_copies(batch, GetParam(), KrbOperation::Checksum, copies, std::nullopt,
                                        std::chrono::milliseconds(1500));
    EXPECT_FALSE(results[odd].succeeded);
    EXPECT_NE(results[odd].error.find("do not fit"), std::string::npos) << results[odd].error;
    EXPECT_FALSE(results[(odd + 1) % 3].succeeded) << "odd " << odd;
    std::size_t succeeded = 0;
    for (const auto& result : results) succeeded += result.succeeded ? 1 : 0;
    EXPECT_LE(succeeded, 1u) << "odd " << odd;
    if (GetParam() != wire::KrbEvaluation::Garbled) EXPECT_EQ(succeeded, 0u) << "odd " << odd;
  }
}

// A garbled batch's tweaks are its own: the evaluator refuses a garbling numbered for another
// batch (here the garbler's and labeller's copy says sequence 70, the evaluator's 71).
TEST(GarbledKrbBatch, EvaluatorRefusesAnotherBatchsGarbling) {
  wire::BatchHeader header;
  header.epoch = 0x1234'5678'9abc'def0ull;
  header.sequence = 70;
  EXPECT_EQ(batch_garbling_number(header), (0x1abc'def0ull << 32) | 70);
  wire::BatchHeader next = header;
  next.sequence = 71;
  EXPECT_NE(batch_garbling_number(next), batch_garbling_number(header));
  EXPECT_LT(batch_garbling_number(header), 1ull << 63);

  jobs::KrbCircuitCache cache{jobs::KrbCircuitCache::kDefaultBudgetOps, [](const jobs::KrbCircuitKey& key) {
                          return jobs::build_krb_circuit(key, circuits::CircuitCost::FewestAnds);
                        }};
  const KrbKey key(KeyAlgorithm::Aes128CtsHmacSha1);
  const Batch batch = krb_batch(cache, CircuitId::KrbChecksum, 20);
  const std::vector<Job> jobs = {{&key, 17, random_bytes(20)}};
  auto results = run_krb_batch_copies(batch, wire::KrbEvaluation::Garbled, KrbOperation::Checksum,
                                      {{jobs, jobs, jobs}, {70, 71, 70}}, std::nullopt,
                                      std::chrono::milliseconds(1500));
  EXPECT_FALSE(results[kEvaluatingParty].succeeded);
  EXPECT_NE(results[kEvaluatingParty].error.find("expected"), std::string::npos) << results[kEvaluatingParty].error;
  // The same copies at every party compute the checksum.
  auto agreed = run_krb_batch_copies(batch, wire::KrbEvaluation::Garbled, KrbOperation::Checksum,
                                     {{jobs, jobs, jobs}, {72, 72, 72}});
  EXPECT_EQ(open_records(agreed), reference(key, KrbOperation::Checksum, 17, jobs[0].data));
}

// ---- the AES circuits through the same generic path ----

TEST(AesBatch, EncryptAndTagCheckRecords) {
  const CircuitSet circuits;
  const Bytes key = random_bytes(32);
  const Bytes round_keys = circuits::aes_expand_key(key);
  auto split = rss3::share_bytes(round_keys);
  const Bytes blocks = random_bytes(3 * 16);
  for (CircuitId id : {CircuitId::Aes256EncryptAnd32, CircuitId::Aes256EncryptEqDepth4}) {
    const bool check = id == CircuitId::Aes256EncryptEqDepth4;
    // Tag check: instance 0 compared with its true output (verdict 1), instance 2 with a wrong one.
    std::array<Bytes, 3> secret_x, secret_a;
    Bytes compared(3 * 16, 0);
    for (std::size_t n = 0; n < 3; ++n) {
      const Bytes expected = aes_ecb(key, Bytes(blocks.begin() + n * 16, blocks.begin() + (n + 1) * 16));
      std::copy(expected.begin(), expected.end(), compared.begin() + n * 16);
    }
    compared[2 * 16] ^= 1;
    auto compared_shares = rss3::share_bytes(compared);
    std::array<BatchTask, 3> tasks;
    for (std::size_t p = 0; p < 3; ++p) {
      BatchTask& task = tasks[p];
      task.header.epoch = 7;
      task.header.sequence = check ? 2 : 1;
      task.program = std::shared_ptr<const circuits::Program>(std::shared_ptr<const circuits::Program>(),
                                                              &circuits.program(id));
      task.key_rows = CircuitSet::key_rows(id);
      task.public_bytes = 16;
      task.secret_bytes = check ? 16 : 0;
      task.instances = 3;
      // Two slices: one instance, then two; each with the key share broadcast.
      for (std::uint32_t blocks_in_slice : {1u, 2u}) {
        SliceInput input;
        input.blocks = blocks_in_slice;
        input.key_share = SecretBytes(2 * round_keys.size());
        std::copy(split[p].x.begin(), split[p].x.end(), input.key_share.data());
        std::copy(split[p].a.begin(), split[p].a.end(), input.key_share.data() + round_keys.size());
        const std::size_t first = blocks_in_slice == 1 ? 0 : 1;
        input.public_records.assign(blocks.begin() + first * 16, blocks.begin() + (first + blocks_in_slice) * 16);
        if (check) {
          const std::size_t bytes = blocks_in_slice * 16;
          input.secret_records = SecretBytes(2 * bytes);
          std::copy_n(compared_shares[p].x.begin() + first * 16, bytes, input.secret_records.data());
          std::copy_n(compared_shares[p].a.begin() + first * 16, bytes, input.secret_records.data() + bytes);
        }
        task.header.slices.push_back(wire::BatchSlice{{}, {}, {}, 0, blocks_in_slice, 0, 0});
        task.slices.push_back(std::move(input));
      }
    }
    std::array<BatchResult, 3> results = evaluate_at_three_parties(tasks);
    const Bytes opened = open_records(results);
    const std::size_t record = check ? 17 : 16;
    ASSERT_EQ(results[0].record_bytes, record);
    EXPECT_EQ(results[0].and_gates, circuits.program(id).and_gates);
    for (std::size_t n = 0; n < 3; ++n) {
      const Bytes expected = aes_ecb(key, Bytes(blocks.begin() + n * 16, blocks.begin() + (n + 1) * 16));
      EXPECT_EQ(Bytes(opened.begin() + n * record, opened.begin() + n * record + 16), expected) << n;
      if (check) {
        EXPECT_EQ(opened[n * record + 16], n == 2 ? 0 : 1) << n;
      }
    }
  }
}

}  // namespace
}  // namespace mpc::three_party_engine
