// Where a Kerberos job's inputs come from and how its batch is laid out: the circuit per
// operation and key size, the secret rows cut from the share material (offsets written out
// here by hand from the layout in wire/key_id.hpp), the batch layout against the compiled
// circuits, and the compiled-circuit cache.
#include "jobs/krb_jobs.hpp"

#include <gtest/gtest.h>

#include <numeric>

#include "circuits/kerberos.hpp"
#include "common/error.hpp"
#include "jobs/krb_circuit_cache.hpp"

namespace mpc::jobs {
namespace {

using wire::CircuitId;
using wire::KeyAlgorithm;
using wire::KrbOperation;

// x || a of a material share whose byte i is i mod 251 in x and (i mod 251) ^ 0xff in a.
SecretBytes numbered_share(KeyAlgorithm algorithm) {
  const std::size_t material = wire::material_bytes(algorithm);
  SecretBytes share(2 * material);
  for (std::size_t i = 0; i < material; ++i) {
    share[i] = static_cast<std::uint8_t>(i % 251);
    share[material + i] = static_cast<std::uint8_t>((i % 251) ^ 0xff);
  }
  return share;
}

// The rows must be share bytes [at, at + bytes) of x, then the same bytes of a.
void expect_rows_at(const SecretBytes& rows, std::size_t at, std::size_t bytes) {
  ASSERT_EQ(rows.size(), 2 * bytes);
  for (std::size_t i = 0; i < bytes; ++i) {
    ASSERT_EQ(rows[i], static_cast<std::uint8_t>((at + i) % 251)) << "x byte " << i;
    ASSERT_EQ(rows[bytes + i], static_cast<std::uint8_t>(((at + i) % 251) ^ 0xff)) << "a byte " << i;
  }
}

TEST(KrbJobs, CircuitPerOperationAndKeySize) {
  EXPECT_EQ(krb_circuit_id(KrbOperation::Encrypt, KeyAlgorithm::Aes128CtsHmacSha1), CircuitId::KrbEncryptAes128);
  EXPECT_EQ(krb_circuit_id(KrbOperation::Encrypt, KeyAlgorithm::Aes256CtsHmacSha1), CircuitId::KrbEncryptAes256);
  EXPECT_EQ(krb_circuit_id(KrbOperation::Decrypt, KeyAlgorithm::Aes128CtsHmacSha1), CircuitId::KrbDecryptAes128);
  EXPECT_EQ(krb_circuit_id(KrbOperation::Decrypt, KeyAlgorithm::Aes256CtsHmacSha1), CircuitId::KrbDecryptAes256);
  EXPECT_EQ(krb_circuit_id(KrbOperation::Checksum, KeyAlgorithm::Aes128CtsHmacSha1), CircuitId::KrbChecksum);
  EXPECT_EQ(krb_circuit_id(KrbOperation::Checksum, KeyAlgorithm::Aes256CtsHmacSha1), CircuitId::KrbChecksum);
  EXPECT_THROW(krb_circuit_id(static_cast<KrbOperation>(4), KeyAlgorithm::Aes128CtsHmacSha1), Error);
  EXPECT_THROW(krb_circuit_id(KrbOperation::Encrypt, KeyAlgorithm::Aes256), Error);
}

TEST(KrbJobs, SecretRowsComeFromTheUsagesBlock) {
  // aes128: usage blocks of 176 + 40 + 40 = 256 bytes, usages 1, 2, 3, 17, 56; PRF round keys at 1280.
  const SecretBytes share128 = numbered_share(KeyAlgorithm::Aes128CtsHmacSha1);
  ASSERT_EQ(share128.size(), 2u * 1456u);
  expect_rows_at(krb_secret_rows(share128, KeyAlgorithm::Aes128CtsHmacSha1, KrbOperation::Encrypt, 1), 0, 216);
  expect_rows_at(krb_secret_rows(share128, KeyAlgorithm::Aes128CtsHmacSha1, KrbOperation::Decrypt, 3), 512, 216);
  expect_rows_at(krb_secret_rows(share128, KeyAlgorithm::Aes128CtsHmacSha1, KrbOperation::Checksum, 56),
                 4 * 256 + 216, 40);
  // aes256: blocks of 240 + 80 = 320 bytes; PRF round keys at 1600.
  const SecretBytes share256 = numbered_share(KeyAlgorithm::Aes256CtsHmacSha1);
  ASSERT_EQ(share256.size(), 2u * 1840u);
  expect_rows_at(krb_secret_rows(share256, KeyAlgorithm::Aes256CtsHmacSha1, KrbOperation::Encrypt, 2), 320, 280);
  expect_rows_at(krb_secret_rows(share256, KeyAlgorithm::Aes256CtsHmacSha1, KrbOperation::Checksum, 17),
                 3 * 320 + 280, 40);
  EXPECT_EQ(krb_secret_bytes(CircuitId::KrbEncryptAes128), 216u);
  EXPECT_EQ(krb_secret_bytes(CircuitId::KrbDecryptAes256), 280u);
  EXPECT_EQ(krb_secret_bytes(CircuitId::KrbChecksum), 40u);
  EXPECT_THROW(krb_secret_bytes(CircuitId::Aes128EncryptDepth4), Error);
}

TEST(KrbJobs, SecretRowsRefuseWhatTheMaterialDoesNotHold) {
  const SecretBytes share = numbered_share(KeyAlgorithm::Aes128CtsHmacSha1);
  for (std::uint32_t usage : {0u, 4u, 54u, 0xffffffffu})
    EXPECT_THROW(krb_secret_rows(share, KeyAlgorithm::Aes128CtsHmacSha1, KrbOperation::Encrypt, usage), Error);
  // A share of the other key size, or of a plain AES key.
  EXPECT_THROW(krb_secret_rows(share, KeyAlgorithm::Aes256CtsHmacSha1, KrbOperation::Checksum, 2), Error);
  EXPECT_THROW(krb_secret_rows(SecretBytes(2 * 176), KeyAlgorithm::Aes128, KrbOperation::Checksum, 17), Error);
}

TEST(KrbJobs, BatchSizeBoundedByData) {
  EXPECT_EQ(max_krb_batch_jobs(4096), kMaxKrbBatchDataBytes / 4096);
  EXPECT_EQ(max_krb_batch_jobs(0), kMaxKrbBatchDataBytes / 16);
  EXPECT_EQ(max_krb_batch_jobs(100), kMaxKrbBatchDataBytes / 100);
  EXPECT_GE(max_krb_batch_jobs(4096), 1u);
}

TEST(KrbJobs, BatchLayoutMatchesTheCompiledCircuits) {
  struct Case {
    CircuitId id;
    std::uint32_t data_bytes;
    std::size_t key_rows;
    std::size_t result_bytes;
  };
  // The key's rows, then R's: a row per secret record bit (none for a decryption).
  for (const Case& c : {Case{CircuitId::KrbEncryptAes128, 16, 1728 + 128, 28},
                        Case{CircuitId::KrbEncryptAes256, 45, 2240 + 360, 57},
                        Case{CircuitId::KrbDecryptAes128, 28, 1728, 17}, Case{CircuitId::KrbDecryptAes256, 61, 2240, 50},
                        Case{CircuitId::KrbChecksum, 0, 320, 12}, Case{CircuitId::KrbChecksum, 119, 320 + 952, 12}}) {
    const KrbBatchLayout layout = krb_batch_layout(c.id, c.data_bytes);
    EXPECT_EQ(layout.key_rows, c.key_rows);
    EXPECT_EQ(layout.mask_rows, c.key_rows - 8 * krb_secret_bytes(c.id));
    EXPECT_EQ(layout.mask_rows, 8 * krb_masked_range({c.id, c.data_bytes, 0}).bytes);
    EXPECT_EQ(layout.public_bytes, c.data_bytes);
    EXPECT_EQ(layout.output_bytes, c.result_bytes);
    const circuits::Circuit circuit = build_krb_circuit(c.id, c.data_bytes);
    EXPECT_EQ(circuit.total_inputs(), layout.key_rows + 8 * layout.public_bytes) << static_cast<int>(c.id);
    EXPECT_EQ((circuit.total_outputs() + 7) / 8, layout.output_bytes) << static_cast<int>(c.id);
  }
  // A decryption's last output is the verdict, bit 0 of the last result byte.
  EXPECT_EQ(build_krb_circuit(CircuitId::KrbDecryptAes128, 28).total_outputs(), 16u * 8 + 1);
  EXPECT_THROW(krb_batch_layout(CircuitId::KrbEncryptAes128, 15), FormatError);
  EXPECT_THROW(krb_batch_layout(CircuitId::KrbDecryptAes128, 27), FormatError);
  EXPECT_THROW(krb_batch_layout(CircuitId::KrbChecksum, 4097), FormatError);
  EXPECT_THROW(build_krb_circuit(CircuitId::KrbEncryptAes128, 4097), FormatError);
  EXPECT_THROW(krb_batch_layout(CircuitId::Aes256EncryptAnd32, 16), Error);
}

TEST(KrbJobs, Rfc8009JobsRunTheirOwnCircuits) {
  const KeyAlgorithm a128 = KeyAlgorithm::Aes128CtsHmacSha256;
  const KeyAlgorithm a256 = KeyAlgorithm::Aes256CtsHmacSha384;
  EXPECT_EQ(krb_circuit_id(KrbOperation::Encrypt, a128), CircuitId::KrbSha2EncryptAes128);
  EXPECT_EQ(krb_circuit_id(KrbOperation::Decrypt, a256), CircuitId::KrbSha2DecryptAes256);
  EXPECT_EQ(krb_circuit_id(KrbOperation::Checksum, a128), CircuitId::KrbSha2ChecksumSha256);
  EXPECT_EQ(krb_circuit_id(KrbOperation::Checksum, a256), CircuitId::KrbSha2ChecksumSha384);

  // aes128-sha256: usage blocks of 176 + 64 + 64 = 304 bytes; the key's HMAC state at 1520.
  const SecretBytes share128 = numbered_share(a128);
  expect_rows_at(krb_secret_rows(share128, a128, KrbOperation::Encrypt, 2), 304, 240);
  expect_rows_at(krb_secret_rows(share128, a128, KrbOperation::Checksum, 17), 3 * 304 + 240, 64);
  // aes256-sha384: blocks of 240 + 128 + 128 = 496 bytes; the key's HMAC state at 2480.
  const SecretBytes share256 = numbered_share(a256);
  expect_rows_at(krb_secret_rows(share256, a256, KrbOperation::Decrypt, 56), 4 * 496, 368);

  struct Case {
    CircuitId id;
    std::uint32_t data_bytes;
    std::size_t key_rows;
    std::size_t result_bytes;
  };
  for (const Case& c : {Case{CircuitId::KrbSha2EncryptAes128, 16, 1920 + 128, 32},
                        Case{CircuitId::KrbSha2DecryptAes256, 45, 2944, 22},
                        Case{CircuitId::KrbSha2ChecksumSha256, 0, 512, 16},
                        Case{CircuitId::KrbSha2ChecksumSha384, 20, 1024 + 160, 24}}) {
    const KrbBatchLayout layout = krb_batch_layout(c.id, c.data_bytes);
    EXPECT_EQ(layout.key_rows, c.key_rows) << static_cast<int>(c.id);
    EXPECT_EQ(layout.output_bytes, c.result_bytes) << static_cast<int>(c.id);
    const circuits::Circuit circuit = build_krb_circuit(c.id, c.data_bytes);
    EXPECT_EQ(circuit.total_inputs(), layout.key_rows + 8 * layout.public_bytes) << static_cast<int>(c.id);
    EXPECT_EQ((circuit.total_outputs() + 7) / 8, layout.output_bytes) << static_cast<int>(c.id);
  }
  EXPECT_THROW(krb_batch_layout(CircuitId::KrbSha2DecryptAes128, 31), FormatError);
}

// A tiny valid circuit whose shape names the request: (data_bytes + 1) inputs XORed into one output.
circuits::Circuit tiny_circuit(std::uint32_t data_bytes) {
  circuits::Circuit circuit;
  const std::uint32_t inputs = data_bytes + 2;
  circuit.input_widths = {inputs};
  circuit.output_widths = {1};
  std::uint32_t previous = 0;
  for (std::uint32_t i = 1; i < inputs; ++i) {
    const std::uint32_t out = inputs + i - 1;
    circuit.gates.push_back({circuits::GateKind::Xor, previous, i, out});
    previous = out;
  }
  circuit.num_wires = 2 * inputs - 1;
  return circuit;
}

TEST(KrbCircuitCache, CompilesOncePerIdAndLength) {
  std::vector<KrbCircuitKey> built;
  KrbCircuitCache cache(1u << 20, [&](const KrbCircuitKey& key) {
    built.push_back(key);
    return tiny_circuit(key.data_bytes);
  });
  const auto first = cache.program(CircuitId::KrbEncryptAes128, 20);
  EXPECT_EQ(first->num_inputs, 22u);
  EXPECT_EQ(cache.program(CircuitId::KrbEncryptAes128, 20), first);
  const auto other_length = cache.program(CircuitId::KrbEncryptAes128, 21);
  const auto other_id = cache.program(CircuitId::KrbEncryptAes256, 20);
  EXPECT_NE(other_length, first);
  EXPECT_NE(other_id, first);
  EXPECT_EQ(cache.program(CircuitId::KrbEncryptAes128, 20), first);
  // A KRB-FX-CF2 circuit is told apart by its combine shape too.
  const auto shape_a = cache.program(CircuitId::KrbCf2Decrypt, 20, 0x11050505u);
  EXPECT_NE(cache.program(CircuitId::KrbCf2Decrypt, 20, 0x11360505u), shape_a);
  EXPECT_EQ(cache.program(CircuitId::KrbCf2Decrypt, 20, 0x11050505u), shape_a);
  EXPECT_EQ(built.size(), 5u);
  EXPECT_EQ(built.back().combine, 0x11360505u);
  EXPECT_EQ(cache.compiled(), 5u);
  EXPECT_EQ(cache.size(), 5u);
  EXPECT_THROW(cache.program(CircuitId::Aes128EncryptDepth4, 20), FormatError);
}

TEST(KrbCircuitCache, EvictsTheLeastRecentlyUsedOverBudget) {
  int builds = 0;
  const auto build = [&](const KrbCircuitKey& key) {
    ++builds;
    return tiny_circuit(key.data_bytes);
  };
  // Each tiny program of length L holds L + 1 XORs and L + 2 loads: shorter ones are smaller.
  KrbCircuitCache probe(1u << 20, build);
  std::size_t budget = 0;
  for (std::uint32_t length : {100u, 99u, 98u})
    budget += KrbCircuitCache::ops_of(*probe.program(CircuitId::KrbChecksum, length));
  ASSERT_GT(budget, 600u);
  KrbCircuitCache cache(budget, build);  // room for exactly the programs of lengths 100, 99, 98
  builds = 0;
  const auto kept = cache.program(CircuitId::KrbChecksum, 100);
  (void)cache.program(CircuitId::KrbChecksum, 99);
  (void)cache.program(CircuitId::KrbChecksum, 98);
  EXPECT_EQ(cache.held_ops(), budget);
  (void)cache.program(CircuitId::KrbChecksum, 100);  // now the most recently used
  EXPECT_EQ(builds, 3);
  (void)cache.program(CircuitId::KrbChecksum, 97);  // over budget: evicts 99, the least recently used
  EXPECT_LE(cache.held_ops(), budget);
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_EQ(cache.program(CircuitId::KrbChecksum, 100), kept);
  (void)cache.program(CircuitId::KrbChecksum, 98);
  EXPECT_EQ(builds, 4);
  (void)cache.program(CircuitId::KrbChecksum, 99);  // compiled again
  EXPECT_EQ(builds, 5);
  // A program larger than the whole budget is still handed out, and alone in the cache.
  KrbCircuitCache small(10, build);
  const auto big = small.program(CircuitId::KrbChecksum, 100);
  EXPECT_EQ(big->num_inputs, 102u);
  (void)small.program(CircuitId::KrbChecksum, 50);
  EXPECT_EQ(small.size(), 1u);
  // The evicted program lives on while someone holds it.
  EXPECT_EQ(big->num_inputs, 102u);
}

TEST(KrbCircuitCache, FirstLayerGraceGrowsWithTheProgram) {
  KrbCircuitCache cache;
  const auto small = cache.program(CircuitId::KrbChecksum, 0);
  const auto large = cache.program(CircuitId::KrbEncryptAes256, 500);
  // About 2 us per operation: a neighbour compiling a short checksum needs a fraction of a
  // second, a long encryption several.
  EXPECT_EQ(krb_first_layer_grace(*small).count(),
            static_cast<long>(KrbCircuitCache::ops_of(*small) / 500 + 1));
  EXPECT_GT(krb_first_layer_grace(*large), 4 * krb_first_layer_grace(*small));
  EXPECT_GT(krb_first_layer_grace(*large), std::chrono::milliseconds(1000));
}

}  // namespace
}  // namespace mpc::jobs
