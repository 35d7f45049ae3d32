// tests/unit/cuda/staging_test.cpp: input staging without a GPU. The planner
// (staging_plan.hpp): an example, every byte moved exactly once for random shapes, rows cut
// only when wider than a slot, groups never sharing a piece; the plans of the evaluator
// and the garbler (input_staging.hpp). The pool (staging_pool.hpp) over a copy queue that
// runs as late as a DMA engine may (lazy_upload.hpp): every byte arrives for any number
// of threads and slots, a slot is never refilled before its copy ran (shown by an engine
// that skips the wait), held-back groups wait for allow(), slots are wiped, errors reach
// the owner, abandon() stops the job and the pool runs the next one.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>

#include "circuits/aes.hpp"
#include "common/error.hpp"
#include "cuda/device_helpers.hpp"
#include "cuda/device_plan.hpp"
#include "cuda/input_staging.hpp"
#include "cuda/staging_plan.hpp"
#include "cuda/staging_pool.hpp"
#include "lazy_upload.hpp"

namespace mpc::cuda {
namespace {

using detail::HostRows;
using detail::StagingCopy;
using detail::StagingPiece;
using detail::StagingPlan;
using detail::StagingPlanner;
using detail::StagingPool;
using test::LazyUpload;

// Matrices of recognisable bytes, and zeroed destinations of the same shape.
struct Matrices {
  std::vector<std::vector<std::uint8_t>> source, destination;
  std::uint64_t pitch = 0;

