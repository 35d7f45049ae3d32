#include "common/secret.hpp"

#include <gtest/gtest.h>

namespace mpc {
namespace {

TEST(SecretBytes, ClearWipesAndEmpties) {
  SecretBytes secret(std::vector<std::uint8_t>{1, 2, 3});
  secret.clear();
  EXPECT_TRUE(secret.empty());
}

TEST(SecretBytes, ResizeKeepsPrefix) {
  SecretBytes secret(std::vector<std::uint8_t>{1, 2, 3});
  secret.resize(5);
  ASSERT_EQ(secret.size(), 5u);
  EXPECT_EQ(secret[0], 1);
  EXPECT_EQ(secret[2], 3);
  EXPECT_EQ(secret[4], 0);
  secret.resize(1);
  ASSERT_EQ(secret.size(), 1u);
  EXPECT_EQ(secret[0], 1);
}

TEST(EqualConstantTime, ComparesContentAndLength) {
  const std::vector<std::uint8_t> a{1, 2, 3}, b{1, 2, 3}, c{1, 2, 4}, d{1, 2};
  EXPECT_TRUE(equal_constant_time(a, b));
  EXPECT_FALSE(equal_constant_time(a, c));
  EXPECT_FALSE(equal_constant_time(a, d));
}

TEST(Wipe, ZeroesMemory) {
  std::uint8_t buffer[4] = {9, 9, 9, 9};
  wipe(buffer, sizeof buffer);
  for (auto byte : buffer) EXPECT_EQ(byte, 0);
}

}  // namespace
}  // namespace mpc
