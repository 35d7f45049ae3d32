// tests/unit/protocol/auth2/padded_circuit_test.cpp: AES-128 under XOR-shared round keys with outputs
// padded for the client: the client rebuilds OpenSSL's ciphertext from the two servers' reports,
// which show neither server the ciphertext; a server that feeds another pad than the client's
// (the way to shift the client's result by a value it picks, which XOR-shared outputs allow) is
// caught by the client's pad check, a server that reports another output by the comparison,
// and a server that opens a wrong check by its peer.
#include <gtest/gtest.h>

#include <stdexcept>

#include "aes_case.hpp"
#include "circuits/aes_shared_key.hpp"
#include "pair_run.hpp"
#include "protocol/auth2/padded_circuit.hpp"

namespace {

using namespace mpc;
using namespace test_support;
using auth2::Owner;
using auth2::PaddedRun;
using client_checks::PadSeed;
using auth2::Role;
using auth2::Session;
using auth2::Step;

const auth2::InputOwners kOwners{Owner::First, Owner::Second, Owner::Public};

const Circuit& padded() {
  static const Circuit shared = auth2::padded_circuit(circuit());
  return shared;
}

PadSeed seed_of(std::uint8_t value) {
  PadSeed seed{};
  seed.fill(value);
  seed[0] = 0x5a;
  return seed;
}

std::vector<std::uint32_t> share_wires(Role role) {
  std::vector<std::uint32_t> wires(kRoundKeyBits);
  for (std::uint32_t i = 0; i < kRoundKeyBits; ++i) wires[i] = (role == Role::First ? 0 : kRoundKeyBits) + i;
  return wires;
}

// A server's part: its round-key share, then the pad the client gave it; `flip_pad` bits of the
// pad flipped first (a server that feeds another pad). With `shares_known`, the client knows
// both round-key shares and the pads' checks cover them too; `flip_share` flips one bit of this
// server's share.
std::function<PaddedRun(Session&)> server(const Case& c, Role role, const PadSeed& pad,
                                          std::vector<std::size_t> flip_pad = {}, bool shares_known = false,
                                          std::size_t flip_share = SIZE_MAX) {
  return [&c, role, pad, flip_pad, shares_known, flip_share](Session& session) {
    const auth2::InputOwners owners = auth2::padded_owners(kOwners);
    const auto triples = auth2::and_triples(session, auth2::and_gate_count(padded()));
    const auth2::CircuitMasks masks = auth2::prepare_masks(session, padded(), owners, triples);
    std::vector<std::uint8_t> inputs = role == Role::First ? c.first_share : c.second_share;
    if (flip_share < inputs.size()) inputs[flip_share] ^= 1;
    std::vector<std::uint8_t> pad_bits = client_checks::pad_bits(pad, 128);
    for (const std::size_t bit : flip_pad) pad_bits.at(bit) ^= 1;
    inputs.insert(inputs.end(), pad_bits.begin(), pad_bits.end());
    if (!shares_known) return auth2::evaluate_padded(session, padded(), owners, masks, inputs, to_bits(c.block));
    return auth2::evaluate_padded(session, padded(), owners, masks, inputs, to_bits(c.block), share_wires(Role::First),
                                  share_wires(Role::Second));
  };
}

// The client's side: y compared between the two, then the pads' check.
std::vector<std::uint8_t> open_for_client(const PaddedRun& first, const PaddedRun& second, const PadSeed& p1,
                                          const PadSeed& p2) {
  if (first.masked != second.masked)
    throw VerificationError(Component::Client, "the servers reported different outputs", "server_reports");
  return client_checks::open_part(first.masked, first.report, second.report, p1, p2);
}

std::string client_check(const PaddedRun& first, const PaddedRun& second, const PadSeed& p1, const PadSeed& p2) {
  try {
    open_for_client(first, second, p1, p2);
    return "none";
  } catch (const VerificationError& e) {
    return e.check();
  }
}

// What a client would rebuild without the check: the reported output unpadded.
std::vector<std::uint8_t> unpadded(const PaddedRun& run, const PadSeed& p1, const PadSeed& p2) {
  const auto b1 = client_checks::pad_bits(p1, 128), b2 = client_checks::pad_bits(p2, 128);
  std::vector<std::uint8_t> out(128);
  for (std::size_t j = 0; j < 128; ++j) out[j] = run.masked[j] ^ b1[j] ^ b2[j];
  return to_bytes(out);
}

TEST(PaddedCircuit, TheClientRebuildsOpenSslsCiphertextWhichNeitherServerSees) {
  for (const std::uint64_t seed : {11u, 12u}) {
    const Case c = make_case(seed);
    const PadSeed p1 = seed_of(static_cast<std::uint8_t>(seed)), p2 = seed_of(static_cast<std::uint8_t>(seed + 100));
    const auto outcome = run_pair<PaddedRun>(server(c, Role::First, p1), server(c, Role::Second, p2));
    ASSERT_FALSE(outcome.first.failed()) << outcome.first.check();
    ASSERT_FALSE(outcome.second.failed()) << outcome.second.check();
    EXPECT_EQ(outcome.first.result->masked, outcome.second.result->masked);
    EXPECT_EQ(outcome.first.result->report, outcome.second.result->report);
    const auto expected = openssl_encrypt(c.key, c.block);
    EXPECT_EQ(to_bytes(open_for_client(*outcome.first.result, *outcome.second.result, p1, p2)), expected);
    // What the servers hold is the ciphertext under both pads, neither of which is the ciphertext
    // under one pad.
    const auto masked = to_bytes(outcome.first.result->masked);
    EXPECT_NE(masked, expected);
    EXPECT_NE(unpadded(*outcome.first.result, p1, seed_of(0)), expected);
    EXPECT_NE(unpadded(*outcome.first.result, seed_of(0), p2), expected);
  }
}

TEST(PaddedCircuit, AServerThatFeedsAnotherPadIsCaughtByTheClient) {
  const Case c = make_case(13);
  const PadSeed p1 = seed_of(1), p2 = seed_of(2);
  const auto expected = openssl_encrypt(c.key, c.block);
  for (const Role deviating : {Role::First, Role::Second}) {
    SCOPED_TRACE(static_cast<int>(deviating));
    // Output bit 3 shifted: both servers agree on a result the client would take, one bit off.
    const std::vector<std::size_t> shift{3};
    const auto outcome = run_pair<PaddedRun>(server(c, Role::First, p1, deviating == Role::First ? shift : std::vector<std::size_t>{}),
                                                 server(c, Role::Second, p2, deviating == Role::Second ? shift : std::vector<std::size_t>{}));
    ASSERT_FALSE(outcome.first.failed()) << outcome.first.check();
    ASSERT_FALSE(outcome.second.failed()) << outcome.second.check();
    EXPECT_EQ(outcome.first.result->masked, outcome.second.result->masked);
    EXPECT_EQ(outcome.first.result->report, outcome.second.result->report);
    auto shifted = expected;
    shifted[0] ^= 8;
    EXPECT_EQ(unpadded(*outcome.first.result, p1, p2), shifted);
    EXPECT_EQ(client_check(*outcome.first.result, *outcome.second.result, p1, p2), "pad_check");
    // Another check bit alone (the pad's outputs untouched) fails the same check.
    const std::vector<std::size_t> check_bit{128 + 17};
    const auto other = run_pair<PaddedRun>(server(c, Role::First, p1, deviating == Role::First ? check_bit : std::vector<std::size_t>{}),
                                               server(c, Role::Second, p2, deviating == Role::Second ? check_bit : std::vector<std::size_t>{}));
    ASSERT_TRUE(other.first.result && other.second.result);
    EXPECT_EQ(client_check(*other.first.result, *other.second.result, p1, p2), "pad_check");
  }
}

TEST(PaddedCircuit, InputsTheClientKnowsAreCheckedWithThePads) {
  const Case c = make_case(17);
  const PadSeed p1 = seed_of(9), p2 = seed_of(10);
  const auto open = [&](const PaddedRun& first, const PaddedRun& second) {
    return client_checks::open_part(first.masked, first.report, second.report, p1, p2, c.first_share, c.second_share);
  };
  const auto honest = run_pair<PaddedRun>(server(c, Role::First, p1, {}, true), server(c, Role::Second, p2, {}, true));
  ASSERT_TRUE(honest.first.result && honest.second.result);
  EXPECT_EQ(to_bytes(open(*honest.first.result, *honest.second.result)), openssl_encrypt(c.key, c.block));
  for (const Role deviating : {Role::First, Role::Second}) {
    SCOPED_TRACE(static_cast<int>(deviating));
    const std::size_t flip = 700;
    const auto outcome = run_pair<PaddedRun>(
        server(c, Role::First, p1, {}, true, deviating == Role::First ? flip : SIZE_MAX),
        server(c, Role::Second, p2, {}, true, deviating == Role::Second ? flip : SIZE_MAX));
    ASSERT_TRUE(outcome.first.result && outcome.second.result);
    try {
      open(*outcome.first.result, *outcome.second.result);
      ADD_FAILURE() << "a share the client did not deal was taken";
    } catch (const VerificationError& e) {
      EXPECT_EQ(e.check(), "pad_check");
    }
  }
}

TEST(PaddedCircuit, OutputsKeptAsSharesStayWithTheServersAndTheRestReachTheClient) {
  // Two blocks: the first kept by the servers as XOR shares (as a GCM tag's mask is), the second
  // padded for the client.
  const Case c = make_case(18);
  const Circuit two_blocks = circuits::build_shared_key_aes_circuit(
      circuits::AesKeySize::Aes128, circuits::AesDirection::Encrypt, circuits::SboxVariant::And32, 2);
  const Circuit kept = auth2::padded_circuit(two_blocks, 128);
  EXPECT_EQ(kept.total_outputs(), 256u);
  EXPECT_EQ(kept.input_widths.back(), 128 + client_checks::kPadCheckBits);
  const PadSeed p1 = seed_of(11), p2 = seed_of(12);
  const std::vector<std::uint8_t> second_block = to_bits(std::vector<std::uint8_t>(16, 0x77));
  auto server_of = [&](Role role, const PadSeed& pad) {
    return [&, role, pad](Session& session) {
      const auth2::InputOwners owners = auth2::padded_owners(kOwners);
      const auto triples = auth2::and_triples(session, auth2::and_gate_count(kept));
      const auth2::CircuitMasks masks = auth2::prepare_masks(session, kept, owners, triples);
      std::vector<std::uint8_t> inputs = role == Role::First ? c.first_share : c.second_share;
      const auto bits = client_checks::pad_bits(pad, 128);
      inputs.insert(inputs.end(), bits.begin(), bits.end());
      std::vector<std::uint8_t> blocks = to_bits(c.block);
      blocks.insert(blocks.end(), second_block.begin(), second_block.end());
      return auth2::evaluate_padded(session, kept, owners, masks, inputs, blocks);
    };
  };
  const auto outcome = run_pair<PaddedRun>(server_of(Role::First, p1), server_of(Role::Second, p2));
  ASSERT_TRUE(outcome.first.result && outcome.second.result) << outcome.first.check() << outcome.second.check();
  const PaddedRun& first = *outcome.first.result;
  const PaddedRun& second = *outcome.second.result;
  ASSERT_EQ(first.shares.size(), 128u);
  std::vector<std::uint8_t> block0(128);
  for (std::size_t j = 0; j < 128; ++j) block0[j] = first.shares[j] ^ second.shares[j];
  EXPECT_EQ(to_bytes(block0), openssl_encrypt(c.key, c.block));
  EXPECT_NE(to_bytes(first.shares), openssl_encrypt(c.key, c.block));
  EXPECT_EQ(first.masked, second.masked);
  EXPECT_EQ(to_bytes(client_checks::open_part(first.masked, first.report, second.report, p1, p2)),
            openssl_encrypt(c.key, std::vector<std::uint8_t>(16, 0x77)));
}

TEST(PaddedCircuit, AServerThatReportsAnotherOutputIsCaughtByTheClient) {
  const Case c = make_case(14);
  const PadSeed p1 = seed_of(3), p2 = seed_of(4);
  const auto outcome = run_pair<PaddedRun>(server(c, Role::First, p1), server(c, Role::Second, p2));
  ASSERT_TRUE(outcome.first.result && outcome.second.result);
  PaddedRun altered = *outcome.second.result;
  altered.masked[20] ^= 1;
  EXPECT_EQ(client_check(*outcome.first.result, altered, p1, p2), "server_reports");
  altered = *outcome.first.result;
  altered.report.check_seed[0] ^= 1;
  EXPECT_EQ(client_check(altered, *outcome.second.result, p1, p2), "server_reports");
  // Both servers reporting the same altered output (as if both deviated, outside the threat
  // model) still do not get past the pads' check when the seed changed.
  EXPECT_EQ(client_check(altered, altered, p1, p2), "pad_check");
}

TEST(PaddedCircuit, AServerThatOpensAWrongCheckIsCaughtByItsPeer) {
  const Case c = make_case(15);
  const PadSeed p1 = seed_of(5), p2 = seed_of(6);
  // Its openings after the coin toss are the checks'.
  const auto deviation = [] {
    return [tossed = false](Step step, std::span<std::uint8_t> message) mutable {
      if (step == Step::CoinOpening || step == Step::CoinShare) tossed = true;
      if (step == Step::Opening && tossed && !message.empty()) message[0] ^= 1;
    };
  };
  const auto first = run_pair<PaddedRun>(server(c, Role::First, p1), server(c, Role::Second, p2), deviation());
  EXPECT_EQ(first.second.check(), "mac_check");
  const auto second = run_pair<PaddedRun>(server(c, Role::First, p1), server(c, Role::Second, p2), {}, deviation());
  EXPECT_EQ(second.first.check(), "mac_check");
}

TEST(PaddedCircuit, PaddingKeepsTheCircuitAndAddsOnlyXors) {
  const Circuit& original = circuit();
  const Circuit& with_pads = padded();
  EXPECT_EQ(auth2::and_gate_count(with_pads), auth2::and_gate_count(original));
  EXPECT_EQ(with_pads.total_inputs(), original.total_inputs() + 2 * (128 + client_checks::kPadCheckBits));
  EXPECT_EQ(with_pads.output_widths, original.output_widths);
  // In the clear, the padded circuit is the circuit XOR both pads.
  const Case c = make_case(16);
  std::vector<std::uint8_t> inputs = c.first_share;
  inputs.insert(inputs.end(), c.second_share.begin(), c.second_share.end());
  const auto block = to_bits(c.block);
  inputs.insert(inputs.end(), block.begin(), block.end());
  const auto b1 = client_checks::pad_bits(seed_of(7), 128), b2 = client_checks::pad_bits(seed_of(8), 128);
  inputs.insert(inputs.end(), b1.begin(), b1.end());
  inputs.insert(inputs.end(), b2.begin(), b2.end());
  const auto out = circuits::evaluate(with_pads, inputs);
  auto expected = to_bits(openssl_encrypt(c.key, c.block));
  for (std::size_t j = 0; j < 128; ++j) expected[j] ^= b1[j] ^ b2[j];
  EXPECT_EQ(out, expected);
}

}  // namespace
