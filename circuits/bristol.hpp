// Bristol Fashion circuit files (https://nigelsmart.github.io/MPC-Circuits/):
//   num_gates num_wires
//   niv w_1 .. w_niv          (input groups and their widths)
//   nov w_1 .. w_nov          (output groups and their widths)
//   <blank line>
//   2 1 a b out XOR | 2 1 a b out AND | 1 1 a out INV | 1 1 a out EQW | 1 1 c out EQ
//   2k k a_1..a_k b_1..b_k out_1..out_k MAND    (read as k AND gates)
// The reader treats the file as hostile: every count, index and token is checked, sizes
// are capped (kMaxBristolWires, kMaxBristolGates) before anything is allocated from
// them, and the result passes validate(). Errors throw FormatError(Component::Circuit)
// naming the line.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string_view>

#include "circuits/circuit.hpp"

namespace mpc::circuits {

constexpr std::uint32_t kMaxBristolWires = 1U << 26;
constexpr std::uint32_t kMaxBristolGates = 1U << 26;  // gate lines; a MAND line counts once
constexpr std::uint32_t kMaxBristolGroups = 1U << 16;

Circuit read_bristol(std::istream& in);
Circuit read_bristol_file(const std::filesystem::path& path);
Circuit parse_bristol(std::string_view text);

// Writes one line per gate (Copy as EQW, Const as EQ); read_bristol gives the circuit back.
void write_bristol(const Circuit& circuit, std::ostream& out);

}  // namespace mpc::circuits
