#include "common/secret.hpp"

#include <gtest/gtest.h>

#include <cstdint>

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

TEST(SecretWords, AlignedAndKeptAcrossResizes) {
  SecretWords words(100);
  ASSERT_EQ(words.size(), 100u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(words.data()) % 64, 0u);
  for (std::size_t i = 0; i < words.size(); ++i) words[i] = i + 1;
  const std::uint64_t* memory = words.data();
  words.resize(40);  // shrinking keeps the memory and the prefix
  EXPECT_EQ(words.data(), memory);
  EXPECT_EQ(words[39], 40u);
  words.resize(100);  // the words that left the size were wiped on the way out
  EXPECT_EQ(words.data(), memory);
  EXPECT_EQ(words[39], 40u);
  EXPECT_EQ(words[40], 0u);
  EXPECT_EQ(words[99], 0u);
  words.clear();  // wiped, memory kept
  EXPECT_TRUE(words.empty());
  words.resize(100);
  EXPECT_EQ(words.data(), memory);
  EXPECT_EQ(words[0], 0u);
}

TEST(SecretWords, MoveHandsOverTheMemory) {
  SecretWords words(8);
  words[7] = 7;
  SecretWords moved(std::move(words));
  EXPECT_TRUE(words.empty());
  EXPECT_EQ(words.data(), nullptr);
  ASSERT_EQ(moved.size(), 8u);
  EXPECT_EQ(moved[7], 7u);
  SecretWords assigned;
  assigned = std::move(moved);
  EXPECT_EQ(assigned[7], 7u);
  EXPECT_TRUE(moved.empty());
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
