// The hash of the two-party protocols: a tweakable circular correlation-robust function (TCCR)
// from fixed-key AES, as constructed by Guo, Katz, Wang and Yu, "Efficient and Secure
// Multiparty Computation from Fixed-Key Block Ciphers" (IEEE S&P 2020, eprint 2019/074):
//
//   H(x, i) = pi(sigma(x) ^ i) ^ sigma(x),   sigma(x_L || x_R) = (x_L ^ x_R) || x_L,
//
// with pi = AES-128 under a fixed public key and sigma a linear orthomorphism. GKWY prove it
// TCCR in the ideal-permutation model, which is what half-gates garbling (with free-XOR) needs
// of its hash (Zahur-Rosulek-Evans 2015, Theorem 1, with GKWY section 7 for the multi-instance
// bound); TCCR implies the correlation robustness IKNP OT extension needs. Tweaks must never
// repeat for one free-XOR offset (garbling) or one OT-extension session; callers derive them
// from unique job numbers and counters.
//
// pi runs on AES-NI (eight blocks in flight) when the CPU has it, else on OpenSSL's AES: the
// same function either way.
#pragma once

#include <cstddef>
#include <cstdint>

#include "protocol/two_party/block.hpp"

namespace mpc::two_party {

// The fixed public key of pi: the first 16 bytes of the SHA-256 of "mpc-kdc fixed-key AES v1",
// a nothing-up-my-sleeve choice (any public key is as good; it only has to be fixed). Kernels
// that run pi themselves (the garbled circuits' VAES one) expand this same key.
inline constexpr std::uint8_t kFixedKey[16] = {0xe0, 0x92, 0x1e, 0x64, 0x4c, 0xc5, 0x5b, 0xb5,
                                               0xfc, 0x49, 0x10, 0xc9, 0x7c, 0x1e, 0x42, 0x9e};

// out[e] = H(in[e], (tweak_high, first_tweak + e * tweak_step)) for e in [0, n). in and out may
// be the same array.
void tccr_hash(const Block* in, Block* out, std::size_t n, std::uint64_t tweak_high, std::uint64_t first_tweak,
               std::uint64_t tweak_step);

// pi alone (AES-128 under the fixed key), in place: for tests against OpenSSL.
void fixed_key_permute(Block* blocks, std::size_t n);

// Whether pi runs on AES-NI here (benchmarks report it).
bool fixed_key_hash_uses_aesni();

}  // namespace mpc::two_party
