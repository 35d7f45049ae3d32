#include "common/batch_memory.hpp"

#include <malloc.h>

namespace mpc {

bool keep_freed_batch_memory() noexcept {
  const bool heap = ::mallopt(M_MMAP_THRESHOLD, static_cast<int>(kLargestHeapBlock)) == 1;
  const bool kept = ::mallopt(M_TRIM_THRESHOLD, static_cast<int>(kKeptFreeBytes)) == 1;
  const bool no_mmap = ::mallopt(M_MMAP_MAX, 0) == 1;
  return heap && kept && no_mmap;
}

}  // namespace mpc
