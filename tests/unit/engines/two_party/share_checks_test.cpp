// tests/unit/engines/two_party/share_checks_test.cpp: AES-128 under round keys XOR-shared between two
// servers, each share checked inside the circuit against the tag the importing client dealt its
// peer (protocol/client_checks/share_checks.hpp, engines/two_party/checked_part.hpp): honest
// shares pass and give OpenSSL's ciphertext; a server that feeds its share with one bit flipped
// (which shifts the ciphertext when the bit is in the last round key), another blinding, or
// checks with another key or tag is caught, whichever server it is; a checker that feeds another
// key learns nothing of its peer's share from the outcome; the hash circuit computes what the
// client computes. The checks the third server deals for the pair serving without it
// (protocol/client_checks/pair_checks.hpp) hold each pair member to its half the same way, and
// so do those the two members make for each other when that server is proven to have deviated.
#include <gtest/gtest.h>

#include <numeric>
#include <random>

#include "auth2/aes_case.hpp"
#include "auth2/pair_run.hpp"
#include "circuits/evaluate.hpp"
#include "circuits/extra_inputs.hpp"
#include "circuits/share_hash.hpp"
#include "engines/two_party/checked_part.hpp"
#include "protocol/client_checks/pair_checks.hpp"
#include "protocol/client_checks/share_checks.hpp"

