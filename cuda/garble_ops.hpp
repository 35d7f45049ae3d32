// cuda/garble_ops.hpp: half-gates garbling and evaluation of one gate-instance, and the
// linear ops on labels, as device primitives: the same bytes as the CPU garbler
// (mpc-engine/protocol/gc2/half_gates.hpp). Zahur, Rosulek, Evans, "Two Halves Make a
// Whole", EUROCRYPT 2015 (half-gates, free-XOR, point-and-permute), with the fixed-key
// hash of Guo, Katz, Wang, Yu, "Efficient and Secure Multiparty Computation from
// Fixed-Key Block Ciphers", IEEE S&P 2020 (eprint 2019/074):
//   H(x, t) = pi(sigma(x) ^ t) ^ sigma(x),  sigma(lo, hi) = (hi, lo ^ hi),
// pi = AES-128 under two_party::kFixedKey, t = (tweak, tweak_high) as a label.
//
// Labels are two_party::Block: 16 bytes, lo (little-endian) then hi; AES reads them as
// bytes in that order. Stream order (half_gates.hpp): instances in tiles of 32, per tile
// per layer per AND gate the gate's T_G row then its T_E row; gate-instance (G, instance i)
// of tile t = i / 32 (first instance f_t = 32 t, n_t instances) is number
// k = and_gates * f_t + G * n_t + (i - f_t), G counting the program's ANDs in order, and its
// T_G is block 2 (and_gates * f_t + G * n_t) + (i - f_t) of the tables, T_E n_t further.
//
// The AES here is the table-driven one of aes_ttable.hpp: its lookups are indexed by label
// bytes, so a process sharing the GPU could in principle time them (docs/gpu.md).
//
// Host and device: no CUDA headers, no C++20 (see device_helpers.hpp).
#pragma once

#include <cstdint>

#include "cuda/aes_ttable.hpp"
#include "cuda/device_helpers.hpp"
#include "cuda/layer_ops.hpp"

