// SHA-1 compression circuit (FIPS 180-4, 6.1.2) scheduled for AND-depth.
//
// Round t computes a_{t+1} = ROTL5(a_t) + f_t(b, c, d) + e + K_t + W_t, with b = a_{t-1} and
// c, d, e rotations of a_{t-2}, a_{t-3}, a_{t-4}. Only a_t -> a_{t+1} is on the critical
// path; the other four operands are reduced while earlier rounds run:
//   e + K_t + W_t: one 3:2 layer, ready rounds ahead (the message schedule is XOR-only);
//   f_t: one AND layer after a_{t-1} (Ch = d ^ (b & (c ^ d)), Maj = b ^ ((b ^ c) & (b ^ d)),
//        Parity = b ^ c ^ d), then a second 3:2 layer;
//   a_{t+1}: a last 3:2 layer with ROTL5(a_t) and the prefix adder (adder.hpp).
// WordGates::sum orders the 3:2 tree by the recorded AND-depth of its operands, so late ones
// enter last; the same code thus schedules the first rounds (where everything arrives at
// once) and rounds fed by late message words. A 3:2 layer in front of the prefix adder costs
// no extra AND layer (adder.hpp), so the steady state is 6 AND layers per round: 482 for one
// compression from fresh inputs (80 * 6 + 2 for the first round, whose f is not ready early).
//
// Feed-forward: H0 + a_80 = ROTL5(a_79) + (f + e + K + W + H0), so H0 joins round 79's 3:2
// tree off the critical path and the new H0 is ready when a_80 would be; H1 + a_79 likewise
// through a second sum in round 78. H2..H4 add rotations of a_78..a_76, which are ready
// rounds earlier. Chained compressions therefore continue at 6 layers per round.
#include "circuits/sha1.hpp"

#include <algorithm>

#include "circuits/builder.hpp"
#include "common/error.hpp"

namespace mpc::circuits {
namespace detail {
namespace {

constexpr std::uint32_t kRoundConstants[4] = {0x5A827999U, 0x6ED9EBA1U, 0x8F1BBCDCU, 0xCA62C1D6U};

// f_t with one AND per bit.
Word32 round_function(WordGates& gates, std::size_t t, const Word32& b, const Word32& c, const Word32& d) {
  if (t < 20) return gates.xor_words(d, gates.and_words(b, gates.xor_words(c, d)));
  if (t >= 40 && t < 60) return gates.xor_words(b, gates.and_words(gates.xor_words(b, c), gates.xor_words(b, d)));
  return gates.xor_words(gates.xor_words(b, c), d);
}

}  // namespace

Sha1Words sha1_words_from_bits(std::span<const std::uint32_t> bits) {
  if (bits.size() != kSha1StateBits) throw FormatError(Component::Circuit, "a SHA-1 state needs 160 wires");
  Sha1Words words{};
  for (std::size_t i = 0; i < words.size(); ++i) words[i] = word_from_be_bits(bits.subspan(i * kWordBits, kWordBits));
  return words;
}

std::vector<std::uint32_t> bits_from_sha1_words(const Sha1Words& words) {
  std::vector<std::uint32_t> bits;
  bits.reserve(kSha1StateBits);
  for (const Word32& word : words) append_be_bits(word, bits);
  return bits;
}

Sha1Block sha1_block_from_bits(std::span<const std::uint32_t> bits) {
  if (bits.size() != kSha1BlockBits) throw FormatError(Component::Circuit, "a SHA-1 block needs 512 wires");
  Sha1Block block{};
  for (std::size_t i = 0; i < block.size(); ++i) block[i] = word_from_be_bits(bits.subspan(i * kWordBits, kWordBits));
  return block;
}

Sha1Words sha1_compress(WordGates& gates, const Sha1Words& state, const Sha1Block& block) {
  std::array<Word32, 80> schedule{};
  std::copy(block.begin(), block.end(), schedule.begin());
  for (std::size_t t = 16; t < 80; ++t) {
    schedule[t] = rotl(gates.xor_words(gates.xor_words(schedule[t - 3], schedule[t - 8]),
                                       gates.xor_words(schedule[t - 14], schedule[t - 16])),
                       1);
  }

  Word32 a = state[0], b = state[1], c = state[2], d = state[3], e = state[4];
  Word32 h1_sum{};  // H1 + a_79
  Word32 h0_sum{};  // H0 + a_80
  for (std::size_t t = 0; t < 80; ++t) {
    std::vector<Word32> terms = {e, gates.constant(kRoundConstants[t / 20]), schedule[t],
                                 round_function(gates, t, b, c, d), rotl(a, 5)};
    if (t == 78) {
      std::vector<Word32> with_h1 = terms;
      with_h1.push_back(state[1]);
      h1_sum = gates.sum(std::move(with_h1));
    }
    if (t == 79) {
      terms.push_back(state[0]);
      h0_sum = gates.sum(std::move(terms));
      break;  // a_80 alone is never needed
    }
    const Word32 next = gates.sum(std::move(terms));
    e = d;
    d = c;
    c = rotl(b, 30);
    b = a;
    a = next;
  }
  // After round 79 the working variables would be a_80, a_79, ROTL30(a_78), c, d: the last
  // three are c, d, e of round 79 shifted once more.
  return {h0_sum, h1_sum, gates.add(state[2], rotl(b, 30)), gates.add(state[3], c), gates.add(state[4], d)};
}

}  // namespace detail

Circuit build_sha1_compress_circuit() {
  CircuitBuilder builder;
  detail::WordGates gates(builder);
  const std::vector<std::uint32_t> state_bits = builder.add_input_group(kSha1StateBits);
  const std::vector<std::uint32_t> block_bits = builder.add_input_group(kSha1BlockBits);
  const detail::Sha1Words next =
      detail::sha1_compress(gates, detail::sha1_words_from_bits(state_bits), detail::sha1_block_from_bits(block_bits));
  return builder.finish({detail::bits_from_sha1_words(next)});
}

}  // namespace mpc::circuits
