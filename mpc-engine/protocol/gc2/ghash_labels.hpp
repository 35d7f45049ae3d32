// GHASH of public data under a hash key held as wire labels: GHASH_H(X) = X_1 * H^m ^ ... ^
// X_m * H (GCM, SP 800-38D) is, for public blocks X_i, a GF(2)-linear map of the bits of
// H^1..H^m, so under free-XOR its output labels are XORs of the powers' labels. The garbler
// runs it on its zero labels, the evaluator on its active labels, and each gets the labels of
// GHASH_H(X) without a message or a gate. A GCM tag check then needs gates only for its
// comparison (engines/two_party/gc2_circuit_jobs.cpp).
//
// Label rows follow the bytes of a GCM value as the rest of the engine lays bits out: row r
// is bit r % 8 (least significant first) of byte r / 8.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "protocol/gc2/labels.hpp"

namespace mpc::gc2 {

// power_labels: 128 labels per power, H^1 first (rows of H^k at 128 (k - 1)). The labels of
// GHASH_H(aad, text) over GCM's input (the AAD and the text each zero-padded to whole blocks,
// then their 64-bit bit lengths). Throws Error(Protocol) when the input needs more powers
// than given or a length does not fit GCM's length fields.
Labels ghash_labels(std::span<const Block> power_labels, std::span<const std::uint8_t> aad,
                    std::span<const std::uint8_t> text);

}  // namespace mpc::gc2
