// The portable half-gate kernels: the shared fixed-key hash (AES-NI with eight blocks in flight,
// or OpenSSL, chosen by two_party at run time) over chunks of up to 64 gate-instances taken in
// order across the layer's gates (so one instance still fills a chunk), then the half-gate
// algebra with branch-free selects on the point-and-permute bits.
#include <algorithm>

#include "common/secret.hpp"
#include "protocol/gc2/gate_kernels.hpp"
#include "protocol/two_party/fixed_key_hash.hpp"

namespace mpc::gc2::detail {
namespace {

using two_party::select_mask;
using two_party::tccr_hash;

constexpr std::size_t kChunk = 64;

// Where the gate-instances of one chunk live: gate-instance (g, e) of the layer reads slots
// in0 and in1 and writes slot out of instance e, and T_G at tables[2 g n + e], T_E n further.
struct ChunkRows {
  std::size_t a[kChunk];
  std::size_t b[kChunk];
  std::size_t out[kChunk];
  std::size_t table[kChunk];
  std::size_t count = 0;
};

// Takes up to kChunk gate-instances from the cursor (gate g, instance e), advancing it.
void next_chunk(const circuits::AndOp* ops, std::size_t gates, std::size_t n, std::size_t& g, std::size_t& e,
                ChunkRows& rows) {
  rows.count = 0;
  while (rows.count < kChunk && g < gates) {
    // A whole run of one gate's instances at once.
    const std::size_t take = std::min(kChunk - rows.count, n - e);
    for (std::size_t j = 0; j < take; ++j, ++rows.count) {
      rows.a[rows.count] = static_cast<std::size_t>(ops[g].in0) * n + e + j;
      rows.b[rows.count] = static_cast<std::size_t>(ops[g].in1) * n + e + j;
      rows.out[rows.count] = static_cast<std::size_t>(ops[g].out) * n + e + j;
      rows.table[rows.count] = 2 * g * n + e + j;
    }
    e += take;
    if (e == n) {
      e = 0;
      ++g;
    }
  }
}

}  // namespace

void portable_garble_ands(const circuits::AndOp* ops, std::size_t count, Block* slots, std::size_t n, Block* tables,
                          const Block& delta, std::uint64_t tweak_high, std::uint64_t first) {
  Block a0[kChunk], a1[kChunk], b0[kChunk], b1[kChunk], ha0[kChunk], ha1[kChunk], hb0[kChunk], hb1[kChunk];
  ChunkRows rows;
  std::size_t g = 0, e = 0;
  std::uint64_t k = first;
  for (;;) {
    next_chunk(ops, count, n, g, e, rows);
    const std::size_t m = rows.count;
    if (m == 0) break;
    for (std::size_t i = 0; i < m; ++i) {
      a0[i] = slots[rows.a[i]];
      b0[i] = slots[rows.b[i]];
      a1[i] = a0[i] ^ delta;
      b1[i] = b0[i] ^ delta;
    }
    tccr_hash(a0, ha0, m, tweak_high, 2 * k, 2);
    tccr_hash(a1, ha1, m, tweak_high, 2 * k, 2);
    tccr_hash(b0, hb0, m, tweak_high, 2 * k + 1, 2);
    tccr_hash(b1, hb1, m, tweak_high, 2 * k + 1, 2);
    for (std::size_t i = 0; i < m; ++i) {
      const Block pa = select_mask(a0[i].lsb());
      const Block pb = select_mask(b0[i].lsb());
      // Garbler's half gate (it knows b's colour): T_G = H(A0) ^ H(A1) ^ pb * delta.
      const Block t_g = ha0[i] ^ ha1[i] ^ (delta & pb);
      // Evaluator's half gate (it knows b's value relative to its colour): T_E = H(B0) ^ H(B1) ^ A0.
      const Block t_e = hb0[i] ^ hb1[i] ^ a0[i];
      tables[rows.table[i]] = t_g;
      tables[rows.table[i] + n] = t_e;
      // W0 = H(A0) ^ pa * T_G  ^  H(B0) ^ pb * (T_E ^ A0).
      slots[rows.out[i]] = ha0[i] ^ (t_g & pa) ^ hb0[i] ^ ((t_e ^ a0[i]) & pb);
    }
    k += m;
  }
  const std::size_t used = std::min(kChunk, count * n) * sizeof(Block);
  for (Block* buffer : {a0, a1, b0, b1, ha0, ha1, hb0, hb1}) wipe(buffer, used);
}

void portable_evaluate_ands(const circuits::AndOp* ops, std::size_t count, Block* slots, std::size_t n,
                            const Block* tables, std::uint64_t tweak_high, std::uint64_t first) {
  Block wa[kChunk], wb[kChunk], ha[kChunk], hb[kChunk];
  ChunkRows rows;
  std::size_t g = 0, e = 0;
  std::uint64_t k = first;
  for (;;) {
    next_chunk(ops, count, n, g, e, rows);
    const std::size_t m = rows.count;
    if (m == 0) break;
    for (std::size_t i = 0; i < m; ++i) {
      wa[i] = slots[rows.a[i]];
      wb[i] = slots[rows.b[i]];
    }
    tccr_hash(wa, ha, m, tweak_high, 2 * k, 2);
    tccr_hash(wb, hb, m, tweak_high, 2 * k + 1, 2);
    for (std::size_t i = 0; i < m; ++i) {
      const Block sa = select_mask(wa[i].lsb());
      const Block sb = select_mask(wb[i].lsb());
      // W = H(A) ^ sa * T_G  ^  H(B) ^ sb * (T_E ^ A).
      slots[rows.out[i]] =
          ha[i] ^ (tables[rows.table[i]] & sa) ^ hb[i] ^ ((tables[rows.table[i] + n] ^ wa[i]) & sb);
    }
    k += m;
  }
  const std::size_t used = std::min(kChunk, count * n) * sizeof(Block);
  for (Block* buffer : {wa, wb, ha, hb}) wipe(buffer, used);
}

bool vaes_supported() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("vaes") && __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("aes");
#else
  return false;
#endif
}

}  // namespace mpc::gc2::detail
