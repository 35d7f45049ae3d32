// mpc-engine/client/reconstruct.cpp: checks and opens the servers' replies (see reconstruct.hpp).
#include "client/reconstruct.hpp"

#include <sodium.h>

#include <algorithm>
#include <utility>
#include <variant>

#include "protocol/client_checks/output_pads.hpp"
#include "protocol/rss3/output.hpp"
#include "protocol/rss3/shares.hpp"
#include "protocol/rss3/zero_test.hpp"

namespace mpc::client {
namespace {

// A job's two pad seeds (OutputPads), as client_checks takes them, wiped when done with.
struct PadSeeds {
  explicit PadSeeds(const OutputPads& pads) {
    for (std::size_t party = 0; party < 2; ++party) std::copy(pads[party].begin(), pads[party].end(), seeds[party].begin());
  }
  ~PadSeeds() {
    for (auto& seed : seeds) wipe(seed.data(), seed.size());
  }
  PadSeeds(const PadSeeds&) = delete;
  PadSeeds& operator=(const PadSeeds&) = delete;
  client_checks::PadSeed seeds[2];
};

// client_checks::open_part, a failed check refused as this library's VerificationError.
std::vector<std::uint8_t> open_checked_part(std::span<const std::uint8_t> masked, const client_checks::PartReport& report,
                                            const client_checks::PadSeed& first_pad,
                                            const client_checks::PadSeed& second_pad,
                                            std::span<const std::uint8_t> first_known = {},
                                            std::span<const std::uint8_t> second_known = {}) {
  try {
    return client_checks::open_part(masked, report, report, first_pad, second_pad, first_known, second_known);
  } catch (const mpc::VerificationError& error) {
    throw VerificationError(std::string(error.what()) + " (check " + error.check() + "): result refused");
  }
}

void require_three(const Replies& replies) {
  if (replies.size() != 3)
    throw Disagreement(std::to_string(replies.size()) + " replies where a three-server cluster answers three");
}

// Two servers' XOR shares (each `bytes` long, x alone) combined into wiped storage.
SecretBytes open_xor(const std::vector<std::uint8_t>& first, const std::vector<std::uint8_t>& second,
                     const std::vector<std::uint8_t>& first_a, const std::vector<std::uint8_t>& second_a,
                     std::size_t bytes) {
  if (first.size() != bytes || !first_a.empty())
    throw Disagreement("server 1 returned a result of the wrong shape");
  if (second.size() != bytes || !second_a.empty())
    throw Disagreement("server 2 returned a result of the wrong shape");
  SecretBytes out(bytes);
  for (std::size_t i = 0; i < bytes; ++i) out[i] = static_cast<std::uint8_t>(first[i] ^ second[i]);
  return out;
}

template <typename Body>
const Body& body_of(const Replies& replies, std::size_t party) {
  const auto* body = std::get_if<Body>(&replies[party].body);
  if (body == nullptr) throw Disagreement("server " + std::to_string(party + 1) + " returned no result");
  return *body;
}

// Opens the masked shares; a wrong length or a failed reconstruction is a Disagreement.
std::vector<std::uint8_t> open_plain(const std::array<rss3::ByteShare, 3>& shares, std::size_t expected_bytes) {
  for (std::size_t party = 0; party < 3; ++party)
    if (shares[party].x.size() != expected_bytes || shares[party].a.size() != expected_bytes)
      throw Disagreement("server " + std::to_string(party + 1) + " returned a result of the wrong size");
  try {
    return rss3::open_output(shares);
  } catch (const Error&) {
    throw Disagreement("the servers' output shares disagree: result refused");
  }
}

// The same, into wiped storage: for keystream and anything else that must not linger.
SecretBytes open_shares(const std::array<rss3::ByteShare, 3>& shares, std::size_t expected_bytes) {
  std::vector<std::uint8_t> opened = open_plain(shares, expected_bytes);
  SecretBytes out(opened);
  wipe(opened.data(), opened.size());
  return out;
}

}  // namespace

Disagreement::Disagreement(const std::string& detail) : Error(Component::Client, detail) {}

VerificationError::VerificationError(const std::string& detail) : Error(Component::Client, detail) {}

bool xor_form(const wire::Reply& reply) {
  return std::visit(
      [](const auto& body) {
        using Body = std::decay_t<decltype(body)>;
        if constexpr (std::is_same_v<Body, wire::GcmTagResult> || std::is_same_v<Body, wire::GcmOpenResult> ||
                      std::is_same_v<Body, wire::GcmPrefetchResult>)
          return !body.replicated;  // a prefetch without keystream is told by its form byte
        else if constexpr (std::is_same_v<Body, wire::GcmReopenResult>)
          return !body.replicated;  // a form byte tells, even for an empty text
        else if constexpr (requires { body.a; })
          return body.a.empty();
        else
          return false;
      },
      reply.body);
}

namespace {

// `blocks` blocks of outputs under two servers' pads, as both answered them (the caller checked
// the two copies are the same) in parts of reports.part_blocks blocks: each part's pads checked
// and taken off.
std::vector<std::uint8_t> open_padded_blocks(std::span<const std::uint8_t> masked_bytes,
                                             const wire::PaddedReports& reports, std::uint32_t blocks,
                                             const OutputPads& pads) {
  std::vector<std::uint8_t> out(masked_bytes.size());
  const PadSeeds seeds(pads);
  std::uint32_t part = 0;
  for (std::uint32_t block = 0; block < blocks; block += reports.part_blocks, ++part) {
    const std::uint32_t part_blocks = std::min(reports.part_blocks, blocks - block);
    std::vector<std::uint8_t> masked(std::size_t{128} * part_blocks);
    for (std::size_t i = 0; i < masked.size(); ++i) masked[i] = (masked_bytes[16 * block + i / 8] >> (i % 8)) & 1;
    const client_checks::PartReport report = client_checks::parse_part_report(
        std::span<const std::uint8_t>(reports.reports).subspan(part * wire::kPaddedPartReportBytes,
                                                                 wire::kPaddedPartReportBytes));
    std::vector<std::uint8_t> bits;
    try {
      bits = open_checked_part(masked, report, client_checks::part_pad(seeds.seeds[0], part),
                               client_checks::part_pad(seeds.seeds[1], part));
    } catch (...) {
      wipe(out.data(), out.size());
      throw;
    }
    for (std::size_t i = 0; i < bits.size(); ++i) out[16 * block + i / 8] |= static_cast<std::uint8_t>(bits[i] << (i % 8));
    wipe(bits.data(), bits.size());
  }
  return out;
}

// Two servers' padded answers to a Compute job: the same outputs and reports from both, then
// each part's pads checked and taken off.
std::vector<std::uint8_t> open_padded_compute(const wire::ComputeResult& first, const wire::ComputeResult& second,
                                              std::uint32_t blocks, const OutputPads& pads) {
  if (first.x != second.x || first.padded != second.padded)
    throw VerificationError("the two servers answered different padded outputs (one of them deviated): result refused");
  return open_padded_blocks(first.x, *first.padded, blocks, pads);
}

}  // namespace

std::vector<std::uint8_t> open_compute(const Replies& replies, std::uint32_t blocks, const OutputPads* pads) {
  const std::size_t bytes = static_cast<std::size_t>(blocks) * wire::kBlockBytes;
  for (std::size_t party = 0; party < replies.size(); ++party) {
    const auto& result = body_of<wire::ComputeResult>(replies, party);
    if (result.blocks != blocks)
      throw Disagreement("server " + std::to_string(party + 1) + " returned " + std::to_string(result.blocks) +
                         " blocks for " + std::to_string(blocks));
  }
  if (replies.size() == 2) {
    const auto& first = body_of<wire::ComputeResult>(replies, 0);
    const auto& second = body_of<wire::ComputeResult>(replies, 1);
    if (first.padded.has_value() != second.padded.has_value())
      throw VerificationError("one server answered with padded outputs, the other with a share (one of them "
                              "deviated): result refused");
    if (first.padded) {
      if (pads == nullptr) throw Disagreement("the servers answered with outputs padded under no pads of this client");
      return open_padded_compute(first, second, blocks, *pads);
    }
    // Two servers: each sends its XOR share alone.
    std::vector<std::uint8_t> out(bytes);
    for (std::size_t party = 0; party < 2; ++party) {
      const auto& result = body_of<wire::ComputeResult>(replies, party);
      if (result.x.size() != bytes || !result.a.empty())
        throw Disagreement("server " + std::to_string(party + 1) + " returned a result of the wrong shape");
      for (std::size_t i = 0; i < bytes; ++i) out[i] ^= result.x[i];
    }
    return out;
  }
  require_three(replies);
  std::array<rss3::ByteShare, 3> shares;
  for (std::size_t party = 0; party < 3; ++party) {
    const auto& result = body_of<wire::ComputeResult>(replies, party);
    shares[party] = rss3::ByteShare{result.x, result.a};
  }
  // The caller of a Compute job owns the plain result (the C interface copies it out).
  return open_plain(shares, bytes);
}

GcmPrefetched open_gcm_prefetch(const Replies& replies, std::uint32_t count,
                                std::uint32_t blocks_per_nonce, const OutputPads* pads) {
  if (replies.size() != 2) require_three(replies);
  std::array<rss3::ByteShare, 3> shares;
  const auto& first = body_of<wire::GcmPrefetchResult>(replies, 0);
  for (std::size_t party = 0; party < replies.size(); ++party) {
    const auto& result = body_of<wire::GcmPrefetchResult>(replies, party);
    if (result.count != count || result.blocks_per_nonce != blocks_per_nonce)
      throw Disagreement("server " + std::to_string(party + 1) + " returned " + std::to_string(result.count) +
                         " nonces of " + std::to_string(result.blocks_per_nonce) + " blocks for " +
                         std::to_string(count) + " of " + std::to_string(blocks_per_nonce));
    // Nonces are public: an ordinary comparison is fine.
    if (result.nonces.size() != static_cast<std::size_t>(count) * wire::kGcmNonceBytes || result.nonces != first.nonces)
      throw Disagreement("the servers' nonce lists disagree: result refused");
    if (replies.size() == 3) shares[party] = rss3::ByteShare{result.x, result.a};
  }
  std::vector<wire::GcmNonce> sorted(count);
  for (std::size_t i = 0; i < count; ++i)
    std::copy_n(first.nonces.begin() + static_cast<std::ptrdiff_t>(i * wire::kGcmNonceBytes), wire::kGcmNonceBytes,
                sorted[i].begin());
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    throw Disagreement("the servers returned a nonce twice in one list: result refused");
  GcmPrefetched out;
  const std::size_t keystream_bytes = static_cast<std::size_t>(count) * blocks_per_nonce * wire::kBlockBytes;
  if (replies.size() == 2) {
    const auto& second = body_of<wire::GcmPrefetchResult>(replies, 1);
    if (first.padded.has_value() != second.padded.has_value())
      throw VerificationError("one server answered with padded keystream, the other with a share (one of them "
                              "deviated): result refused");
    if (first.padded) {
      if (pads == nullptr) throw Disagreement("the servers answered with keystream padded under no pads of this client");
      if (first.x != second.x || first.padded != second.padded)
        throw VerificationError("the two servers answered different padded keystream (one of them deviated): "
                                "result refused");
      std::vector<std::uint8_t> keystream =
          open_padded_blocks(first.x, *first.padded, count * blocks_per_nonce, *pads);
      out.keystream = SecretBytes(keystream);
      wipe(keystream.data(), keystream.size());
      out.nonces = first.nonces;
      return out;
    }
    out.keystream = open_xor(first.x, second.x, first.a, second.a, keystream_bytes);
    out.nonces = first.nonces;
    return out;
  }
  out.keystream = open_shares(shares, keystream_bytes);
  for (auto& share : shares) share.wipe();
  out.nonces = first.nonces;
  return out;
}

wire::GcmTagBytes open_gcm_tag(const Replies& replies) {
  if (replies.size() == 2) {
    wire::GcmTagBytes tag{};
    for (std::size_t party = 0; party < 2; ++party) {
      const auto& result = body_of<wire::GcmTagResult>(replies, party);
      if (result.replicated)
        throw Disagreement("server " + std::to_string(party + 1) + " returned a result of the wrong shape");
      for (std::size_t i = 0; i < tag.size(); ++i) tag[i] ^= result.x[i];
    }
    return tag;
  }
  require_three(replies);
  std::array<rss3::ByteShare, 3> shares;
  for (std::size_t party = 0; party < 3; ++party) {
    const auto& result = body_of<wire::GcmTagResult>(replies, party);
    shares[party] = rss3::ByteShare{{result.x.begin(), result.x.end()}, {result.a.begin(), result.a.end()}};
  }
  const SecretBytes opened = open_shares(shares, wire::kGcmTagBytes);
  wire::GcmTagBytes tag{};
  std::copy(opened.span().begin(), opened.span().end(), tag.begin());
  return tag;
}

wire::GcmTagBytes open_gcm_chained(const Replies& replies) {
  require_three(replies);
  wire::GcmTagBytes tag{};
  for (std::size_t party = 0; party < 3; ++party) {
    const auto& result = body_of<wire::GcmTagResult>(replies, party);
    if (!result.chained) throw Disagreement("server " + std::to_string(party + 1) + " returned no chained tag share");
    for (std::size_t i = 0; i < tag.size(); ++i) tag[i] ^= (*result.chained)[i];
  }
  return tag;
}

bool gcm_check_passes(const Replies& replies) {
  require_three(replies);
  std::array<rss3::Block, 3> checks{};
  for (std::size_t party = 0; party < 3; ++party) {
    const auto& result = body_of<wire::GcmTagResult>(replies, party);
    if (!result.check) throw Disagreement("server " + std::to_string(party + 1) + " returned no check share");
    checks[party] = *result.check;
  }
  return rss3::zero_test_passes(checks);
}

namespace {

// One server's keystream shares of an open or a reopen, which must hold `blocks` blocks.
template <typename Result>
rss3::ByteShare keystream_share(const Result& result, std::size_t party, std::size_t blocks) {
  if (result.blocks != blocks)
    throw Disagreement("server " + std::to_string(party + 1) + " returned " + std::to_string(result.blocks) +
                       " keystream blocks for " + std::to_string(blocks));
  return rss3::ByteShare{result.x, result.a};
}

// The plaintext under the opened keystream when the tag verified, else nullopt: a rejected
// tag needs no keystream, so it is neither opened nor checked (servers may withhold it). The
// shares are wiped either way.
std::optional<SecretBytes> verified_plaintext(bool verified, std::array<rss3::ByteShare, 3>& keystream_shares,
                                              std::span<const std::uint8_t> ciphertext) {
  std::optional<SecretBytes> plaintext;
  if (verified) {
    const std::size_t bytes = (ciphertext.size() + wire::kBlockBytes - 1) / wire::kBlockBytes * wire::kBlockBytes;
    const SecretBytes keystream = open_shares(keystream_shares, bytes);
    plaintext.emplace(ciphertext.size());
    for (std::size_t i = 0; i < ciphertext.size(); ++i)
      (*plaintext)[i] = static_cast<std::uint8_t>(ciphertext[i] ^ keystream[i]);
  }
  for (auto& share : keystream_shares) share.wipe();
  return plaintext;
}

// Blocks of keystream a ciphertext needs.
std::size_t text_blocks(std::span<const std::uint8_t> ciphertext) {
  return ciphertext.size() / wire::kBlockBytes + (ciphertext.size() % wire::kBlockBytes != 0);
}

// Two servers' XOR-form results of an open or a reopen, each of `blocks` keystream blocks.
template <typename Result>
std::pair<const Result&, const Result&> xor_results(const Replies& replies, std::size_t blocks) {
  for (std::size_t party = 0; party < 2; ++party) {
    const auto& result = body_of<Result>(replies, party);
    if (result.blocks != blocks || result.replicated)
      throw Disagreement("server " + std::to_string(party + 1) + " returned a result of the wrong shape");
  }
  return {body_of<Result>(replies, 0), body_of<Result>(replies, 1)};
}

// The plaintext under the keystream of two servers' XOR shares (an open or a reopen).
template <typename Result>
SecretBytes xor_plaintext(const Result& first, const Result& second, std::size_t blocks,
                          std::span<const std::uint8_t> ciphertext) {
  const SecretBytes keystream = open_xor(first.x, second.x, first.a, second.a, blocks * wire::kBlockBytes);
  SecretBytes plaintext(ciphertext.size());
  for (std::size_t i = 0; i < ciphertext.size(); ++i)
    plaintext[i] = static_cast<std::uint8_t>(ciphertext[i] ^ keystream[i]);
  return plaintext;
}

// Two servers' padded answers to a GCM open: one part, the keystream's blocks then the verdict
// byte (the verdict in bit 0, zeros above), under the pads of part 0 of the client's seeds.
std::optional<SecretBytes> open_padded_gcm_open(const wire::GcmOpenResult& first, const wire::GcmOpenResult& second,
                                                std::size_t blocks, std::span<const std::uint8_t> ciphertext,
                                                const OutputPads& pads) {
  if (first.blocks != blocks || second.blocks != blocks)
    throw Disagreement("a server returned " + std::to_string(first.blocks) + " keystream blocks for " +
                       std::to_string(blocks));
  if (first.x != second.x || first.verdict_x != second.verdict_x || first.padded_report != second.padded_report)
    throw VerificationError("the two servers answered different padded opens (one of them deviated): result refused");
  const std::size_t bits_count = 128 * blocks + 8;
  std::vector<std::uint8_t> masked(bits_count);
  for (std::size_t i = 0; i < 128 * blocks; ++i) masked[i] = (first.x[i / 8] >> (i % 8)) & 1;
  for (std::size_t i = 0; i < 8; ++i) masked[128 * blocks + i] = (first.verdict_x >> i) & 1;
  const client_checks::PartReport report = client_checks::parse_part_report(*first.padded_report);
  std::vector<std::uint8_t> bits = [&] {
    const PadSeeds seeds(pads);
    return open_checked_part(masked, report, client_checks::part_pad(seeds.seeds[0], 0),
                             client_checks::part_pad(seeds.seeds[1], 0));
  }();
  std::uint8_t verdict = 0;
  for (std::size_t i = 0; i < 8; ++i) verdict |= static_cast<std::uint8_t>(bits[128 * blocks + i] << i);
  std::optional<SecretBytes> plaintext;
  if (verdict == 1) {
    plaintext.emplace(ciphertext.size());
    for (std::size_t i = 0; i < ciphertext.size(); ++i) {
      std::uint8_t key_byte = 0;
      for (std::size_t k = 0; k < 8; ++k) key_byte |= static_cast<std::uint8_t>(bits[8 * i + k] << k);
      (*plaintext)[i] = static_cast<std::uint8_t>(ciphertext[i] ^ key_byte);
    }
  }
  wipe(bits.data(), bits.size());
  if (verdict > 1)
    throw Disagreement("the servers' verdict opened to " + std::to_string(verdict) + ", not 0 or 1: result refused");
  return plaintext;
}

}  // namespace

std::optional<SecretBytes> open_gcm_open(const Replies& replies, std::span<const std::uint8_t> ciphertext,
                                         const OutputPads* pads) {
  const std::size_t blocks = text_blocks(ciphertext);
  if (replies.size() == 2) {
    const auto& first_padded = body_of<wire::GcmOpenResult>(replies, 0);
    const auto& second_padded = body_of<wire::GcmOpenResult>(replies, 1);
    if (first_padded.padded_report.has_value() != second_padded.padded_report.has_value())
      throw VerificationError("one server answered a padded open, the other shares (one of them deviated): result "
                              "refused");
    if (first_padded.padded_report) {
      if (pads == nullptr) throw Disagreement("the servers answered an open padded under no pads of this client");
      return open_padded_gcm_open(first_padded, second_padded, blocks, ciphertext, *pads);
    }
    const auto [first, second] = xor_results<wire::GcmOpenResult>(replies, blocks);
    // Each verdict share is a bit (the decoder checked it), so their XOR is 0 or 1.
    if ((first.verdict_x ^ second.verdict_x) == 0) return std::nullopt;
    return xor_plaintext(first, second, blocks, ciphertext);
  }
  require_three(replies);
  std::array<rss3::ByteShare, 3> keystream_shares;
  std::array<rss3::ByteShare, 3> verdict_shares;
  for (std::size_t party = 0; party < 3; ++party) {
    const auto& result = body_of<wire::GcmOpenResult>(replies, party);
    keystream_shares[party] = keystream_share(result, party, blocks);
    verdict_shares[party] = rss3::ByteShare{{result.verdict_x}, {result.verdict_a}};
  }
  const SecretBytes verdict = open_shares(verdict_shares, 1);
  if (verdict[0] > 1)
    throw Disagreement("the servers' verdict opened to " + std::to_string(verdict[0]) + ", not 0 or 1: result refused");
  return verified_plaintext(verdict[0] == 1, keystream_shares, ciphertext);
}

std::optional<SecretBytes> open_gcm_reopen(const Replies& replies, std::span<const std::uint8_t> ciphertext) {
  const std::size_t blocks = text_blocks(ciphertext);
  if (replies.size() == 2) {
    const auto [first, second] = xor_results<wire::GcmReopenResult>(replies, blocks);
    // The two check shares are equal exactly when the tag is right (two_party/local_reopen.cpp).
    if (sodium_memcmp(first.check.data(), second.check.data(), first.check.size()) != 0) return std::nullopt;
    return xor_plaintext(first, second, blocks, ciphertext);
  }
  require_three(replies);
  std::array<rss3::Block, 3> checks{};
  std::array<rss3::ByteShare, 3> keystream_shares;
  for (std::size_t party = 0; party < 3; ++party) {
    const auto& result = body_of<wire::GcmReopenResult>(replies, party);
    checks[party] = result.check;
    keystream_shares[party] = keystream_share(result, party, blocks);
  }
  return verified_plaintext(rss3::zero_test_passes(checks), keystream_shares, ciphertext);
}

namespace {

// The servers' Krb result shares, each of `result_bytes`; a wrong size is a Disagreement.
std::array<rss3::ByteShare, 3> krb_shares(const Replies& replies, std::size_t result_bytes) {
  require_three(replies);
  std::array<rss3::ByteShare, 3> shares;
  for (std::size_t party = 0; party < 3; ++party) {
    const auto& result = body_of<wire::KrbResult>(replies, party);
    if (result.x.size() != result_bytes || result.a.size() != result_bytes)
      throw Disagreement("server " + std::to_string(party + 1) + " returned " + std::to_string(result.x.size()) +
                         " result bytes for " + std::to_string(result_bytes));
    shares[party] = rss3::ByteShare{result.x, result.a};
  }
  return shares;
}

std::vector<std::uint8_t> bits_of(std::span<const std::uint8_t> bytes) {
  std::vector<std::uint8_t> bits(8 * bytes.size());
  for (std::size_t i = 0; i < bits.size(); ++i) bits[i] = (bytes[i / 8] >> (i % 8)) & 1;
  return bits;
}

// Two servers' padded Krb result: the same from both, each pad and R share passing its check.
SecretBytes open_krb_padded(const wire::KrbResult& first, const wire::KrbResult& second, std::size_t result_bytes,
                            const KrbPads& pads) {
  if (first.x.size() != result_bytes || first.x != second.x || first.padded_report != second.padded_report)
    throw VerificationError("the two servers answered different padded results (one of them deviated): result refused");
  const client_checks::PartReport report = client_checks::parse_part_report(*first.padded_report);
  const PadSeeds seeds(pads.seeds);
  std::vector<std::uint8_t> first_known = bits_of(pads.mask_shares[0].span()),
                            second_known = bits_of(pads.mask_shares[1].span());
  std::vector<std::uint8_t> bits;
  try {
    bits = open_checked_part(bits_of(first.x), report, seeds.seeds[0], seeds.seeds[1], first_known, second_known);
  } catch (...) {
    wipe(first_known.data(), first_known.size());
    wipe(second_known.data(), second_known.size());
    throw;
  }
  wipe(first_known.data(), first_known.size());
  wipe(second_known.data(), second_known.size());
  SecretBytes out(result_bytes);
  for (std::size_t i = 0; i < bits.size(); ++i) out[i / 8] |= static_cast<std::uint8_t>(bits[i] << (i % 8));
  wipe(bits.data(), bits.size());
  return out;
}

// Two servers' Krb result: the XOR of their shares, or their padded answers opened.
SecretBytes open_krb_xor(const Replies& replies, std::size_t result_bytes, const KrbPads* pads) {
  const auto& first = body_of<wire::KrbResult>(replies, 0);
  const auto& second = body_of<wire::KrbResult>(replies, 1);
  if (first.padded_report.has_value() != second.padded_report.has_value())
    throw VerificationError("one server answered with a padded result, the other with a share (one of them "
                            "deviated): result refused");
  if (first.padded_report) {
    if (pads == nullptr) throw Disagreement("the servers answered with results padded under no pads of this client");
    return open_krb_padded(first, second, result_bytes, *pads);
  }
  return open_xor(first.x, second.x, first.a, second.a, result_bytes);
}

}  // namespace

SecretBytes open_krb(const Replies& replies, wire::KrbOperation operation, std::size_t data_bytes,
                     wire::KeyAlgorithm algorithm, const KrbPads* pads) {
  const std::size_t result_bytes = wire::krb_result_bytes(operation, algorithm, data_bytes);
  if (replies.size() == 2) return open_krb_xor(replies, result_bytes, pads);
  auto shares = krb_shares(replies, result_bytes);
  SecretBytes out = open_shares(shares, result_bytes);
  for (auto& share : shares) share.wipe();
  return out;
}

std::optional<SecretBytes> open_krb_decrypt(const Replies& replies, std::size_t data_bytes,
                                            wire::KeyAlgorithm algorithm, const KrbPads* pads) {
  const std::size_t result_bytes = wire::krb_result_bytes(wire::KrbOperation::Decrypt, algorithm, data_bytes);
  const std::size_t text_bytes = result_bytes - 1;  // the verdict byte comes last
  if (replies.size() == 2) {
    SecretBytes opened = open_krb_xor(replies, result_bytes, pads);
    const std::uint8_t verdict = opened[text_bytes];
    if (verdict > 1)
      throw Disagreement("the servers' verdict opened to " + std::to_string(verdict) + ", not 0 or 1: result refused");
    if (verdict == 0) return std::nullopt;
    return SecretBytes(opened.span().first(text_bytes));
  }
  auto shares = krb_shares(replies, result_bytes);
  std::array<rss3::ByteShare, 3> verdict_shares;
  std::array<rss3::ByteShare, 3> text_shares;
  for (std::size_t party = 0; party < 3; ++party) {
    auto& share = shares[party];
    verdict_shares[party] = rss3::ByteShare{{share.x.back()}, {share.a.back()}};
    text_shares[party] = rss3::ByteShare{{share.x.begin(), share.x.end() - 1}, {share.a.begin(), share.a.end() - 1}};
    share.wipe();
  }
  const SecretBytes verdict = open_shares(verdict_shares, 1);
  if (verdict[0] > 1)
    throw Disagreement("the servers' verdict opened to " + std::to_string(verdict[0]) + ", not 0 or 1: result refused");
  // A rejected MAC opens nothing else, as with GCM: the servers may withhold the rest.
  if (verdict[0] == 0) {
    for (auto& share : text_shares) share.wipe();
    return std::nullopt;
  }
  SecretBytes plaintext = open_shares(text_shares, text_bytes);
  for (auto& share : text_shares) share.wipe();
  return plaintext;
}

}  // namespace mpc::client
