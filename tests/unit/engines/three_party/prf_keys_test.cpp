#include "engines/three_party/prf_keys.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"

namespace mpc::three_party_engine {
namespace {

TEST(DerivePrfKeys, NeighboursAgreeOnTheKeyOfTheirEdgeAndEdgesDiffer) {
  std::array<transport::CurveKeyPair, 3> pairs;
  std::array<transport::PublicKey, 3> publics{};
  for (int party = 0; party < 3; ++party) {
    pairs[static_cast<std::size_t>(party)] = transport::generate_curve_key_pair();
    publics[static_cast<std::size_t>(party)] = pairs[static_cast<std::size_t>(party)].public_key;
  }
  std::array<rss3::PrfKey, 3> own{}, previous{};
  for (int party = 0; party < 3; ++party) {
    const auto keys = derive_prf_keys(party, pairs[static_cast<std::size_t>(party)], publics);
    own[static_cast<std::size_t>(party)] = keys.own;
    previous[static_cast<std::size_t>(party)] = keys.previous;
  }
  for (int party = 0; party < 3; ++party) {
    // k_i is held by party i (as own) and by party i+1 (as previous).
    EXPECT_EQ(own[static_cast<std::size_t>(party)], previous[static_cast<std::size_t>((party + 1) % 3)]);
  }
  EXPECT_NE(own[0], own[1]);
  EXPECT_NE(own[1], own[2]);
  EXPECT_NE(own[0], own[2]);
}

TEST(DerivePrfKeys, PurposeKeysAgreeAcrossEachEdgeAndDifferFromTheBatchKeys) {
  std::array<transport::CurveKeyPair, 3> pairs;
  std::array<transport::PublicKey, 3> publics{};
  for (int party = 0; party < 3; ++party) {
    pairs[static_cast<std::size_t>(party)] = transport::generate_curve_key_pair();
    publics[static_cast<std::size_t>(party)] = pairs[static_cast<std::size_t>(party)].public_key;
  }
  std::array<rss3::PrfKey, 3> tag_own{}, tag_previous{}, garbling_own{}, garbling_previous{}, own{};
  for (int party = 0; party < 3; ++party) {
    const auto keys = derive_prf_keys(party, pairs[static_cast<std::size_t>(party)], publics);
    const auto p = static_cast<std::size_t>(party);
    tag_own[p] = keys.tag_own;
    tag_previous[p] = keys.tag_previous;
    garbling_own[p] = keys.garbling_own;
    garbling_previous[p] = keys.garbling_previous;
    own[p] = keys.own;
  }
  for (std::size_t party = 0; party < 3; ++party) {
    EXPECT_EQ(tag_own[party], tag_previous[(party + 1) % 3]);
    EXPECT_EQ(garbling_own[party], garbling_previous[(party + 1) % 3]);
    for (std::size_t other = 0; other < 3; ++other) {
      EXPECT_NE(tag_own[party], own[other]);
      EXPECT_NE(garbling_own[party], own[other]);
      EXPECT_NE(garbling_own[party], tag_own[other]);
    }
  }
  EXPECT_NE(tag_own[0], tag_own[1]);
  EXPECT_NE(tag_own[1], tag_own[2]);
  EXPECT_NE(garbling_own[0], garbling_own[2]);
}

TEST(DerivePrfKeys, ChangesWhenAPeerKeyChanges) {
  std::array<transport::CurveKeyPair, 3> pairs;
  std::array<transport::PublicKey, 3> publics{};
  for (int party = 0; party < 3; ++party) {
    pairs[static_cast<std::size_t>(party)] = transport::generate_curve_key_pair();
    publics[static_cast<std::size_t>(party)] = pairs[static_cast<std::size_t>(party)].public_key;
  }
  const auto before = derive_prf_keys(0, pairs[0], publics);
  publics[1] = transport::generate_curve_key_pair().public_key;
  const auto after = derive_prf_keys(0, pairs[0], publics);
  EXPECT_NE(before.own, after.own);
  EXPECT_EQ(before.previous, after.previous);  // edge 2-0 is untouched
}

TEST(DerivePrfKeys, RejectsALowOrderPeerKey) {
  std::array<transport::PublicKey, 3> publics{};
  const auto own = transport::generate_curve_key_pair();
  publics[0] = own.public_key;  // peers 1 and 2 left as the all-zero point
  EXPECT_THROW(derive_prf_keys(0, own, publics), mpc::Error);
}

}  // namespace
}  // namespace mpc::three_party_engine
