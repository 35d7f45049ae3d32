#include "circuits/sha2_reference.hpp"

#include "circuits/sha2_constants.hpp"
#include "common/secret.hpp"

namespace mpc::circuits {
namespace {

template <typename Word>
constexpr Word rotr(Word value, int bits) {
  return (value >> bits) | (value << (static_cast<int>(sizeof(Word) * 8) - bits));
}

// The shared round structure; Sigma/sigma rotation amounts differ per word size.
template <typename Word, std::size_t Rounds, typename Functions>
void compress(std::array<Word, 8>& state, std::span<const std::uint8_t> block, const std::array<Word, Rounds>& k,
              Functions functions) {
  constexpr std::size_t kBytes = sizeof(Word);
  std::array<Word, Rounds> w{};
  for (std::size_t t = 0; t < 16; ++t) {
    Word word = 0;
    for (std::size_t i = 0; i < kBytes; ++i) word = static_cast<Word>(word << 8) | block[kBytes * t + i];
    w[t] = word;
  }
  for (std::size_t t = 16; t < Rounds; ++t)
    w[t] = functions.small1(w[t - 2]) + w[t - 7] + functions.small0(w[t - 15]) + w[t - 16];

  std::array<Word, 8> v = state;  // a..h
  for (std::size_t t = 0; t < Rounds; ++t) {
    const Word ch = (v[4] & v[5]) ^ (~v[4] & v[6]);
    const Word maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
    const Word t1 = v[7] + functions.big1(v[4]) + ch + k[t] + w[t];
    const Word t2 = functions.big0(v[0]) + maj;
    v = {static_cast<Word>(t1 + t2), v[0], v[1], v[2], static_cast<Word>(v[3] + t1), v[4], v[5], v[6]};
  }
  for (std::size_t i = 0; i < 8; ++i) state[i] += v[i];
  wipe(w.data(), sizeof w);
  wipe(v.data(), sizeof v);
}

struct Sha256Functions {
  static std::uint32_t big0(std::uint32_t x) { return rotr(x, 2) ^ rotr(x, 13) ^ rotr(x, 22); }
  static std::uint32_t big1(std::uint32_t x) { return rotr(x, 6) ^ rotr(x, 11) ^ rotr(x, 25); }
  static std::uint32_t small0(std::uint32_t x) { return rotr(x, 7) ^ rotr(x, 18) ^ (x >> 3); }
  static std::uint32_t small1(std::uint32_t x) { return rotr(x, 17) ^ rotr(x, 19) ^ (x >> 10); }
};

struct Sha512Functions {
  static std::uint64_t big0(std::uint64_t x) { return rotr(x, 28) ^ rotr(x, 34) ^ rotr(x, 39); }
  static std::uint64_t big1(std::uint64_t x) { return rotr(x, 14) ^ rotr(x, 18) ^ rotr(x, 41); }
  static std::uint64_t small0(std::uint64_t x) { return rotr(x, 1) ^ rotr(x, 8) ^ (x >> 7); }
  static std::uint64_t small1(std::uint64_t x) { return rotr(x, 19) ^ rotr(x, 61) ^ (x >> 6); }
};

template <typename Word, std::size_t Bytes>
std::array<std::uint8_t, Bytes> state_bytes(const std::array<Word, 8>& state) {
  constexpr std::size_t kWordBytes = sizeof(Word);
  std::array<std::uint8_t, Bytes> out{};
  for (std::size_t i = 0; i < 8; ++i)
    for (std::size_t j = 0; j < kWordBytes; ++j)
      out[kWordBytes * i + j] = static_cast<std::uint8_t>(state[i] >> (8 * (kWordBytes - 1 - j)));
  return out;
}

}  // namespace

Sha256State sha256_initial_state() { return detail::kSha256Initial; }
Sha512State sha384_initial_state() { return detail::kSha384Initial; }
Sha512State sha512_initial_state() { return detail::kSha512Initial; }

void sha256_compress(Sha256State& state, std::span<const std::uint8_t, kSha256BlockBytes> block) {
  compress<std::uint32_t>(state, block, detail::kSha256RoundConstants, Sha256Functions{});
}

void sha512_compress(Sha512State& state, std::span<const std::uint8_t, kSha512BlockBytes> block) {
  compress<std::uint64_t>(state, block, detail::kSha512RoundConstants, Sha512Functions{});
}

std::array<std::uint8_t, kSha256StateBytes> sha256_state_bytes(const Sha256State& state) {
  return state_bytes<std::uint32_t, kSha256StateBytes>(state);
}

std::array<std::uint8_t, kSha512StateBytes> sha512_state_bytes(const Sha512State& state) {
  return state_bytes<std::uint64_t, kSha512StateBytes>(state);
}

}  // namespace mpc::circuits