  Matrices(std::size_t count, std::uint64_t rows, std::uint64_t pitch, std::mt19937_64& rng) : pitch(pitch) {
    for (std::size_t m = 0; m < count; ++m) {
      source.emplace_back(rows * pitch);
      for (auto& b : source.back()) b = static_cast<std::uint8_t>(rng() | 1);  // never 0: a missing byte shows
      destination.emplace_back(rows * pitch, 0);
    }
  }
  std::vector<HostRows> sources() const {
    std::vector<HostRows> out;
    for (const auto& m : source) out.push_back({m.data(), pitch});
    return out;
  }
  std::vector<LazyUpload::Destination> destinations() {
    std::vector<LazyUpload::Destination> out;
    for (auto& m : destination) out.push_back({m.data(), pitch, 0});
    return out;
  }
};

struct Request {
  std::uint32_t matrix;
  std::uint64_t row, rows, column, width;
};

// Checks the plan's shape and applies it (slot by slot, as the pool and the DMA would) to
// `m`; returns how often each destination byte was written.
std::vector<std::vector<int>> apply(const StagingPlan& plan, Matrices& m) {
  std::vector<std::vector<int>> written;
  for (const auto& d : m.destination) written.emplace_back(d.size(), 0);
  std::vector<std::uint8_t> slot(plan.slot_bytes);
  EXPECT_EQ(plan.group_pieces.front(), 0u);
  EXPECT_EQ(plan.group_pieces.back(), plan.pieces.size());
  for (std::uint32_t g = 0; g < plan.groups(); ++g) {
    EXPECT_LE(plan.group_pieces[g], plan.group_pieces[g + 1]);
    for (std::uint32_t i = plan.group_pieces[g]; i < plan.group_pieces[g + 1]; ++i) EXPECT_EQ(plan.pieces[i].group, g);
  }
  for (const StagingPiece& piece : plan.pieces) {
    EXPECT_LE(piece.bytes, plan.slot_bytes);
    EXPECT_GT(piece.copies, 0u);
    std::uint64_t at = 0;  // copies are packed in order
    for (std::uint32_t c = piece.first_copy; c < piece.first_copy + piece.copies; ++c) {
      const StagingCopy& copy = plan.copies[c];
      EXPECT_EQ(copy.offset, at);
      at += copy.rows * copy.width;
      for (std::uint64_t r = 0; r < copy.rows; ++r)
        std::memcpy(slot.data() + copy.offset + r * copy.width,
                    m.source[copy.matrix].data() + (copy.row + r) * m.pitch + copy.column, copy.width);
    }
    EXPECT_EQ(at, piece.bytes);
    for (std::uint32_t c = piece.first_copy; c < piece.first_copy + piece.copies; ++c) {
      const StagingCopy& copy = plan.copies[c];
      for (std::uint64_t r = 0; r < copy.rows; ++r) {
        std::memcpy(m.destination[copy.matrix].data() + (copy.row + r) * m.pitch + copy.column,
                    slot.data() + copy.offset + r * copy.width, copy.width);
        for (std::uint64_t b = 0; b < copy.width; ++b) ++written[copy.matrix][(copy.row + r) * m.pitch + copy.column + b];
      }
    }
  }
  return written;
}

TEST(StagingPlan, Example) {
  StagingPlanner planner(100);
  planner.add_rows(0, 0, 7, 0, 30);  // three rows of 30 bytes per slot of 100
  planner.end_group();
  planner.add_rows(1, 10, 2, 5, 30);
  planner.add_rows(1, 12, 1, 5, 30);  // continues the previous copy: merged
  const StagingPlan plan = planner.finish();
  ASSERT_EQ(plan.groups(), 2u);
  ASSERT_EQ(plan.pieces.size(), 4u);
  EXPECT_EQ(plan.group_pieces, (std::vector<std::uint32_t>{0, 3, 4}));
  const std::uint64_t bytes[] = {90, 90, 30, 90};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(plan.pieces[i].bytes, bytes[i]) << i;
    EXPECT_EQ(plan.pieces[i].copies, 1u) << i;
  }
  ASSERT_EQ(plan.copies.size(), 4u);
  EXPECT_EQ(plan.copies[1].row, 3u);
  EXPECT_EQ(plan.copies[1].rows, 3u);
  EXPECT_EQ(plan.copies[3].matrix, 1u);
  EXPECT_EQ(plan.copies[3].row, 10u);
  EXPECT_EQ(plan.copies[3].rows, 3u);
  EXPECT_EQ(plan.copies[3].column, 5u);
  EXPECT_EQ(plan.bytes(), 300u);
}

TEST(StagingPlan, WideRowsAreCutByColumnsAndFillEveryPiece) {
  StagingPlanner planner(64);
  planner.add_rows(0, 0, 2, 8, 150);
  const StagingPlan plan = planner.finish();
  // 300 bytes in pieces of 64: four full pieces and one of 44.
  ASSERT_EQ(plan.pieces.size(), 5u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(plan.pieces[i].bytes, 64u);
  EXPECT_EQ(plan.pieces[4].bytes, 44u);
  EXPECT_EQ(plan.copies[0].column, 8u);
  EXPECT_EQ(plan.copies[0].width, 64u);
}

TEST(StagingPlan, EmptyGroupsAndBadSlots) {
  StagingPlanner planner(16);
  planner.end_group();
  planner.add_rows(0, 0, 0, 0, 8);  // nothing
  planner.end_group();
  planner.add_rows(0, 0, 1, 0, 8);
  const StagingPlan plan = planner.finish();
  EXPECT_EQ(plan.group_pieces, (std::vector<std::uint32_t>{0, 0, 0, 1}));
  EXPECT_THROW((void)StagingPlanner{0}, Error);
}

// Random groups of random row runs: every requested byte moved exactly once, nothing
// else; rows no wider than a slot never cut.
TEST(StagingPlan, MovesEveryRequestedByteOnce) {
  std::mt19937_64 rng(61);
  for (int trial = 0; trial < 200; ++trial) {
    const std::uint64_t pitch = 1 + rng() % 300;
    const std::uint64_t rows = 1 + rng() % 40;
    const std::uint64_t slot = 1 + rng() % 700;
    Matrices m(3, rows, pitch, rng);
    StagingPlanner planner(slot);
    std::vector<std::vector<int>> want;
    for (const auto& d : m.destination) want.emplace_back(d.size(), 0);
    std::vector<Request> requests;
    for (std::uint32_t matrix = 0; matrix < 3; ++matrix) {
      // Disjoint runs of each matrix, in random groups.
      for (std::uint64_t row = 0; row < rows;) {
        const std::uint64_t run = 1 + rng() % std::min<std::uint64_t>(5, rows - row);
        if (rng() % 3 != 0) {
          const std::uint64_t column = rng() % pitch;
          const std::uint64_t width = 1 + rng() % (pitch - column);
          requests.push_back({matrix, row, run, column, width});
        }
        row += run;
      }
    }
    std::shuffle(requests.begin(), requests.end(), rng);
    std::vector<Request> added;
    for (const Request& q : requests) {
      planner.add_rows(q.matrix, q.row, q.rows, q.column, q.width);
      for (std::uint64_t r = q.row; r < q.row + q.rows; ++r)
        for (std::uint64_t b = q.column; b < q.column + q.width; ++b) ++want[q.matrix][r * pitch + b];
      if (rng() % 4 == 0) planner.end_group();
    }
    const StagingPlan plan = planner.finish();
    const auto written = apply(plan, m);
    for (std::size_t k = 0; k < 3; ++k) {
      EXPECT_EQ(written[k], want[k]) << "trial " << trial << ", matrix " << k;
      for (std::size_t b = 0; b < m.source[k].size(); ++b)
        if (want[k][b] != 0) {
          ASSERT_EQ(m.destination[k][b], m.source[k][b]) << "trial " << trial;
        }
    }
    for (const StagingCopy& copy : plan.copies) {
      // Requests of one matrix cover disjoint rows (a copy may merge adjacent ones).
      for (std::uint64_t row = copy.row; row < copy.row + copy.rows; ++row) {
        const auto q = std::find_if(requests.begin(), requests.end(), [&](const Request& r) {
          return r.matrix == copy.matrix && row >= r.row && row < r.row + r.rows;
        });
        ASSERT_NE(q, requests.end());
        if (q->width <= slot) {
          EXPECT_EQ(copy.column, q->column) << "a row no wider than a slot was cut";
          EXPECT_EQ(copy.width, q->width) << "a row no wider than a slot was cut";
        }
      }
    }
  }
}

TEST(InputStaging, EvaluatorGroupsArePassesOfWholeRows) {
  const circuits::Program program = circuits::compile(circuits::build_aes_circuit(
      circuits::AesKeySize::Aes128, circuits::AesDirection::Encrypt, circuits::SboxVariant::And32));
  const detail::DevicePlan plan = detail::build_device_plan(program);
  const std::uint64_t n = 4097, row_bytes = detail::words_for(n) * 8;
  const StagingPlan staging = detail::evaluator_input_staging(plan, n, 8 * row_bytes + 5);
  ASSERT_EQ(staging.groups(), plan.passes.size());
  for (std::uint32_t g = 0; g < staging.groups(); ++g) {
    std::multiset<std::pair<std::uint32_t, std::uint64_t>> got, want;
    for (std::uint32_t i = plan.input_row_bounds[g]; i < plan.input_row_bounds[g + 1]; ++i)
      for (std::uint32_t m = 0; m < 2; ++m) want.insert({m, plan.input_rows[i]});
    for (std::uint32_t i = staging.group_pieces[g]; i < staging.group_pieces[g + 1]; ++i) {
      EXPECT_LE(staging.pieces[i].bytes, 8 * row_bytes) << "whole rows only";
      for (std::uint32_t c = staging.pieces[i].first_copy; c < staging.pieces[i].first_copy + staging.pieces[i].copies;
           ++c) {
        const StagingCopy& copy = staging.copies[c];
        EXPECT_EQ(copy.column, 0u);
        EXPECT_EQ(copy.width, row_bytes);
        for (std::uint64_t r = 0; r < copy.rows; ++r) got.insert({copy.matrix, copy.row + r});
      }
    }
    EXPECT_EQ(got, want) << "pass " << g;
  }
  EXPECT_EQ(staging.bytes(), 2 * row_bytes * plan.input_rows.size());
}

TEST(InputStaging, GarblingGroupsAreChunks) {
  const std::uint64_t instances = 100, chunk = 32;
  const StagingPlan staging = detail::garbling_input_staging(7, instances, chunk, 16, 1000);
  ASSERT_EQ(staging.groups(), 4u);
  for (const StagingPiece& piece : staging.pieces) {
    const std::uint64_t c = piece.group;  // group c: chunk c, matrix c, its columns only
    for (std::uint32_t i = piece.first_copy; i < piece.first_copy + piece.copies; ++i) {
      const StagingCopy& copy = staging.copies[i];
      EXPECT_EQ(copy.matrix, c);
      EXPECT_GE(copy.column, c * chunk * 16);
      EXPECT_LE(copy.column + copy.width, std::min(instances, (c + 1) * chunk) * 16);
    }
  }
  EXPECT_EQ(staging.bytes(), 7 * instances * 16);
  EXPECT_THROW((void)detail::garbling_input_staging(1, 10, 0, 16, 100), Error);
}

// A random plan over three matrices, for the pool tests.
StagingPlan random_plan(std::mt19937_64& rng, std::uint64_t rows, std::uint64_t pitch, std::uint64_t slot,
                        std::uint32_t groups) {
  StagingPlanner planner(slot);
  for (std::uint32_t g = 0; g < groups; ++g) {
    const std::uint64_t first = rows * g / groups, end = rows * (g + 1) / groups;
    for (std::uint32_t m = 0; m < 3; ++m)
      if (end > first && rng() % 4 != 0) planner.add_rows(m, first, end - first, 0, pitch);
    planner.end_group();
  }
  return planner.finish();
}

// Rows [0, end) of every matrix that the plan moves in groups <= g arrived.
bool arrived_through(const StagingPlan& plan, const Matrices& m, std::uint32_t g) {
  for (std::uint32_t i = 0; i < plan.group_pieces[g + 1]; ++i)
    for (std::uint32_t c = plan.pieces[i].first_copy; c < plan.pieces[i].first_copy + plan.pieces[i].copies; ++c) {
      const StagingCopy& copy = plan.copies[c];
      for (std::uint64_t r = copy.row; r < copy.row + copy.rows; ++r)
        if (!std::equal(m.source[copy.matrix].begin() + static_cast<std::ptrdiff_t>(r * m.pitch + copy.column),
                        m.source[copy.matrix].begin() + static_cast<std::ptrdiff_t>(r * m.pitch + copy.column + copy.width),
                        m.destination[copy.matrix].begin() + static_cast<std::ptrdiff_t>(r * m.pitch + copy.column)))
          return false;
    }
  return true;
}

bool slots_zero(LazyUpload& engine) {
  for (std::size_t s = 0; s < engine.slots(); ++s)
    if (std::any_of(engine.slot(s), engine.slot(s) + engine.slot_bytes(), [](std::uint8_t b) { return b != 0; }))
      return false;
  return true;
}

TEST(StagingPool, EveryGroupArrivesBeforeItsWaitReturns) {
  std::mt19937_64 rng(62);
  for (unsigned threads : {1u, 2u, 4u}) {
    for (std::size_t slots : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{10}}) {
      const std::uint64_t rows = 60, pitch = 24;
      Matrices m(3, rows, pitch, rng);
      // Slots a whole number of rows wide: the pool's slots are filled to the byte.
      LazyUpload engine(slots, 3 * pitch);
      StagingPool pool(engine, threads);
      EXPECT_EQ(pool.threads(), threads);
      for (int job = 0; job < 3; ++job) {  // the pool runs one job after another
        for (auto& d : m.destination) std::fill(d.begin(), d.end(), 0);
        const StagingPlan plan = random_plan(rng, rows, pitch, 3 * pitch, 7);
        engine.configure(m.destinations());
        pool.begin(plan, m.sources(), plan.groups());
        for (std::uint32_t g = 0; g < plan.groups(); ++g) {
          pool.wait_group(g);
          if (plan.group_pieces[g] != plan.group_pieces[g + 1]) {
            ASSERT_TRUE(engine.complete_group(g));
          }
          ASSERT_TRUE(arrived_through(plan, m, g)) << threads << " threads, " << slots << " slots, group " << g;
        }
        pool.finish();
        EXPECT_EQ(engine.violations(), "");
        EXPECT_TRUE(slots_zero(engine)) << "slots not wiped";
      }
    }
  }
}

// The same with an engine that never waits for its copies: the pool then refills slots
// whose copy has not run, and the bytes come out wrong (the test above can fail).
class NoWaitEngine final : public detail::StagingEngine {
 public:
  explicit NoWaitEngine(LazyUpload& inner) : inner_(inner) {}
  std::size_t slots() const noexcept override { return inner_.slots(); }
  std::uint64_t slot_bytes() const noexcept override { return inner_.slot_bytes(); }
  std::uint8_t* slot(std::size_t i) noexcept override { return inner_.slot(i); }
  void open_group(std::uint32_t g) override { inner_.open_group(g); }
  void issue(const StagingPlan& plan, std::uint32_t piece, std::size_t i) override { inner_.issue(plan, piece, i); }
  void close_group(std::uint32_t g) override { inner_.close_group(g); }
  void wait_slot(std::size_t) override {}