namespace {

using namespace mpc;
using namespace test_support;
using auth2::Owner;
using auth2::Role;
using auth2::Session;
using client_checks::kCheckBits;
using client_checks::ShareCheck;
using two_party_engine::kShareCheckVerdicts;

// Shares, the block, each server's blinding, the checks' keys and tags, then the pads.
const auth2::InputOwners& owners() {
  static const auth2::InputOwners shared = auth2::padded_owners(
      two_party_engine::share_check_owners({Owner::First, Owner::Second, Owner::Public, Owner::First, Owner::Second}));
  return shared;
}

// The wires of a party's share, then its blinding's.
std::vector<std::uint32_t> committed_wires(Role role) {
  std::vector<std::uint32_t> wires(kRoundKeyBits);
  std::iota(wires.begin(), wires.end(), role == Role::First ? 0 : kRoundKeyBits);
  const std::uint32_t blinding = 2 * kRoundKeyBits + 128 + (role == Role::First ? 0 : kCheckBits);
  for (std::uint32_t k = 0; k < kCheckBits; ++k) wires.push_back(blinding + k);
  return wires;
}

const Circuit& checked() {
  static const Circuit shared = [] {
    const std::uint32_t blinding[] = {kCheckBits, kCheckBits};
    return auth2::padded_circuit(
        two_party_engine::with_share_checks(circuits::with_extra_inputs(circuit(), blinding),
                                            committed_wires(Role::First), committed_wires(Role::Second)),
        0, kShareCheckVerdicts);
  }();
  return shared;
}

std::vector<std::uint8_t> bytes_of_bits(const std::vector<std::uint8_t>& bits) { return to_bytes(bits); }

struct Deviations {
  std::size_t flip_share_bit = SIZE_MAX;
  std::size_t flip_blinding_bit = SIZE_MAX;
  std::size_t flip_check_bit = SIZE_MAX;  // of its key (0..63) then its peer's tag (64..127)
};

// One server's part: its inputs fed as dealt (or with one deviation), the run's ciphertext.
std::function<std::vector<std::uint8_t>(Session&)> server(const Case& c, Role role, const ShareCheck& check,
                                                          Deviations deviations = {}) {
  return [&c, role, check, deviations](Session& session) {
    const auto material = auth2::and_material(session, auth2::material_entries(checked(), owners()));
    std::vector<std::uint8_t> inputs = role == Role::First ? c.first_share : c.second_share;
    if (deviations.flip_share_bit < inputs.size()) inputs[deviations.flip_share_bit] ^= 1;
    std::vector<std::uint8_t> blinding = two_party_engine::blinding_bits(check, 0);
    if (deviations.flip_blinding_bit < blinding.size()) blinding[deviations.flip_blinding_bit] ^= 1;
    inputs.insert(inputs.end(), blinding.begin(), blinding.end());
    std::vector<std::uint8_t> checks = two_party_engine::share_check_inputs(check, 0);
    if (deviations.flip_check_bit < checks.size()) checks[deviations.flip_check_bit] ^= 1;
    inputs.insert(inputs.end(), checks.begin(), checks.end());
    inputs.resize(inputs.size() + 128 + client_checks::kPadCheckBits, 0);  // zero pads: the output in clear
    const two_party_engine::CheckedCircuit part{&checked(), &owners(), {}, {}};
    const auth2::PaddedRun run = two_party_engine::run_checked_part(session, role == Role::First ? 0 : 1, part,
                                                                    material, 0, inputs, to_bits(c.block));
    return run.masked;
  };
}

std::array<ShareCheck, 2> deal(const Case& c) {
  const client_checks::Segment whole[] = {{0, kRoundKeyBits / 8}};
  return client_checks::deal_share_checks(bytes_of_bits(c.first_share), bytes_of_bits(c.second_share), whole);
}

TEST(ShareCheck, HonestSharesPassAndGiveOpenSslsCiphertext) {
  const Case c = make_case(21);
  const auto checks = deal(c);
  const auto outcome = run_pair<std::vector<std::uint8_t>>(server(c, Role::First, checks[0]),
                                                           server(c, Role::Second, checks[1]));
  ASSERT_FALSE(outcome.first.failed()) << outcome.first.check();
  ASSERT_FALSE(outcome.second.failed()) << outcome.second.check();
  EXPECT_EQ(to_bytes(*outcome.second.result), openssl_encrypt(c.key, c.block));
  EXPECT_EQ(*outcome.first.result, *outcome.second.result);
}

TEST(ShareCheck, AServerThatFeedsAnotherShareIsCaughtByBoth) {
  const Case c = make_case(22);
  const auto checks = deal(c);
  // Bit 0 of the last round key: unchecked, the ciphertext's bit 0 flips and nothing else.
  const std::size_t last_round_bit = kRoundKeyBits - 128;
  for (const Role deviating : {Role::First, Role::Second}) {
    SCOPED_TRACE(static_cast<int>(deviating));
    const Deviations flip{.flip_share_bit = last_round_bit};
    const auto outcome = run_pair<std::vector<std::uint8_t>>(
        server(c, Role::First, checks[0], deviating == Role::First ? flip : Deviations{}),
        server(c, Role::Second, checks[1], deviating == Role::Second ? flip : Deviations{}));
    EXPECT_EQ(outcome.first.check(), "share_check");
    EXPECT_EQ(outcome.second.check(), "share_check");
  }
}

TEST(ShareCheck, AnotherBlindingAnotherKeyOrTagOrAnotherImportsChecksFail) {
  const Case c = make_case(23);
  const auto checks = deal(c);
  for (const Deviations deviation : {Deviations{.flip_blinding_bit = 9}, Deviations{.flip_check_bit = 3},
                                     Deviations{.flip_check_bit = 64 + 40}}) {
    const auto outcome = run_pair<std::vector<std::uint8_t>>(server(c, Role::First, checks[0], deviation),
                                                             server(c, Role::Second, checks[1]));
    EXPECT_EQ(outcome.second.check(), "share_check");
  }
  // Another import of the same shares deals other checks: one server holding the old ones fails.
  const auto other = deal(c);
  const auto mixed = run_pair<std::vector<std::uint8_t>>(server(c, Role::First, checks[0]),
                                                         server(c, Role::Second, other[1]));
  EXPECT_TRUE(mixed.first.failed() && mixed.second.failed());
}

// The flaw of the check this one replaced: a checker that chose its own columns saw its check
// fail exactly when a mask bit of the prover's was 1, and so learnt the prover's share bit.
// Here the checker's one freedom is the key (and tag) it feeds; whatever it feeds, the only
// output is whether H_key(s) ^ b equals the tag, b uniform to it: a checker feeding another key
// sees the check fail whatever the prover's share bit is.
TEST(ShareCheck, ACheckerThatFeedsAnotherKeyLearnsNothingOfTheProversShare) {
  int ones = 0;
  for (int seed = 30; seed < 38; ++seed) {
    SCOPED_TRACE(seed);
    const Case c = make_case(seed);
    ones += c.first_share.front();
    const auto checks = deal(c);
    const auto outcome = run_pair<std::vector<std::uint8_t>>(server(c, Role::First, checks[0]),
                                                             server(c, Role::Second, checks[1], {.flip_check_bit = 0}));
    EXPECT_EQ(outcome.second.check(), "share_check");
    EXPECT_EQ(outcome.first.check(), "share_check");
  }
  EXPECT_GT(ones, 0);
  EXPECT_LT(ones, 8);  // the share bits probed were of both values
}

// The circuit computes the client's H_key(share) ^ blinding: its verdict is 1 for the dealt
// tag, 0 for any one bit changed in the share, the blinding, the key or the tag.
TEST(ShareCheck, TheHashCircuitAgreesWithTheClientsHash) {
  std::mt19937_64 rng(5);
  for (const std::uint32_t share_bits : {64u, 100u, 1408u}) {
    SCOPED_TRACE(share_bits);
    const circuits::Circuit hash = circuits::build_share_hash_check(share_bits);
    EXPECT_EQ(auth2::and_gate_count(hash), circuits::share_hash_check_ands(share_bits));
    std::vector<std::uint8_t> share((share_bits + 7) / 8);
    for (auto& byte : share) byte = static_cast<std::uint8_t>(rng());
    if (share_bits % 8 != 0) share.back() &= static_cast<std::uint8_t>((1u << (share_bits % 8)) - 1);
    client_checks::CheckWord key{}, blinding{};
    for (auto& byte : key) byte = static_cast<std::uint8_t>(rng());
    for (auto& byte : blinding) byte = static_cast<std::uint8_t>(rng());
    const client_checks::CheckWord tag = client_checks::share_tag(key, share, blinding);
    std::vector<std::uint8_t> inputs = to_bits(share);
    inputs.resize(share_bits);
    for (const auto& word : {blinding, key, tag})
      for (std::size_t k = 0; k < 64; ++k) inputs.push_back((word[k / 8] >> (k % 8)) & 1);
    EXPECT_EQ(circuits::evaluate(hash, inputs), std::vector<std::uint8_t>{1});
    for (const std::size_t flip : {std::size_t{0}, std::size_t{share_bits - 1}, std::size_t{share_bits + 5},
                                   std::size_t{share_bits + 64 + 63}, std::size_t{share_bits + 128 + 17}}) {
      std::vector<std::uint8_t> altered = inputs;
      altered[flip] ^= 1;
      EXPECT_EQ(circuits::evaluate(hash, altered), std::vector<std::uint8_t>{0}) << flip;
    }
  }
}

TEST(ShareCheck, TheTagAPeerHoldsDependsOnTheBlindingAndTheShare) {
  std::vector<std::uint8_t> share(176, 0x33);
  client_checks::CheckWord key{1, 2, 3, 4, 5, 6, 7, 8}, b0{}, b1{};
  b1[0] = 1;
  EXPECT_NE(client_checks::share_tag(key, share, b0), client_checks::share_tag(key, share, b1));
  std::vector<std::uint8_t> flipped = share;
  flipped[100] ^= 4;
  EXPECT_NE(client_checks::share_tag(key, share, b0), client_checks::share_tag(key, flipped, b0));
}

// Components c_m, c_(m+1), c_(m+2) of a case whose first share is the pair leader's half
// x_L = c_(m+1) ^ c_m and whose second is the second member's a_S = c_(m+2).
struct Components {
  std::vector<std::uint8_t> missing, shared, second;
};

Components components_of(const Case& c, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Components out;
  out.missing.resize(kRoundKeyBits / 8);
  for (auto& byte : out.missing) byte = static_cast<std::uint8_t>(rng());
  out.shared = bytes_of_bits(c.first_share);
  for (std::size_t i = 0; i < out.shared.size(); ++i) out.shared[i] ^= out.missing[i];
  out.second = bytes_of_bits(c.second_share);
  return out;
}

std::array<ShareCheck, 2> deal_for_pair(const Components& parts, std::uint8_t seed_byte) {
  const client_checks::Segment whole[] = {{0, kRoundKeyBits / 8}};
  client_checks::CheckSeed seed{};
  seed.fill(seed_byte);
  const auto deal = client_checks::deal_pair_checks(seed, parts.missing, parts.second, whole);
  return {deal.leader, client_checks::complete_pair_check(deal.second_partial, parts.shared, whole)};
}

// Honest halves pass the pair's checks and give OpenSSL's ciphertext; either member feeding its
// half with a bit of the last round key flipped is caught by both.
void expect_pass_for_honest_halves_and_catch_either_member(const Case& c, const std::array<ShareCheck, 2>& checks) {
  const auto honest = run_pair<std::vector<std::uint8_t>>(server(c, Role::First, checks[0]),
                                                          server(c, Role::Second, checks[1]));
  ASSERT_FALSE(honest.first.failed()) << honest.first.check();
  ASSERT_FALSE(honest.second.failed()) << honest.second.check();
  EXPECT_EQ(to_bytes(*honest.second.result), openssl_encrypt(c.key, c.block));
  const Deviations flip{.flip_share_bit = kRoundKeyBits - 128};
  for (const Role deviating : {Role::First, Role::Second}) {
    SCOPED_TRACE(static_cast<int>(deviating));
    const auto outcome = run_pair<std::vector<std::uint8_t>>(
        server(c, Role::First, checks[0], deviating == Role::First ? flip : Deviations{}),
        server(c, Role::Second, checks[1], deviating == Role::Second ? flip : Deviations{}));
    EXPECT_EQ(outcome.first.check(), "share_check");
    EXPECT_EQ(outcome.second.check(), "share_check");
  }
}

TEST(PairCheck, ChecksDealtByTheThirdServerPassForHonestHalvesAndCatchEitherMember) {
  const Case c = make_case(41);
  expect_pass_for_honest_halves_and_catch_either_member(c, deal_for_pair(components_of(c, 41), 7));
}

TEST(PairCheck, TheSecondMemberCompletesWithItsOwnComponentOnly) {
  const Case c = make_case(42);
  Components parts = components_of(c, 42);
  parts.shared[3] ^= 0x10;  // completed with another c_(m+1): the leader's half no longer checks
  const auto checks = deal_for_pair(parts, 8);
  const auto outcome = run_pair<std::vector<std::uint8_t>>(server(c, Role::First, checks[0]),
                                                           server(c, Role::Second, checks[1]));
  EXPECT_EQ(outcome.first.check(), "share_check");
}

TEST(PairCheck, TheSameSeedDealsTheSameChecksAndAnotherSeedOthers) {
  const Case c = make_case(43);
  const Components parts = components_of(c, 43);
  const auto first = deal_for_pair(parts, 9), again = deal_for_pair(parts, 9), other = deal_for_pair(parts, 10);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(client_checks::serialize(first[i]), client_checks::serialize(again[i]));
    EXPECT_NE(client_checks::serialize(first[i]), client_checks::serialize(other[i]));
  }
  // Each member's tag is its peer's hash under its own key: the leader's checks S's half.
  EXPECT_EQ(first[0].segments[0].peer_tag,
            client_checks::share_tag(first[0].own_key, parts.second, first[1].segments[0].own_blinding));
  EXPECT_EQ(first[1].segments[0].peer_tag, client_checks::share_tag(first[1].own_key, bytes_of_bits(c.first_share),
                                                                    first[0].segments[0].own_blinding));
  const client_checks::Segment outside[] = {{8, kRoundKeyBits / 8}};
  EXPECT_THROW(client_checks::deal_pair_checks({}, parts.missing, parts.second, outside), Error);
}

