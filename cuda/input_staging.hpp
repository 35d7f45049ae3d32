// cuda/input_staging.hpp: which input bytes go up in which group (staging_plan.hpp), for
// the evaluator and for the garbler. Shared by the GPU code and its CPU emulation, so the
// tests check the plans the GPU runs.
//
// Plain host C++ (built with or without CUDA).
#pragma once

#include <cstdint>

#include "cuda/device_plan.hpp"
#include "cuda/staging_plan.hpp"

namespace mpc::cuda::detail {

// The evaluator's input shares: group p holds the rows that pass p loads first
// (DevicePlan::input_rows), in runs of consecutive rows, matrix 0 (the x components)
// then matrix 1 (the a components); rss3::ShareMatrix rows of words_for(instances)
// words, moved whole.
StagingPlan evaluator_input_staging(const DevicePlan& plan, std::uint64_t instances, std::uint64_t slot_bytes);

// The garbler's (or garbled-circuit evaluator's) input labels, `num_inputs` rows of
// `instances` labels of `label_bytes`: group c and matrix c are chunk c of `chunk`
// instances (the columns [c * chunk, min((c + 1) * chunk, instances)) of every row).
// Throws Error(Component::Protocol) when a size overflows.
StagingPlan garbling_input_staging(std::uint32_t num_inputs, std::uint64_t instances, std::uint64_t chunk,
                                   std::uint64_t label_bytes, std::uint64_t slot_bytes);

}  // namespace mpc::cuda::detail