 private:
  LazyUpload& inner_;
};

TEST(StagingPool, SkippedSlotWaitsCorruptTheCopies) {
  std::mt19937_64 rng(63);
  const std::uint64_t rows = 30, pitch = 16;
  Matrices m(3, rows, pitch, rng);
  LazyUpload lazy(2, pitch);
  NoWaitEngine engine(lazy);
  StagingPool pool(engine, 1);
  StagingPlanner planner(pitch);
  planner.add_rows(0, 0, rows, 0, pitch);
  const StagingPlan plan = planner.finish();
  lazy.configure(m.destinations());
  pool.begin(plan, m.sources(), 1);
  pool.wait_group(0);
  pool.finish();  // wipes the slots before the lazy copies ran: they copy zeros and late rows
  ASSERT_TRUE(lazy.complete_group(0));
  EXPECT_FALSE(arrived_through(plan, m, 0));
}

TEST(StagingPool, HeldBackGroupsWaitForAllow) {
  std::mt19937_64 rng(64);
  const std::uint64_t rows = 40, pitch = 8;
  Matrices m(3, rows, pitch, rng);
  LazyUpload engine(3, 2 * pitch);
  std::mutex mutex;
  std::vector<std::uint32_t> opened;
  std::uint32_t allowed = 1;
  std::string early;
  engine.configure(m.destinations(), [&](std::uint32_t g) {
    std::lock_guard<std::mutex> lock(mutex);
    opened.push_back(g);
    if (g >= allowed) early += "group " + std::to_string(g) + " opened early\n";
  });
  StagingPool pool(engine, 3);
  StagingPlanner planner(2 * pitch);
  for (std::uint32_t g = 0; g < 5; ++g) {
    planner.add_rows(0, 8 * g, 8, 0, pitch);
    planner.end_group();
  }
  const StagingPlan plan = planner.finish();
  pool.begin(plan, m.sources(), 1);
  pool.wait_group(0);
  EXPECT_THROW(pool.wait_group(3), Error);  // not allowed: would wait forever
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  {
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_EQ(opened, (std::vector<std::uint32_t>{0}));
    allowed = 3;
  }
  pool.allow(3);
  pool.wait_group(2);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  {
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_EQ(opened, (std::vector<std::uint32_t>{0, 1, 2}));
    allowed = 5;
  }
  pool.allow(5);
  pool.finish();
  ASSERT_TRUE(engine.complete_group(4));
  EXPECT_TRUE(arrived_through(plan, m, 4));
  EXPECT_EQ(early, "");
  EXPECT_EQ(engine.violations(), "");
}

// An engine whose issue() fails at one piece.
class FailingEngine final : public detail::StagingEngine {
 public:
  FailingEngine(LazyUpload& inner, std::uint32_t fail_at) : fail_at_(fail_at), inner_(inner) {}
  std::size_t slots() const noexcept override { return inner_.slots(); }
  std::uint64_t slot_bytes() const noexcept override { return inner_.slot_bytes(); }
  std::uint8_t* slot(std::size_t i) noexcept override { return inner_.slot(i); }
  void open_group(std::uint32_t g) override { inner_.open_group(g); }
  void issue(const StagingPlan& plan, std::uint32_t piece, std::size_t i) override {
    if (piece == fail_at_) throw Error(Component::Protocol, "CUDA: staged upload: injected");
    inner_.issue(plan, piece, i);
  }
  void close_group(std::uint32_t g) override { inner_.close_group(g); }
  void wait_slot(std::size_t i) override { inner_.wait_slot(i); }
  std::uint32_t fail_at_;

