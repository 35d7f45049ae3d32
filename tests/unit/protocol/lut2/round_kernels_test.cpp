// tests/unit/protocol/lut2/round_kernels_test.cpp: the per-round kernels of lookup-table AES give
// FIPS-197's rounds (circuits/aes_reference) for every round shape, and the AVX-512 kernel gives
// the portable kernel's bytes on shares with random entries.
#include <gtest/gtest.h>

#include <array>
#include <random>
#include <vector>

#include "circuits/aes_reference.hpp"
#include "protocol/lut2/round_kernels.hpp"

namespace {

using namespace mpc::lut2;
using detail::RoundShape;
using Bytes = std::vector<std::uint8_t>;
using Kernel = void (*)(std::uint8_t*, std::size_t, const Entry*, const std::uint8_t*, const std::uint8_t*,
                        const std::uint8_t*, RoundShape);

constexpr RoundShape kShapes[] = {RoundShape::EncryptMiddle, RoundShape::EncryptLast, RoundShape::DecryptMiddle,
                                  RoundShape::DecryptLast};

std::vector<std::pair<const char*, Kernel>> kernels() {
  std::vector<std::pair<const char*, Kernel>> out{{"portable", detail::portable_finish_round}};
  if (detail::avx512_supported()) out.emplace_back("avx512", detail::avx512_finish_round);
  return out;
}

// The round on a cleartext block, from the reference's pieces.
std::array<std::uint8_t, 16> reference_round(std::array<std::uint8_t, 16> x, const std::uint8_t* key, RoundShape shape) {
  const bool encrypt = shape == RoundShape::EncryptMiddle || shape == RoundShape::EncryptLast;
  for (auto& byte : x) byte = encrypt ? mpc::circuits::aes_sbox(byte) : mpc::circuits::aes_inverse_sbox(byte);
  if (encrypt) {
    mpc::circuits::aes_shift_rows(x, false);
    if (shape == RoundShape::EncryptMiddle) mpc::circuits::aes_mix_columns(x);
    for (int i = 0; i < 16; ++i) x[i] ^= key[i];
  } else {
    for (int i = 0; i < 16; ++i) x[i] ^= key[i];
    if (shape == RoundShape::DecryptMiddle) {
      mpc::circuits::aes_inv_mix_columns(x);
      mpc::circuits::aes_shift_rows(x, true);
    }
  }
  return x;
}

// An entry held whole by one party (the other's share is zero) looks up F(x) itself.
TEST(LookupRoundKernels, MatchTheReferenceRoundForEveryShape) {
  std::mt19937_64 rng(11);
  const std::size_t blocks = 37;  // odd, to catch a stride slip
  for (const auto& [name, kernel] : kernels()) {
    for (RoundShape shape : kShapes) {
      SCOPED_TRACE(std::string(name) + " shape " + std::to_string(static_cast<int>(shape)));
      Bytes x(blocks * 16), mine(blocks * 16), theirs(blocks * 16), key(16), states(blocks * 16, 0xee);
      std::vector<Entry> entries(blocks * 16);
      for (auto& byte : key) byte = static_cast<std::uint8_t>(rng());
      for (std::size_t k = 0; k < x.size(); ++k) {
        x[k] = static_cast<std::uint8_t>(rng());
        const auto r = static_cast<std::uint8_t>(rng());
        entries[k].one_hot = one_hot(r);
        entries[k].mask = r;
        mine[k] = static_cast<std::uint8_t>(rng());  // opened: x ^ r = mine ^ theirs
        theirs[k] = static_cast<std::uint8_t>(x[k] ^ r ^ mine[k]);
      }
      kernel(states.data(), blocks, entries.data(), mine.data(), theirs.data(), key.data(), shape);
      for (std::size_t b = 0; b < blocks; ++b) {
        std::array<std::uint8_t, 16> block{};
        std::copy_n(x.begin() + static_cast<std::ptrdiff_t>(16 * b), 16, block.begin());
        const auto want = reference_round(block, key.data(), shape);
        ASSERT_TRUE(std::equal(want.begin(), want.end(), states.begin() + static_cast<std::ptrdiff_t>(16 * b)))
            << "block " << b;
      }
    }
  }
}

TEST(LookupRoundKernels, Avx512MatchesPortableOnRandomShares) {
  if (!detail::avx512_supported()) GTEST_SKIP() << "no AVX-512 VPOPCNTDQ on this CPU";
  std::mt19937_64 rng(12);
  const std::size_t blocks = 129;
  for (RoundShape shape : kShapes) {
    Bytes mine(blocks * 16), theirs(blocks * 16), key(16), portable(blocks * 16), vector(blocks * 16);
    std::vector<Entry> entries(blocks * 16);
    for (auto& byte : key) byte = static_cast<std::uint8_t>(rng());
    for (std::size_t k = 0; k < mine.size(); ++k) {
      for (auto& word : entries[k].one_hot) word = rng();
      entries[k].mask = static_cast<std::uint8_t>(rng());
      mine[k] = static_cast<std::uint8_t>(rng());
      theirs[k] = static_cast<std::uint8_t>(rng());
    }
    detail::portable_finish_round(portable.data(), blocks, entries.data(), mine.data(), theirs.data(), key.data(), shape);
    detail::avx512_finish_round(vector.data(), blocks, entries.data(), mine.data(), theirs.data(), key.data(), shape);
    EXPECT_EQ(portable, vector) << "shape " << static_cast<int>(shape);
  }
}

}  // namespace