// The checks the two members make for each other once the dealer is proven to have deviated:
// each sends its partner its tags (mutual_tags) and completes its own with them.
std::array<ShareCheck, 2> mutual_for_pair(const Case& c, std::uint8_t shared_byte, std::uint8_t leader_byte,
                                          std::uint8_t second_byte) {
  const client_checks::Segment whole[] = {{0, kRoundKeyBits / 8}};
  client_checks::CheckSeed shared{}, leader_own{}, second_own{};
  shared.fill(shared_byte);
  leader_own.fill(leader_byte);
  second_own.fill(second_byte);
  const auto from_leader = client_checks::mutual_tags(shared, client_checks::kLeaderRole, leader_own,
                                                      bytes_of_bits(c.first_share), whole);
  const auto from_second = client_checks::mutual_tags(shared, client_checks::kSecondRole, second_own,
                                                      bytes_of_bits(c.second_share), whole);
  return {client_checks::complete_mutual_check(shared, client_checks::kLeaderRole, leader_own, from_second, whole),
          client_checks::complete_mutual_check(shared, client_checks::kSecondRole, second_own, from_leader, whole)};
}

TEST(PairCheck, ChecksTheMembersMakeForEachOtherPassForHonestHalvesAndCatchEitherMember) {
  const Case c = make_case(44);
  expect_pass_for_honest_halves_and_catch_either_member(c, mutual_for_pair(c, 11, 12, 13));
}

