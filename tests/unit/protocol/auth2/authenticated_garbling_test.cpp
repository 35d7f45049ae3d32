// tests/unit/protocol/auth2/authenticated_garbling_test.cpp: AES-128 under round keys XOR-shared between
// the two servers, garbled by one and evaluated by the other with authenticated garbling, gives
// OpenSSL's ciphertext to both; a garbler that alters a row, garbles another function, sends a
// wrong label for the evaluator's input or its own, or reveals a wrong mask is caught, and so
// is an evaluator that reports another output; whether an altered row aborts does not depend
// on the evaluator's key bits.
#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "aes_case.hpp"
#include "pair_run.hpp"
#include "protocol/auth2/authenticated_garbling.hpp"

namespace {

using namespace mpc;
using auth2::Role;
using auth2::Session;
using auth2::Step;
using circuits::Circuit;
using test_support::run_pair;
using namespace test_support;

using auth2::Owner;
// The block is the second party's secret input, or public (both hold it).
const auth2::InputOwners kSecretBlock{Owner::First, Owner::Second, Owner::Second};
const auth2::InputOwners kPublicBlock{Owner::First, Owner::Second, Owner::Public};

// `nand_at`: a garbler that garbles that AND gate as a NAND (its rows carry its share of the
// complemented output, with the MAC it holds for the true one).
struct Options {
  const auth2::InputOwners* owners = &kSecretBlock;
  auth2::Outputs outputs = auth2::Outputs::Reveal;
  int nand_at = -1;
};

std::function<std::vector<std::uint8_t>(Session&)> party(const Case& c, Role role, Options options = {}) {
  return [&c, role, options](Session& session) {
    const auth2::InputOwners& owners = *options.owners;
    const auto triples = auth2::and_triples(session, auth2::and_gate_count(circuit()));
    auth2::CircuitMasks masks = auth2::prepare_masks(session, circuit(), owners, triples);
    if (options.nand_at >= 0) masks.ands[static_cast<std::size_t>(options.nand_at)].sigma.bit ^= 1;
    std::vector<std::uint8_t> inputs = role == Role::First ? c.first_share : c.second_share;
    const auto block = to_bits(c.block);
    std::vector<std::uint8_t> public_inputs;
    if (owners.back() == Owner::Public) public_inputs = block;
    else if (role == Role::Second) inputs.insert(inputs.end(), block.begin(), block.end());
    return auth2::evaluate_authenticated(session, circuit(), owners, masks, inputs, public_inputs, options.outputs);
  };
}

TEST(AuthenticatedGarbling, SharedKeyAesMatchesOpenSsl) {
  for (const std::uint64_t seed : {1u, 2u}) {
    const Case c = make_case(seed);
    const auto outcome = run_pair<std::vector<std::uint8_t>>(party(c, Role::First), party(c, Role::Second));
    ASSERT_FALSE(outcome.first.failed()) << outcome.first.check();
    ASSERT_FALSE(outcome.second.failed()) << outcome.second.check();
    const auto expected = openssl_encrypt(c.key, c.block);
    EXPECT_EQ(to_bytes(*outcome.first.result), expected);
    EXPECT_EQ(to_bytes(*outcome.second.result), expected);
  }
}

TEST(AuthenticatedGarbling, APublicBlockAndSharedOutputsGiveTheCiphertextAsShares) {
  const Case c = make_case(7);
  const Options options{&kPublicBlock, auth2::Outputs::Shares};
  const auto outcome =
      run_pair<std::vector<std::uint8_t>>(party(c, Role::First, options), party(c, Role::Second, options));
  ASSERT_FALSE(outcome.first.failed()) << outcome.first.check();
  ASSERT_FALSE(outcome.second.failed()) << outcome.second.check();
  std::vector<std::uint8_t> combined(128);
  for (std::size_t j = 0; j < 128; ++j) combined[j] = (*outcome.first.result)[j] ^ (*outcome.second.result)[j];
  EXPECT_EQ(to_bytes(combined), openssl_encrypt(c.key, c.block));
  // Each share alone is not the ciphertext.
  EXPECT_NE(to_bytes(*outcome.first.result), openssl_encrypt(c.key, c.block));
  EXPECT_NE(to_bytes(*outcome.second.result), openssl_encrypt(c.key, c.block));
  // A wrong label of a public bit (the garbler's first label message carries its own inputs'
  // labels, then the public block's) is caught too.
  const auto deviation = [](Step step, std::span<std::uint8_t> message) {
    if (step == Step::InputLabels && message.size() > 16 * 1408) message[16 * (1408 + 5)] ^= 1;
  };
  const auto wrong = run_pair<std::vector<std::uint8_t>>(party(c, Role::First, options), party(c, Role::Second, options),
                                                         deviation);
  EXPECT_EQ(wrong.second.check(), "garbled_row");
}

// A garbled row is 24 bytes: 8 of MAC, then 16 of label; an AND gate has four.
std::size_t row_byte(std::size_t gate, unsigned row, unsigned part) { return 96 * gate + 24 * row + (part == 0 ? 0 : 8); }

// Alters the garbled rows: XORs `mask` into the first byte of part `part` (0: MAC, 1: label) of
// AND gate `gate`'s row `row`.
auth2::Deviation alter_row(std::size_t gate, unsigned row, unsigned part, std::uint8_t mask) {
  return [=](Step step, std::span<std::uint8_t> message) {
    if (step == Step::GarbledRows) message[row_byte(gate, row, part)] ^= mask;
  };
}

TEST(AuthenticatedGarbling, AGarblerThatAltersEveryRowOfAGateIsCaught) {
  const Case c = make_case(3);
  for (const unsigned block : {0u, 1u}) {
    SCOPED_TRACE(block);
    // All four rows of gate 40: whichever the evaluator opens is wrong. A wrong MAC fails at
    // once; a wrong label fails at the next gate that reads it.
    auth2::Deviation deviation = [block](Step step, std::span<std::uint8_t> message) {
      if (step != Step::GarbledRows) return;
      for (unsigned row = 0; row < 4; ++row) message[row_byte(40, row, block)] ^= 4;
    };
    const auto outcome =
        run_pair<std::vector<std::uint8_t>>(party(c, Role::First), party(c, Role::Second), deviation);
    EXPECT_EQ(outcome.second.check(), "garbled_row");
    EXPECT_TRUE(outcome.first.failed());
  }
}

TEST(AuthenticatedGarbling, AGarblerThatGarblesAnotherFunctionIsCaught) {
  // One AND garbled as a NAND early on, where its output feeds later ANDs: the next row that
  // reads its label fails its MAC, in every run.
  const Case c = make_case(4);
  const auto early = run_pair<std::vector<std::uint8_t>>(party(c, Role::First, {.nand_at = 100}), party(c, Role::Second));
  EXPECT_EQ(early.second.check(), "garbled_row");
  // Among the last ANDs, where its output is a ciphertext bit: the masked output comes from the
  // MAC, so the evaluator's ciphertext stays right, and the label it reports shows the change.
  const int last = static_cast<int>(auth2::and_gate_count(circuit())) - 1;
  const auto late = run_pair<std::vector<std::uint8_t>>(party(c, Role::First, {.nand_at = last}), party(c, Role::Second));
  if (late.second.result) {
    EXPECT_EQ(to_bytes(*late.second.result), openssl_encrypt(c.key, c.block));
  }
  EXPECT_EQ(late.first.check(), "output_label");
}

TEST(AuthenticatedGarbling, WrongInputLabelsAreCaught) {
  const Case c = make_case(5);
  // The first label message carries the garbler's own inputs, the second the evaluator's.
  for (const int which : {0, 1}) {
    SCOPED_TRACE(which);
    auto deviation = [which, seen = 0](Step step, std::span<std::uint8_t> message) mutable {
      if (step != Step::InputLabels) return;
      if (seen++ == which) message[16 * 20 + 3] ^= 0x20;  // label 20 of that message
    };
    const auto outcome =
        run_pair<std::vector<std::uint8_t>>(party(c, Role::First), party(c, Role::Second), deviation);
    EXPECT_EQ(outcome.second.check(), "garbled_row");
  }
}

TEST(AuthenticatedGarbling, WrongMasksAndOutputClaimsAreCaught) {
  const Case c = make_case(6);
  // The garbler reveals a wrong mask bit (its output masks are its last opening).
  const auto wrong_mask = [seen = 0](Step step, std::span<std::uint8_t> message) mutable {
    if (step == Step::Opening && ++seen == 3) message[0] ^= 1;
  };
  const auto by_garbler =
      run_pair<std::vector<std::uint8_t>>(party(c, Role::First), party(c, Role::Second), wrong_mask);
  EXPECT_EQ(by_garbler.second.check(), "mac_check");
  // The evaluator reports another masked output than its labels say.
  const auto wrong_claim = [](Step step, std::span<std::uint8_t> message) {
    if (step == Step::OutputClaim) message[2] ^= 0x08;
  };
  const auto by_evaluator =
      run_pair<std::vector<std::uint8_t>>(party(c, Role::First), party(c, Role::Second), {}, wrong_claim);
  EXPECT_EQ(by_evaluator.first.check(), "output_label");
}

TEST(AuthenticatedGarbling, WhetherOneAlteredRowAbortsDoesNotDependOnTheKey) {
  // Selective failure: the garbler corrupts one row of a gate in the first round, which the
  // evaluator opens only for one pair of masked values. Over runs with two keys that differ in
  // that gate's inputs, the abort rate is about 1/4 for both: the masks, not the key, decide.
  const std::size_t gate = 0;
  const int runs = 24;
  int aborts[2] = {0, 0};
  for (int key = 0; key < 2; ++key) {
    for (int run = 0; run < runs; ++run) {
      Case c = make_case(100 + key);
      const auto outcome = run_pair<std::vector<std::uint8_t>>(party(c, Role::First), party(c, Role::Second),
                                                               alter_row(gate, 1, 0, 8));
      if (outcome.second.failed()) {
        EXPECT_EQ(outcome.second.check(), "garbled_row");
        ++aborts[key];
      } else {
        EXPECT_EQ(to_bytes(*outcome.second.result), openssl_encrypt(c.key, c.block));
      }
    }
  }
  // Binomial(24, 1/4): 6 on average; below 1 or above 14 has probability under 1e-3 each.
  for (const int count : aborts) {
    EXPECT_GE(count, 1);
    EXPECT_LE(count, 14);
  }
}

// AND material made ahead over one channel (a pool's preprocessing job), then two jobs over
// channels of their own, each a job session on its own range of the material and its own
// tweaks: both give OpenSSL's ciphertext as shares, and a job session makes no bits.
TEST(AuthenticatedGarbling, MaterialMadeAheadServesJobsOverTheirOwnChannels) {
  const Case first_case = make_case(21), second_case = make_case(22);
  const Case* cases[2] = {&first_case, &second_case};
  const std::size_t per_job = auth2::material_entries(circuit(), kPublicBlock);
  auto [pre_a, pre_b] = two_party::make_memory_channel_pair(std::chrono::milliseconds(5000));
  auto [job_a, job_b] = two_party::make_memory_channel_pair(std::chrono::milliseconds(5000));
  std::vector<std::uint8_t> shares[2][2];  // [party][job]
  bool refused_bits[2] = {false, false};
  auto play = [&](int party, two_party::Channel& pre, two_party::Channel& jobs) {
    Session session(pre, party == 0 ? Role::First : Role::Second);
    const std::vector<auth2::AndMaterial> material = auth2::and_material(session, 2 * per_job);
    for (int job = 0; job < 2; ++job) {
      Session job_session = session.job_session(jobs);
      job_session.set_next_tweak(4 * per_job * static_cast<std::size_t>(job));
      const std::span<const auth2::AndMaterial> range(material.data() + per_job * job, per_job);
      const auth2::CircuitMasks masks = auth2::prepare_masks(job_session, circuit(), kPublicBlock, range);
      const Case& c = *cases[job];
      shares[party][job] = auth2::evaluate_authenticated(job_session, circuit(), kPublicBlock, masks,
                                                         party == 0 ? c.first_share : c.second_share,
                                                         to_bits(c.block), auth2::Outputs::Shares);
      if (job == 1) {
        try {
          job_session.random_bits(1);
        } catch (const Error&) {
          refused_bits[party] = true;
        }
      }
    }
  };
  std::thread other([&] { play(1, *pre_b, *job_b); });
  play(0, *pre_a, *job_a);
  other.join();
  for (int job = 0; job < 2; ++job) {
    std::vector<std::uint8_t> combined(128);
    for (std::size_t j = 0; j < 128; ++j) combined[j] = shares[0][job][j] ^ shares[1][job][j];
    EXPECT_EQ(to_bytes(combined), openssl_encrypt(cases[job]->key, cases[job]->block)) << job;
  }
  EXPECT_TRUE(refused_bits[0] && refused_bits[1]);
  // The jobs moved their rows and openings only: the triples went over the preprocessing channel.
  EXPECT_GT(job_a->bytes_sent(), 0u);
  EXPECT_GT(pre_a->bytes_sent(), job_a->bytes_sent());
}

}  // namespace
