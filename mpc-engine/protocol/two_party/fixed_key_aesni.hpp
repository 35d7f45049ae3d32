// Internal to fixed_key_hash.cpp: the AES-NI path, compiled with -maes in its own translation
// unit and entered only after aesni_supported() (only PODs and declarations here, so no
// AES-NI instruction can leak into code the baseline path runs).
#pragma once

#include <cstddef>
#include <cstdint>

#include "protocol/two_party/block.hpp"

namespace mpc::two_party::detail {

struct FixedRoundKeys {
  alignas(16) std::uint8_t bytes[11 * 16];
};

bool aesni_supported();
void aesni_expand_key(const std::uint8_t key[16], FixedRoundKeys& round_keys);
void aesni_encrypt_in_place(const FixedRoundKeys& round_keys, Block* blocks, std::size_t n);
void aesni_tccr(const FixedRoundKeys& round_keys, const Block* in, Block* out, std::size_t n,
                std::uint64_t tweak_high, std::uint64_t first_tweak, std::uint64_t tweak_step);

}  // namespace mpc::two_party::detail
