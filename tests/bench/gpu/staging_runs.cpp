// tests/bench/gpu/staging_runs.cpp: see staging_runs.hpp.
#include "bench/gpu/staging_runs.hpp"

#include <algorithm>
#include <chrono>

#include "cuda/cuda_resources.hpp"
#include "cuda/device_upload.hpp"
#include "cuda/staging_plan.hpp"
#include "cuda/staging_pool.hpp"

namespace mpc::cuda::bench {

double staged_upload_rate(int device, const std::uint8_t* host, std::uint8_t* device_memory, std::size_t bytes,
                          std::size_t row_bytes, unsigned threads) {
  detail::check(cudaSetDevice(device), "cudaSetDevice");
  detail::Stream stream;
  detail::DeviceUpload upload(device, detail::staging_slots_for(threads), detail::kDefaultStagingSlotBytes);
  detail::StagingPool pool(upload, threads);
  detail::StagingPlanner planner(upload.slot_bytes());
  planner.add_rows(0, 0, bytes / row_bytes, 0, row_bytes);
  const detail::StagingPlan plan = planner.finish();
  upload.configure(stream.get(), {{device_memory, row_bytes, 0}});
  double best = 0;
  for (int run = 0; run < 3; ++run) {  // the first one warms up (slots, first copies)
    const auto t0 = std::chrono::steady_clock::now();
    pool.begin(plan, {{host, row_bytes}}, 1);
    pool.finish();  // every slot's copy has read it before its wipe
    detail::check(cudaStreamSynchronize(stream.get()), "staged upload");
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (run > 0) best = std::max(best, static_cast<double>(plan.bytes()) / seconds);
  }
  return best;
}

}  // namespace mpc::cuda::bench
