// CBC with ciphertext stealing (RFC 3962 section 5; the CBC-CS3 variant of NIST SP 800-38A
// Addendum) on builder wires.
#include "circuits/cbc_cts.hpp"

#include <algorithm>

#include "circuits/aes.hpp"
#include "circuits/aes_layers.hpp"
#include "common/error.hpp"

namespace mpc::circuits::detail {
namespace {

constexpr std::size_t kBlockBits = 128;

using Bits = std::vector<std::uint32_t>;

std::uint32_t sbox_depth(SboxVariant sbox) { return sbox == SboxVariant::Depth4 ? 4 : 6; }

std::size_t checked_bytes(std::span<const std::uint32_t> bits) {
  if (bits.size() % 8 != 0 || bits.size() < kBlockBits) {
    throw FormatError(Component::Circuit, "CBC-CTS needs at least 16 whole bytes");
  }
  return bits.size() / 8;
}

Bits xor_bits(WordGates& gates, std::span<const std::uint32_t> a, std::span<const std::uint32_t> b) {
  Bits out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) out[i] = gates.xor_(a[i], b[i]);
  return out;
}

}  // namespace

Bits aes_block(WordGates& gates, AesKeySize size, SboxVariant sbox, AesDirection direction,
               std::span<const std::uint32_t> round_keys, std::span<const std::uint32_t> block) {
  CircuitBuilder& builder = gates.builder();
  const std::size_t rounds = aes_rounds(size);
  std::uint32_t input_depth = 0;
  for (std::uint32_t wire : block) input_depth = std::max(input_depth, gates.depth(wire));
  for (std::uint32_t wire : round_keys) input_depth = std::max(input_depth, gates.depth(wire));
  AesState state = state_from_bits(block);
  if (direction == AesDirection::Encrypt) {
    encrypt_rounds(builder, state, round_keys, rounds, sbox);
  } else {
    decrypt_rounds(builder, state, round_keys, rounds, sbox);
  }
  Bits out = bits_from_state(state);
  const std::uint32_t output_depth = input_depth + static_cast<std::uint32_t>(rounds) * sbox_depth(sbox);
  for (std::uint32_t wire : out) gates.note_depth(wire, output_depth);
  return out;
}

Bits cbc_cts_encrypt(WordGates& gates, AesKeySize size, SboxVariant sbox, std::span<const std::uint32_t> round_keys,
                     std::span<const std::uint32_t> message_bits) {
  const std::size_t bytes = checked_bytes(message_bits);
  const std::size_t blocks = (bytes + 15) / 16;
  const std::size_t last_bits = message_bits.size() - (blocks - 1) * kBlockBits;  // 8..128

  std::vector<Bits> ciphertext;
  ciphertext.reserve(blocks);
  Bits chain(kBlockBits, gates.zero());
  for (std::size_t block = 0; block < blocks; ++block) {
    Bits plain(kBlockBits, gates.zero());
    const std::size_t take = block + 1 < blocks ? kBlockBits : last_bits;
    std::copy_n(message_bits.begin() + static_cast<std::ptrdiff_t>(block * kBlockBits), take, plain.begin());
    chain = aes_block(gates, size, sbox, AesDirection::Encrypt, round_keys, xor_bits(gates, plain, chain));
    ciphertext.push_back(chain);
  }
  if (blocks == 1) return ciphertext.front();

  Bits out;
  out.reserve(message_bits.size());
  for (std::size_t block = 0; block + 2 < blocks; ++block) out.insert(out.end(), ciphertext[block].begin(), ciphertext[block].end());
  out.insert(out.end(), ciphertext[blocks - 1].begin(), ciphertext[blocks - 1].end());
  out.insert(out.end(), ciphertext[blocks - 2].begin(), ciphertext[blocks - 2].begin() + static_cast<std::ptrdiff_t>(last_bits));
  return out;
}

Bits cbc_cts_decrypt(WordGates& gates, AesKeySize size, SboxVariant sbox, std::span<const std::uint32_t> round_keys,
                     std::span<const std::uint32_t> ciphertext_bits) {
  const std::size_t bytes = checked_bytes(ciphertext_bits);
  if (bytes == 16) return aes_block(gates, size, sbox, AesDirection::Decrypt, round_keys, ciphertext_bits);
  const std::size_t blocks = (bytes + 15) / 16;
  const std::size_t last_bits = ciphertext_bits.size() - (blocks - 1) * kBlockBits;
  auto block_at = [&](std::size_t block) { return ciphertext_bits.subspan(block * kBlockBits, kBlockBits); };
  const Bits zero_block(kBlockBits, gates.zero());

  Bits out;
  out.reserve(ciphertext_bits.size());
  for (std::size_t block = 0; block + 2 < blocks; ++block) {
    const Bits decrypted = aes_block(gates, size, sbox, AesDirection::Decrypt, round_keys, block_at(block));
    const Bits plain = xor_bits(gates, decrypted, block == 0 ? std::span<const std::uint32_t>(zero_block) : block_at(block - 1));
    out.insert(out.end(), plain.begin(), plain.end());
  }
  // The full block at position blocks - 2 is the last CBC block C_n; decrypting it gives
  // P_n || 0 xored with C_{n-1}, whose tail bytes are the stolen tail of C_{n-1}.
  const Bits last_decrypted = aes_block(gates, size, sbox, AesDirection::Decrypt, round_keys, block_at(blocks - 2));
  const auto tail = ciphertext_bits.subspan((blocks - 1) * kBlockBits);  // head of C_{n-1}
  Bits previous(tail.begin(), tail.end());
  previous.insert(previous.end(), last_decrypted.begin() + static_cast<std::ptrdiff_t>(last_bits), last_decrypted.end());
  const Bits second_last_decrypted = aes_block(gates, size, sbox, AesDirection::Decrypt, round_keys, previous);
  const Bits second_last =
      xor_bits(gates, second_last_decrypted, blocks == 2 ? std::span<const std::uint32_t>(zero_block) : block_at(blocks - 3));
  out.insert(out.end(), second_last.begin(), second_last.end());
  const Bits last = xor_bits(gates, std::span<const std::uint32_t>(last_decrypted).first(last_bits), tail);
  out.insert(out.end(), last.begin(), last.end());
  return out;
}

}  // namespace mpc::circuits::detail
