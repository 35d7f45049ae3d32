// Shared helpers for the rss3 unit tests.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "protocol/rss3/correlated_randomness.hpp"
#include "protocol/rss3/evaluator.hpp"

namespace mpc::rss3::test {

inline std::vector<SimdLevel> supported_levels() {
  std::vector<SimdLevel> levels{SimdLevel::Portable};
  const SimdLevel best = best_simd_level();
  if (best == SimdLevel::Avx2 || best == SimdLevel::Avx512) levels.push_back(SimdLevel::Avx2);
  if (best == SimdLevel::Avx512) levels.push_back(SimdLevel::Avx512);
  return levels;
}

inline std::array<PrfKey, 3> random_keys(std::mt19937_64& rng) {
  std::array<PrfKey, 3> keys{};
  for (auto& key : keys)
    for (auto& b : key) b = static_cast<std::uint8_t>(rng());
  return keys;
}

// Pearson chi-square statistic of `counts` against the uniform distribution.
inline double chi_square_uniform(const std::vector<std::uint64_t>& counts) {
  double total = 0;
  for (auto c : counts) total += static_cast<double>(c);
  const double expected = total / static_cast<double>(counts.size());
  double chi = 0;
  for (auto c : counts) chi += (static_cast<double>(c) - expected) * (static_cast<double>(c) - expected) / expected;
  return chi;
}

// Chi-square homogeneity statistic of two histograms (same bins).
inline double chi_square_two_samples(const std::vector<std::uint64_t>& a, const std::vector<std::uint64_t>& b) {
  double na = 0, nb = 0;
  for (auto c : a) na += static_cast<double>(c);
  for (auto c : b) nb += static_cast<double>(c);
  double chi = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double total = static_cast<double>(a[i] + b[i]);
    if (total == 0) continue;
    const double ea = total * na / (na + nb), eb = total * nb / (na + nb);
    chi += (a[i] - ea) * (a[i] - ea) / ea + (b[i] - eb) * (b[i] - eb) / eb;
  }
  return chi;
}

// A generous acceptance bound for a chi-square statistic with `dof` degrees of freedom
// (mean + 8 standard deviations: a false alarm is vanishingly unlikely).
inline double chi_square_bound(double dof) { return dof + 8.0 * std::sqrt(2.0 * dof); }

}  // namespace mpc::rss3::test
