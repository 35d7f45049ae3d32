// combine_bits with GFNI on AVX-512: each output byte of a lane's element is an 8x8 bit matrix
// (from the public coefficients) times each input byte of that lane, and GF2P8AFFINEQB applies
// one such matrix to 64 lanes' bytes at once. The steps, per window of 8 E words (E / 2 groups
// of eight from each plane):
// 1. Bytes to lanes: for each group of eight words, VPERMB gathers byte b of the eight words
//    into qword b, and GF2P8AFFINEQB with the data as the matrix transposes each qword's 8x8
//    bits, so that byte j of the result holds lane j's bits of the eight words.
// 2. Out byte m of every lane = XOR over the E groups i of matrix (m, i) times in byte i.
// 3. The sixteen registers of out bytes (byte j of register m: byte m of lane j's element) are
//    transposed into elements: a 16x16 byte transpose inside each 128-bit lane by unpacks, then
//    a 4x4 transpose of 128-bit blocks, so that each store writes four consecutive elements.
// Built with GFNI and AVX-512 flags; gfni_combine_bits() checks the CPU before handing it out.
// The words pass only through permutes, affine maps and XORs: constant time in them.
#include "protocol/rss3/bit_combination.hpp"

#if defined(MPC_RSS3_X86) && defined(__GFNI__) && defined(__AVX512VBMI__) && defined(__AVX512BW__)
#include <immintrin.h>

