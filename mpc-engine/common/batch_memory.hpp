// The allocator policy of a process that evaluates batches: keep freed memory for the next
// batch instead of returning it to the kernel.
//
// An actively checked batch of 8,192 AES-128 blocks allocates several buffers of about 5 MB
// (the AND transcript's planes, the check's streams). glibc serves blocks that large with
// fresh mmap()s, or trims them off the heap when freed, so every batch paid for zeroed pages
// again: page faults and the kernel's clearing took about a sixth of an active batch's CPU.
// A batch of two-party AND material (protocol/auth2) holds its leaky triples, 47 MB for 65,536
// entries, in one block: above what glibc's mmap threshold may be raised to, so no block is
// mmap()ed at all. What is kept stays inside the process, which holds its key shares anyway;
// the largest buffers (the AND transcript and the check's, the leaky triples) are wiped before
// they are freed.
#pragma once

#include <cstddef>

namespace mpc {

// Blocks of every size come from the heap (up to kLargestHeapBlock even should mmap() be
// allowed again), and a heap keeps up to kKeptFreeBytes of free memory at its top.
inline constexpr std::size_t kLargestHeapBlock = std::size_t{32} << 20;  // glibc's upper bound
inline constexpr std::size_t kKeptFreeBytes = std::size_t{256} << 20;

// Sets the policy for the whole process; call before its threads start. Returns false where
// the C library refused it (the process then runs with the library's defaults).
bool keep_freed_batch_memory() noexcept;

}  // namespace mpc
