// cuda/aes_ttable.hpp: AES-128 encryption (FIPS-197) with 32-bit lookup tables, for the
// correlated-randomness PRF on the GPU (Araki et al., CCS 2016, section 2.2: alpha_i =
// F(k_i, id) ^ F(k_{i-1}, id), F = AES-128-CTR). Same bytes as OpenSSL's AES-128-CTR
// (tests/unit/cuda/device_helpers_test.cpp checks it against OpenSSL on the CPU and
// against CorrelatedRandomness::next_alpha).
//
// Tables are computed at compile time from the field arithmetic (no copied constants);
// the kernel copies them into shared memory and takes the round keys as a kernel
// parameter (constant bank, read uniformly by a warp). The classic "T-table"
// formulation of Daemen and Rijmen, "The Design of Rijndael", section 4.2: one round is
// four lookups and four XORs per column.
//
// Side channel: the lookups are indexed by key ^ counter bytes, so their timing (shared
// memory bank conflicts) depends on the PRF keys. Code sharing the GPU could observe it;
// docs/gpu.md discusses this (a bitsliced AES is the constant-time alternative).
//
// Host and device: no CUDA headers, no C++20 (see device_helpers.hpp).
#pragma once

#include <cstdint>

#include "cuda/device_helpers.hpp"

