// Word adders on builder wires. The prefix adder follows J. Sklansky, "Conditional-Sum
// Addition Logic", IRE Trans. Electronic Computers, 1960 (the zero-slack Ladner-Fischer
// network): at level l every position whose bit l is set combines its group with the group
// ending just below its block, so carries into all 32 bits are ready after log2(32) levels.
// Only the carries into bits 1..31 are formed (the carry out of bit 31 is dropped), and a
// group that reaches bit 0 needs no propagate term (the carry-in is 0).
#include "circuits/adder.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "common/error.hpp"

namespace mpc::circuits::detail {

WordGates::WordGates(CircuitBuilder& builder, AdderKind adder)
    : builder_(builder), adder_(adder), zero_(builder.constant(false)), one_(builder.constant(true)) {}

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

namespace {

template <std::size_t Bits>
using WordOf = std::array<std::uint32_t, Bits>;

template <std::size_t Bits>
std::uint32_t deepest(const WordGates& gates, const WordOf<Bits>& word) {
  std::uint32_t out = 0;
  for (std::uint32_t wire : word) out = std::max(out, gates.depth(wire));
  return out;
}

template <std::size_t Bits>
WordOf<Bits> constant_word(const WordGates& gates, std::uint64_t value) {
  WordOf<Bits> word{};
  for (std::size_t bit = 0; bit < Bits; ++bit) word[bit] = ((value >> bit) & 1U) != 0 ? gates.one() : gates.zero();
  return word;
}

template <std::size_t Bits>
WordOf<Bits> xor_word(WordGates& gates, const WordOf<Bits>& a, const WordOf<Bits>& b) {
  WordOf<Bits> out{};
  for (std::size_t bit = 0; bit < Bits; ++bit) out[bit] = gates.xor_(a[bit], b[bit]);
  return out;
}

template <std::size_t Bits>
WordOf<Bits> and_word(WordGates& gates, const WordOf<Bits>& a, const WordOf<Bits>& b) {
  WordOf<Bits> out{};
  for (std::size_t bit = 0; bit < Bits; ++bit) out[bit] = gates.and_(a[bit], b[bit]);
  return out;
}

template <std::size_t Bits>
CarrySaveOf<Bits> compress_words(WordGates& gates, const WordOf<Bits>& x, const WordOf<Bits>& y,
                                 const WordOf<Bits>& z) {
  CarrySaveOf<Bits> out{};
  out.carry[0] = gates.zero();
  for (std::size_t bit = 0; bit < Bits; ++bit) {
    // x ^ y serves the sum and the carry: the builder does not merge equal gates, and every
    // XOR is a pass over the labels of each garbling.
    const std::uint32_t x_xor_y = gates.xor_(x[bit], y[bit]);
    out.sum[bit] = gates.xor_(x_xor_y, z[bit]);
    if (bit + 1 < Bits) out.carry[bit + 1] = gates.xor_(x[bit], gates.and_(x_xor_y, gates.xor_(x[bit], z[bit])));
  }
  return out;
}

// The prefix network on generate/propagate bits (generate[i] & propagate[i] == 0).
template <std::size_t Bits>
WordOf<Bits> add_gp(WordGates& gates, const WordOf<Bits>& generate, const WordOf<Bits>& propagate) {
  // After level l, group[i] covers bits from ((i >> (l + 1)) << (l + 1)) up to i.
  constexpr unsigned kPositions = Bits - 1;  // carries out of bits 0..Bits-2
  WordOf<Bits> group_generate = generate;
  WordOf<Bits> group_propagate = propagate;
  for (unsigned level = 0; (1U << level) < kPositions; ++level) {
    for (unsigned i = 0; i < kPositions; ++i) {
      if (((i >> level) & 1U) == 0) continue;
      const unsigned below = ((i >> level) << level) - 1;
      const unsigned start = (i >> (level + 1)) << (level + 1);
      group_generate[i] = gates.xor_(group_generate[i], gates.and_(group_propagate[i], group_generate[below]));
      if (start != 0) group_propagate[i] = gates.and_(group_propagate[i], group_propagate[below]);
    }
  }
  WordOf<Bits> out{};
  out[0] = propagate[0];
  for (std::size_t bit = 1; bit < Bits; ++bit) out[bit] = gates.xor_(propagate[bit], group_generate[bit - 1]);
  return out;
}

// carry' = maj(x, y, carry) with one AND; the carry out of the top bit is dropped.
template <std::size_t Bits>
WordOf<Bits> ripple_add(WordGates& gates, const WordOf<Bits>& x, const WordOf<Bits>& y) {
  WordOf<Bits> out{};
  std::uint32_t carry = gates.zero();
  for (std::size_t bit = 0; bit < Bits; ++bit) {
    const std::uint32_t x_or_y = gates.xor_(x[bit], y[bit]);
    out[bit] = gates.xor_(x_or_y, carry);
    if (bit + 1 < Bits) carry = gates.xor_(x[bit], gates.and_(x_or_y, gates.xor_(x[bit], carry)));
  }
  return out;
}

template <std::size_t Bits>
WordOf<Bits> add_words(WordGates& gates, const WordOf<Bits>& x, const WordOf<Bits>& y) {
  if (gates.adder() == AdderKind::Ripple) return ripple_add<Bits>(gates, x, y);
  return add_gp<Bits>(gates, and_word<Bits>(gates, x, y), xor_word<Bits>(gates, x, y));
}

template <std::size_t Bits>
WordOf<Bits> sum_words(WordGates& gates, std::vector<WordOf<Bits>> operands) {
  if (operands.empty()) return constant_word<Bits>(gates, 0);
  struct Entry {
    WordOf<Bits> word;
    std::uint32_t depth;
  };
  std::vector<Entry> entries;
  entries.reserve(operands.size());
  for (const WordOf<Bits>& word : operands) entries.push_back({word, deepest<Bits>(gates, word)});
  while (entries.size() > 2) {
    // The three earliest operands go to the back (ties keep their order: deterministic).
    std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.depth > b.depth; });
    const Entry z = entries.back();
    entries.pop_back();
    const Entry y = entries.back();
    entries.pop_back();
    const Entry x = entries.back();
    entries.pop_back();
    const CarrySaveOf<Bits> reduced = compress_words<Bits>(gates, x.word, y.word, z.word);
    entries.push_back({reduced.sum, deepest<Bits>(gates, reduced.sum)});
    entries.push_back({reduced.carry, deepest<Bits>(gates, reduced.carry)});
  }
  if (entries.size() == 1) return entries.front().word;
  return add_words<Bits>(gates, entries[0].word, entries[1].word);
}

