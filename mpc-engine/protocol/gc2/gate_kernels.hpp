// Internal to half_gates.cpp: the hot loops. One call garbles (or evaluates) the AND gates
// ops[0, count) of one layer in all n instances of the program.
//
// Slots: slot s of instance e is slots[s * n + e]. Tables: gate g's T_G row (the garbler's half
// gate) at tables[2 * g * n, + n), its T_E row (the evaluator's half gate) right after. Gate g
// in instance e is gate-instance k = first + g * n + e of the garbling; its hashes use the
// tweaks (tweak_high, 2k) on the a labels and (tweak_high, 2k + 1) on the b labels. No op's
// out slot is another op's input (circuits::compile() guarantees it within a layer), so the
// gate-instances of one call are independent: that is what keeps the AES units busy.
//
// Two implementations compute the same bytes (tests compare them):
//   portable: two_party::tccr_hash (AES-NI eight blocks in flight, or OpenSSL) over chunks of
//             64 gate-instances taken across the layer's gates, then the half-gate algebra;
//   vaes:     fused single pass with VAES on 512-bit registers (four labels per instruction,
//             eight registers in flight): from 16 instances on, each gate's contiguous rows
//             fill the registers; below, consecutive gates share them (a label per lane).
//             Entered only after vaes_supported(); its translation unit alone is compiled
//             with VAES/AVX-512 flags and has nothing with external linkage besides these
//             entry points (this header holds only PODs and declarations).
#pragma once

#include <cstddef>
#include <cstdint>

#include "circuits/program.hpp"
#include "protocol/two_party/block.hpp"

namespace mpc::gc2::detail {

using two_party::Block;

void portable_garble_ands(const circuits::AndOp* ops, std::size_t count, Block* slots, std::size_t n, Block* tables,
                          const Block& delta, std::uint64_t tweak_high, std::uint64_t first);
void portable_evaluate_ands(const circuits::AndOp* ops, std::size_t count, Block* slots, std::size_t n,
                            const Block* tables, std::uint64_t tweak_high, std::uint64_t first);

// True when the CPU and OS support VAES, AVX-512 F/BW/VL and AES-NI.
bool vaes_supported();
void vaes_garble_ands(const circuits::AndOp* ops, std::size_t count, Block* slots, std::size_t n, Block* tables,
                      const Block& delta, std::uint64_t tweak_high, std::uint64_t first);
void vaes_evaluate_ands(const circuits::AndOp* ops, std::size_t count, Block* slots, std::size_t n,
                        const Block* tables, std::uint64_t tweak_high, std::uint64_t first);

}  // namespace mpc::gc2::detail
