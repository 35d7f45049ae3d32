#include "three_party_aes.hpp"

#include <sodium.h>

#include <algorithm>

#include "common/error.hpp"
#include "protocol/rss3/local_three_party.hpp"
#include "protocol/rss3/transpose.hpp"

namespace mpc::security_test {
namespace {

// Every lane of rows [first_row, first_row + 8 * value.size()) gets bit j of value.
void broadcast_rows(std::vector<std::uint64_t>& component, std::size_t words_per_row, std::size_t first_row,
                    std::span<const std::uint8_t> value) {
  for (std::size_t bit = 0; bit < value.size() * 8; ++bit) {
    const std::uint64_t fill = 0 - static_cast<std::uint64_t>((value[bit / 8] >> (bit % 8)) & 1u);
    std::fill_n(component.begin() + static_cast<std::ptrdiff_t>((first_row + bit) * words_per_row), words_per_row,
                fill);
  }
}

}  // namespace

ThreePartyRun run_aes_three_parties(const circuits::Program& program, std::span<const std::uint8_t> round_keys,
                                    std::span<const std::uint8_t> blocks) {
  if (sodium_init() < 0) throw Error(Component::Protocol, "sodium_init failed");
  const std::size_t instances = blocks.size() / 16;
  const std::size_t key_rows = round_keys.size() * 8;
  if (instances == 0 || blocks.size() % 16 != 0 || program.num_inputs != key_rows + 128)
    throw Error(Component::Protocol, "run_aes_three_parties: inputs do not fit the program");

  std::array<rss3::ShareMatrix, 3> inputs;
  auto key_shares = rss3::share_bytes(round_keys);
  for (std::size_t party = 0; party < 3; ++party) {
    inputs[party] = rss3::ShareMatrix(program.num_inputs, instances);
    std::fill(inputs[party].x.begin(), inputs[party].x.end(), 0);
    std::fill(inputs[party].a.begin(), inputs[party].a.end(), 0);
    broadcast_rows(inputs[party].x, inputs[party].words_per_row, 0, key_shares[party].x);
    broadcast_rows(inputs[party].a, inputs[party].words_per_row, 0, key_shares[party].a);
    rss3::slice(blocks, 16, instances, inputs[party].a, inputs[party].words_per_row, key_rows);
    key_shares[party].wipe();
  }

  std::array<rss3::PrfKey, 3> prf{};
  for (auto& key : prf) randombytes_buf(key.data(), key.size());
  rss3::BatchNonce nonce;
  randombytes_buf(&nonce.epoch, sizeof nonce.epoch);
  nonce.sequence = 1;

  ThreePartyRun run;
  rss3::ThreePartyOptions options;
  options.timeout = std::chrono::seconds(20);
  options.transcripts = &run.sent;
  run.outputs = rss3::evaluate_three_parties(program, inputs, rss3::best_simd_level(), nonce, prf, options);
  for (auto& key : prf) sodium_memzero(key.data(), key.size());
  for (auto& m : inputs) m.wipe();
  return run;
}

std::vector<std::uint8_t> open_outputs(const ThreePartyRun& run, std::size_t instances) {
  // v = a_i ^ x_{i-1}; all three pairs must agree.
  std::array<std::vector<std::uint8_t>, 3> x;
  std::array<std::vector<std::uint8_t>, 3> a;
  for (std::size_t p = 0; p < 3; ++p) {
    const auto& out = run.outputs[p];
    x[p].resize(instances * 16);
    a[p].resize(instances * 16);
    rss3::unslice(out.x, out.words_per_row, 0, 16, instances, x[p]);
    rss3::unslice(out.a, out.words_per_row, 0, 16, instances, a[p]);
  }
  std::vector<std::uint8_t> value(instances * 16);
  for (std::size_t i = 0; i < value.size(); ++i) {
    value[i] = a[0][i] ^ x[2][i];
    if ((a[1][i] ^ x[0][i]) != value[i] || (a[2][i] ^ x[1][i]) != value[i])
      throw Error(Component::Protocol, "output shares disagree at byte " + std::to_string(i));
  }
  return value;
}

}  // namespace mpc::security_test
