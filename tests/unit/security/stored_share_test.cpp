// What one server stores: its replicated share (x_0, a_0) of a key's expanded round keys
// (Araki et al., CCS 2016: x_0 ^ x_1 ^ x_2 = 0, a_i = x_{i-1} ^ v). Over many fresh
// sharings of one fixed key, the share must look uniform, and its distribution must be
// the same for two different keys. A control test checks that the same statistics do
// reject what two servers together see, so the tests have the power to fail.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "circuits/aes_reference.hpp"
#include "protocol/rss3/shares.hpp"
#include "statistics.hpp"

namespace mpc::security_test {
namespace {

constexpr std::size_t kSharings = 4000;  // per key

// Only the secret is fixed; each test draws its sharing randomness from the OS.
std::vector<std::uint8_t> fixed_key(std::uint32_t seed, std::size_t bytes) {
  std::mt19937 generator(seed);
  std::vector<std::uint8_t> key(bytes);
  for (auto& byte : key) byte = static_cast<std::uint8_t>(generator());
  return key;
}

struct ShareView {
  explicit ShareView(std::size_t bytes) : x(bytes * 8), a(bytes * 8), x_xor_a(bytes * 8), two_parties(bytes * 8) {}
  BitCounter x;            // x_0
  BitCounter a;            // a_0
  BitCounter x_xor_a;      // x_0 ^ a_0: a leak of v through a wrong index shows here
  BitCounter two_parties;  // a_0 ^ x_2 = v: what parties 0 and 2 learn together (control)
  ByteHistogram bytes;     // x_0 || a_0
};

ShareView collect(const std::vector<std::uint8_t>& round_keys) {
  ShareView view(round_keys.size());
  std::vector<std::uint8_t> combined(round_keys.size());
  for (std::size_t run = 0; run < kSharings; ++run) {
    auto shares = rss3::share_bytes(round_keys);
    const auto& mine = shares[0];
    EXPECT_EQ(mine.x.size(), round_keys.size());
    EXPECT_EQ(mine.a.size(), round_keys.size());
    view.x.add(mine.x);
    view.a.add(mine.a);
    for (std::size_t i = 0; i < combined.size(); ++i) combined[i] = mine.x[i] ^ mine.a[i];
    view.x_xor_a.add(combined);
    for (std::size_t i = 0; i < combined.size(); ++i) combined[i] = mine.a[i] ^ shares[2].x[i];
    view.two_parties.add(combined);
    view.bytes.add(mine.x);
    view.bytes.add(mine.a);
    for (auto& share : shares) share.wipe();
  }
  return view;
}

void expect_uniform(const BitCounter& counter, const char* what) {
  for (const Verdict& verdict : {monobit(counter), per_position_chi_square(counter), worst_position(counter)})
    EXPECT_GT(verdict.p, kRejectP) << what << ": " << verdict.detail;
}

class StoredShareTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // AES-128 key A: FIPS-197 C.1; key B: a fixed pseudo-random AES-128 key. Both expanded.
    const std::vector<std::uint8_t> key_a = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
                                             0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f};
    round_keys_a_ = new std::vector<std::uint8_t>(circuits::aes_expand_key(key_a));
    round_keys_b_ = new std::vector<std::uint8_t>(circuits::aes_expand_key(fixed_key(20240601, 16)));
    view_a_ = new ShareView(collect(*round_keys_a_));
    view_b_ = new ShareView(collect(*round_keys_b_));
  }
  static void TearDownTestSuite() {
    delete view_a_;
    view_a_ = nullptr;
    delete view_b_;
    view_b_ = nullptr;
    delete round_keys_a_;
    round_keys_a_ = nullptr;
    delete round_keys_b_;
    round_keys_b_ = nullptr;
  }
  static std::vector<std::uint8_t>* round_keys_a_;
  static std::vector<std::uint8_t>* round_keys_b_;
  static ShareView* view_a_;
  static ShareView* view_b_;
};

std::vector<std::uint8_t>* StoredShareTest::round_keys_a_ = nullptr;
std::vector<std::uint8_t>* StoredShareTest::round_keys_b_ = nullptr;
ShareView* StoredShareTest::view_a_ = nullptr;
ShareView* StoredShareTest::view_b_ = nullptr;

TEST_F(StoredShareTest, SharesReconstructTheKey) {
  auto shares = rss3::share_bytes(*round_keys_a_);
  EXPECT_EQ(rss3::reconstruct_bytes(shares), *round_keys_a_);
}

TEST_F(StoredShareTest, PartyZeroShareLooksUniform) {
  expect_uniform(view_a_->x, "x_0, key A");
  expect_uniform(view_a_->a, "a_0, key A");
  expect_uniform(view_a_->x_xor_a, "x_0 ^ a_0, key A");
  expect_uniform(view_b_->x, "x_0, key B");
  expect_uniform(view_b_->a, "a_0, key B");
  expect_uniform(view_b_->x_xor_a, "x_0 ^ a_0, key B");
  for (const ShareView* view : {view_a_, view_b_}) {
    const Verdict verdict = uniform_bytes(view->bytes);
    EXPECT_GT(verdict.p, kRejectP) << verdict.detail;
  }
}

TEST_F(StoredShareTest, PartyZeroShareDoesNotDependOnTheKey) {
  for (const auto& [first, second, what] :
       {std::tuple{&view_a_->x, &view_b_->x, "x_0"}, std::tuple{&view_a_->a, &view_b_->a, "a_0"},
        std::tuple{&view_a_->x_xor_a, &view_b_->x_xor_a, "x_0 ^ a_0"}}) {
    const Verdict verdict = two_sample_positions(*first, *second);
    EXPECT_GT(verdict.p, kRejectP) << what << ": " << verdict.detail;
  }
  const Verdict bytes = same_byte_distribution(view_a_->bytes, view_b_->bytes);
  EXPECT_GT(bytes.p, kRejectP) << bytes.detail;
}

// Control: two servers together reconstruct the key, and the same tests must say so.
TEST_F(StoredShareTest, TwoPartiesTogetherAreDetected) {
  EXPECT_LT(per_position_chi_square(view_a_->two_parties).p, kRejectP);
  EXPECT_LT(two_sample_positions(view_a_->two_parties, view_b_->two_parties).p, kRejectP);
}

}  // namespace
}  // namespace mpc::security_test
