// Compiled with AVX-512 F/BW/VL/VPOPCNTDQ flags: entered only after avx512_supported().
#include <immintrin.h>

#include "common/secret.hpp"
#include "protocol/lut2/round_kernels.hpp"

namespace mpc::lut2::detail {
namespace {

// This party's share of F(c ^ r) for the eight output bits at once: lane b of the AND/XOR chain
// is the entry's share of e_r folded against row b; its parity is output bit b.
inline std::uint8_t lookup(const std::uint64_t (*rows)[8], const Entry& entry) {
  constexpr int kXorAnd = 0x78;  // a ^ (b & c)
  __m512i acc = _mm512_and_si512(_mm512_load_si512(rows[0]), _mm512_set1_epi64(static_cast<long long>(entry.one_hot[0])));
  acc = _mm512_ternarylogic_epi64(acc, _mm512_load_si512(rows[1]), _mm512_set1_epi64(static_cast<long long>(entry.one_hot[1])), kXorAnd);
  acc = _mm512_ternarylogic_epi64(acc, _mm512_load_si512(rows[2]), _mm512_set1_epi64(static_cast<long long>(entry.one_hot[2])), kXorAnd);
  acc = _mm512_ternarylogic_epi64(acc, _mm512_load_si512(rows[3]), _mm512_set1_epi64(static_cast<long long>(entry.one_hot[3])), kXorAnd);
  return static_cast<std::uint8_t>(_mm512_test_epi64_mask(_mm512_popcnt_epi64(acc), _mm512_set1_epi64(1)));
}

// Doubling in GF(2^8) of every byte.
inline __m128i xtime(__m128i v) {
  const __m128i high = _mm_cmplt_epi8(v, _mm_setzero_si128());
  return _mm_xor_si128(_mm_add_epi8(v, v), _mm_and_si128(high, _mm_set1_epi8(0x1b)));
}

// Byte r of each column (32-bit lane, row 0 lowest) takes row r + 1 (mod 4).
inline __m128i rotate_rows(__m128i v) {
  return _mm_shuffle_epi8(v, _mm_setr_epi8(1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12));
}

inline __m128i mix_columns(__m128i a) {
  const __m128i t = _mm_xor_si128(a, rotate_rows(a));                 // a_r ^ a_{r+1}
  const __m128i all = _mm_xor_si128(t, rotate_rows(rotate_rows(t)));  // a_0 ^ a_1 ^ a_2 ^ a_3
  return _mm_xor_si128(_mm_xor_si128(xtime(t), all), a);               // 2a_r ^ 3a_{r+1} ^ a_{r+2} ^ a_{r+3}
}

// InvMixColumns = MixColumns after adding 4(a_r ^ a_{r+2}) to each a_r (FIPS-197's matrices).
inline __m128i inv_mix_columns(__m128i a) {
  const __m128i w = xtime(xtime(_mm_xor_si128(a, rotate_rows(rotate_rows(a)))));
  return mix_columns(_mm_xor_si128(a, w));
}

// Byte r + 4c takes byte r + 4(c + r) (ShiftRows) or r + 4(c - r) (InvShiftRows), mod 16.
inline __m128i shift_rows(__m128i v) {
  return _mm_shuffle_epi8(v, _mm_setr_epi8(0, 5, 10, 15, 4, 9, 14, 3, 8, 13, 2, 7, 12, 1, 6, 11));
}
inline __m128i inv_shift_rows(__m128i v) {
  return _mm_shuffle_epi8(v, _mm_setr_epi8(0, 13, 10, 7, 4, 1, 14, 11, 8, 5, 2, 15, 12, 9, 6, 3));
}

}  // namespace

void avx512_finish_round(std::uint8_t* states, std::size_t blocks, const Entry* entries, const std::uint8_t* mine,
                         const std::uint8_t* theirs, const std::uint8_t* round_key, RoundShape shape) {
  const bool encrypt = shape == RoundShape::EncryptMiddle || shape == RoundShape::EncryptLast;
  const auto& rows = public_rows().rows[encrypt ? 0 : 1];
  const __m128i key = _mm_loadu_si128(reinterpret_cast<const __m128i*>(round_key));
  alignas(16) std::uint8_t opened[16];
  alignas(16) std::uint8_t looked_up[16];
  for (std::size_t b = 0; b < blocks; ++b) {
    const Entry* block_entries = entries + 16 * b;
    _mm_store_si128(reinterpret_cast<__m128i*>(opened),
                    _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(mine + 16 * b)),
                                  _mm_loadu_si128(reinterpret_cast<const __m128i*>(theirs + 16 * b))));
    for (int i = 0; i < 16; ++i) looked_up[i] = lookup(rows[opened[i]], block_entries[i]);
    __m128i state = _mm_load_si128(reinterpret_cast<const __m128i*>(looked_up));
    switch (shape) {
      case RoundShape::EncryptMiddle: state = _mm_xor_si128(mix_columns(shift_rows(state)), key); break;
      case RoundShape::EncryptLast: state = _mm_xor_si128(shift_rows(state), key); break;
      case RoundShape::DecryptMiddle: state = inv_shift_rows(inv_mix_columns(_mm_xor_si128(state, key))); break;
      case RoundShape::DecryptLast: state = _mm_xor_si128(state, key); break;
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(states + 16 * b), state);
  }
  wipe(looked_up, sizeof looked_up);
}

}  // namespace mpc::lut2::detail
