#include "circuits/gcm_key_material.hpp"

#include <vector>

#include "circuits/aes.hpp"
#include "circuits/aes_layers.hpp"
#include "circuits/builder.hpp"
#include "circuits/gf128.hpp"
#include "common/error.hpp"

namespace mpc::circuits {

Circuit build_gcm_key_material_circuit(std::size_t powers, SboxVariant sbox) {
  if (powers == 0) throw FormatError(Component::Circuit, "GCM key material needs at least H itself");
  CircuitBuilder builder;
  const std::vector<std::uint32_t> key = builder.add_input_group(aes_key_bits(AesKeySize::Aes256));
  std::vector<std::uint32_t> out = detail::expand_aes_key(builder, AesKeySize::Aes256, sbox, key);

  std::vector<std::uint32_t> zero(128, builder.constant(false));
  detail::AesState state = detail::state_from_bits(zero);
  detail::encrypt_rounds(builder, state, out, aes_rounds(AesKeySize::Aes256), sbox);

  // power[k] = H^(k + 1).
  std::vector<detail::Gf128Wires> power;
  power.reserve(powers);
  power.push_back(detail::from_gcm_bytes(detail::bits_from_state(state)));
  const detail::Gf128Spread h = detail::gf128_spread(builder, power[0]);
  for (std::size_t n = 2; n <= powers; ++n)
    power.push_back(n % 2 == 0 ? detail::gf128_square(builder, power[n / 2 - 1])
                               : detail::gf128_multiply(builder, detail::gf128_spread(builder, power[n - 2]), h));
  for (const auto& element : power) {
    const std::vector<std::uint32_t> bytes = detail::to_gcm_bytes(element);
    out.insert(out.end(), bytes.begin(), bytes.end());
  }
  return builder.finish({std::move(out)});
}

}  // namespace mpc::circuits