template <std::size_t Bits>
WordOf<Bits> rotate_left(const WordOf<Bits>& word, unsigned bits) {
  WordOf<Bits> out{};
  for (std::size_t bit = 0; bit < Bits; ++bit) out[(bit + bits) % Bits] = word[bit];
  return out;
}

template <std::size_t Bits>
WordOf<Bits> word_from_be(std::span<const std::uint32_t> bits) {
  if (bits.size() != Bits) throw FormatError(Component::Circuit, "a word needs " + std::to_string(Bits) + " wires");
  constexpr std::size_t kLastByte = Bits / 8 - 1;
  WordOf<Bits> word{};
  for (std::size_t bit = 0; bit < Bits; ++bit) word[bit] = bits[(kLastByte - bit / 8) * 8 + bit % 8];
  return word;
}

template <std::size_t Bits>
void append_be(const WordOf<Bits>& word, std::vector<std::uint32_t>& bits) {
  constexpr std::size_t kLastByte = Bits / 8 - 1;
  for (std::size_t byte = 0; byte <= kLastByte; ++byte) {
    for (std::size_t bit = 0; bit < 8; ++bit) bits.push_back(word[(kLastByte - byte) * 8 + bit]);
  }
}

}  // namespace

Word32 WordGates::constant(std::uint32_t value) const { return constant_word<kWordBits>(*this, value); }
Word32 WordGates::xor_words(const Word32& a, const Word32& b) { return xor_word<kWordBits>(*this, a, b); }
Word32 WordGates::and_words(const Word32& a, const Word32& b) { return and_word<kWordBits>(*this, a, b); }
CarrySave WordGates::compress(const Word32& x, const Word32& y, const Word32& z) {
  return compress_words<kWordBits>(*this, x, y, z);
}
Word32 WordGates::add(const Word32& x, const Word32& y) { return add_words<kWordBits>(*this, x, y); }
Word32 WordGates::sum(std::vector<Word32> operands) { return sum_words<kWordBits>(*this, std::move(operands)); }

std::uint32_t WordGates::depth(const Word64& word) const noexcept { return deepest<kWord64Bits>(*this, word); }
Word64 WordGates::constant64(std::uint64_t value) const { return constant_word<kWord64Bits>(*this, value); }
Word64 WordGates::xor_words(const Word64& a, const Word64& b) { return xor_word<kWord64Bits>(*this, a, b); }
Word64 WordGates::and_words(const Word64& a, const Word64& b) { return and_word<kWord64Bits>(*this, a, b); }
CarrySave64 WordGates::compress(const Word64& x, const Word64& y, const Word64& z) {
  return compress_words<kWord64Bits>(*this, x, y, z);
}
Word64 WordGates::add(const Word64& x, const Word64& y) { return add_words<kWord64Bits>(*this, x, y); }
Word64 WordGates::sum(std::vector<Word64> operands) { return sum_words<kWord64Bits>(*this, std::move(operands)); }

Word32 rotl(const Word32& word, unsigned bits) { return rotate_left<kWordBits>(word, bits); }
Word64 rotl(const Word64& word, unsigned bits) { return rotate_left<kWord64Bits>(word, bits); }

Word32 word_from_be_bits(std::span<const std::uint32_t> bits) { return word_from_be<kWordBits>(bits); }
void append_be_bits(const Word32& word, std::vector<std::uint32_t>& bits) { append_be<kWordBits>(word, bits); }
Word64 word64_from_be_bits(std::span<const std::uint32_t> bits) { return word_from_be<kWord64Bits>(bits); }
void append_be_bits(const Word64& word, std::vector<std::uint32_t>& bits) { append_be<kWord64Bits>(word, bits); }

}  // namespace mpc::circuits::detail