namespace mpc::cuda::detail {

struct AesTables {
  std::uint32_t te[4][256];  // te[k][x]: column (2s, s, s, 3s), s = S(x), rotated right by 8k bits
  std::uint8_t sbox[256];
};

// 44 big-endian round-key words (FIPS-197 5.2).
struct Aes128RoundKeys {
  std::uint32_t w[44];
};

constexpr std::uint8_t gf_double(std::uint8_t v) {
  return static_cast<std::uint8_t>((v << 1) ^ ((v & 0x80) != 0 ? 0x1b : 0x00));
}

constexpr std::uint8_t gf_multiply(std::uint8_t a, std::uint8_t b) {
  std::uint8_t product = 0;
  for (int bit = 0; bit < 8; ++bit) {
    if ((b >> bit) & 1) product ^= a;
    a = gf_double(a);
  }
  return product;
}

// S(x) = affine(x^-1), inverse by x^254 in GF(2^8) (FIPS-197 5.1.1).
constexpr std::uint8_t sbox_value(std::uint8_t x) {
  std::uint8_t inverse = 1;
  std::uint8_t power = x;
  for (int e = 254; e != 0; e >>= 1) {
    if (e & 1) inverse = gf_multiply(inverse, power);
    power = gf_multiply(power, power);
  }
  if (x == 0) inverse = 0;
  std::uint8_t s = 0x63;
  for (int bit = 0; bit < 8; ++bit) {
    const int v = ((inverse >> bit) ^ (inverse >> ((bit + 4) % 8)) ^ (inverse >> ((bit + 5) % 8)) ^
                   (inverse >> ((bit + 6) % 8)) ^ (inverse >> ((bit + 7) % 8))) & 1;
    s ^= static_cast<std::uint8_t>(v << bit);
  }
  return s;
}

constexpr std::uint32_t rotate_right(std::uint32_t v, int bits) {
  return bits == 0 ? v : (v >> bits) | (v << (32 - bits));
}

constexpr AesTables make_aes_tables() {
  AesTables t{};
  for (int x = 0; x < 256; ++x) {
    const std::uint8_t s = sbox_value(static_cast<std::uint8_t>(x));
    const std::uint8_t s2 = gf_double(s);
    const std::uint8_t s3 = static_cast<std::uint8_t>(s2 ^ s);
    const std::uint32_t column = (std::uint32_t{s2} << 24) | (std::uint32_t{s} << 16) | (std::uint32_t{s} << 8) | s3;
    t.sbox[x] = s;
    for (int k = 0; k < 4; ++k) t.te[k][x] = rotate_right(column, 8 * k);
  }
  return t;
}

// Host only (keys are expanded once per batch on the CPU).
inline Aes128RoundKeys aes128_expand_key(const std::uint8_t key[16], const AesTables& tables) {
  Aes128RoundKeys rk{};
  for (int i = 0; i < 4; ++i)
    rk.w[i] = (std::uint32_t{key[4 * i]} << 24) | (std::uint32_t{key[4 * i + 1]} << 16) |
              (std::uint32_t{key[4 * i + 2]} << 8) | key[4 * i + 3];
  std::uint8_t rcon = 1;
  for (int i = 4; i < 44; ++i) {
    std::uint32_t t = rk.w[i - 1];
    if (i % 4 == 0) {
      t = (t << 8) | (t >> 24);  // RotWord
      t = (std::uint32_t{tables.sbox[t >> 24]} << 24) | (std::uint32_t{tables.sbox[(t >> 16) & 0xff]} << 16) |
          (std::uint32_t{tables.sbox[(t >> 8) & 0xff]} << 8) | tables.sbox[t & 0xff];  // SubWord
      t ^= std::uint32_t{rcon} << 24;
      rcon = gf_double(rcon);
    }
    rk.w[i] = rk.w[i - 4] ^ t;
  }
  return rk;
}

// SubBytes and ShiftRows of the last round for one output column.
MPC_HD std::uint32_t last_round_word(const std::uint8_t* sbox, std::uint32_t a, std::uint32_t b, std::uint32_t c,
                                     std::uint32_t d) {
  return (std::uint32_t{sbox[a >> 24]} << 24) | (std::uint32_t{sbox[(b >> 16) & 0xff]} << 16) |
         (std::uint32_t{sbox[(c >> 8) & 0xff]} << 8) | std::uint32_t{sbox[d & 0xff]};
}

// One block: in and out are four big-endian column words. te/sbox may live in shared
// memory (device) or be the host copy.
MPC_HD void aes128_encrypt_words(const std::uint32_t* rk, const std::uint32_t (*te)[256], const std::uint8_t* sbox,
                                 const std::uint32_t in[4], std::uint32_t out[4]) {
  std::uint32_t s0 = in[0] ^ rk[0], s1 = in[1] ^ rk[1], s2 = in[2] ^ rk[2], s3 = in[3] ^ rk[3];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int round = 1; round < 10; ++round) {
    const std::uint32_t* k = rk + 4 * round;
    const std::uint32_t t0 = te[0][s0 >> 24] ^ te[1][(s1 >> 16) & 0xff] ^ te[2][(s2 >> 8) & 0xff] ^ te[3][s3 & 0xff] ^ k[0];
    const std::uint32_t t1 = te[0][s1 >> 24] ^ te[1][(s2 >> 16) & 0xff] ^ te[2][(s3 >> 8) & 0xff] ^ te[3][s0 & 0xff] ^ k[1];
    const std::uint32_t t2 = te[0][s2 >> 24] ^ te[1][(s3 >> 16) & 0xff] ^ te[2][(s0 >> 8) & 0xff] ^ te[3][s1 & 0xff] ^ k[2];
    const std::uint32_t t3 = te[0][s3 >> 24] ^ te[1][(s0 >> 16) & 0xff] ^ te[2][(s1 >> 8) & 0xff] ^ te[3][s2 & 0xff] ^ k[3];
    s0 = t0;
    s1 = t1;
    s2 = t2;
    s3 = t3;
  }
  const std::uint32_t* k = rk + 40;
  out[0] = last_round_word(sbox, s0, s1, s2, s3) ^ k[0];
  out[1] = last_round_word(sbox, s1, s2, s3, s0) ^ k[1];
  out[2] = last_round_word(sbox, s2, s3, s0, s1) ^ k[2];
  out[3] = last_round_word(sbox, s3, s0, s1, s2) ^ k[3];
}

// alpha block: AES(own, B) ^ AES(previous, B) for the counter block B, as the 16 bytes
// next_alpha() writes, given as four little-endian words (what a 16-byte store of them
// puts in memory).
MPC_HD void alpha_block(const std::uint32_t* own, const std::uint32_t* previous, const std::uint32_t (*te)[256],
                        const std::uint8_t* sbox, const std::uint32_t block[4], std::uint32_t out_le[4]) {
  std::uint32_t a[4], b[4];
  aes128_encrypt_words(own, te, sbox, block, a);
  aes128_encrypt_words(previous, te, sbox, block, b);
  for (int i = 0; i < 4; ++i) out_le[i] = bswap32(a[i] ^ b[i]);
}

}  // namespace mpc::cuda::detail
