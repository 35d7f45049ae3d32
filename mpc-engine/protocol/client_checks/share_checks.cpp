#include "protocol/client_checks/share_checks.hpp"

#include <sodium.h>

#include <algorithm>

#include "common/error.hpp"
#include "common/secret.hpp"

namespace mpc::client_checks {

std::array<std::uint8_t, kShareCheckBytes> serialize(const ShareCheck& check) {
  std::array<std::uint8_t, kShareCheckBytes> out{};
  auto at = std::copy(check.own_blinding.begin(), check.own_blinding.end(), out.begin());
  at = std::copy(check.peer_rows.begin(), check.peer_rows.end(), at);
  std::copy(check.peer_sketch.begin(), check.peer_sketch.end(), at);
  return out;
}

ShareCheck parse_share_check(std::span<const std::uint8_t> bytes) {
  if (bytes.size() != kShareCheckBytes)
    throw FormatError(Component::Protocol, "a key share's check of " + std::to_string(bytes.size()) + " bytes, not " +
                                               std::to_string(kShareCheckBytes));
  ShareCheck check;
  std::copy_n(bytes.begin(), 8, check.own_blinding.begin());
  std::copy_n(bytes.begin() + 8, kSeedBytes, check.peer_rows.begin());
  std::copy_n(bytes.begin() + 8 + kSeedBytes, 8, check.peer_sketch.begin());
  return check;
}

CheckBits share_sketch(const CheckSeed& rows, std::span<const std::uint8_t> share, const CheckBits& blinding) {
  std::vector<std::uint8_t> bits(8 * share.size() + kCheckBits);
  for (std::size_t j = 0; j < 8 * share.size(); ++j) bits[j] = (share[j / 8] >> (j % 8)) & 1;
  for (std::size_t k = 0; k < kCheckBits; ++k) bits[8 * share.size() + k] = (blinding[k / 8] >> (k % 8)) & 1;
  const CheckBits sketch = CheckRows(rows, 8 * share.size()).check(bits);
  wipe(bits.data(), bits.size());
  return sketch;
}

std::array<ShareCheck, 2> deal_share_checks(std::span<const std::uint8_t> first, std::span<const std::uint8_t> second) {
  if (first.size() != second.size() || first.empty())
    throw Error(Component::Protocol, "key shares of different sizes to check");
  std::array<ShareCheck, 2> checks;
  for (auto& check : checks) {
    randombytes_buf(check.own_blinding.data(), check.own_blinding.size());
    randombytes_buf(check.peer_rows.data(), check.peer_rows.size());
  }
  checks[0].peer_sketch = share_sketch(checks[0].peer_rows, second, checks[1].own_blinding);
  checks[1].peer_sketch = share_sketch(checks[1].peer_rows, first, checks[0].own_blinding);
  return checks;
}

}  // namespace mpc::client_checks
