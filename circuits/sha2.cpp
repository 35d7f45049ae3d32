// SHA-256 / SHA-512 compression circuits (FIPS 180-4, 6.2.2 and 6.4.2) scheduled for AND-depth.
//
// Round t computes
//   T1 = h + Sigma1(e) + Ch(e, f, g) + K_t + W_t,   T2 = Sigma0(a) + Maj(a, b, c),
//   a' = T1 + T2,   e' = d + T1,
// and the other six working variables are renamings. Only a_t -> a_{t+1} and e_t -> e_{t+1}
// are on the critical path; everything else is reduced while earlier rounds run:
//   h + K_t + W_t: one 3:2 layer, shared by both sums, ready rounds ahead (h is e_{t-3});
//   Sigma0/Sigma1: XORs of rotations, no AND;
//   Ch = g ^ (e & (f ^ g)) and Maj = b ^ ((a ^ b) & (b ^ c)): one AND layer after e or a,
//        since f ^ g and b ^ c are ready a round earlier;
//   a' and e': each one WordGates::sum, whose 3:2 tree takes the late operands (Sigma, Ch,
//        Maj) last and ends in the prefix adder (adder.hpp).
// The message schedule W_t = sigma1(W_{t-2}) + W_{t-7} + sigma0(W_{t-15}) + W_{t-16} costs AND
// gates too (a 3:2 layer and a prefix adder per word), but W_t is needed only in round t and
// its depth grows by one adder per two rounds against one adder per round on the critical
// path, so it stays off the path even when the block itself arrives late (the outer HMAC hash).
//
// Feed-forward: H0 + a_R and H4 + e_R join the last round's sums as one more operand (off the
// path); H1..H3 and H5..H7 add words that were final one to three rounds earlier.
#include "circuits/sha2.hpp"

#include <algorithm>
#include <string>

#include "circuits/builder.hpp"
#include "circuits/sha2_constants.hpp"
#include "common/error.hpp"

