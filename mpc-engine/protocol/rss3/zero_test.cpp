#include "protocol/rss3/zero_test.hpp"

#include <sodium.h>

#include "common/secret.hpp"
#include "protocol/rss3/gf128.hpp"

namespace mpc::rss3 {

Block zero_test_share(const Block& s_x, const Block& s_a, const PrfKey& own, const PrfKey& previous, BatchNonce id) {
  // Block 0 of each stream shares r, block 1 makes alpha.
  std::array<std::uint8_t, 32> own_stream{};
  std::array<std::uint8_t, 32> previous_stream{};
  prf_stream(own, id, own_stream);
  prf_stream(previous, id, previous_stream);
  const Gf128 rho_own = gf128_load(own_stream.data());
  const Gf128 rho_previous = gf128_load(previous_stream.data());
  const Gf128 alpha = gf128_load(own_stream.data() + 16) ^ gf128_load(previous_stream.data() + 16);
  const Gf128 t = gf128_mul_portable(rho_own ^ rho_previous, gf128_load(s_x.data())) ^
                  gf128_mul_portable(rho_own, gf128_load(s_a.data())) ^ alpha;
  Block out{};
  gf128_store(t, out.data());
  wipe(own_stream.data(), own_stream.size());
  wipe(previous_stream.data(), previous_stream.size());
  return out;
}

bool zero_test_passes(const std::array<Block, 3>& answers) {
  Block sum{};
  for (const Block& answer : answers)
    for (std::size_t i = 0; i < sum.size(); ++i) sum[i] ^= answer[i];
  const bool zero = sodium_is_zero(sum.data(), sum.size()) == 1;
  wipe(sum.data(), sum.size());
  return zero;
}

}  // namespace mpc::rss3
