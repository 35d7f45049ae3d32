// n-fold of RFC 3961 section 5.1, for the public constants of Kerberos key derivation: the
// client's dealer derives keys in clear with it, and the circuits that derive keys inside the
// computation (kerberos_cf2.hpp) fold their usage constants with it when they are built.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace mpc::circuits {

// n-fold(input, output_bytes * 8): the input repeated to the least common multiple of both
// lengths, each repetition rotated 13 bits further right, the output-sized chunks added with
// one's-complement addition. Public constants only (not constant-time). Throws
// FormatError(Component::Circuit) for an empty input or output.
std::vector<std::uint8_t> n_fold(std::span<const std::uint8_t> input, std::size_t output_bytes);

}  // namespace mpc::circuits
