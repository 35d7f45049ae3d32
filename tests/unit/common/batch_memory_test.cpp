#include "common/batch_memory.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace mpc {
namespace {

long minor_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// What one actively checked batch allocates at once: six buffers of 5 MB, each written.
void one_batch() {
  constexpr std::size_t kBuffers = 6, kBytes = std::size_t{5} << 20;
  std::vector<std::unique_ptr<std::vector<std::uint8_t>>> buffers;
  for (std::size_t i = 0; i < kBuffers; ++i) buffers.push_back(std::make_unique<std::vector<std::uint8_t>>(kBytes, 1));
}

// Minor faults of a third run of `batch`, under the policy, after two that warm the heap.
long faults_of_a_third_run(void (*batch)()) {
  EXPECT_TRUE(keep_freed_batch_memory());
  batch();
  batch();
  const long before = minor_faults();
  batch();
  return minor_faults() - before;
}

TEST(BatchMemory, TheNextBatchReusesTheLastOnesPages) {
  // 30 MB of fresh pages would be 7,680 faults; reused ones take none.
  EXPECT_LT(faults_of_a_third_run(one_batch), 100);
}

// A batch of AND material's leaky triples: one block larger than glibc lets the heap serve by
// default.
void one_material_batch() {
  constexpr std::size_t kBytes = std::size_t{48} << 20;
  std::vector<std::uint8_t> leaky(kBytes, 1);
}

TEST(BatchMemory, ABlockAboveTheMmapThresholdIsReusedToo) {
  // 48 MB of fresh pages would be 12,288 faults.
  EXPECT_LT(faults_of_a_third_run(one_material_batch), 100);
}

}  // namespace
}  // namespace mpc
