// cuda/staging_plan.hpp: how rows of host matrices travel to the device through a few
// fixed-size pinned slots (staging_pool.hpp moves them). Copies from pageable memory run
// at a fraction of the PCIe rate (the driver stages them through its own small pinned
// buffer, one at a time); host threads filling pinned slots in parallel, each slot going
// up by DMA while the next ones fill, reach the pinned rate with bounded pinned memory.
//
// A plan cuts what is to be moved into pieces of at most one slot each. The work comes in
// groups (a group: rows that are needed together, e.g. the input rows a pass loads
// first, or one chunk of a garbling's input labels); a piece never spans two groups, so
// a group is complete as soon as its last piece has gone up.
//
// Plain host C++ (built with or without CUDA), tested on the CPU.
#pragma once

#include <cstdint>
#include <vector>

namespace mpc::cuda::detail {

// `rows` rows of matrix `matrix` from row `row` on, bytes [column, column + width) of each,
// packed in the slot from byte `offset` on (row i of the copy at offset + i * width).
struct StagingCopy {
  std::uint32_t matrix = 0;
  std::uint64_t row = 0;
  std::uint64_t rows = 0;
  std::uint64_t column = 0;
  std::uint64_t width = 0;
  std::uint64_t offset = 0;
};

struct StagingPiece {
  std::uint32_t group = 0;
  std::uint32_t first_copy = 0;  // into StagingPlan::copies
  std::uint32_t copies = 0;
  std::uint64_t bytes = 0;       // of the slot used
};

struct StagingPlan {
  std::uint64_t slot_bytes = 0;
  std::vector<StagingCopy> copies;
  std::vector<StagingPiece> pieces;
  // Group g owns pieces [group_pieces[g], group_pieces[g + 1]) (none for an empty group).
  std::vector<std::uint32_t> group_pieces{0};
  std::uint32_t groups() const noexcept { return static_cast<std::uint32_t>(group_pieces.size() - 1); }
  std::uint64_t bytes() const noexcept;
};

// Builds a plan group by group. Rows narrower than a slot are never cut (a piece holds
// whole rows of each copy); a row wider than a slot is cut by columns across pieces.
class StagingPlanner {
 public:
  // Throws Error(Component::Protocol) when slot_bytes is 0.
  explicit StagingPlanner(std::uint64_t slot_bytes);

  // Appends rows [first_row, first_row + rows) of `matrix`, bytes [column, column + width)
  // of each, to the current group. A run that continues the previous copy (same matrix and
  // columns, next row, same piece) extends it.
  void add_rows(std::uint32_t matrix, std::uint64_t first_row, std::uint64_t rows, std::uint64_t column,
                std::uint64_t width);
  // Ends the current group (which may be empty); the next rows start a new piece.
  void end_group();
  // The plan; rows added since the last end_group() form a last group.
  StagingPlan finish();

 private:
  void emit(std::uint32_t matrix, std::uint64_t row, std::uint64_t rows, std::uint64_t column, std::uint64_t width);
  void close_piece();

  StagingPlan plan_;
  bool open_ = false;       // a piece is being filled
  std::uint64_t used_ = 0;  // bytes of the open piece
  bool group_open_ = false;
};

}  // namespace mpc::cuda::detail
