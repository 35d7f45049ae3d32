// The portable half-gate kernels: the shared fixed-key hash (AES-NI or OpenSSL, chosen by
// two_party at run time) over chunks of instances, then the half-gate algebra with
// branch-free selects on the point-and-permute bits.
#include <algorithm>

#include "common/secret.hpp"
#include "protocol/gc2/gate_kernels.hpp"
#include "protocol/two_party/fixed_key_hash.hpp"

namespace mpc::gc2::detail {
namespace {

using two_party::select_mask;
using two_party::tccr_hash;

constexpr std::size_t kChunk = 64;

}  // namespace

void portable_garble_and(const Block* a, const Block* b, Block* out, Block* tg, Block* te, std::size_t n,
                         const Block& delta, std::uint64_t tweak_high, std::uint64_t first) {
  Block a1[kChunk], b1[kChunk], ha0[kChunk], ha1[kChunk], hb0[kChunk], hb1[kChunk];
  for (std::size_t start = 0; start < n; start += kChunk) {
    const std::size_t m = std::min(kChunk, n - start);
    const std::uint64_t k = first + start;
    for (std::size_t e = 0; e < m; ++e) {
      a1[e] = a[start + e] ^ delta;
      b1[e] = b[start + e] ^ delta;
    }
    tccr_hash(a + start, ha0, m, tweak_high, 2 * k, 2);
    tccr_hash(a1, ha1, m, tweak_high, 2 * k, 2);
    tccr_hash(b + start, hb0, m, tweak_high, 2 * k + 1, 2);
    tccr_hash(b1, hb1, m, tweak_high, 2 * k + 1, 2);
    for (std::size_t e = 0; e < m; ++e) {
      const Block a0 = a[start + e];
      const Block pa = select_mask(a0.lsb());
      const Block pb = select_mask(b[start + e].lsb());
      // Garbler's half gate (it knows b's colour): T_G = H(A0) ^ H(A1) ^ pb * delta.
      const Block t_g = ha0[e] ^ ha1[e] ^ (delta & pb);
      // Evaluator's half gate (it knows b's value relative to its colour): T_E = H(B0) ^ H(B1) ^ A0.
      const Block t_e = hb0[e] ^ hb1[e] ^ a0;
      tg[start + e] = t_g;
      te[start + e] = t_e;
      out[start + e] = ha0[e] ^ (t_g & pa) ^ hb0[e] ^ ((t_e ^ a0) & pb);
    }
  }
  const std::size_t used = std::min(kChunk, n) * sizeof(Block);
  for (Block* buffer : {a1, b1, ha0, ha1, hb0, hb1}) wipe(buffer, used);
}

void portable_evaluate_and(const Block* a, const Block* b, Block* out, const Block* tg, const Block* te,
                           std::size_t n, std::uint64_t tweak_high, std::uint64_t first) {
  Block ha[kChunk], hb[kChunk];
  for (std::size_t start = 0; start < n; start += kChunk) {
    const std::size_t m = std::min(kChunk, n - start);
    const std::uint64_t k = first + start;
    tccr_hash(a + start, ha, m, tweak_high, 2 * k, 2);
    tccr_hash(b + start, hb, m, tweak_high, 2 * k + 1, 2);
    for (std::size_t e = 0; e < m; ++e) {
      const Block wa = a[start + e];
      const Block sa = select_mask(wa.lsb());
      const Block sb = select_mask(b[start + e].lsb());
      out[start + e] = ha[e] ^ (tg[start + e] & sa) ^ hb[e] ^ ((te[start + e] ^ wa) & sb);
    }
  }
  const std::size_t used = std::min(kChunk, n) * sizeof(Block);
  wipe(ha, used);
  wipe(hb, used);
}

}  // namespace mpc::gc2::detail