TEST(PairCheck, AMembersTagsAreBlindedByItsOwnSeedAndItsKeyComesFromTheSharedOne) {
  const Case c = make_case(45);
  const auto checks = mutual_for_pair(c, 21, 22, 23);
  // Each member checks its partner under the key the shared seed gives it, and the tag it holds
  // is its partner's hash under that key, blinded by what only the partner draws.
  EXPECT_EQ(checks[0].segments[0].peer_tag, client_checks::share_tag(checks[0].own_key, bytes_of_bits(c.second_share),
                                                                     checks[1].segments[0].own_blinding));
  EXPECT_EQ(checks[1].segments[0].peer_tag, client_checks::share_tag(checks[1].own_key, bytes_of_bits(c.first_share),
                                                                     checks[0].segments[0].own_blinding));
  // Another blinding seed of the second member: its tag changes, the leader's key does not.
  const auto reblinded = mutual_for_pair(c, 21, 22, 24);
  EXPECT_NE(reblinded[0].segments[0].peer_tag, checks[0].segments[0].peer_tag);
  EXPECT_EQ(reblinded[0].own_key, checks[0].own_key);
  // Another shared seed (another key's common component): other checking keys.
  const auto other = mutual_for_pair(c, 25, 22, 23);
  EXPECT_NE(other[0].own_key, checks[0].own_key);
  EXPECT_NE(other[1].own_key, checks[1].own_key);
  // Tags made under one shared seed do not complete checks under another: the pair fails.
  const client_checks::Segment whole[] = {{0, kRoundKeyBits / 8}};
  client_checks::CheckSeed first_shared{}, second_shared{}, own{};
  first_shared.fill(31);
  second_shared.fill(32);
  own.fill(33);
  const auto tags = client_checks::mutual_tags(first_shared, client_checks::kSecondRole, own,
                                               bytes_of_bits(c.second_share), whole);
  auto mismatched = checks;
  mismatched[0] = client_checks::complete_mutual_check(second_shared, client_checks::kLeaderRole, own, tags, whole);
  const auto outcome = run_pair<std::vector<std::uint8_t>>(server(c, Role::First, mismatched[0]),
                                                           server(c, Role::Second, mismatched[1]));
  EXPECT_EQ(outcome.first.check(), "share_check");
  EXPECT_THROW(client_checks::complete_mutual_check(first_shared, client_checks::kLeaderRole, own, ShareCheck{}, whole),
               Error);
}

}  // namespace
