// Internal to half_gates.cpp: the per-gate hot loops. One call garbles (or evaluates) one AND
// gate of the program in all n instances at once; the instances are independent, so their
// hashes keep the AES units busy.
//
// Rows: a, b, out are the gate's slot rows (instance e at index e), tg / te its two table rows
// (the garbler's and the evaluator's half gate). Instance e of the gate is gate-instance
// k = first + e of the garbling; its hashes use the tweaks (tweak_high, 2k) on the a labels and
// (tweak_high, 2k + 1) on the b labels. out never aliases a or b (circuits::compile()
// guarantees that an AND's out slot is not read in its layer).
//
// Two implementations compute the same bytes (tests compare them):
//   portable: two_party::tccr_hash (AES-NI eight blocks in flight, or OpenSSL), then the
//             half-gate algebra, in chunks of instances;
//   vaes:     fused single pass with VAES on 512-bit registers (four labels per instruction,
//             eight registers in flight), entered only after vaes_supported(). Its translation
//             unit alone is compiled with VAES/AVX-512 flags and has nothing with external
//             linkage besides these entry points (only PODs and declarations in this header).
#pragma once

#include <cstddef>
#include <cstdint>

#include "protocol/two_party/block.hpp"

namespace mpc::gc2::detail {

using two_party::Block;

void portable_garble_and(const Block* a, const Block* b, Block* out, Block* tg, Block* te, std::size_t n,
                         const Block& delta, std::uint64_t tweak_high, std::uint64_t first);
void portable_evaluate_and(const Block* a, const Block* b, Block* out, const Block* tg, const Block* te,
                           std::size_t n, std::uint64_t tweak_high, std::uint64_t first);

// True when the CPU and OS support VAES, AVX-512 F/BW/VL and AES-NI.
bool vaes_supported();
void vaes_garble_and(const Block* a, const Block* b, Block* out, Block* tg, Block* te, std::size_t n,
                     const Block& delta, std::uint64_t tweak_high, std::uint64_t first);
void vaes_evaluate_and(const Block* a, const Block* b, Block* out, const Block* tg, const Block* te, std::size_t n,
                       std::uint64_t tweak_high, std::uint64_t first);

// The fixed public AES-128 key of two_party::tccr_hash (the first 16 bytes of
// SHA-256("mpc-kdc fixed-key AES v1")); the vaes kernel expands it itself. Tests check that
// both kernels give the same tables.
inline constexpr std::uint8_t kFixedKey[16] = {0xe0, 0x92, 0x1e, 0x64, 0x4c, 0xc5, 0x5b, 0xb5,
                                               0xfc, 0x49, 0x10, 0xc9, 0x7c, 0x1e, 0x42, 0x9e};

}  // namespace mpc::gc2::detail
