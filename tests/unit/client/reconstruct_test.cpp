// Opening the three servers' replies: correct replies built from real masked replicated
// shares open to the value; any server that alters a share, a count, a size, the nonce list
// or the verdict makes the result refused (Disagreement); a zero verdict gives no plaintext.
#include <gtest/gtest.h>

#include <random>

#include "client/reconstruct.hpp"
#include "protocol/client_checks/output_pads.hpp"
#include "protocol/rss3/shares.hpp"

namespace mpc::client {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes random_bytes(std::mt19937_64& rng, std::size_t n) {
  Bytes out(n);
  for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  return out;
}

// Replicated shares of `value` with the output masks of rss3/output.hpp applied: party i
// sends (x_i ^ m_i, a_i ^ m_{i-1}).
std::array<rss3::ByteShare, 3> masked_shares(std::span<const std::uint8_t> value, std::mt19937_64& rng) {
  auto shares = rss3::share_bytes(value);
  std::array<Bytes, 3> masks;
  for (auto& mask : masks) mask = random_bytes(rng, value.size());
  for (std::size_t party = 0; party < 3; ++party) {
    for (std::size_t j = 0; j < value.size(); ++j) {
      shares[party].x[j] ^= masks[party][j];
      shares[party].a[j] ^= masks[(party + 2) % 3][j];
    }
  }
  return shares;
}

template <typename Body>
Replies replies_of(const std::array<Body, 3>& bodies) {
  Replies replies(3);
  for (std::size_t party = 0; party < 3; ++party) replies[party] = wire::Reply{{}, wire::Status::Ok, "", bodies[party]};
  return replies;
}

std::array<wire::GcmPrefetchResult, 3> prefetch_bodies(const Bytes& nonces, const Bytes& keystream,
                                                       std::uint32_t count, std::uint32_t bpn, std::mt19937_64& rng) {
  const auto shares = masked_shares(keystream, rng);
  std::array<wire::GcmPrefetchResult, 3> bodies;
  for (std::size_t party = 0; party < 3; ++party)
    bodies[party] = wire::GcmPrefetchResult{count, bpn, nonces, shares[party].x, shares[party].a};
  return bodies;
}

Bytes distinct_nonces(std::uint32_t count) {
  Bytes nonces(count * 12, 0xa5);
  for (std::uint32_t i = 0; i < count; ++i)
    for (int b = 0; b < 4; ++b) nonces[i * 12 + 8 + b] = static_cast<std::uint8_t>(i >> (24 - 8 * b));
  return nonces;
}

TEST(Reconstruct, PrefetchOpensTheKeystream) {
  std::mt19937_64 rng(1);
  for (const auto& [count, bpn] : {std::pair<std::uint32_t, std::uint32_t>{1, 0}, {1, 1}, {3, 2}, {17, 5}}) {
    const Bytes nonces = distinct_nonces(count);
    const Bytes keystream = random_bytes(rng, std::size_t{count} * bpn * 16);
    const auto result = open_gcm_prefetch(replies_of(prefetch_bodies(nonces, keystream, count, bpn, rng)), count, bpn);
    EXPECT_EQ(result.nonces, nonces);
    EXPECT_EQ(Bytes(result.keystream.span().begin(), result.keystream.span().end()), keystream);
  }
}

TEST(Reconstruct, PrefetchRefusesAnyInconsistency) {
  std::mt19937_64 rng(2);
  const std::uint32_t count = 4;
  const std::uint32_t bpn = 2;
  const Bytes nonces = distinct_nonces(count);
  const Bytes keystream = random_bytes(rng, count * bpn * 16);
  const auto good = prefetch_bodies(nonces, keystream, count, bpn, rng);
  for (std::size_t party = 0; party < 3; ++party) {
    auto bodies = good;
    bodies[party].x[5] ^= 0x10;  // an altered share
    EXPECT_THROW(open_gcm_prefetch(replies_of(bodies), count, bpn), Disagreement);
    bodies = good;
    bodies[party].a[40] ^= 0x01;
    EXPECT_THROW(open_gcm_prefetch(replies_of(bodies), count, bpn), Disagreement);
    bodies = good;
    bodies[party].nonces[7] ^= 1;  // one server lists another nonce
    EXPECT_THROW(open_gcm_prefetch(replies_of(bodies), count, bpn), Disagreement);
    bodies = good;
    bodies[party].count = count - 1;
    EXPECT_THROW(open_gcm_prefetch(replies_of(bodies), count, bpn), Disagreement);
    bodies = good;
    bodies[party].blocks_per_nonce = bpn + 1;
    EXPECT_THROW(open_gcm_prefetch(replies_of(bodies), count, bpn), Disagreement);
    bodies = good;
    bodies[party].x.resize(bodies[party].x.size() - 16);
    bodies[party].a.resize(bodies[party].a.size() - 16);
    EXPECT_THROW(open_gcm_prefetch(replies_of(bodies), count, bpn), Disagreement);
    Replies replies = replies_of(good);
    replies[party].body = wire::GcmTagResult{};  // a body of another request type
    EXPECT_THROW(open_gcm_prefetch(replies, count, bpn), Disagreement);
  }
  // The request asked for another count than all three returned.
  EXPECT_THROW(open_gcm_prefetch(replies_of(good), count + 1, bpn), Disagreement);
  // All three agree on a list that repeats a nonce.
  Bytes repeated = nonces;
  std::copy_n(repeated.begin(), 12, repeated.begin() + 36);
  EXPECT_THROW(open_gcm_prefetch(replies_of(prefetch_bodies(repeated, keystream, count, bpn, rng)), count, bpn),
               Disagreement);
}

TEST(Reconstruct, TagOpensAndRefusesTampering) {
  std::mt19937_64 rng(3);
  const Bytes tag = random_bytes(rng, 16);
  const auto shares = masked_shares(tag, rng);
  std::array<wire::GcmTagResult, 3> bodies;
  for (std::size_t party = 0; party < 3; ++party) {
    std::copy(shares[party].x.begin(), shares[party].x.end(), bodies[party].x.begin());
    std::copy(shares[party].a.begin(), shares[party].a.end(), bodies[party].a.begin());
  }
  const wire::GcmTagBytes opened = open_gcm_tag(replies_of(bodies));
  EXPECT_EQ(Bytes(opened.begin(), opened.end()), tag);
  for (std::size_t party = 0; party < 3; ++party) {
    for (int component = 0; component < 2; ++component) {
      auto bad = bodies;
      (component == 0 ? bad[party].x : bad[party].a)[15] ^= 0x80;
      EXPECT_THROW(open_gcm_tag(replies_of(bad)), Disagreement);
    }
  }
}

// Why a client's report names nobody (docs/threat-model.md): one server shifting both its
// shares by one value makes two of the three reconstructions agree on a wrong tag, against the
// honest one; and no share component reaches the client alike from its two holders, so there
// is no copy to compare. The client refuses the reply all the same.
TEST(Reconstruct, OneServerCanOutvoteTheHonestReconstructionSoTheClientTakesNoMajority) {
  std::mt19937_64 rng(4);
  const Bytes tag = random_bytes(rng, 16);
  const auto shares = masked_shares(tag, rng);
  const auto view = [](const std::array<rss3::ByteShare, 3>& s, std::size_t i) {  // a_i ^ x_{i-1}
    Bytes v(16);
    for (std::size_t j = 0; j < 16; ++j) v[j] = s[i].a[j] ^ s[(i + 2) % 3].x[j];
    return v;
  };
  for (std::size_t holder = 0; holder < 3; ++holder) {  // s_{holder+1}: a_holder and x ^ a of the next
    Bytes own_copy(16), next_copy(16);
    for (std::size_t j = 0; j < 16; ++j) {
      own_copy[j] = shares[holder].a[j];
      next_copy[j] = shares[(holder + 1) % 3].x[j] ^ shares[(holder + 1) % 3].a[j];
    }
    EXPECT_NE(own_copy, next_copy) << "the masks leave no component's two copies alike";
  }
  for (std::size_t party = 0; party < 3; ++party) {
    auto shifted = shares;
    for (std::size_t j = 0; j < 16; ++j) {
      shifted[party].x[j] ^= 0x3c;
      shifted[party].a[j] ^= 0x3c;
    }
    Bytes wrong = tag;
    for (auto& byte : wrong) byte ^= 0x3c;
    EXPECT_EQ(view(shifted, party), wrong);
    EXPECT_EQ(view(shifted, (party + 1) % 3), wrong);
    EXPECT_EQ(view(shifted, (party + 2) % 3), tag);
    std::array<wire::GcmTagResult, 3> bodies;
    for (std::size_t p = 0; p < 3; ++p) {
      std::copy(shifted[p].x.begin(), shifted[p].x.end(), bodies[p].x.begin());
      std::copy(shifted[p].a.begin(), shifted[p].a.end(), bodies[p].a.begin());
    }
    EXPECT_THROW(open_gcm_tag(replies_of(bodies)), Disagreement);
  }
}

std::array<wire::GcmOpenResult, 3> open_bodies(const Bytes& keystream, std::uint8_t verdict, std::mt19937_64& rng) {
  const auto ks = masked_shares(keystream, rng);
  const Bytes verdict_bytes{verdict};
  auto v = rss3::share_bytes(verdict_bytes);
  std::array<wire::GcmOpenResult, 3> bodies;
  for (std::size_t party = 0; party < 3; ++party) {
    bodies[party] = wire::GcmOpenResult{static_cast<std::uint32_t>(keystream.size() / 16), ks[party].x, ks[party].a,
                                        static_cast<std::uint8_t>(v[party].x[0] & 1), static_cast<std::uint8_t>(v[party].a[0] & 1)};
  }
  return bodies;
}

TEST(Reconstruct, OpenGivesPlaintextOnlyForVerdictOne) {
  std::mt19937_64 rng(4);
  for (std::size_t length : {0, 1, 16, 20, 100}) {
    const Bytes ciphertext = random_bytes(rng, length);
    const Bytes keystream = random_bytes(rng, (length + 15) / 16 * 16);
    const auto accepted = open_gcm_open(replies_of(open_bodies(keystream, 1, rng)), ciphertext);
    ASSERT_TRUE(accepted.has_value()) << length;
    ASSERT_EQ(accepted->size(), length);
    for (std::size_t i = 0; i < length; ++i) EXPECT_EQ((*accepted)[i], ciphertext[i] ^ keystream[i]);
    EXPECT_FALSE(open_gcm_open(replies_of(open_bodies(keystream, 0, rng)), ciphertext).has_value()) << length;
  }
  // With a zero verdict the keystream is not opened, so servers may withhold it.
  const Bytes ciphertext = random_bytes(rng, 20);
  auto rejected = open_bodies(random_bytes(rng, 32), 0, rng);
  std::fill(rejected[1].x.begin(), rejected[1].x.end(), 0);
  EXPECT_FALSE(open_gcm_open(replies_of(rejected), ciphertext).has_value());
}

TEST(Reconstruct, OpenRefusesAnyInconsistency) {
  std::mt19937_64 rng(5);
  const Bytes ciphertext = random_bytes(rng, 40);
  const Bytes keystream = random_bytes(rng, 48);
  const auto good = open_bodies(keystream, 1, rng);
  for (std::size_t party = 0; party < 3; ++party) {
    auto bodies = good;
    bodies[party].verdict_x ^= 1;  // one server flips its verdict share
    EXPECT_THROW(open_gcm_open(replies_of(bodies), ciphertext), Disagreement);
    bodies = good;
    bodies[party].verdict_a ^= 1;
    EXPECT_THROW(open_gcm_open(replies_of(bodies), ciphertext), Disagreement);
    bodies = good;
    bodies[party].x[47] ^= 4;
    EXPECT_THROW(open_gcm_open(replies_of(bodies), ciphertext), Disagreement);
    bodies = good;
    bodies[party].blocks = 2;
    bodies[party].x.resize(32);
    bodies[party].a.resize(32);
    EXPECT_THROW(open_gcm_open(replies_of(bodies), ciphertext), Disagreement);
  }
  // All three agree on 3 blocks, but the text has 2 or 4.
  EXPECT_THROW(open_gcm_open(replies_of(good), Bytes(32)), Disagreement);
  EXPECT_THROW(open_gcm_open(replies_of(good), Bytes(49)), Disagreement);
  // Shares that open to a verdict byte other than 0 or 1 (the decoder never lets these through).
  auto garbage = good;
  const Bytes two{2};
  auto v = rss3::share_bytes(two);
  for (std::size_t party = 0; party < 3; ++party) {
    garbage[party].verdict_x = v[party].x[0];
    garbage[party].verdict_a = v[party].a[0];
  }
  EXPECT_THROW(open_gcm_open(replies_of(garbage), ciphertext), Disagreement);
}

TEST(Reconstruct, ComputeOpensAndRefuses) {
  std::mt19937_64 rng(6);
  const Bytes value = random_bytes(rng, 64);
  const auto shares = masked_shares(value, rng);
  std::array<wire::ComputeResult, 3> bodies;
  for (std::size_t party = 0; party < 3; ++party) bodies[party] = wire::ComputeResult{4, shares[party].x, shares[party].a};
  EXPECT_EQ(open_compute(replies_of(bodies), 4), value);
  EXPECT_THROW(open_compute(replies_of(bodies), 3), Disagreement);
  bodies[1].a[0] ^= 1;
  EXPECT_THROW(open_compute(replies_of(bodies), 4), Disagreement);
}

std::array<wire::KrbResult, 3> krb_bodies(const Bytes& result, std::mt19937_64& rng) {
  const auto shares = masked_shares(result, rng);
  std::array<wire::KrbResult, 3> bodies;
  for (std::size_t party = 0; party < 3; ++party) bodies[party] = wire::KrbResult{shares[party].x, shares[party].a};
  return bodies;
}

TEST(Reconstruct, KrbOpensEachOperationsResult) {
  std::mt19937_64 rng(7);
  const std::pair<wire::KrbOperation, std::size_t> cases[] = {
      {wire::KrbOperation::Encrypt, 16}, {wire::KrbOperation::Encrypt, 300}, {wire::KrbOperation::Checksum, 0},
      {wire::KrbOperation::Checksum, 1000}};
  for (const auto& [operation, data_bytes] : cases) {
    const Bytes value = random_bytes(rng, wire::krb_result_bytes(operation, data_bytes));
    const SecretBytes opened = open_krb(replies_of(krb_bodies(value, rng)), operation, data_bytes);
    EXPECT_EQ(Bytes(opened.span().begin(), opened.span().end()), value) << data_bytes;
  }
}

TEST(Reconstruct, KrbRefusesAnyInconsistency) {
  std::mt19937_64 rng(8);
  const Bytes value = random_bytes(rng, wire::krb_result_bytes(wire::KrbOperation::Encrypt, 40));
  const auto good = krb_bodies(value, rng);
  for (std::size_t party = 0; party < 3; ++party) {
    auto bodies = good;
    bodies[party].x[3] ^= 0x40;
    EXPECT_THROW(open_krb(replies_of(bodies), wire::KrbOperation::Encrypt, 40), Disagreement);
    bodies = good;
    bodies[party].a.back() ^= 1;
    EXPECT_THROW(open_krb(replies_of(bodies), wire::KrbOperation::Encrypt, 40), Disagreement);
    bodies = good;
    bodies[party].x.pop_back();
    bodies[party].a.pop_back();
    EXPECT_THROW(open_krb(replies_of(bodies), wire::KrbOperation::Encrypt, 40), Disagreement);
    Replies replies = replies_of(good);
    replies[party].body = wire::GcmTagResult{};
    EXPECT_THROW(open_krb(replies, wire::KrbOperation::Encrypt, 40), Disagreement);
  }
  // All three agree, on a result of another request's length.
  EXPECT_THROW(open_krb(replies_of(good), wire::KrbOperation::Encrypt, 41), Disagreement);
  EXPECT_THROW(open_krb(replies_of(good), wire::KrbOperation::Checksum, 40), Disagreement);
}

TEST(Reconstruct, KrbDecryptGivesTextOnlyForVerdictOne) {
  std::mt19937_64 rng(9);
  for (std::size_t ciphertext_bytes : {28, 29, 44, 312}) {
    Bytes text = random_bytes(rng, ciphertext_bytes - 12);
    Bytes accepted = text;
    accepted.push_back(1);
    const auto opened = open_krb_decrypt(replies_of(krb_bodies(accepted, rng)), ciphertext_bytes);
    ASSERT_TRUE(opened.has_value()) << ciphertext_bytes;
    EXPECT_EQ(Bytes(opened->span().begin(), opened->span().end()), text);
    Bytes rejected(ciphertext_bytes - 12, 0);
    rejected.push_back(0);
    EXPECT_FALSE(open_krb_decrypt(replies_of(krb_bodies(rejected, rng)), ciphertext_bytes).has_value());
  }
  // With a zero verdict the text is neither opened nor checked: servers may withhold it.
  Bytes rejected(40 - 12, 0);
  rejected.push_back(0);
  auto bodies = krb_bodies(rejected, rng);
  std::fill(bodies[2].x.begin(), bodies[2].x.end() - 1, 0x5a);
  EXPECT_FALSE(open_krb_decrypt(replies_of(bodies), 40).has_value());
}

TEST(Reconstruct, KrbDecryptRefusesAnyInconsistency) {
  std::mt19937_64 rng(10);
  Bytes accepted = random_bytes(rng, 40 - 12);
  accepted.push_back(1);
  const auto good = krb_bodies(accepted, rng);
  for (std::size_t party = 0; party < 3; ++party) {
    auto bodies = good;
    bodies[party].x.back() ^= 1;  // one server flips its verdict share
    EXPECT_THROW(open_krb_decrypt(replies_of(bodies), 40), Disagreement);
    bodies = good;
    bodies[party].a[0] ^= 2;
    EXPECT_THROW(open_krb_decrypt(replies_of(bodies), 40), Disagreement);
  }
  EXPECT_THROW(open_krb_decrypt(replies_of(good), 41), Disagreement);
  // A verdict that opens to 2.
  Bytes garbage = accepted;
  garbage.back() = 2;
  EXPECT_THROW(open_krb_decrypt(replies_of(krb_bodies(garbage, rng)), 40), Disagreement);
}

// Two-server clusters: each server sends its XOR share as x alone.
TEST(Reconstruct, TwoServerComputeIsTheXorOfTheShares) {
  std::mt19937_64 rng(11);
  const std::uint32_t blocks = 3;
  const Bytes value = random_bytes(rng, blocks * 16);
  const Bytes first = random_bytes(rng, value.size());
  Bytes second(value.size());
  for (std::size_t i = 0; i < value.size(); ++i) second[i] = static_cast<std::uint8_t>(value[i] ^ first[i]);
  auto reply = [&](const Bytes& x, std::uint32_t n, const Bytes& a = {}) {
    return wire::Reply{{}, wire::Status::Ok, "", wire::ComputeResult{n, x, a}};
  };
  EXPECT_EQ(open_compute({reply(first, blocks), reply(second, blocks)}, blocks), value);
  EXPECT_NE(first, value);  // neither share alone is the result
  EXPECT_NE(second, value);
  // Wrong block counts, wrong lengths, or a replicated-looking reply are refused.
  EXPECT_THROW(open_compute({reply(first, blocks), reply(second, blocks - 1)}, blocks), Disagreement);
  EXPECT_THROW(open_compute({reply(first, blocks), reply(Bytes(second.begin(), second.end() - 1), blocks)}, blocks),
               Disagreement);
  EXPECT_THROW(open_compute({reply(first, blocks), reply(second, blocks, second)}, blocks), Disagreement);
  EXPECT_THROW(open_compute({reply(first, blocks)}, blocks), Disagreement);
  // A Compute body is no answer to another request.
  const Replies two = {reply(first, blocks), reply(second, blocks)};
  EXPECT_THROW(open_gcm_tag(two), Disagreement);
  EXPECT_THROW(open_krb(two, wire::KrbOperation::Checksum, 16), Disagreement);
}

// Two servers of security = "active" answer with the outputs under the client's pads, in parts,
// each with the seed of its check and both servers' checks (protocol/client_checks). Here the
// answers are made as two servers make them from the value and the pads they computed with.
struct PaddedAnswer {
  Bytes padded;
  wire::PaddedReports reports;
};

// The same over parts of `part_bits` bits (the last may be shorter) of value's `total_bits`.
PaddedAnswer padded_bits_answer(const Bytes& value, std::size_t total_bits, std::size_t part_bits,
                                const client::OutputPads& pads, std::mt19937_64& rng) {
  PaddedAnswer answer{value, {static_cast<std::uint32_t>(part_bits / 128), {}}};
  std::uint32_t part = 0;
  for (std::size_t first = 0; first < total_bits; first += part_bits, ++part) {
    const std::size_t bits = std::min(part_bits, total_bits - first);
    client_checks::PadSeed seeds[2];
    for (int p = 0; p < 2; ++p) {
      std::copy(pads[p].begin(), pads[p].end(), seeds[p].begin());
      seeds[p] = client_checks::part_pad(seeds[p], part);
    }
    const auto p1 = client_checks::pad_bits(seeds[0], bits), p2 = client_checks::pad_bits(seeds[1], bits);
    for (std::size_t i = 0; i < bits; ++i)
      answer.padded[(first + i) / 8] ^= static_cast<std::uint8_t>((p1[i] ^ p2[i]) << (i % 8));
    client_checks::CheckSeed check_seed{};
    for (auto& byte : check_seed) byte = static_cast<std::uint8_t>(rng());
    const client_checks::CheckRows rows(check_seed, bits);
    const auto c1 = rows.check(p1), c2 = rows.check(p2);
    auto& reports = answer.reports.reports;
    reports.insert(reports.end(), check_seed.begin(), check_seed.end());
    reports.insert(reports.end(), c1.begin(), c1.end());
    reports.insert(reports.end(), c2.begin(), c2.end());
  }
  return answer;
}

PaddedAnswer padded_answer(const Bytes& value, std::uint32_t blocks, std::uint32_t part_blocks,
                           const client::OutputPads& pads, std::mt19937_64& rng) {
  return padded_bits_answer(value, std::size_t{128} * blocks, std::size_t{128} * part_blocks, pads, rng);
}

TEST(Reconstruct, TwoServerPaddedComputeTakesThePadsOffOnlyWhenBothAgreeAndThePadsPass) {
  std::mt19937_64 rng(12);
  const std::uint32_t blocks = 5;
  const Bytes value = random_bytes(rng, blocks * 16);
  client::OutputPads pads{};
  for (auto& seed : pads)
    for (auto& byte : seed) byte = static_cast<std::uint8_t>(rng());
  const PaddedAnswer c = padded_answer(value, blocks, 2, pads, rng);
  auto reply = [&](const Bytes& x, const wire::PaddedReports& reports) {
    return wire::Reply{{}, wire::Status::Ok, "", wire::ComputeResult{blocks, x, {}, reports}};
  };
  EXPECT_EQ(open_compute({reply(c.padded, c.reports), reply(c.padded, c.reports)}, blocks, &pads), value);
  EXPECT_NE(c.padded, value);
  // One server's answer altered, its reports altered, or a share in place of its padded answer.
  Bytes other = c.padded;
  other[17] ^= 4;
  EXPECT_THROW(open_compute({reply(c.padded, c.reports), reply(other, c.reports)}, blocks, &pads),
               client::VerificationError);
  wire::PaddedReports other_reports = c.reports;
  other_reports.reports[50] ^= 1;
  EXPECT_THROW(open_compute({reply(c.padded, other_reports), reply(c.padded, c.reports)}, blocks, &pads),
               client::VerificationError);
  const wire::Reply share{{}, wire::Status::Ok, "", wire::ComputeResult{blocks, c.padded, {}}};
  EXPECT_THROW(open_compute({reply(c.padded, c.reports), share}, blocks, &pads), client::VerificationError);
  EXPECT_THROW(open_compute({share, reply(c.padded, c.reports)}, blocks, &pads), client::VerificationError);
  // What two servers agree on when server 2 computed with another pad than the client's: a
  // result shifted by the difference of the pads, which the check of that pad refuses.
  client::OutputPads fed = pads;
  fed[1][3] ^= 0x10;
  const PaddedAnswer shifted = padded_answer(value, blocks, 2, fed, rng);
  EXPECT_THROW(open_compute({reply(shifted.padded, shifted.reports), reply(shifted.padded, shifted.reports)}, blocks,
                            &pads),
               client::VerificationError);
  EXPECT_EQ(open_compute({reply(shifted.padded, shifted.reports), reply(shifted.padded, shifted.reports)}, blocks,
                         &fed),
            value);
  // Padded answers to a client that gave no pads.
  EXPECT_THROW(open_compute({reply(c.padded, c.reports), reply(c.padded, c.reports)}, blocks), Disagreement);
}

// A GCM prefetch's keystream and an open's keystream and verdict byte, padded as two servers of
// security = "active" answer them (engines/two_party/authenticated_gcm.hpp): taken only when
// both agree and the pads pass; an open's plaintext only under a verdict of 1.
TEST(Reconstruct, TwoServerPaddedGcmJobsTakeThePadsOffOnlyWhenBothAgreeAndThePadsPass) {
  std::mt19937_64 rng(13);
  client::OutputPads pads{};
  for (auto& seed : pads)
    for (auto& byte : seed) byte = static_cast<std::uint8_t>(rng());
  // Three nonces of two blocks, in parts of ten blocks (five nonces): one part here.
  const Bytes nonces = random_bytes(rng, 36);
  const Bytes keystream = random_bytes(rng, 96);
  const PaddedAnswer k = padded_answer(keystream, 6, 6, pads, rng);
  auto prefetch = [&](const Bytes& x, const wire::PaddedReports& reports) {
    return wire::Reply{{}, wire::Status::Ok, "", wire::GcmPrefetchResult{3, 2, nonces, x, {}, false, reports}};
  };
  const GcmPrefetched opened = open_gcm_prefetch({prefetch(k.padded, k.reports), prefetch(k.padded, k.reports)}, 3, 2, &pads);
  EXPECT_EQ(Bytes(opened.keystream.span().begin(), opened.keystream.span().end()), keystream);
  Bytes other = k.padded;
  other[40] ^= 1;
  EXPECT_THROW(open_gcm_prefetch({prefetch(k.padded, k.reports), prefetch(other, k.reports)}, 3, 2, &pads),
               client::VerificationError);
  const wire::Reply share{{}, wire::Status::Ok, "", wire::GcmPrefetchResult{3, 2, nonces, k.padded, {}, false}};
  EXPECT_THROW(open_gcm_prefetch({prefetch(k.padded, k.reports), share}, 3, 2, &pads), client::VerificationError);
  client::OutputPads fed = pads;
  fed[0][0] ^= 1;
  const PaddedAnswer shifted = padded_answer(keystream, 6, 6, fed, rng);
  EXPECT_THROW(open_gcm_prefetch({prefetch(shifted.padded, shifted.reports), prefetch(shifted.padded, shifted.reports)},
                                 3, 2, &pads),
               client::VerificationError);

  // An open of a 20-byte text: two keystream blocks, then the verdict byte, one part.
  const Bytes ciphertext = random_bytes(rng, 20);
  for (const std::uint8_t verdict : {1, 0, 2}) {
    Bytes value = random_bytes(rng, 32);
    value.push_back(verdict);
    const PaddedAnswer o = padded_bits_answer(value, 264, 264, pads, rng);
    wire::PaddedReport report{};
    std::copy(o.reports.reports.begin(), o.reports.reports.end(), report.begin());
    auto open = [&](const Bytes& x, std::uint8_t masked_verdict) {
      return wire::Reply{{}, wire::Status::Ok, "",
                         wire::GcmOpenResult{2, x, {}, masked_verdict, 0, false, report}};
    };
    const Bytes x(o.padded.begin(), o.padded.begin() + 32);
    const Replies replies{open(x, o.padded[32]), open(x, o.padded[32])};
    if (verdict == 2) {
      EXPECT_THROW(open_gcm_open(replies, ciphertext, &pads), Disagreement);
      continue;
    }
    const auto plaintext = open_gcm_open(replies, ciphertext, &pads);
    ASSERT_EQ(plaintext.has_value(), verdict == 1);
    if (plaintext) {
      for (std::size_t i = 0; i < ciphertext.size(); ++i) EXPECT_EQ((*plaintext)[i], ciphertext[i] ^ value[i]) << i;
    }
    EXPECT_THROW(open_gcm_open({open(x, o.padded[32]), open(x, static_cast<std::uint8_t>(o.padded[32] ^ 1))}, ciphertext,
                               &pads),
                 client::VerificationError);
    EXPECT_THROW(open_gcm_open(replies, ciphertext, &fed), client::VerificationError);
  }
}

// Two XOR shares of `value`, the first random.
std::pair<Bytes, Bytes> xor_shares(const Bytes& value, std::mt19937_64& rng) {
  Bytes first = random_bytes(rng, value.size());
  Bytes second(value.size());
  for (std::size_t i = 0; i < value.size(); ++i) second[i] = static_cast<std::uint8_t>(value[i] ^ first[i]);
  return {first, second};
}

wire::Reply ok(wire::ReplyBody body) { return wire::Reply{{}, wire::Status::Ok, "", std::move(body)}; }

TEST(Reconstruct, TwoServerKrbAndGcmResultsAreTheXorOfTheShares) {
  std::mt19937_64 rng(12);
  // Krb checksum (12 bytes) and a decryption whose verdict byte opens to 1, then to 0.
  const Bytes mac = random_bytes(rng, 12);
  auto [m1, m2] = xor_shares(mac, rng);
  const SecretBytes checksum =
      open_krb({ok(wire::KrbResult{m1, {}}), ok(wire::KrbResult{m2, {}})}, wire::KrbOperation::Checksum, 5);
  EXPECT_EQ(Bytes(checksum.span().begin(), checksum.span().end()), mac);
  EXPECT_THROW(open_krb({ok(wire::KrbResult{m1, m1}), ok(wire::KrbResult{m2, {}})}, wire::KrbOperation::Checksum, 5),
               Disagreement);
  Bytes accepted = random_bytes(rng, 40 - 12 + 1);
  accepted.back() = 1;
  auto [d1, d2] = xor_shares(accepted, rng);
  const auto opened = open_krb_decrypt({ok(wire::KrbResult{d1, {}}), ok(wire::KrbResult{d2, {}})}, 40);
  ASSERT_TRUE(opened.has_value());
  EXPECT_EQ(Bytes(opened->span().begin(), opened->span().end()), Bytes(accepted.begin(), accepted.end() - 1));
  accepted.back() = 0;
  std::tie(d1, d2) = xor_shares(accepted, rng);
  EXPECT_FALSE(open_krb_decrypt({ok(wire::KrbResult{d1, {}}), ok(wire::KrbResult{d2, {}})}, 40).has_value());
  accepted.back() = 3;
  std::tie(d1, d2) = xor_shares(accepted, rng);
  EXPECT_THROW(open_krb_decrypt({ok(wire::KrbResult{d1, {}}), ok(wire::KrbResult{d2, {}})}, 40), Disagreement);

  // GCM tag.
  const Bytes tag = random_bytes(rng, 16);
  auto [t1, t2] = xor_shares(tag, rng);
  wire::GcmTagResult r1, r2;
  std::copy(t1.begin(), t1.end(), r1.x.begin());
  std::copy(t2.begin(), t2.end(), r2.x.begin());
  r1.replicated = r2.replicated = false;
  const auto opened_tag = open_gcm_tag({ok(r1), ok(r2)});
  EXPECT_EQ(Bytes(opened_tag.begin(), opened_tag.end()), tag);
  r2.replicated = true;
  EXPECT_THROW(open_gcm_tag({ok(r1), ok(r2)}), Disagreement);

  // GCM open: the plaintext when the verdict shares XOR to 1, nothing when to 0.
  const Bytes ciphertext = random_bytes(rng, 20);
  const Bytes keystream = random_bytes(rng, 32);
  auto [k1, k2] = xor_shares(keystream, rng);
  wire::GcmOpenResult o1{2, k1, {}, 1, 0, false};
  wire::GcmOpenResult o2{2, k2, {}, 0, 0, false};
  const auto plain = open_gcm_open({ok(o1), ok(o2)}, ciphertext);
  ASSERT_TRUE(plain.has_value());
  for (std::size_t i = 0; i < ciphertext.size(); ++i) EXPECT_EQ((*plain)[i], ciphertext[i] ^ keystream[i]);
  o2.verdict_x = 1;
  EXPECT_FALSE(open_gcm_open({ok(o1), ok(o2)}, ciphertext).has_value());
  o2.blocks = 1;
  EXPECT_THROW(open_gcm_open({ok(o1), ok(o2)}, ciphertext), Disagreement);

  // GCM prefetch: both servers list the same nonces; the keystream is the XOR.
  const Bytes nonces = random_bytes(rng, 24);
  auto [p1, p2] = xor_shares(keystream, rng);
  const wire::GcmPrefetchResult f1{2, 1, nonces, p1, {}};
  wire::GcmPrefetchResult f2{2, 1, nonces, p2, {}};
  const auto fetched = open_gcm_prefetch({ok(f1), ok(f2)}, 2, 1);
  EXPECT_EQ(Bytes(fetched.keystream.span().begin(), fetched.keystream.span().end()), keystream);
  EXPECT_EQ(fetched.nonces, nonces);
  f2.nonces[3] ^= 1;
  EXPECT_THROW(open_gcm_prefetch({ok(f1), ok(f2)}, 2, 1), Disagreement);
}

}  // namespace
}  // namespace mpc::client