namespace mpc::rss3::detail {
namespace {

constexpr std::size_t kMaxGroups = kMaxCombinedWords / 8;

// Matrix (m, i) as GF2P8AFFINEQB reads it: result bit r of a byte is the parity of the byte
// with matrix byte 7 - r, so byte 7 - r marks the input bits s for which bit 8 m + r of
// coefficient 8 i + s is set.
void build_matrices(const Gf128* coefficients, std::size_t groups, std::uint64_t (*matrix)[kMaxGroups]) {
  for (unsigned m = 0; m < 16; ++m)
    for (std::size_t i = 0; i < groups; ++i) {
      std::uint64_t q = 0;
      for (unsigned r = 0; r < 8; ++r) {
        const unsigned bit = 8 * m + r;
        unsigned row = 0;
        for (unsigned s = 0; s < 8; ++s) {
          const Gf128 c = coefficients[8 * i + s];
          row |= static_cast<unsigned>(((bit < 64 ? c.lo >> bit : c.hi >> (bit - 64)) & 1) << s);
        }
        q |= static_cast<std::uint64_t>(row) << (8 * (7 - r));
      }
      matrix[m][i] = q;
    }
}

// Byte 8 b + p of the result is byte b of word 7 - p: qword b holds the eight words' byte b,
// last word first, as the bit transpose below wants it.
__m512i gather_index() {
  alignas(64) std::uint8_t index[64];
  for (unsigned b = 0; b < 8; ++b)
    for (unsigned p = 0; p < 8; ++p) index[8 * b + p] = static_cast<std::uint8_t>(8 * (7 - p) + b);
  return _mm512_load_si512(index);
}

// Sixteen registers of out bytes to elements out[0 .. 63]: see step 3 above.
inline void store_elements(__m512i (&y)[16], Gf128* out) {
  __m512i s1[16], s2[16], s3[16], e[16];
  for (unsigned p = 0; p < 8; ++p) {  // row pair p: columns 0-7 and 8-15
    s1[2 * p] = _mm512_unpacklo_epi8(y[2 * p], y[2 * p + 1]);
    s1[2 * p + 1] = _mm512_unpackhi_epi8(y[2 * p], y[2 * p + 1]);
  }
  for (unsigned q = 0; q < 4; ++q)  // rows 4 q .. 4 q + 3: column blocks of four
    for (unsigned h = 0; h < 2; ++h) {
      s2[4 * q + 2 * h] = _mm512_unpacklo_epi16(s1[4 * q + h], s1[4 * q + 2 + h]);
      s2[4 * q + 2 * h + 1] = _mm512_unpackhi_epi16(s1[4 * q + h], s1[4 * q + 2 + h]);
    }
  for (unsigned o = 0; o < 2; ++o)  // rows 8 o .. 8 o + 7: column pairs
    for (unsigned cb = 0; cb < 4; ++cb) {
      s3[8 * o + 2 * cb] = _mm512_unpacklo_epi32(s2[8 * o + cb], s2[8 * o + 4 + cb]);
      s3[8 * o + 2 * cb + 1] = _mm512_unpackhi_epi32(s2[8 * o + cb], s2[8 * o + 4 + cb]);
    }
  for (unsigned cp = 0; cp < 8; ++cp) {  // all sixteen rows: one column, one element per lane
    e[2 * cp] = _mm512_unpacklo_epi64(s3[cp], s3[8 + cp]);
    e[2 * cp + 1] = _mm512_unpackhi_epi64(s3[cp], s3[8 + cp]);
  }
  // Block L of e[t] is element 16 L + t; four consecutive t make one store per block L.
  for (unsigned q = 0; q < 4; ++q) {
    const __m512i a = _mm512_shuffle_i64x2(e[4 * q], e[4 * q + 1], 0x44);
    const __m512i b = _mm512_shuffle_i64x2(e[4 * q], e[4 * q + 1], 0xee);
    const __m512i c = _mm512_shuffle_i64x2(e[4 * q + 2], e[4 * q + 3], 0x44);
    const __m512i d = _mm512_shuffle_i64x2(e[4 * q + 2], e[4 * q + 3], 0xee);
    _mm512_storeu_si512(out + 4 * q, _mm512_shuffle_i64x2(a, c, 0x88));
    _mm512_storeu_si512(out + 16 + 4 * q, _mm512_shuffle_i64x2(a, c, 0xdd));
    _mm512_storeu_si512(out + 32 + 4 * q, _mm512_shuffle_i64x2(b, d, 0x88));
    _mm512_storeu_si512(out + 48 + 4 * q, _mm512_shuffle_i64x2(b, d, 0xdd));
  }
}

// One window of kGroups groups of eight words: the group count is a template argument so that
// every loop unrolls and each matrix is a broadcast operand of its GF2P8AFFINEQB, three results
// XORed per VPTERNLOGQ.
template <std::size_t kGroups>
inline void combine_window(const std::uint64_t* first, const std::uint64_t* second,
                           const std::uint64_t (*matrix)[kMaxGroups], __m512i index, __m512i select, Gf128* out) {
  __m512i lanes[kGroups];
  for (std::size_t i = 0; i < kGroups; ++i) {
    const std::uint64_t* eight = i < kGroups / 2 ? first + 8 * i : second + 8 * (i - kGroups / 2);
    const __m512i rows = _mm512_permutexvar_epi8(index, _mm512_loadu_si512(eight));
    lanes[i] = _mm512_gf2p8affine_epi64_epi8(select, rows, 0);
  }
  __m512i y[16];
  for (unsigned m = 0; m < 16; ++m) {
    auto term = [&](std::size_t i) {
      return _mm512_gf2p8affine_epi64_epi8(lanes[i], _mm512_set1_epi64(static_cast<long long>(matrix[m][i])), 0);
    };
    __m512i sum = term(0);
    std::size_t i = 1;
    for (; i + 1 < kGroups; i += 2) sum = _mm512_ternarylogic_epi64(sum, term(i), term(i + 1), 0x96);
    for (; i < kGroups; ++i) sum = _mm512_xor_si512(sum, term(i));
    y[m] = sum;
  }
  store_elements(y, out);
}

template <std::size_t kGroups>
void combine_windows(const WindowPlanes& planes, std::size_t windows, const std::uint64_t (*matrix)[kMaxGroups],
                     Gf128* out) {
  const __m512i index = gather_index();
  const __m512i select = _mm512_set1_epi64(static_cast<long long>(0x8040201008040201ull));
  for (std::size_t c = 0; c < windows; ++c)
    combine_window<kGroups>(planes.first + planes.half * c, planes.second + planes.half * c, matrix, index, select,
                            out + 64 * c);
}

void combine(const WindowPlanes& planes, std::size_t windows, const Gf128* coefficients, Gf128* out) {
  const std::size_t groups = 2 * (planes.half / 8);
  std::uint64_t matrix[16][kMaxGroups];
  build_matrices(coefficients, groups, matrix);
  switch (groups) {
    case 2: combine_windows<2>(planes, windows, matrix, out); break;
    case 4: combine_windows<4>(planes, windows, matrix, out); break;
    case 6: combine_windows<6>(planes, windows, matrix, out); break;
    default: combine_windows<8>(planes, windows, matrix, out); break;
  }
}

}  // namespace

CombineBitsKernel gfni_combine_bits() {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("gfni") || !__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
      !__builtin_cpu_supports("avx512vbmi"))
    return nullptr;
  return &combine;
}

}  // namespace mpc::rss3::detail

#else

namespace mpc::rss3::detail {
CombineBitsKernel gfni_combine_bits() { return nullptr; }
}  // namespace mpc::rss3::detail

#endif
