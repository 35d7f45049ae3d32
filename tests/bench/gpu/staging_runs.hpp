// tests/bench/gpu/staging_runs.hpp: the input staging path alone (cuda/staging_pool.hpp and
// cuda/device_upload.hpp) for cuda_bench: pageable host memory -> pinned slots filled by
// host threads -> device, the way the evaluator and the garbler send their inputs up.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mpc::cuda::bench {

// Bytes per second from `host` (pageable, rows of `row_bytes`) to `device_memory` with
// `threads` staging threads and the default slots, best of two runs after a warm-up.
double staged_upload_rate(int device, const std::uint8_t* host, std::uint8_t* device_memory, std::size_t bytes,
                          std::size_t row_bytes, unsigned threads);

}  // namespace mpc::cuda::bench
