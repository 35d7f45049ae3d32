#include "protocol/client_checks/check_rows.hpp"

#include <sodium.h>

#include "common/error.hpp"

namespace mpc::client_checks {

static_assert(kSeedBytes == randombytes_SEEDBYTES);

CheckRows::CheckRows(const CheckSeed& seed, std::size_t columns)
    : columns_(columns), stride_((columns + 7) / 8), rows_(kCheckBits * stride_) {
  randombytes_buf_deterministic(rows_.data(), rows_.size(), seed.data());
}

CheckBits CheckRows::check(std::span<const std::uint8_t> bits) const {
  if (bits.size() != columns_ + kCheckBits) throw Error(Component::Protocol, "checked vector of the wrong length");
  CheckBits check{};
  for (std::size_t k = 0; k < kCheckBits; ++k) {
    std::uint8_t bit = bits[columns_ + k] & 1;
    for (std::size_t i = 0; i < columns_; ++i)
      if (this->bit(k, i)) bit ^= bits[i] & 1;
    check[k / 8] |= static_cast<std::uint8_t>(bit << (k % 8));
  }
  return check;
}

}  // namespace mpc::client_checks
