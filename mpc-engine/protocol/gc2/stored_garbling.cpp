#include "protocol/gc2/stored_garbling.hpp"

#include <string>

#include "common/error.hpp"
#include "protocol/two_party/buffer_channel.hpp"

namespace mpc::gc2 {

GarblingAhead garble_ahead(Garbler& garbler, const circuits::Program& program, std::size_t instances,
                           std::span<const Block> input_zero_labels) {
  two_party::RecordingChannel recording;
  GarblingAhead out;
  out.decoding = garbler.garble(program, instances, input_zero_labels, recording);
  out.stream = recording.take();
  out.number = stored_garbling_number(out.stream);
  return out;
}

std::uint64_t stored_garbling_number(std::span<const std::uint8_t> stream) {
  if (stream.size() < 8) throw FormatError(Component::Protocol, "kept garbling shorter than its header");
  std::uint64_t number = 0;
  for (int i = 0; i < 8; ++i) number |= static_cast<std::uint64_t>(stream[static_cast<std::size_t>(i)]) << (8 * i);
  return number;
}

std::vector<std::uint8_t> evaluate_stored(const circuits::Program& program, std::size_t instances,
                                          std::span<const Block> input_labels, std::span<const std::uint8_t> stream,
                                          Kernel kernel) {
  const std::uint64_t expected = garbled_bytes(program, instances);
  if (stream.size() != expected)
    throw PeerError(Component::Protocol, "kept garbling of " + std::to_string(stream.size()) +
                                             " bytes for a program that garbles to " + std::to_string(expected));
  two_party::ReplayChannel replay(stream);
  return evaluate(program, instances, input_labels, replay, kernel);
}

}  // namespace mpc::gc2
