// cuda/input_staging.cpp: see input_staging.hpp.
#include "cuda/input_staging.hpp"

#include <algorithm>
#include <limits>

#include "common/error.hpp"
#include "cuda/device_helpers.hpp"

namespace mpc::cuda::detail {

StagingPlan evaluator_input_staging(const DevicePlan& plan, std::uint64_t instances, std::uint64_t slot_bytes) {
  const std::uint64_t row_bytes = words_for(instances) * sizeof(std::uint64_t);
  StagingPlanner planner(slot_bytes);
  for (std::size_t p = 0; p + 1 < plan.input_row_bounds.size(); ++p) {
    const std::uint32_t begin = plan.input_row_bounds[p], end = plan.input_row_bounds[p + 1];
    for (std::uint32_t component = 0; component < 2; ++component) {
      for (std::uint32_t i = begin; i < end;) {
        std::uint32_t j = i + 1;
        while (j < end && plan.input_rows[j] == plan.input_rows[j - 1] + 1) ++j;
        planner.add_rows(component, plan.input_rows[i], j - i, 0, row_bytes);
        i = j;
      }
    }
    planner.end_group();
  }
  return planner.finish();
}

StagingPlan garbling_input_staging(std::uint32_t num_inputs, std::uint64_t instances, std::uint64_t chunk,
                                   std::uint64_t label_bytes, std::uint64_t slot_bytes) {
  if (chunk == 0 || label_bytes == 0) throw Error(Component::Protocol, "garbling input staging: empty chunks");
  if (instances > std::numeric_limits<std::uint64_t>::max() / label_bytes)
    throw Error(Component::Protocol, "garbling input staging: too many instances");
  if ((instances + chunk - 1) / chunk >= std::numeric_limits<std::uint32_t>::max())
    throw Error(Component::Protocol, "garbling input staging: too many chunks");
  StagingPlanner planner(slot_bytes);
  std::uint32_t matrix = 0;
  for (std::uint64_t first = 0; first < instances; first += chunk, ++matrix) {
    const std::uint64_t count = std::min(chunk, instances - first);
    planner.add_rows(matrix, 0, num_inputs, first * label_bytes, count * label_bytes);
    planner.end_group();
  }
  return planner.finish();
}

}  // namespace mpc::cuda::detail