namespace mpc::cuda::detail {

struct Label {
  std::uint64_t lo;
  std::uint64_t hi;
};

MPC_HD Label operator^(Label a, Label b) { return Label{a.lo ^ b.lo, a.hi ^ b.hi}; }
// a where the mask is all ones, zero where it is zero (no branch on the secret bit).
MPC_HD Label masked(Label a, std::uint64_t mask) { return Label{a.lo & mask, a.hi & mask}; }
// All ones when the label's point-and-permute bit (lsb) is 1.
MPC_HD std::uint64_t colour_mask(Label a) { return std::uint64_t{0} - (a.lo & 1); }

MPC_HD Label sigma(Label x) { return Label{x.hi, x.lo ^ x.hi}; }

MPC_HD Label fixed_key_aes(const std::uint32_t* rk, const std::uint32_t (*te)[256], const std::uint8_t* sbox, Label x) {
  const std::uint32_t in[4] = {bswap32(static_cast<std::uint32_t>(x.lo)), bswap32(static_cast<std::uint32_t>(x.lo >> 32)),
                               bswap32(static_cast<std::uint32_t>(x.hi)), bswap32(static_cast<std::uint32_t>(x.hi >> 32))};
  std::uint32_t out[4];
  aes128_encrypt_words(rk, te, sbox, in, out);
  return Label{bswap32(out[0]) | (std::uint64_t{bswap32(out[1])} << 32),
               bswap32(out[2]) | (std::uint64_t{bswap32(out[3])} << 32)};
}

MPC_HD Label tccr_hash(const std::uint32_t* rk, const std::uint32_t (*te)[256], const std::uint8_t* sbox, Label x,
                       std::uint64_t tweak, std::uint64_t tweak_high) {
  const Label s = sigma(x);
  return fixed_key_aes(rk, te, sbox, Label{s.lo ^ tweak, s.hi ^ tweak_high}) ^ s;
}

enum GarbleOpcode : std::uint32_t {
  kGcXor = 0,     // out = in0 ^ in1
  kGcInv = 1,     // out = in0 ^ flip (garbler: delta; evaluator: zero)
  kGcCopy = 2,    // out = in0
  kGcConst = 3,   // out = constant ^ (in0 != 0 ? flip : 0)
  kGcLoad = 4,    // out = input row in0
  kGcAnd = 5,     // out = half-gates AND of in0, in1
  kGcOutput = 6,  // output row in0 = slot out (decoding bit / colour, and the label)
};

// One chunk of instances of one garbling (or evaluation) on the device.
struct GarbleArgs {
  const DeviceOp* ops;       // the plan's ops (garble_plan.hpp)
  Label* slots;              // slot s of local instance l at slots[s * count + l]
  const Label* inputs;       // input row r of local instance l at inputs[r * count + l]
  Label* tables;             // the chunk's tables: block b of the batch at tables[b - 2 * and_gates * first]
  std::uint8_t* bits;        // output j of local instance l at bits[j * count + l]: lsb of its label
  Label* output_labels;      // the labels themselves, laid out as bits, or null
  Aes128RoundKeys key;       // pi's round keys (public)
  Label flip;                // garbler: delta; evaluator: zero
  Label constant;            // the label of constant 0
  std::uint64_t tweak_high;  // the garbling's number
  std::uint64_t and_gates;   // of the program
  std::uint64_t instances;   // of the batch
  std::uint64_t first;       // first instance of the chunk (a multiple of 32)
  std::uint64_t count;       // instances in the chunk
  std::uint32_t garbler;     // 1: garble (write tables), 0: evaluate (read them)
};

MPC_HD Label& slot_of(const GarbleArgs& a, std::uint32_t slot, std::uint64_t local) {
  return a.slots[static_cast<std::uint64_t>(slot) * a.count + local];
}

// Half h (0: lo, 1: hi) of a linear op (or an output copy) on chunk-local instance
// `local`: linear ops act on each 64-bit half alone, so two threads share a label.
MPC_HD std::uint64_t half_of(const Label& x, std::uint32_t h) { return h == 0 ? x.lo : x.hi; }
MPC_HD void set_half(Label& x, std::uint32_t h, std::uint64_t v) {
  if (h == 0)
    x.lo = v;
  else
    x.hi = v;
}

MPC_HD void garble_linear(const GarbleArgs& a, const DeviceOp& op, std::uint64_t local, std::uint32_t h) {
  switch (op.code) {
    case kGcXor:
      set_half(slot_of(a, op.a, local), h, half_of(slot_of(a, op.b, local), h) ^ half_of(slot_of(a, op.c, local), h));
      break;
    case kGcInv: set_half(slot_of(a, op.a, local), h, half_of(slot_of(a, op.b, local), h) ^ half_of(a.flip, h)); break;
    case kGcCopy: set_half(slot_of(a, op.a, local), h, half_of(slot_of(a, op.b, local), h)); break;
    case kGcConst:
      set_half(slot_of(a, op.a, local), h,
               half_of(a.constant, h) ^ (half_of(a.flip, h) & (op.b != 0 ? ~std::uint64_t{0} : 0)));
      break;
    case kGcLoad:
      set_half(slot_of(a, op.a, local), h, half_of(a.inputs[static_cast<std::uint64_t>(op.b) * a.count + local], h));
      break;
    case kGcOutput: {
      const std::uint64_t v = half_of(slot_of(a, op.a, local), h);
      const std::uint64_t at = static_cast<std::uint64_t>(op.b) * a.count + local;
      if (h == 0) a.bits[at] = static_cast<std::uint8_t>(v & 1);
      if (a.output_labels != nullptr) set_half(a.output_labels[at], h, v);
      break;
    }
    default: break;  // never: plans hold only the opcodes above
  }
}

// AND gate `gate` (G, the program's AND count before it) of op on chunk-local instance
// `local`: garbles it (tables out, zero label of the output) or evaluates it.
MPC_HD void garble_and(const GarbleArgs& a, const DeviceOp& op, std::uint64_t gate, std::uint64_t local,
                       const std::uint32_t (*te)[256], const std::uint8_t* sbox) {
  const std::uint64_t i = a.first + local;
  const std::uint64_t tile_first = i / 32 * 32;
  const std::uint64_t tile_n = a.instances - tile_first < 32 ? a.instances - tile_first : 32;
  const std::uint64_t e = i - tile_first;
  const std::uint64_t k = a.and_gates * tile_first + gate * tile_n + e;
  const std::uint64_t t_g_block = 2 * (a.and_gates * tile_first + gate * tile_n) + e - 2 * a.and_gates * a.first;
  const std::uint64_t t_e_block = t_g_block + tile_n;
  const Label x = slot_of(a, op.b, local);
  const Label y = slot_of(a, op.c, local);
  const std::uint32_t* rk = a.key.w;
  if (a.garbler != 0) {
    const Label& delta = a.flip;
    const Label ha0 = tccr_hash(rk, te, sbox, x, 2 * k, a.tweak_high);
    const Label ha1 = tccr_hash(rk, te, sbox, x ^ delta, 2 * k, a.tweak_high);
    const Label hb0 = tccr_hash(rk, te, sbox, y, 2 * k + 1, a.tweak_high);
    const Label hb1 = tccr_hash(rk, te, sbox, y ^ delta, 2 * k + 1, a.tweak_high);
    const std::uint64_t pa = colour_mask(x), pb = colour_mask(y);
    // Garbler's half gate: T_G = H(A0) ^ H(A1) ^ pb * delta; evaluator's: T_E = H(B0) ^ H(B1) ^ A0.
    const Label t_g = ha0 ^ ha1 ^ masked(delta, pb);
    const Label t_e = hb0 ^ hb1 ^ x;
    a.tables[t_g_block] = t_g;
    a.tables[t_e_block] = t_e;
    // W0 = H(A0) ^ pa * T_G  ^  H(B0) ^ pb * (T_E ^ A0).
    slot_of(a, op.a, local) = ha0 ^ masked(t_g, pa) ^ hb0 ^ masked(t_e ^ x, pb);
  } else {
    const Label ha = tccr_hash(rk, te, sbox, x, 2 * k, a.tweak_high);
    const Label hb = tccr_hash(rk, te, sbox, y, 2 * k + 1, a.tweak_high);
    // W = H(A) ^ sa * T_G  ^  H(B) ^ sb * (T_E ^ A).
    slot_of(a, op.a, local) =
        ha ^ masked(a.tables[t_g_block], colour_mask(x)) ^ hb ^ masked(a.tables[t_e_block] ^ x, colour_mask(y));
  }
}

}  // namespace mpc::cuda::detail
