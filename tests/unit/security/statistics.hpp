// Small statistical tests for the security unit tests: what one server sees must look
// uniform and must not depend on the secret.
//
// Every test returns an upper-tail p-value; the callers reject below kRejectP (divided by
// the number of simultaneous comparisons where they take a maximum). With about forty
// such decisions in the suite, a correct implementation fails with probability below 1e-6.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace mpc::security_test {

// Per-decision false-rejection probability.
inline constexpr double kRejectP = 1e-8;

// Two-sided p-value of a standard normal statistic.
inline double normal_two_sided_p(double z) { return std::erfc(std::fabs(z) / std::sqrt(2.0)); }

// Upper-tail p-value of a chi-square statistic with `dof` degrees of freedom
// (Wilson-Hilferty cube-root approximation; good to a few per cent of the log p for
// dof >= 100, which is all the tests here use).
inline double chi_square_upper_p(double statistic, double dof) {
  const double c = 2.0 / (9.0 * dof);
  const double z = (std::cbrt(statistic / dof) - (1.0 - c)) / std::sqrt(c);
  return 0.5 * std::erfc(z / std::sqrt(2.0));
}

// Ones per bit position over many equally long samples.
class BitCounter {
 public:
  explicit BitCounter(std::size_t bits) : ones_(bits, 0) {}
  void add(std::span<const std::uint8_t> sample) {
    const std::size_t bits = std::min(ones_.size(), sample.size() * 8);
    for (std::size_t i = 0; i < bits; ++i) ones_[i] += (sample[i / 8] >> (i % 8)) & 1u;
    ++samples_;
  }
  // Adds `trials` samples to every position at once, with the given ones per position.
  void add_tallies(std::span<const std::uint64_t> ones, std::uint64_t trials) {
    for (std::size_t i = 0; i < std::min(ones_.size(), ones.size()); ++i) ones_[i] += ones[i];
    samples_ += trials;
  }
  std::size_t positions() const { return ones_.size(); }
  std::uint64_t samples() const { return samples_; }
  std::uint64_t ones(std::size_t position) const { return ones_[position]; }
  std::uint64_t total_ones() const {
    std::uint64_t total = 0;
    for (auto count : ones_) total += count;
    return total;
  }

 private:
  std::vector<std::uint64_t> ones_;
  std::uint64_t samples_ = 0;
};

struct Verdict {
  double p = 1.0;
  std::string detail;
};

// Monobit over everything counted: total ones against half of all bits.
inline Verdict monobit(const BitCounter& counter) {
  const double n = static_cast<double>(counter.samples()) * static_cast<double>(counter.positions());
  const double z = (static_cast<double>(counter.total_ones()) - n / 2) / std::sqrt(n / 4);
  return {normal_two_sided_p(z), "monobit z = " + std::to_string(z) + " over " + std::to_string(n) + " bits"};
}

// Every position is a fair coin: sum of squared z-scores is chi-square(positions).
inline Verdict per_position_chi_square(const BitCounter& counter) {
  const double n = static_cast<double>(counter.samples());
  double statistic = 0;
  for (std::size_t i = 0; i < counter.positions(); ++i) {
    const double z = (static_cast<double>(counter.ones(i)) - n / 2) / std::sqrt(n / 4);
    statistic += z * z;
  }
  const double dof = static_cast<double>(counter.positions());
  return {chi_square_upper_p(statistic, dof),
          "per-position chi-square " + std::to_string(statistic) + " with " + std::to_string(dof) + " dof"};
}

// The worst single position, Bonferroni-corrected: p = positions * p_min (capped at 1).
inline Verdict worst_position(const BitCounter& counter) {
  const double n = static_cast<double>(counter.samples());
  double worst = 0;
  std::size_t where = 0;
  for (std::size_t i = 0; i < counter.positions(); ++i) {
    const double z = std::fabs((static_cast<double>(counter.ones(i)) - n / 2) / std::sqrt(n / 4));
    if (z > worst) {
      worst = z;
      where = i;
    }
  }
  const double p = std::min(1.0, normal_two_sided_p(worst) * static_cast<double>(counter.positions()));
  return {p, "worst position " + std::to_string(where) + " |z| = " + std::to_string(worst)};
}

// Two samples with the same positions and sample counts come from the same distribution:
// per position (c1 - c2)^2 / (c1 + c2) is asymptotically chi-square(1) (McNemar-style
// two-proportion test with pooled variance); positions with too few ones and zeros to
// carry information are skipped.
inline Verdict two_sample_positions(const BitCounter& first, const BitCounter& second) {
  const double n = static_cast<double>(first.samples());
  double statistic = 0;
  double dof = 0;
  for (std::size_t i = 0; i < first.positions(); ++i) {
    const double c1 = static_cast<double>(first.ones(i));
    const double c2 = static_cast<double>(second.ones(i));
    const double pooled = (c1 + c2) / (2 * n);
    const double variance = 2 * n * pooled * (1 - pooled);
    if (variance < 1.0) continue;
    statistic += (c1 - c2) * (c1 - c2) / variance;
    dof += 1;
  }
  if (dof == 0) return {0.0, "no informative position"};
  return {chi_square_upper_p(statistic, dof),
          "two-sample chi-square " + std::to_string(statistic) + " with " + std::to_string(dof) + " dof"};
}

// Byte-value histogram.
class ByteHistogram {
 public:
  void add(std::span<const std::uint8_t> data) {
    for (auto byte : data) ++counts_[byte];
    total_ += data.size();
  }
  std::uint64_t count(int value) const { return counts_[static_cast<std::size_t>(value)]; }
  std::uint64_t total() const { return total_; }

 private:
  std::uint64_t counts_[256] = {};
  std::uint64_t total_ = 0;
};

// Goodness of fit to the uniform distribution on 0..255 (255 dof).
inline Verdict uniform_bytes(const ByteHistogram& histogram) {
  const double expected = static_cast<double>(histogram.total()) / 256;
  double statistic = 0;
  for (int v = 0; v < 256; ++v) {
    const double d = static_cast<double>(histogram.count(v)) - expected;
    statistic += d * d / expected;
  }
  return {chi_square_upper_p(statistic, 255),
          "byte chi-square " + std::to_string(statistic) + " over " + std::to_string(histogram.total()) + " bytes"};
}

// 2 x 256 contingency table: both histograms from one distribution (255 dof).
inline Verdict same_byte_distribution(const ByteHistogram& first, const ByteHistogram& second) {
  const double n1 = static_cast<double>(first.total());
  const double n2 = static_cast<double>(second.total());
  double statistic = 0;
  double dof = -1;
  for (int v = 0; v < 256; ++v) {
    const double column = static_cast<double>(first.count(v) + second.count(v));
    if (column == 0) continue;
    const double e1 = column * n1 / (n1 + n2);
    const double e2 = column * n2 / (n1 + n2);
    const double d1 = static_cast<double>(first.count(v)) - e1;
    const double d2 = static_cast<double>(second.count(v)) - e2;
    statistic += d1 * d1 / e1 + d2 * d2 / e2;
    dof += 1;
  }
  if (dof < 1) return {0.0, "degenerate histograms"};
  return {chi_square_upper_p(statistic, dof),
          "contingency chi-square " + std::to_string(statistic) + " with " + std::to_string(dof) + " dof"};
}

}  // namespace mpc::security_test
