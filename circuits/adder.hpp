// Arithmetic on 32-bit and 64-bit words of builder wires (modulo 2^32 and 2^64), for the SHA-1
// and SHA-2 circuits. The 64-bit operations are the same networks one size up: the prefix adder
// has log2(64) = 6 prefix layers, AND-depth 7 above its operands.
//
// WordGates wraps a CircuitBuilder: it folds gates whose operands are the builder's constant
// wires (so adding a public constant costs no more than a general add, usually less) and
// records the AND-depth of every wire it creates, which the SHA-1 generator uses to order
// additions so that late operands enter last.
//
// Adders:
// - add(): a Sklansky (Ladner-Fischer, zero slack) parallel-prefix adder: one generate layer,
//   then log2(32) = 5 prefix layers over (generate, propagate) pairs; the sum bits are XORs.
//   AND-depth 6 above its operands, 151 AND gates for two secret words; adding a public
//   constant folds the generate layer away (at most 5 layers, fewer ANDs).
// - compress(): a carry-save 3:2 compressor, one AND per bit (maj(x, y, z) =
//   x ^ ((x ^ y) & (x ^ z))); the carry into bit 32 is dropped.
// - sum(): any number of words through a greedy 3:2 tree (the three earliest operands first),
//   then add(). A last 3:2 layer costs no extra AND layer: its carry word has bit 0 = 0, so
//   the generate bit of position 0 folds away and every prefix group that reaches bit 0 is one
//   AND shorter, which absorbs the layer the carries came late by. x + y + z has the per-bit
//   depth profile of x + y: 6 for the top bit (adder_test asserts it).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "circuits/aes_options.hpp"
#include "circuits/builder.hpp"

namespace mpc::circuits::detail {

inline constexpr std::size_t kWordBits = 32;
inline constexpr std::size_t kWord64Bits = 64;

// Bit 0 is the least significant bit.
using Word32 = std::array<std::uint32_t, kWordBits>;
using Word64 = std::array<std::uint32_t, kWord64Bits>;

template <std::size_t Bits>
struct CarrySaveOf {
  std::array<std::uint32_t, Bits> sum;
  std::array<std::uint32_t, Bits> carry;  // already shifted left by one
};
using CarrySave = CarrySaveOf<kWordBits>;
using CarrySave64 = CarrySaveOf<kWord64Bits>;

// How add() adds: Sklansky's prefix adder (few AND layers), or a ripple-carry chain, one AND
// per bit (carry' = x ^ ((x ^ y) & (x ^ carry))): 31 ANDs for two secret 32-bit words instead
// of 151, at AND-depth 31.
enum class AdderKind { Prefix, Ripple };

inline AdderKind adder_for(CircuitCost cost) {
  return cost == CircuitCost::FewestAnds ? AdderKind::Ripple : AdderKind::Prefix;
}

class WordGates {
 public:
  explicit WordGates(CircuitBuilder& builder, AdderKind adder = AdderKind::Prefix);

  AdderKind adder() const noexcept { return adder_; }

  CircuitBuilder& builder() noexcept { return builder_; }

  // Single gates with constant folding (x ^ 0 = x, x & 1 = x, x & x = x, ...).
  std::uint32_t xor_(std::uint32_t a, std::uint32_t b);
  std::uint32_t and_(std::uint32_t a, std::uint32_t b);
  std::uint32_t inv(std::uint32_t a);
  std::uint32_t zero() const noexcept { return zero_; }
  std::uint32_t one() const noexcept { return one_; }
  bool is_constant(std::uint32_t wire) const noexcept { return wire == zero_ || wire == one_; }

  // AND-depth of a wire: recorded for wires made here, set by note_depth() for wires made
  // elsewhere (AES outputs), 0 otherwise (inputs, constants).
  std::uint32_t depth(std::uint32_t wire) const noexcept;
  std::uint32_t depth(const Word32& word) const noexcept;
  std::uint32_t depth(const Word64& word) const noexcept;
  void note_depth(std::uint32_t wire, std::uint32_t depth);

  Word32 constant(std::uint32_t value) const;
  Word32 xor_words(const Word32& a, const Word32& b);
  Word32 and_words(const Word32& a, const Word32& b);

  CarrySave compress(const Word32& x, const Word32& y, const Word32& z);
  Word32 add(const Word32& x, const Word32& y);
  Word32 sum(std::vector<Word32> operands);

  // The same on 64-bit words.
  Word64 constant64(std::uint64_t value) const;
  Word64 xor_words(const Word64& a, const Word64& b);
  Word64 and_words(const Word64& a, const Word64& b);
  CarrySave64 compress(const Word64& x, const Word64& y, const Word64& z);
  Word64 add(const Word64& x, const Word64& y);
  Word64 sum(std::vector<Word64> operands);

 private:
  std::uint32_t record(std::uint32_t wire, std::uint32_t depth);

  CircuitBuilder& builder_;
  AdderKind adder_;
  std::uint32_t zero_;
  std::uint32_t one_;
  std::vector<std::uint32_t> depth_;  // indexed by builder wire id
};

// Rotation towards the most significant bit: pure rewiring.
Word32 rotl(const Word32& word, unsigned bits);
Word64 rotl(const Word64& word, unsigned bits);

// Four bytes of a byte-string group read as a big-endian word (SHA-1's convention): `bits`
// holds the 32 wires of bytes 0..3, byte b bit k at b * 8 + k.
Word32 word_from_be_bits(std::span<const std::uint32_t> bits);
// The inverse: appends the word's wires as four big-endian bytes.
void append_be_bits(const Word32& word, std::vector<std::uint32_t>& bits);
// The same for eight bytes and a 64-bit word (SHA-512's convention).
Word64 word64_from_be_bits(std::span<const std::uint32_t> bits);
void append_be_bits(const Word64& word, std::vector<std::uint32_t>& bits);

}  // namespace mpc::circuits::detail
