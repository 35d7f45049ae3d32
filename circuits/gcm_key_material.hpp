// The share material of an aes256-gcm key (keys/key_algorithms.h) computed from the key inside
// the computation, so that servers can make a ticket key that never exists in one place: the
// 15 round keys of K, H = AES_K(0^128), then H^1 .. H^powers in GCM's byte order.
//
// Input: one group of 256 wires, K (byte b bit k at 8b + k). Output: one group of
// 8 * (240 + 16 * powers) wires, the material's bytes in order (byte b bit k at 8b + k).
// H^2k = (H^k)^2 costs XORs only; H^(2k+1) = H^2k * H one Karatsuba product (2187 ANDs), so the
// powers take (powers / 2) products over log2(powers) - 1 levels of AND depth after the
// cipher. For 1024 powers: about 1.13 M AND gates at AND depth 66 (with the Depth4 S-box).
#pragma once

#include <cstddef>

#include "circuits/aes_options.hpp"
#include "circuits/circuit.hpp"

namespace mpc::circuits {

Circuit build_gcm_key_material_circuit(std::size_t powers, SboxVariant sbox);

}  // namespace mpc::circuits
