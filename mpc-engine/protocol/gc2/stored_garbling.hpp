// Garblings made ahead of time: the offline/online split of garbled circuits. Garbling needs
// the input wires' zero labels, never the inputs' values, so the garbler garbles a program
// before its public inputs exist and keeps the zero labels it will encode them under; the
// evaluator receives the stream (header and tables) in advance and evaluates it later, once
// the garbler sends the active labels. The tables are what the evaluator would receive online
// anyway; what it may never hold is two labels of one wire, so each garbling is evaluated at
// most once (its holders take it out when they use it) and the garbler sends the active labels
// of its inputs once.
//
// The stream is exactly what Garbler::garble() sends for the program (same header, same
// order), so a kept stream evaluates as a live one does, and its garbling number comes from
// the garbler's one counter: tweaks stay unique across garblings made ahead and garblings made
// online under one delta (half_gates.hpp, "Tweaks" and "Garbling ahead").
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "circuits/program.hpp"
#include "protocol/gc2/half_gates.hpp"

namespace mpc::gc2 {

struct GarblingAhead {
  std::uint64_t number = 0;            // the garbling's number (its tweaks' high half)
  std::vector<std::uint8_t> stream;    // what the evaluator reads: header, then the tables
  std::vector<std::uint8_t> decoding;  // the garbler's output bits, laid out as garble() returns them
};

// Garbles `program` into memory (see Garbler::garble for the layout of inputs and outputs).
GarblingAhead garble_ahead(Garbler& garbler, const circuits::Program& program, std::size_t instances,
                           std::span<const Block> input_zero_labels);

// The garbling number in a kept stream's header. Throws FormatError(Protocol) for a stream
// shorter than the header.
std::uint64_t stored_garbling_number(std::span<const std::uint8_t> stream);

// Evaluates a kept stream with the active input labels, as evaluate() does a live one. Throws
// PeerError when the stream is not exactly garbled_bytes(program, instances) long or is
// malformed.
std::vector<std::uint8_t> evaluate_stored(const circuits::Program& program, std::size_t instances,
                                          std::span<const Block> input_labels, std::span<const std::uint8_t> stream,
                                          Kernel kernel = best_kernel());

}  // namespace mpc::gc2