namespace mpc::circuits {
namespace detail {
namespace {

template <typename Word>
struct Sha2Params;

template <>
struct Sha2Params<Word32> {
  static constexpr std::size_t kRounds = 64;
  static constexpr unsigned kBig0[3] = {2, 13, 22};
  static constexpr unsigned kBig1[3] = {6, 11, 25};
  static constexpr unsigned kSmall0[3] = {7, 18, 3};  // two rotations, then a shift
  static constexpr unsigned kSmall1[3] = {17, 19, 10};
  static Word32 constant(const WordGates& gates, std::size_t t) { return gates.constant(kSha256RoundConstants[t]); }
};

template <>
struct Sha2Params<Word64> {
  static constexpr std::size_t kRounds = 80;
  static constexpr unsigned kBig0[3] = {28, 34, 39};
  static constexpr unsigned kBig1[3] = {14, 18, 41};
  static constexpr unsigned kSmall0[3] = {1, 8, 7};
  static constexpr unsigned kSmall1[3] = {19, 61, 6};
  static Word64 constant(const WordGates& gates, std::size_t t) { return gates.constant64(kSha512RoundConstants[t]); }
};

template <typename Word>
Word rotr(const Word& word, unsigned bits) {
  return rotl(word, static_cast<unsigned>(word.size()) - bits);
}

template <typename Word>
Word shr(const WordGates& gates, const Word& word, unsigned bits) {
  Word out{};
  for (std::size_t bit = 0; bit < word.size(); ++bit) out[bit] = bit + bits < word.size() ? word[bit + bits] : gates.zero();
  return out;
}

template <typename Word>
Word big_sigma(WordGates& gates, const Word& x, const unsigned (&amounts)[3]) {
  return gates.xor_words(gates.xor_words(rotr(x, amounts[0]), rotr(x, amounts[1])), rotr(x, amounts[2]));
}

template <typename Word>
Word small_sigma(WordGates& gates, const Word& x, const unsigned (&amounts)[3]) {
  return gates.xor_words(gates.xor_words(rotr(x, amounts[0]), rotr(x, amounts[1])), shr(gates, x, amounts[2]));
}

template <typename Word>
std::array<Word, 8> compress(WordGates& gates, const std::array<Word, 8>& state, const std::array<Word, 16>& block) {
  using Params = Sha2Params<Word>;
  constexpr std::size_t kRounds = Params::kRounds;
  std::array<Word, kRounds> schedule{};
  std::copy(block.begin(), block.end(), schedule.begin());
  for (std::size_t t = 16; t < kRounds; ++t) {
    schedule[t] = gates.sum({small_sigma(gates, schedule[t - 2], Params::kSmall1), schedule[t - 7],
                             small_sigma(gates, schedule[t - 15], Params::kSmall0), schedule[t - 16]});
  }

  std::array<Word, 8> v = state;  // a, b, c, d, e, f, g, h
  for (std::size_t t = 0; t < kRounds; ++t) {
    const auto& [a, b, c, d, e, f, g, h] = v;
    const auto early = gates.compress(h, Params::constant(gates, t), schedule[t]);
    const Word sigma1 = big_sigma(gates, e, Params::kBig1);
    const Word choose = gates.xor_words(g, gates.and_words(e, gates.xor_words(f, g)));
    const Word sigma0 = big_sigma(gates, a, Params::kBig0);
    const Word majority = gates.xor_words(b, gates.and_words(gates.xor_words(a, b), gates.xor_words(b, c)));
    std::vector<Word> e_terms = {early.sum, early.carry, sigma1, choose, d};
    std::vector<Word> a_terms = {early.sum, early.carry, sigma1, choose, sigma0, majority};
    if (t + 1 == kRounds) {  // feed-forward of H4 and H0
      e_terms.push_back(state[4]);
      a_terms.push_back(state[0]);
    }
    const Word next_e = gates.sum(std::move(e_terms));
    const Word next_a = gates.sum(std::move(a_terms));
    v = {next_a, a, b, c, next_e, e, f, g};
  }
  std::array<Word, 8> out = v;
  for (std::size_t i : {1, 2, 3, 5, 6, 7}) out[i] = gates.add(state[i], v[i]);
  return out;
}

template <typename Word, std::size_t Count>
std::array<Word, Count> words_from_bits(std::span<const std::uint32_t> bits, const char* what) {
  constexpr std::size_t kBits = std::tuple_size_v<Word>;
  if (bits.size() != Count * kBits) {
    throw FormatError(Component::Circuit, std::string(what) + " needs " + std::to_string(Count * kBits) + " wires");
  }
  std::array<Word, Count> words{};
  for (std::size_t i = 0; i < Count; ++i) {
    if constexpr (kBits == kWordBits) {
      words[i] = word_from_be_bits(bits.subspan(i * kBits, kBits));
    } else {
      words[i] = word64_from_be_bits(bits.subspan(i * kBits, kBits));
    }
  }
  return words;
}

template <typename Word>
std::vector<std::uint32_t> bits_from_words(const std::array<Word, 8>& words) {
  std::vector<std::uint32_t> bits;
  bits.reserve(8 * words[0].size());
  for (const Word& word : words) append_be_bits(word, bits);
  return bits;
}

}  // namespace

Sha256Words sha256_words_from_bits(std::span<const std::uint32_t> bits) {
  return words_from_bits<Word32, 8>(bits, "a SHA-256 state");
}
Sha512Words sha512_words_from_bits(std::span<const std::uint32_t> bits) {
  return words_from_bits<Word64, 8>(bits, "a SHA-512 state");
}
std::vector<std::uint32_t> bits_from_sha2_words(const Sha256Words& words) { return bits_from_words(words); }
std::vector<std::uint32_t> bits_from_sha2_words(const Sha512Words& words) { return bits_from_words(words); }
Sha256Block sha256_block_from_bits(std::span<const std::uint32_t> bits) {
  return words_from_bits<Word32, 16>(bits, "a SHA-256 block");
}
Sha512Block sha512_block_from_bits(std::span<const std::uint32_t> bits) {
  return words_from_bits<Word64, 16>(bits, "a SHA-512 block");
}

Sha256Words sha256_compress(WordGates& gates, const Sha256Words& state, const Sha256Block& block) {
  return compress(gates, state, block);
}
Sha512Words sha512_compress(WordGates& gates, const Sha512Words& state, const Sha512Block& block) {
  return compress(gates, state, block);
}

}  // namespace detail

Circuit build_sha256_compress_circuit() {
  CircuitBuilder builder;
  detail::WordGates gates(builder);
  const std::vector<std::uint32_t> state_bits = builder.add_input_group(kSha256StateBits);
  const std::vector<std::uint32_t> block_bits = builder.add_input_group(kSha256BlockBits);
  const detail::Sha256Words next = detail::sha256_compress(gates, detail::sha256_words_from_bits(state_bits),
                                                           detail::sha256_block_from_bits(block_bits));
  return builder.finish({detail::bits_from_sha2_words(next)});
}

Circuit build_sha512_compress_circuit() {
  CircuitBuilder builder;
  detail::WordGates gates(builder);
  const std::vector<std::uint32_t> state_bits = builder.add_input_group(kSha512StateBits);
  const std::vector<std::uint32_t> block_bits = builder.add_input_group(kSha512BlockBits);
  const detail::Sha512Words next = detail::sha512_compress(gates, detail::sha512_words_from_bits(state_bits),
                                                           detail::sha512_block_from_bits(block_bits));
  return builder.finish({detail::bits_from_sha2_words(next)});
}

}  // namespace mpc::circuits