 private:
  LazyUpload& inner_;
};

TEST(StagingPool, ErrorsReachTheOwnerAndSlotsAreWiped) {
  std::mt19937_64 rng(65);
  const std::uint64_t rows = 40, pitch = 8;
  Matrices m(3, rows, pitch, rng);
  LazyUpload lazy(3, pitch);
  FailingEngine engine(lazy, 5);
  StagingPool pool(engine, 2);
  StagingPlanner planner(pitch);
  for (std::uint32_t g = 0; g < 4; ++g) {
    planner.add_rows(1, 10 * g, 10, 0, pitch);
    planner.end_group();
  }
  const StagingPlan plan = planner.finish();  // 10 pieces per group; piece 5 fails
  lazy.configure(m.destinations());
  pool.begin(plan, m.sources(), plan.groups());
  try {
    pool.wait_group(1);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("injected"), std::string::npos) << e.what();
  }
  EXPECT_THROW(pool.finish(), Error);
  EXPECT_TRUE(slots_zero(lazy)) << "slots not wiped after the failure";
  // The pool takes the next job.
  engine.fail_at_ = ~0u;
  for (auto& d : m.destination) std::fill(d.begin(), d.end(), 0);
  lazy.configure(m.destinations());
  pool.begin(plan, m.sources(), plan.groups());
  pool.wait_group(3);
  pool.finish();
  ASSERT_TRUE(lazy.complete_group(3));
  EXPECT_TRUE(arrived_through(plan, m, 3));
}

