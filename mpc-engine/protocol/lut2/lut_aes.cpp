#include "protocol/lut2/lut_aes.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include "circuits/aes_reference.hpp"
#include "common/error.hpp"

namespace mpc::lut2 {
namespace {

using State = std::array<std::uint8_t, 16>;

void add_round_key(std::vector<State>& states, std::span<const std::uint8_t> keys, std::size_t round) {
  for (auto& state : states)
    for (std::size_t i = 0; i < 16; ++i) state[i] ^= keys[round * 16 + i];
}

// The lookups of a round; cloned for CPUs with POPCNT (chosen at load time).
__attribute__((target_clones("popcnt", "default"))) void look_up(std::vector<State>& states,
                                                                 std::span<const Entry> entries, Table table,
                                                                 const std::vector<std::uint8_t>& mine,
                                                                 const std::vector<std::uint8_t>& theirs) {
  const PublicRows& rows = public_rows();
  const std::size_t n = states.size() * 16;
  for (std::size_t k = 0; k < n; ++k)
    states[k / 16][k % 16] = lookup_share(rows, entries[k], static_cast<std::uint8_t>(mine[k] ^ theirs[k]), table);
}

// SubBytes (or InvSubBytes) of every state: one exchange of the masked bytes.
void substitute(two_party::Channel& peer, std::vector<State>& states, std::span<const Entry> entries, Table table,
                std::vector<std::uint8_t>& mine, std::vector<std::uint8_t>& theirs) {
  const std::size_t n = states.size() * 16;
  for (std::size_t k = 0; k < n; ++k) mine[k] = states[k / 16][k % 16] ^ entries[k].mask;
  peer.send({mine.data(), n});
  peer.flush();
  peer.receive({theirs.data(), n});
  look_up(states, entries, table, mine, theirs);
}

}  // namespace

SecretBytes lut_aes(two_party::Channel& peer, int party, std::span<const std::uint8_t> round_key_share, bool decrypt,
                    std::span<const std::uint8_t> input, std::span<const Entry> entries) {
  if (round_key_share.size() != 176 && round_key_share.size() != 240)
    throw Error(Component::Protocol, "lookup-table AES: round keys of " + std::to_string(round_key_share.size()) +
                                         " bytes");
  if (input.size() % 16 != 0) throw Error(Component::Protocol, "lookup-table AES: input is not whole blocks");
  const std::size_t blocks = input.size() / 16;
  const std::size_t rounds = round_key_share.size() == 240 ? 14 : 10;
  if (entries.size() != entries_for(round_key_share.size(), blocks))
    throw Error(Component::Protocol, "lookup-table AES: " + std::to_string(entries.size()) + " entries for " +
                                         std::to_string(blocks) + " blocks");
  std::vector<State> states(blocks);
  if (party == 0)
    for (std::size_t b = 0; b < blocks; ++b) std::copy_n(input.begin() + static_cast<std::ptrdiff_t>(b * 16), 16, states[b].begin());
  std::vector<std::uint8_t> mine(blocks * 16), theirs(blocks * 16);
  const std::size_t per_round = blocks * 16;
  if (!decrypt) {
    add_round_key(states, round_key_share, 0);
    for (std::size_t round = 1; round <= rounds; ++round) {
      substitute(peer, states, entries.subspan((round - 1) * per_round, per_round), Table::Sbox, mine, theirs);
      for (auto& state : states) {
        circuits::aes_shift_rows(state, false);
        if (round != rounds) circuits::aes_mix_columns(state);
      }
      add_round_key(states, round_key_share, round);
    }
  } else {
    add_round_key(states, round_key_share, rounds);
    for (std::size_t step = 1; step <= rounds; ++step) {
      const std::size_t round = rounds - step;
      for (auto& state : states) circuits::aes_shift_rows(state, true);
      substitute(peer, states, entries.subspan((step - 1) * per_round, per_round), Table::InverseSbox, mine, theirs);
      add_round_key(states, round_key_share, round);
      if (round != 0)
        for (auto& state : states) circuits::aes_inv_mix_columns(state);
    }
  }
  SecretBytes out(blocks * 16);
  for (std::size_t b = 0; b < blocks; ++b) std::copy(states[b].begin(), states[b].end(), out.data() + b * 16);
  wipe(states.data(), states.size() * sizeof(State));
  return out;
}

}  // namespace mpc::lut2
