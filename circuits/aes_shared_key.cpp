#include "circuits/aes_shared_key.hpp"

#include <vector>

#include "circuits/aes.hpp"
#include "circuits/builder.hpp"
#include "common/error.hpp"

namespace mpc::circuits {

Circuit build_shared_key_aes_circuit(AesKeySize size, AesDirection direction, SboxVariant sbox, std::uint32_t blocks) {
  if (blocks == 0) throw FormatError(Component::Circuit, "shared-key AES: zero blocks");
  const Circuit aes = build_aes_circuit(size, direction, sbox);
  const std::uint32_t key_bits = aes_round_key_bits(size);
  CircuitBuilder builder;
  const auto first = builder.add_input_group(key_bits);
  const auto second = builder.add_input_group(key_bits);
  const auto block_bits = builder.add_input_group(128 * blocks);
  std::vector<std::uint32_t> round_keys(key_bits);
  for (std::uint32_t i = 0; i < key_bits; ++i) round_keys[i] = builder.xor_(first[i], second[i]);
  std::vector<std::uint32_t> outputs;
  outputs.reserve(128 * blocks);
  std::vector<std::uint32_t> wire(aes.num_wires);
  for (std::uint32_t e = 0; e < blocks; ++e) {
    for (std::uint32_t i = 0; i < key_bits; ++i) wire[i] = round_keys[i];
    for (std::uint32_t i = 0; i < 128; ++i) wire[key_bits + i] = block_bits[128 * e + i];
    for (const auto& gate : aes.gates) {
      switch (gate.kind) {
        case GateKind::Xor: wire[gate.out] = builder.xor_(wire[gate.in0], wire[gate.in1]); break;
        case GateKind::And: wire[gate.out] = builder.and_(wire[gate.in0], wire[gate.in1]); break;
        case GateKind::Inv: wire[gate.out] = builder.inv(wire[gate.in0]); break;
        case GateKind::Copy: wire[gate.out] = wire[gate.in0]; break;
        case GateKind::Const: wire[gate.out] = builder.constant(gate.in0 != 0); break;
      }
    }
    for (std::uint32_t j = 0; j < 128; ++j) outputs.push_back(wire[aes.first_output_wire() + j]);
  }
  return builder.finish({outputs});
}

}  // namespace mpc::circuits
