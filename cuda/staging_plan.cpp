// cuda/staging_plan.cpp: pieces of a staging plan (see staging_plan.hpp).
#include "cuda/staging_plan.hpp"

#include <algorithm>
#include <limits>

#include "common/error.hpp"

namespace mpc::cuda::detail {

std::uint64_t StagingPlan::bytes() const noexcept {
  std::uint64_t total = 0;
  for (const StagingPiece& piece : pieces) total += piece.bytes;
  return total;
}

StagingPlanner::StagingPlanner(std::uint64_t slot_bytes) {
  if (slot_bytes == 0) throw Error(Component::Protocol, "staging slots of zero bytes");
  plan_.slot_bytes = slot_bytes;
}

void StagingPlanner::add_rows(std::uint32_t matrix, std::uint64_t first_row, std::uint64_t rows, std::uint64_t column,
                              std::uint64_t width) {
  if (rows == 0 || width == 0) return;
  group_open_ = true;
  const std::uint64_t slot = plan_.slot_bytes;
  if (width <= slot) {
    while (rows > 0) {
      const std::uint64_t room = (open_ ? slot - used_ : slot) / width;
      if (room == 0) {
        close_piece();
        continue;
      }
      const std::uint64_t k = std::min(room, rows);
      emit(matrix, first_row, k, column, width);
      first_row += k;
      rows -= k;
    }
    return;
  }
  // Rows wider than a slot: each row in slot-sized column ranges, filling every piece.
  for (std::uint64_t r = 0; r < rows; ++r) {
    for (std::uint64_t c = column; c < column + width;) {
      if (open_ && used_ == slot) close_piece();
      const std::uint64_t w = std::min(column + width - c, open_ ? slot - used_ : slot);
      emit(matrix, first_row + r, 1, c, w);
      c += w;
    }
  }
}

void StagingPlanner::emit(std::uint32_t matrix, std::uint64_t row, std::uint64_t rows, std::uint64_t column,
                          std::uint64_t width) {
  if (!open_) {
    if (plan_.pieces.size() >= std::numeric_limits<std::uint32_t>::max())
      throw Error(Component::Protocol, "staging plan: too many pieces");
    StagingPiece piece;
    piece.group = plan_.groups();
    piece.first_copy = static_cast<std::uint32_t>(plan_.copies.size());
    plan_.pieces.push_back(piece);
    open_ = true;
    used_ = 0;
  }
  StagingPiece& piece = plan_.pieces.back();
  if (piece.copies != 0) {
    StagingCopy& last = plan_.copies.back();
    if (last.matrix == matrix && last.column == column && last.width == width && last.row + last.rows == row &&
        last.offset + last.rows * last.width == used_) {
      last.rows += rows;
      used_ += rows * width;
      return;
    }
  }
  if (plan_.copies.size() >= std::numeric_limits<std::uint32_t>::max())
    throw Error(Component::Protocol, "staging plan: too many copies");
  plan_.copies.push_back(StagingCopy{matrix, row, rows, column, width, used_});
  piece.copies += 1;
  used_ += rows * width;
}

void StagingPlanner::close_piece() {
  if (!open_) return;
  plan_.pieces.back().bytes = used_;
  open_ = false;
}

void StagingPlanner::end_group() {
  close_piece();
  if (plan_.groups() >= std::numeric_limits<std::uint32_t>::max() - 1)
    throw Error(Component::Protocol, "staging plan: too many groups");
  plan_.group_pieces.push_back(static_cast<std::uint32_t>(plan_.pieces.size()));
  group_open_ = false;
}

StagingPlan StagingPlanner::finish() {
  if (group_open_) end_group();
  close_piece();
  StagingPlan plan = std::move(plan_);
  plan_ = StagingPlan{};
  plan_.slot_bytes = plan.slot_bytes;
  open_ = false;
  used_ = 0;
  return plan;
}

}  // namespace mpc::cuda::detail
