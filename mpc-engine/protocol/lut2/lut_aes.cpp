#include "protocol/lut2/lut_aes.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include "circuits/aes_reference.hpp"
#include "common/error.hpp"
#include "protocol/lut2/round_kernels.hpp"

namespace mpc::lut2 {
namespace {

using detail::RoundShape;

using FinishRound = void (*)(std::uint8_t*, std::size_t, const Entry*, const std::uint8_t*, const std::uint8_t*,
                             const std::uint8_t*, RoundShape);

FinishRound pick_kernel() {
  return detail::avx512_supported() ? detail::avx512_finish_round : detail::portable_finish_round;
}

// One round from SubBytes on: every S-box input of the batch masked and opened in one message
// each way, then the lookups and the rest of the round (round_kernels.hpp).
void round(two_party::Channel& peer, FinishRound finish, SecretBytes& states, std::span<const Entry> entries,
           std::span<const std::uint8_t> round_key, RoundShape shape, std::vector<std::uint8_t>& mine,
           std::vector<std::uint8_t>& theirs) {
  const std::size_t n = states.size();
  const std::uint8_t* state = states.data();
  const Entry* entry = entries.data();
  std::uint8_t* masked = mine.data();
  for (std::size_t k = 0; k < n; ++k) masked[k] = state[k] ^ entry[k].mask;
  peer.send({mine.data(), n});
  peer.flush();
  peer.receive({theirs.data(), n});
  finish(states.data(), n / 16, entries.data(), mine.data(), theirs.data(), round_key.data(), shape);
}

}  // namespace

SecretBytes lut_aes(two_party::Channel& peer, int party, std::span<const std::uint8_t> round_key_share, bool decrypt,
                    std::span<const std::uint8_t> input, std::span<const Entry> entries) {
  if (party != 0 && party != 1) throw Error(Component::Protocol, "lookup-table AES: party " + std::to_string(party));
  if (round_key_share.size() != 176 && round_key_share.size() != 240)
    throw Error(Component::Protocol, "lookup-table AES: round keys of " + std::to_string(round_key_share.size()) +
                                         " bytes");
  if (input.size() % 16 != 0) throw Error(Component::Protocol, "lookup-table AES: input is not whole blocks");
  const std::size_t blocks = input.size() / 16;
  const std::size_t rounds = round_key_share.size() == 240 ? 14 : 10;
  if (entries.size() != entries_for(round_key_share.size(), blocks))
    throw Error(Component::Protocol, "lookup-table AES: " + std::to_string(entries.size()) + " entries for " +
                                         std::to_string(blocks) + " blocks");
  static const FinishRound finish = pick_kernel();  // a CPU property: the same for every call
  const std::size_t per_round = blocks * 16;
  auto key = [&](std::size_t r) { return round_key_share.subspan(r * 16, 16); };
  auto entries_of = [&](std::size_t step) { return entries.subspan(step * per_round, per_round); };

  // Party 0 holds the public input as its share, party 1 zero; AddRoundKey of the first round.
  SecretBytes states(per_round);
  for (std::size_t k = 0; k < per_round; ++k)
    states[k] = static_cast<std::uint8_t>((party == 0 ? input[k] : 0) ^ key(decrypt ? rounds : 0)[k % 16]);
  std::vector<std::uint8_t> mine(per_round), theirs(per_round);  // public: sent in the clear
  if (!decrypt) {
    for (std::size_t r = 1; r <= rounds; ++r)
      round(peer, finish, states, entries_of(r - 1), key(r),
            r == rounds ? RoundShape::EncryptLast : RoundShape::EncryptMiddle, mine, theirs);
  } else {
    std::array<std::uint8_t, 16> block{};
    for (std::size_t b = 0; b < blocks; ++b) {
      std::copy_n(states.data() + 16 * b, 16, block.begin());
      circuits::aes_shift_rows(block, true);
      std::copy_n(block.begin(), 16, states.data() + 16 * b);
    }
    wipe(block.data(), block.size());
    for (std::size_t step = 1; step <= rounds; ++step)
      round(peer, finish, states, entries_of(step - 1), key(rounds - step),
            step == rounds ? RoundShape::DecryptLast : RoundShape::DecryptMiddle, mine, theirs);
  }
  return states;
}

}  // namespace mpc::lut2