TEST(StagingPool, AbandonStopsTheJob) {
  std::mt19937_64 rng(66);
  const std::uint64_t rows = 4000, pitch = 64;
  Matrices m(3, rows, pitch, rng);
  LazyUpload engine(4, pitch);
  StagingPool pool(engine, 3);
  StagingPlanner planner(pitch);
  planner.add_rows(2, 0, rows / 2, 0, pitch);
  planner.end_group();
  planner.add_rows(2, rows / 2, rows / 2, 0, pitch);  // held back: workers wait on it
  const StagingPlan plan = planner.finish();
  engine.configure(m.destinations());
  pool.begin(plan, m.sources(), 1);
  pool.abandon();
  const std::uint64_t issued = engine.issues();
  EXPECT_LE(issued, rows / 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(engine.issues(), issued) << "a piece was issued after abandon() returned";
  EXPECT_TRUE(slots_zero(engine));
  EXPECT_THROW(pool.wait_group(0), Error);  // no job
  pool.abandon();                           // no job: nothing happens
  engine.configure(m.destinations());
  pool.begin(plan, m.sources(), 2);
  EXPECT_THROW(pool.begin(plan, m.sources(), 2), Error);  // one job at a time
  pool.finish();
  EXPECT_EQ(engine.violations(), "");
}

TEST(StagingPool, RejectsPlansThatDoNotFit) {
  std::mt19937_64 rng(67);
  Matrices m(1, 4, 8, rng);
  LazyUpload engine(2, 8);
  StagingPool pool(engine, 1);
  StagingPlanner wide(16);
  wide.add_rows(0, 0, 2, 0, 8);
  const StagingPlan too_wide = wide.finish();
  EXPECT_THROW(pool.begin(too_wide, m.sources(), 1), Error);
  StagingPlanner other(8);
  other.add_rows(3, 0, 1, 0, 8);  // matrix 3: no such source
  const StagingPlan no_source = other.finish();
  EXPECT_THROW(pool.begin(no_source, m.sources(), 1), Error);
}

}  // namespace
}  // namespace mpc::cuda
