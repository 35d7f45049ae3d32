// Replicated Boolean secret sharing among three parties.
//
// Araki, Furukawa, Lindell, Nof, Ohara: "High-Throughput Semi-Honest Secure
// Three-Party Computation with an Honest Majority", ACM CCS 2016 (eprint 2016/768).
//
// A bit v is shared with random x0 ^ x1 ^ x2 = 0; party i holds (x_i, a_i) with
// a_i = x_{i-1} ^ v (indices mod 3). Any two parties reconstruct; one sees uniform bits.
// A public constant c is shared as (0, c) at every party.
//
// Here everything is bitsliced: a "row" is one wire for N independent instances,
// instance n at bit (n % 64) of word (n / 64).
#pragma once

#include <cstddef>
#include <cstdint>
#include <array>
#include <span>
#include <vector>

namespace mpc::rss3 {

inline constexpr int kParties = 3;

inline int next_party(int party) { return (party + 1) % kParties; }
inline int previous_party(int party) { return (party + kParties - 1) % kParties; }

inline std::size_t words_for(std::size_t instances) { return (instances + 63) / 64; }

// One party's shares of `rows` bitsliced rows over `instances` instances.
// x and a are row-major: row r occupies words [r * words_per_row, (r + 1) * words_per_row).
// Padding bits beyond `instances` in the last word of a row are unspecified.
struct ShareMatrix {
  std::size_t rows = 0;
  std::size_t instances = 0;
  std::size_t words_per_row = 0;
  std::vector<std::uint64_t> x;
  std::vector<std::uint64_t> a;

  ShareMatrix() = default;
  ShareMatrix(std::size_t rows, std::size_t instances);
  // Zero-filled `rows` x `instances`, reusing the storage already allocated.
  void reset(std::size_t rows, std::size_t instances);
  // The same for a matrix wiped since it was last written (all zero already): a shape it
  // already has is kept without writing a word, another one is zero-filled as by reset().
  // Batches reuse one matrix and wipe it at their end, so this spares a second pass.
  void reset_wiped(std::size_t rows, std::size_t instances);
  std::span<std::uint64_t> x_row(std::size_t row) { return {x.data() + row * words_per_row, words_per_row}; }
  std::span<std::uint64_t> a_row(std::size_t row) { return {a.data() + row * words_per_row, words_per_row}; }
  std::span<const std::uint64_t> x_row(std::size_t row) const { return {x.data() + row * words_per_row, words_per_row}; }
  std::span<const std::uint64_t> a_row(std::size_t row) const { return {a.data() + row * words_per_row, words_per_row}; }
  // Overwrites both components with zeros (used to wipe secret shares).
  void wipe();
};

// One party's share of a byte string (not bitsliced): x and a have equal length.
struct ByteShare {
  std::vector<std::uint8_t> x;
  std::vector<std::uint8_t> a;
  void wipe();
};

// Dealer: splits a secret byte string into three replicated shares with fresh
// randomness from the operating system (libsodium randombytes).
std::array<ByteShare, kParties> share_bytes(std::span<const std::uint8_t> secret);

// Reconstructs from the shares of parties i and i+1 ... or all three; throws
// Error(Component::Protocol) when the three pairwise reconstructions disagree.
std::vector<std::uint8_t> reconstruct_bytes(const std::array<ByteShare, kParties>& shares);

}  // namespace mpc::rss3
