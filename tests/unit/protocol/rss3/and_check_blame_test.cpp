#include "protocol/rss3/and_check_blame.hpp"

#include <gtest/gtest.h>
#include <sodium.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

namespace mpc::rss3::and_check {
namespace {

struct Identity {
  Identity() {
    std::array<std::uint8_t, 32> secret{};
    randombytes_buf(secret.data(), secret.size());
    crypto_scalarmult_base(public_key.data(), secret.data());
    signer = std::make_unique<IdentitySigner>(secret);
  }
  std::array<std::uint8_t, 32> public_key{};
  std::unique_ptr<IdentitySigner> signer;
};

Verdict rejection() {
  Verdict v;
  v.status = VerdictStatus::Rejected;
  v.evidence.receipt.fill(1);
  v.evidence.share.fill(2);
  v.evidence.findings_hash.fill(3);
  v.evidence.signature.fill(4);
  return v;
}

TEST(AndCheckMessages, AVerdictRoundTripsAndIsSignedForItsBatchAndProverOnly) {
  ASSERT_GE(sodium_init(), 0);
  const Identity minus, other;
  const Context context{BatchNonce{5, 17}, 1, 640};
  const std::vector<std::uint8_t> bytes = encode_verdict(context, rejection(), *minus.signer);
  ASSERT_EQ(bytes.size(), kVerdictBytes);
  const auto decoded = decode_verdict(bytes);
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->status, VerdictStatus::Rejected);
  EXPECT_EQ(decoded->evidence.share, rejection().evidence.share);
  EXPECT_FALSE(clean_pass(*decoded));
  EXPECT_TRUE(verdict_signed_by(context, bytes, minus.public_key));
  EXPECT_FALSE(verdict_signed_by(context, bytes, other.public_key));
  // A verdict of another batch, another prover or another statement size is not this one's:
  // a signed verdict cannot be replayed into another check.
  for (const Context& elsewhere : {Context{BatchNonce{5, 18}, 1, 640}, Context{BatchNonce{6, 17}, 1, 640},
                                   Context{BatchNonce{5, 17}, 2, 640}, Context{BatchNonce{5, 17}, 1, 704}})
    EXPECT_FALSE(verdict_signed_by(elsewhere, bytes, minus.public_key));
  for (std::size_t byte = 0; byte < bytes.size(); byte += 7) {
    auto altered = bytes;
    altered[byte] ^= 0x10;
    EXPECT_FALSE(verdict_signed_by(context, altered, minus.public_key)) << byte;
  }
}

TEST(AndCheckMessages, MalformedMessagesAreNotTakenForVerdictsOrRelays) {
  const Identity minus, prover;
  const Context context{BatchNonce{1, 2}, 0, 64};
  std::vector<std::uint8_t> verdict = encode_verdict(context, Verdict{}, *minus.signer);
  EXPECT_TRUE(clean_pass(*decode_verdict(verdict)));
  verdict[0] = 3;  // no such status
  EXPECT_FALSE(decode_verdict(verdict).has_value());
  EXPECT_FALSE(decode_verdict(std::vector<std::uint8_t>(kVerdictBytes - 1)).has_value());

  Relay relay;
  relay.verdict = encode_verdict(context, rejection(), *minus.signer);
  relay.answer = AuditAnswer::AccusesNeither;
  std::vector<std::uint8_t> bytes = encode_relay(context, relay, prover.signer.get());
  ASSERT_EQ(bytes.size(), kRelayBytes);
  EXPECT_TRUE(relay_signed_by(context, bytes, prover.public_key));
  const auto decoded = decode_relay(bytes);
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->answer, AuditAnswer::AccusesNeither);
  EXPECT_EQ(decoded->verdict, relay.verdict);
  auto bad_answer = bytes;
  bad_answer[kVerdictBytes + 1] = 4;
  EXPECT_FALSE(decode_relay(bad_answer).has_value());
  auto bad_mark = bytes;
  bad_mark[kVerdictBytes] = 2;
  EXPECT_FALSE(decode_relay(bad_mark).has_value());
  // A clean pass's relay goes unsigned: its signature bytes are zero and check for nobody.
  Relay pass;
  pass.verdict = encode_verdict(context, Verdict{}, *minus.signer);
  EXPECT_FALSE(relay_signed_by(context, encode_relay(context, pass, nullptr), prover.public_key));
}

TEST(AndCheckMessages, AForwardCarriesTheRelayOnlyWhenItSaysSo) {
  const std::vector<std::uint8_t> relay(kRelayBytes, 0xab);
  const auto nothing = encode_forward(ForwardKind::Nothing, relay);
  ASSERT_EQ(nothing.size(), kForwardBytes);
  EXPECT_TRUE(std::all_of(nothing.begin(), nothing.end(), [](std::uint8_t b) { return b == 0; }));
  const auto forwarded = encode_forward(ForwardKind::Relay, relay);
  EXPECT_EQ(forwarded[0], static_cast<std::uint8_t>(ForwardKind::Relay));
  EXPECT_TRUE(std::equal(relay.begin(), relay.end(), forwarded.begin() + 1));
}

}  // namespace
}  // namespace mpc::rss3::and_check
