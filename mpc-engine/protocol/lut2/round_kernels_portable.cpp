#include <array>
#include <cstring>

#include "circuits/aes_reference.hpp"
#include "common/secret.hpp"
#include "protocol/lut2/round_kernels.hpp"

namespace mpc::lut2::detail {

// Cloned for CPUs with POPCNT (chosen at load time).
__attribute__((target_clones("popcnt", "default"))) void portable_finish_round(
    std::uint8_t* states, std::size_t blocks, const Entry* entries, const std::uint8_t* mine,
    const std::uint8_t* theirs, const std::uint8_t* round_key, RoundShape shape) {
  const PublicRows& rows = public_rows();
  const bool encrypt = shape == RoundShape::EncryptMiddle || shape == RoundShape::EncryptLast;
  const Table table = encrypt ? Table::Sbox : Table::InverseSbox;
  std::array<std::uint8_t, 16> state{};
  for (std::size_t b = 0; b < blocks; ++b) {
    for (std::size_t i = 0; i < 16; ++i) state[i] = lookup_share(rows, entries[16 * b + i], static_cast<std::uint8_t>(mine[16 * b + i] ^ theirs[16 * b + i]), table);
    if (encrypt) {
      circuits::aes_shift_rows(state, false);
      if (shape == RoundShape::EncryptMiddle) circuits::aes_mix_columns(state);
      for (std::size_t i = 0; i < 16; ++i) state[i] ^= round_key[i];
    } else {
      for (std::size_t i = 0; i < 16; ++i) state[i] ^= round_key[i];
      if (shape == RoundShape::DecryptMiddle) {
        circuits::aes_inv_mix_columns(state);
        circuits::aes_shift_rows(state, true);
      }
    }
    std::memcpy(states + 16 * b, state.data(), 16);
  }
  wipe(state.data(), state.size());
}

bool avx512_supported() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vpopcntdq");
#else
  return false;
#endif
}

#if !defined(__x86_64__)
void avx512_finish_round(std::uint8_t*, std::size_t, const Entry*, const std::uint8_t*, const std::uint8_t*,
                         const std::uint8_t*, RoundShape) {
  __builtin_trap();  // never entered: avx512_supported() is false
}
#endif

}  // namespace mpc::lut2::detail
