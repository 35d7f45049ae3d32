#include "engines/three_party/circuit_set.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"

namespace mpc::three_party_engine {
namespace {

TEST(CircuitSet, ChoosesDepth4ForSmallBatchesAndAnd32ForLargeOnes) {
  settings::ServerLimits limits;
  limits.sbox = settings::SboxChoice::Auto;
  limits.latency_batch_blocks = 512;
  EXPECT_EQ(CircuitSet::choose(wire::KeyAlgorithm::Aes128, false, 1, limits), wire::CircuitId::Aes128EncryptDepth4);
  EXPECT_EQ(CircuitSet::choose(wire::KeyAlgorithm::Aes128, false, 513, limits), wire::CircuitId::Aes128EncryptAnd32);
  EXPECT_EQ(CircuitSet::choose(wire::KeyAlgorithm::Aes256, true, 512, limits), wire::CircuitId::Aes256DecryptDepth4);
  EXPECT_EQ(CircuitSet::choose(wire::KeyAlgorithm::Aes256, true, 100000, limits), wire::CircuitId::Aes256DecryptAnd32);
  limits.sbox = settings::SboxChoice::And32;
  EXPECT_EQ(CircuitSet::choose(wire::KeyAlgorithm::Aes128, true, 1, limits), wire::CircuitId::Aes128DecryptAnd32);
  limits.sbox = settings::SboxChoice::Depth4;
  EXPECT_EQ(CircuitSet::choose(wire::KeyAlgorithm::Aes256, false, 1u << 20, limits), wire::CircuitId::Aes256EncryptDepth4);
}

TEST(CircuitSet, ProgramsHaveTheAesShapeTheServerRelies) {
  const CircuitSet set;
  const auto& aes128 = set.program(wire::CircuitId::Aes128EncryptAnd32);
  EXPECT_EQ(aes128.num_inputs, 11u * 128 + 128);
  EXPECT_EQ(aes128.num_outputs, 128u);
  EXPECT_EQ(aes128.and_gates, 5120u);
  EXPECT_EQ(aes128.and_depth, 60u);
  EXPECT_EQ(set.program(wire::CircuitId::Aes128EncryptDepth4).and_depth, 40u);
  const auto& aes256 = set.program(wire::CircuitId::Aes256DecryptAnd32);
  EXPECT_EQ(aes256.num_inputs, 15u * 128 + 128);
  EXPECT_EQ(aes256.and_gates, 7168u);
  EXPECT_EQ(CircuitSet::key_rows(wire::CircuitId::Aes256DecryptAnd32), 15u * 128);
  // The GCM tag check: round keys, public block, secret block in; the block and one bit out.
  for (const auto id : {wire::CircuitId::Aes256EncryptEqAnd32, wire::CircuitId::Aes256EncryptEqDepth4}) {
    const auto& check = set.program(id);
    EXPECT_EQ(check.num_inputs, 15u * 128 + 256);
    EXPECT_EQ(check.num_outputs, 129u);
    EXPECT_EQ(CircuitSet::key_rows(id), 15u * 128);
  }
  EXPECT_EQ(set.program(wire::CircuitId::Aes256EncryptEqAnd32).and_gates, 7168u + 127u);
  EXPECT_THROW(set.program(static_cast<wire::CircuitId>(11)), mpc::Error);
}

}  // namespace
}  // namespace mpc::three_party_engine
