// tests/unit/cuda/device_helpers_test.cpp: the host/device helpers of the GPU back end,
// run on the CPU: index math, packing of r into the message layout (against a bit-by-bit
// reference and against the CPU evaluator's real messages), counter blocks, the
// T-table AES (FIPS-197, OpenSSL) and the alpha it makes (CorrelatedRandomness), the
// 64 x 64 transposes (rss3::slice / unslice), alpha_blocks() and the workspace layout.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "common/error.hpp"
#include "cuda/aes_ttable.hpp"
#include "cuda/cuda_evaluator.hpp"
#include "cuda/device_helpers.hpp"
#include "cuda/device_plan.hpp"
#include "protocol/rss3/local_three_party.hpp"
#include "protocol/rss3/transpose.hpp"
#include "support/random_program.hpp"
#include "three_parties.hpp"

namespace mpc::cuda {
namespace {

using namespace detail;

const std::vector<std::uint64_t> kOddSizes = {1, 7, 8, 31, 32, 33, 63, 64, 65, 1000, 2047, 2048, 2049, 4096 + 5};

constexpr AesTables kTables = make_aes_tables();

TEST(DeviceHelpers, IndexMath) {
  EXPECT_EQ(kChunkInstances, rss3::kChunkInstances);
  EXPECT_EQ(chunks_for(0), 0u);
  EXPECT_EQ(chunks_for(1), 1u);
  EXPECT_EQ(chunks_for(2048), 1u);
  EXPECT_EQ(chunks_for(2049), 2u);
  EXPECT_EQ(padded_words(1), 32u);
  EXPECT_EQ(padded_words(2049), 64u);
  EXPECT_EQ(chunk_instances(2049, 0), 2048u);
  EXPECT_EQ(chunk_instances(2049, 1), 1u);
  EXPECT_EQ(chunk_bytes(2049, 1), 1u);
  EXPECT_EQ(chunk_bytes(1000, 0), 125u);
  EXPECT_EQ(chunk_bytes(1001, 0), 126u);
  EXPECT_EQ(per_and_bytes(1), 1u);
  EXPECT_EQ(per_and_bytes(4096 + 9), 512u + 2u);
  EXPECT_EQ(message_bytes(33, 5), 25u);
  EXPECT_EQ(alpha_bytes(0), 0u);
  EXPECT_EQ(alpha_bytes(1), 16u);
  EXPECT_EQ(alpha_bytes(32), 32u);
  EXPECT_EQ(tail_byte_mask(2048), 0xff);
  EXPECT_EQ(tail_byte_mask(33), 0x01);
  EXPECT_EQ(tail_byte_mask(7), 0x7f);
  EXPECT_EQ(word_of_instance(130), 2u);
  EXPECT_EQ(bit_of_instance(130), 2u);
  EXPECT_EQ(chunk_of_word(33), 1u);
  EXPECT_EQ(lane_of_word(33), 1u);
  EXPECT_EQ(state_index(3, 1, 64, 5), (2u * 3 + 1) * 64 + 5);
  for (std::uint64_t n : kOddSizes) {
    for (std::uint64_t ands : {1u, 3u, 85u}) {
      const std::uint64_t chunks = chunks_for(n);
      std::uint64_t total = 0;
      for (std::uint64_t c = 0; c < chunks; ++c) {
        EXPECT_EQ(chunk_message_offset(c, ands), total);
        EXPECT_EQ(message_prefix_bytes(n, ands, c), total);
        for (std::uint64_t k = 0; k < ands; ++k) EXPECT_EQ(r_offset(n, c, ands, k), total + k * chunk_bytes(n, c));
        total += ands * chunk_bytes(n, c);
      }
      EXPECT_EQ(total, message_bytes(n, ands)) << n;
      EXPECT_EQ(message_prefix_bytes(n, ands, chunks), total);
    }
  }
}

// Packs r words with store_r_word, lane by lane, and compares with packing bit by bit
// straight from the layout's definition; load_r_word gives the words back.
TEST(DeviceHelpers, PackingMatchesTheLayoutBitByBit) {
  std::mt19937_64 rng(11);
  for (std::uint64_t n : kOddSizes) {
    const std::uint32_t ands = 3;
    const std::uint64_t words = words_for(n);
    std::vector<std::uint64_t> r(ands * padded_words(n));
    for (auto& w : r) w = rng();
    const std::uint64_t message = message_bytes(n, ands);
    std::vector<std::uint8_t> packed(message + 16, 0xcc), expected(message + 16, 0xcc);
    for (std::uint64_t c = 0; c < chunks_for(n); ++c)
      for (std::uint32_t k = 0; k < ands; ++k)
        for (std::uint32_t j = 0; j < kChunkWords; ++j)
          store_r_word(packed.data() + r_offset(n, c, ands, k), chunk_bytes(n, c), chunk_instances(n, c), j,
                       r[k * padded_words(n) + c * kChunkWords + j]);
    for (std::uint64_t c = 0; c < chunks_for(n); ++c)
      for (std::uint32_t k = 0; k < ands; ++k) {
        const std::uint64_t base = r_offset(n, c, ands, k);
        for (std::uint32_t b = 0; b < chunk_bytes(n, c); ++b) expected[base + b] = 0;
        for (std::uint32_t i = 0; i < chunk_instances(n, c); ++i) {
          const std::uint64_t instance = c * kChunkInstances + i;
          const std::uint64_t bit = (r[k * padded_words(n) + instance / 64] >> (instance % 64)) & 1;
          expected[base + i / 8] |= static_cast<std::uint8_t>(bit << (i % 8));
        }
      }
    ASSERT_EQ(packed, expected) << n;  // also: nothing written past the message
    for (std::uint64_t c = 0; c < chunks_for(n); ++c)
      for (std::uint32_t k = 0; k < ands; ++k)
        for (std::uint32_t j = 0; j < kChunkWords; ++j) {
          const std::uint64_t w = c * kChunkWords + j;
          const std::uint64_t valid = w >= words ? 0
                                      : (w + 1) * 64 <= n ? ~std::uint64_t{0}
                                                          : (std::uint64_t{1} << (n % 64)) - 1;
          EXPECT_EQ(load_r_word(packed.data() + r_offset(n, c, ands, k), chunk_bytes(n, c), j),
                    r[k * padded_words(n) + w] & valid);
        }
  }
}

// The CPU evaluator's real messages for one AND layer, rebuilt from the inputs and alpha
// with the helpers: r = x0&x1 ^ a0&a1 ^ alpha packed lane by lane over alpha.
TEST(DeviceHelpers, PackingMatchesCpuEvaluatorMessages) {
  std::mt19937_64 rng(12);
  circuits::Program program;
  program.num_inputs = 4;
  program.num_slots = 8;
  circuits::Layer first;
  for (std::uint32_t i = 0; i < 4; ++i) first.linear.push_back({circuits::OpKind::LoadInput, i, i, 0});
  first.ands = {{4, 0, 1}, {5, 2, 3}, {6, 0, 3}, {7, 1, 1}};
  circuits::Layer last;
  program.layers = {first, last};
  program.output_slots = {4, 5, 6, 7};
  program.num_outputs = 4;
  program.and_gates = 4;
  program.and_depth = 1;
  for (std::uint64_t n : {1u, 31u, 32u, 33u, 1000u, 2049u}) {
    const std::size_t words = words_for(n);
    const auto inputs = rss3::share_matrix(rss3::testing::random_words(rng, 4 * words), 4, n);
    const auto keys = test::random_keys(rng);
    const rss3::BatchNonce nonce{rng(), static_cast<std::uint32_t>(rng())};
    const auto cpu = test::run_cpu_reference(program, inputs, nonce, keys);
    for (int i = 0; i < 3; ++i) {
      const auto index = static_cast<std::size_t>(i);
      rss3::CorrelatedRandomness randomness(keys[index], keys[static_cast<std::size_t>(rss3::previous_party(i))], nonce);
      const std::uint64_t message = message_bytes(n, 4);
      std::vector<std::uint8_t> msg(alpha_bytes(message));
      randomness.next_alpha(msg);
      const rss3::ShareMatrix& in = inputs[index];
      for (std::uint64_t c = 0; c < chunks_for(n); ++c)
        for (std::uint32_t k = 0; k < 4; ++k)
          for (std::uint32_t j = 0; j < kChunkWords; ++j) {
            const std::uint64_t w = c * kChunkWords + j;
            if (w >= words) continue;
            const auto& g = first.ands[k];
            const std::uint64_t local = (in.x[g.in0 * words + w] & in.x[g.in1 * words + w]) ^
                                        (in.a[g.in0 * words + w] & in.a[g.in1 * words + w]);
            std::uint8_t* region = msg.data() + r_offset(n, c, 4, k);
            store_r_word(region, chunk_bytes(n, c), chunk_instances(n, c), j,
                         load_r_word(region, chunk_bytes(n, c), j) ^ local);
          }
      msg.resize(message);
      EXPECT_EQ(msg, cpu.transcripts[index]) << "n = " << n << ", party " << i;
    }
  }
}

TEST(DeviceHelpers, CounterBlocks) {
  std::uint8_t b[16];
  counter_block_bytes(0x0102030405060708ull, 0x090a0b0cu, 0x0d0e0f10u, b);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(b[i], i + 1);
  std::uint32_t w[4];
  counter_block_words(0x0102030405060708ull, 0x090a0b0cu, 0x0d0e0f10u, w);
  EXPECT_EQ(w[0], 0x01020304u);
  EXPECT_EQ(w[1], 0x05060708u);
  EXPECT_EQ(w[2], 0x090a0b0cu);
  EXPECT_EQ(w[3], 0x0d0e0f10u);
  EXPECT_EQ(bswap32(0x11223344u), 0x44332211u);
}

TEST(DeviceHelpers, AesTablesAndFips197) {
  EXPECT_EQ(kTables.sbox[0x00], 0x63);
  EXPECT_EQ(kTables.sbox[0x01], 0x7c);
  EXPECT_EQ(kTables.sbox[0x53], 0xed);
  EXPECT_EQ(kTables.sbox[0xff], 0x16);
  std::set<int> values(std::begin(kTables.sbox), std::end(kTables.sbox));
  EXPECT_EQ(values.size(), 256u);  // a permutation
  // FIPS-197 appendix A.1: the last round-key word of 2b7e1516 28aed2a6 abf71588 09cf4f3c.
  const std::uint8_t key_a1[16] = {0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6,
                                   0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c};
  EXPECT_EQ(aes128_expand_key(key_a1, kTables).w[43], 0xb6630ca6u);
  // FIPS-197 appendix C.1.
  std::uint8_t key[16];
  for (int i = 0; i < 16; ++i) key[i] = static_cast<std::uint8_t>(i);
  const auto rk = aes128_expand_key(key, kTables);
  const std::uint32_t plain[4] = {0x00112233u, 0x44556677u, 0x8899aabbu, 0xccddeeffu};
  std::uint32_t cipher[4];
  aes128_encrypt_words(rk.w, kTables.te, kTables.sbox, plain, cipher);
  EXPECT_EQ(cipher[0], 0x69c4e0d8u);
  EXPECT_EQ(cipher[1], 0x6a7b0430u);
  EXPECT_EQ(cipher[2], 0xd8cdb780u);
  EXPECT_EQ(cipher[3], 0x70b4c55au);
}

TEST(DeviceHelpers, AesMatchesOpenSslCounterMode) {
  std::mt19937_64 rng(13);
  for (int trial = 0; trial < 20; ++trial) {
    const auto key = test::random_bytes(rng, 16);
    const std::uint64_t epoch = rng();
    const std::uint32_t sequence = static_cast<std::uint32_t>(rng());
    const std::uint32_t counter = trial == 0 ? 0xffffffffu - 3 : static_cast<std::uint32_t>(rng());
    std::uint8_t iv[16];
    counter_block_bytes(epoch, sequence, counter, iv);
    const std::size_t blocks = trial == 0 ? 4 : 9;
    const auto expected = test::openssl_ctr(key, iv, blocks * 16);
    const auto rk = aes128_expand_key(key.data(), kTables);
    for (std::size_t j = 0; j < blocks; ++j) {
      std::uint32_t block[4], out[4];
      counter_block_words(epoch, sequence, counter + static_cast<std::uint32_t>(j), block);
      aes128_encrypt_words(rk.w, kTables.te, kTables.sbox, block, out);
      for (int c = 0; c < 4; ++c)
        for (int b = 0; b < 4; ++b)
          EXPECT_EQ(static_cast<std::uint8_t>(out[c] >> (24 - 8 * b)), expected[16 * j + 4 * c + b]);
    }
  }
}

// The GPU alpha equals CorrelatedRandomness::next_alpha, from the start of a batch and
// from any block on, with every PRF backend of this CPU.
TEST(DeviceHelpers, AlphaBlocksMatchCorrelatedRandomness) {
  std::mt19937_64 rng(14);
  std::vector<rss3::PrfBackend> backends = {rss3::PrfBackend::OpenSsl, rss3::PrfBackend::Auto};
  for (rss3::PrfBackend backend : backends) {
    for (std::uint32_t skip : {0u, 1u, 37u, 4096u}) {
      rss3::PrfKey own{}, previous{};
      for (auto& b : own) b = static_cast<std::uint8_t>(rng());
      for (auto& b : previous) b = static_cast<std::uint8_t>(rng());
      const rss3::BatchNonce nonce{rng(), static_cast<std::uint32_t>(rng())};
      rss3::CorrelatedRandomness randomness(own, previous, nonce, backend);
      std::vector<std::uint8_t> skipped(16 * std::size_t{skip}), expected(16 * 67);
      if (skip != 0) randomness.next_alpha(skipped);
      randomness.next_alpha(expected);
      const auto own_rk = aes128_expand_key(own.data(), kTables);
      const auto previous_rk = aes128_expand_key(previous.data(), kTables);
      std::vector<std::uint8_t> got(expected.size());
      for (std::uint32_t j = 0; j < 67; ++j) {
        std::uint32_t block[4], le[4];
        counter_block_words(nonce.epoch, nonce.sequence, skip + j, block);
        alpha_block(own_rk.w, previous_rk.w, kTables.te, kTables.sbox, block, le);
        std::memcpy(got.data() + 16 * j, le, 16);
      }
      EXPECT_EQ(got, expected) << "skip " << skip;
    }
  }
}

TEST(DeviceHelpers, Transpose64) {
  std::mt19937_64 rng(15);
  std::uint64_t a[64], original[64];
  for (auto& v : original) v = rng();
  std::copy(std::begin(original), std::end(original), a);
  transpose64(a);
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < 64; ++j) ASSERT_EQ((a[j] >> i) & 1, (original[i] >> j) & 1) << i << "," << j;
  transpose64(a);
  EXPECT_TRUE(std::equal(std::begin(a), std::end(a), std::begin(original)));
}

// slice_tile / unslice_tile over every (word, group), as the kernels run them, against
// the CPU transposes, with padding words and a row offset.
TEST(DeviceHelpers, TransposeTilesMatchRss3) {
  std::mt19937_64 rng(16);
  for (std::uint64_t record_bytes : {1u, 3u, 8u, 9u, 16u, 33u}) {
    for (std::uint64_t n : {1u, 31u, 32u, 33u, 63u, 64u, 65u, 1000u, 2049u}) {
      for (std::uint64_t extra_words : {0u, 2u}) {
        const std::uint64_t first_row = extra_words == 0 ? 0 : 5;
        const std::uint64_t wpr = rss3::words_for(n) + extra_words;
        const std::uint64_t rows = first_row + record_bytes * 8 + 1;
        const auto records = test::random_bytes(rng, n * record_bytes);
        std::vector<std::uint64_t> expected(rows * wpr, 0x1234), got(rows * wpr, 0x1234);
        rss3::slice(records, record_bytes, n, expected, wpr, first_row);
        for (std::uint64_t w = 0; w < wpr; ++w)
          for (std::uint64_t g = 0; g < record_groups(record_bytes); ++g)
            slice_tile(records.data(), record_bytes, n, got.data(), wpr, first_row, w, g);
        ASSERT_EQ(got, expected) << record_bytes << " bytes, " << n << " instances";
        std::vector<std::uint8_t> back(n * record_bytes, 0), cpu_back(n * record_bytes, 0);
        for (std::uint64_t w = 0; w < rss3::words_for(n); ++w)
          for (std::uint64_t g = 0; g < record_groups(record_bytes); ++g)
            unslice_tile(got.data(), wpr, first_row, record_bytes, n, back.data(), w, g);
        rss3::unslice(expected, wpr, first_row, record_bytes, n, cpu_back);
        EXPECT_EQ(back, records);
        EXPECT_EQ(cpu_back, records);
      }
    }
  }
}

// alpha_blocks() is what the CPU evaluator draws: after an evaluation, its randomness
// continues exactly where a fresh one continues after alpha_blocks() blocks.
TEST(DeviceHelpers, AlphaBlocksCountsWhatTheCpuDraws) {
  std::mt19937_64 rng(17);
  rss3::testing::RandomProgramShape shape;
  shape.ands_per_layer = 13;
  const circuits::Program program = rss3::testing::random_program(rng, shape);
  for (std::uint64_t n : {1u, 33u, 2049u}) {
    const auto keys = test::random_keys(rng);
    const rss3::BatchNonce nonce{rng(), 3};
    const auto inputs = rss3::share_matrix(rss3::testing::random_words(rng, shape.inputs * words_for(n)),
                                           shape.inputs, n);
    rss3::CorrelatedRandomness used(keys[0], keys[2], nonce);
    rss3::MemoryRing ring;
    // A single party cannot finish alone: count with three, party 0's randomness kept.
    std::array<rss3::ShareMatrix, 3> outputs;
    std::vector<std::thread> threads;
    for (int i = 0; i < 3; ++i)
      threads.emplace_back([&, i] {
        const auto index = static_cast<std::size_t>(i);
        rss3::CorrelatedRandomness own(keys[index], keys[static_cast<std::size_t>(rss3::previous_party(i))], nonce);
        auto evaluator = rss3::make_cpu_evaluator(rss3::SimdLevel::Portable);
        evaluator->evaluate(program, inputs[index], outputs[index], i == 0 ? used : own, ring.endpoint(i));
      });
    for (auto& t : threads) t.join();
    std::vector<std::uint8_t> after(16), fresh_after(16);
    used.next_alpha(after);
    rss3::CorrelatedRandomness fresh(keys[0], keys[2], nonce);
    std::vector<std::uint8_t> skip(16 * alpha_blocks(program, n));
    fresh.next_alpha(skip);
    fresh.next_alpha(fresh_after);
    EXPECT_EQ(after, fresh_after) << n;
  }
}

TEST(DeviceHelpers, WorkspaceLayout) {
  std::mt19937_64 rng(18);
  const circuits::Program program = rss3::testing::random_program(rng, rss3::testing::RandomProgramShape{});
  const DevicePlan plan = build_device_plan(program);
  for (std::uint64_t n : kOddSizes) {
    const WorkspaceLayout layout = workspace_layout(plan, n);
    EXPECT_EQ(layout.pitch, padded_words(n));
    EXPECT_GE(layout.message_capacity, alpha_bytes(message_bytes(n, plan.max_ands)));
    const std::size_t row = layout.pitch * 8;
    struct Region {
      std::size_t offset, bytes;
    };
    const std::vector<Region> regions = {{layout.state, 2 * plan.num_device_slots * row},
                                         {layout.in_x, plan.num_inputs * row},
                                         {layout.in_a, plan.num_inputs * row},
                                         {layout.out_x, plan.num_outputs * row},
                                         {layout.out_a, plan.num_outputs * row},
                                         {layout.msg_out[0], layout.message_capacity},
                                         {layout.msg_out[1], layout.message_capacity},
                                         {layout.msg_in[0], layout.message_capacity},
                                         {layout.msg_in[1], layout.message_capacity}};
    std::size_t end = 0;
    for (const Region& r : regions) {
      EXPECT_EQ(r.offset % 256, 0u);
      EXPECT_GE(r.offset, end);  // in order, no overlap
      end = r.offset + r.bytes;
    }
    EXPECT_LE(end, layout.total);
  }
  EXPECT_THROW((void)workspace_layout(plan, std::uint64_t{1} << 62), Error);
}

// Without a usable device (as on the build machines) the API says so and never throws;
// with one, cuda_gpu_tests covers it.
TEST(DeviceHelpers, AvailabilityWithoutDevice) {
  bool available = true;
  EXPECT_NO_THROW(available = cuda_device_available());
  if (available) GTEST_SKIP() << "a CUDA device is present: see cuda_gpu_tests";
  EXPECT_EQ(cuda_device_count(), 0);
  try {
    (void)make_cuda_evaluator(0);
    ADD_FAILURE() << "an evaluator without a device";
  } catch (const Error& e) {
    EXPECT_EQ(e.component(), Component::Protocol);
#if MPC_HAVE_CUDA == 0
    EXPECT_NE(std::string(e.what()).find("built without CUDA"), std::string::npos) << e.what();
#endif
  }
}

}  // namespace
}  // namespace mpc::cuda
