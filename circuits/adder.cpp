// Word adders on builder wires. The prefix adder follows J. Sklansky, "Conditional-Sum
// Addition Logic", IRE Trans. Electronic Computers, 1960 (the zero-slack Ladner-Fischer
// network): at level l every position whose bit l is set combines its group with the group
// ending just below its block, so carries into all 32 bits are ready after log2(32) levels.
// Only the carries into bits 1..31 are formed (the carry out of bit 31 is dropped), and a
// group that reaches bit 0 needs no propagate term (the carry-in is 0).
#include "circuits/adder.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace mpc::circuits::detail {

WordGates::WordGates(CircuitBuilder& builder)
    : builder_(builder), zero_(builder.constant(false)), one_(builder.constant(true)) {}

std::uint32_t WordGates::record(std::uint32_t wire, std::uint32_t depth) {
  if (wire >= depth_.size()) depth_.resize(std::max<std::size_t>(wire + 1, depth_.size() * 2), 0);
  depth_[wire] = depth;
  return wire;
}

void WordGates::note_depth(std::uint32_t wire, std::uint32_t depth) { record(wire, depth); }

std::uint32_t WordGates::depth(std::uint32_t wire) const noexcept {
  return wire < depth_.size() ? depth_[wire] : 0;
}

std::uint32_t WordGates::depth(const Word32& word) const noexcept {
  std::uint32_t deepest = 0;
  for (std::uint32_t wire : word) deepest = std::max(deepest, depth(wire));
  return deepest;
}

std::uint32_t WordGates::inv(std::uint32_t a) {
  if (a == zero_) return one_;
  if (a == one_) return zero_;
  return record(builder_.inv(a), depth(a));
}

std::uint32_t WordGates::xor_(std::uint32_t a, std::uint32_t b) {
  if (a == zero_) return b;
  if (b == zero_) return a;
  if (a == one_) return inv(b);
  if (b == one_) return inv(a);
  if (a == b) return zero_;
  return record(builder_.xor_(a, b), std::max(depth(a), depth(b)));
}

std::uint32_t WordGates::and_(std::uint32_t a, std::uint32_t b) {
  if (a == zero_ || b == zero_) return zero_;
  if (a == one_) return b;
  if (b == one_) return a;
  if (a == b) return a;
  return record(builder_.and_(a, b), std::max(depth(a), depth(b)) + 1);
}

Word32 WordGates::constant(std::uint32_t value) const {
  Word32 word{};
  for (std::size_t bit = 0; bit < kWordBits; ++bit) word[bit] = ((value >> bit) & 1U) != 0 ? one_ : zero_;
  return word;
}

Word32 WordGates::xor_words(const Word32& a, const Word32& b) {
  Word32 out{};
  for (std::size_t bit = 0; bit < kWordBits; ++bit) out[bit] = xor_(a[bit], b[bit]);
  return out;
}

Word32 WordGates::and_words(const Word32& a, const Word32& b) {
  Word32 out{};
  for (std::size_t bit = 0; bit < kWordBits; ++bit) out[bit] = and_(a[bit], b[bit]);
  return out;
}

CarrySave WordGates::compress(const Word32& x, const Word32& y, const Word32& z) {
  CarrySave out{};
  out.carry[0] = zero_;
  for (std::size_t bit = 0; bit < kWordBits; ++bit) {
    out.sum[bit] = xor_(xor_(x[bit], y[bit]), z[bit]);
    if (bit + 1 < kWordBits) {
      out.carry[bit + 1] = xor_(x[bit], and_(xor_(x[bit], y[bit]), xor_(x[bit], z[bit])));
    }
  }
  return out;
}

Word32 WordGates::add_gp(const Word32& generate, const Word32& propagate) {
  // After level l, group[i] covers bits from ((i >> (l + 1)) << (l + 1)) up to i.
  constexpr unsigned kPositions = kWordBits - 1;  // carries out of bits 0..30
  Word32 group_generate = generate;
  Word32 group_propagate = propagate;
  for (unsigned level = 0; (1U << level) < kPositions; ++level) {
    for (unsigned i = 0; i < kPositions; ++i) {
      if (((i >> level) & 1U) == 0) continue;
      const unsigned below = ((i >> level) << level) - 1;
      const unsigned start = (i >> (level + 1)) << (level + 1);
      group_generate[i] = xor_(group_generate[i], and_(group_propagate[i], group_generate[below]));
      if (start != 0) group_propagate[i] = and_(group_propagate[i], group_propagate[below]);
    }
  }
  Word32 out{};
  out[0] = propagate[0];
  for (std::size_t bit = 1; bit < kWordBits; ++bit) out[bit] = xor_(propagate[bit], group_generate[bit - 1]);
  return out;
}

Word32 WordGates::add(const Word32& x, const Word32& y) { return add_gp(and_words(x, y), xor_words(x, y)); }

Word32 WordGates::sum(std::vector<Word32> operands) {
  if (operands.empty()) return constant(0);
  struct Entry {
    Word32 word;
    std::uint32_t depth;
  };
  std::vector<Entry> entries;
  entries.reserve(operands.size());
  for (const Word32& word : operands) entries.push_back({word, depth(word)});
  while (entries.size() > 2) {
    // The three earliest operands go to the back (ties keep their order: deterministic).
    std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.depth > b.depth; });
    const Entry z = entries.back();
    entries.pop_back();
    const Entry y = entries.back();
    entries.pop_back();
    const Entry x = entries.back();
    entries.pop_back();
    const CarrySave reduced = compress(x.word, y.word, z.word);
    entries.push_back({reduced.sum, depth(reduced.sum)});
    entries.push_back({reduced.carry, depth(reduced.carry)});
  }
  if (entries.size() == 1) return entries.front().word;
  return add(entries[0].word, entries[1].word);
}

Word32 rotl(const Word32& word, unsigned bits) {
  Word32 out{};
  for (std::size_t bit = 0; bit < kWordBits; ++bit) out[(bit + bits) % kWordBits] = word[bit];
  return out;
}

Word32 word_from_be_bits(std::span<const std::uint32_t> bits) {
  if (bits.size() != kWordBits) throw FormatError(Component::Circuit, "a word needs 32 wires");
  Word32 word{};
  for (std::size_t bit = 0; bit < kWordBits; ++bit) word[bit] = bits[(3 - bit / 8) * 8 + bit % 8];
  return word;
}

void append_be_bits(const Word32& word, std::vector<std::uint32_t>& bits) {
  for (std::size_t byte = 0; byte < 4; ++byte) {
    for (std::size_t bit = 0; bit < 8; ++bit) bits.push_back(word[(3 - byte) * 8 + bit]);
  }
}

}  // namespace mpc::circuits::detail
