// Client replies (wire/client_replies.cpp): round trips of every body, and every malformed reply
// refused.
#include <gtest/gtest.h>

#include <set>

#include "common/bytes.hpp"
#include "common/error.hpp"
#include "wire/client_messages.hpp"
#include "wire/codec.hpp"
#include "wire/key_id.hpp"
#include "wire/krb_record_mask.hpp"
#include "wire/peer_messages.hpp"
#include "wire_test_support.hpp"

namespace mpc::wire {
namespace {

using namespace test;

TEST(ClientReply, RoundTripsEveryBody) {
  for (const auto& [type, reply] : sample_replies()) {
    const Bytes frame = encode_reply(reply);
    const Reply decoded = decode_reply(frame, type);
    expect_same(reply, decoded);
    EXPECT_EQ(encode_reply(decoded), frame);
  }
}

TEST(ClientReply, RejectsEveryTruncationAndTrailingByte) {
  for (const auto& [type, reply] : sample_replies()) {
    SCOPED_TRACE("reply type " + std::to_string(static_cast<int>(type)));
    Bytes frame = encode_reply(reply);
    // A result cut right after x (and, for GCM open, x's verdict byte) is the form two-server
    // clusters send (x alone): it decodes as such, and the three-server reconstruction refuses
    // it for its missing a share.
    std::size_t two_server_length = frame.size();
    if (const auto* compute = std::get_if<ComputeResult>(&reply.body)) two_server_length -= compute->a.size();
    // A prefetch's XOR form is x alone, and with no keystream a form byte 1: without the byte
    // it is the replicated form.
    const auto* prefetch = std::get_if<GcmPrefetchResult>(&reply.body);
    std::set<std::size_t> prefetch_forms;
    if (prefetch && prefetch->replicated && !prefetch->a.empty()) prefetch_forms.insert(frame.size() - prefetch->a.size());
    if (prefetch && !prefetch->replicated && prefetch->x.empty() && !prefetch->padded)
      prefetch_forms.insert(frame.size() - 1);
    if (type == MessageType::GcmTag && std::holds_alternative<GcmTagResult>(reply.body)) two_server_length -= kGcmTagBytes;
    if (const auto* krb = std::get_if<KrbResult>(&reply.body)) two_server_length -= krb->a.size();
    if (const auto* open = std::get_if<GcmOpenResult>(&reply.body); open != nullptr && !open->padded_report)
      two_server_length -= open->a.size() + 1;
    // A reopen's XOR form ends in a form byte 1 where the replicated one has its a share; with
    // no text the replicated form is the XOR form without that byte.
    const auto* reopen = std::get_if<GcmReopenResult>(&reply.body);
    if (reopen && reopen->replicated && reopen->blocks != 0) two_server_length -= reopen->a.size() - 1;
    if (reopen && !reopen->replicated && reopen->blocks == 0) two_server_length -= 1;
    for (std::size_t length = 0; length < frame.size(); ++length) {
      const Bytes cut(frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(length));
      const bool verdict_byte = (!std::holds_alternative<GcmOpenResult>(reply.body) || (!cut.empty() && cut.back() <= 1)) &&
                                (reopen == nullptr || !reopen->replicated || (!cut.empty() && cut.back() == 1));
      if (prefetch_forms.count(length) != 0) {
        const Reply decoded = decode_reply(cut, type);
        EXPECT_NE(std::get<GcmPrefetchResult>(decoded.body).replicated, prefetch->replicated) << length;
        continue;
      }
      if (length == two_server_length && two_server_length != frame.size() && verdict_byte) {
        const Reply decoded = decode_reply(cut, type);
        std::visit(
            [&](const auto& body) {
              using T = std::decay_t<decltype(body)>;
              if constexpr (std::is_same_v<T, GcmReopenResult>) EXPECT_NE(body.replicated, reopen->replicated);
              else if constexpr (requires { body.replicated; }) EXPECT_FALSE(body.replicated);
              else if constexpr (requires { body.a.empty(); }) EXPECT_TRUE(body.a.empty());
              else ADD_FAILURE() << "a body without a two-server form decoded short";
              (void)sizeof(T);
            },
            decoded.body);
        continue;
      }
      expect_rejected(cut, decode_reply_as(type));
    }
    frame.push_back(0);
    expect_rejected(frame, decode_reply_as(type));
  }
}

TEST(ClientReply, BodyMustMatchRequestType) {
  const auto replies = sample_replies();
  const Bytes compute = encode_reply(replies[0].second);
  for (MessageType other : {MessageType::ImportKey, MessageType::ListKeys, MessageType::DeleteKey, MessageType::Status,
                            MessageType::GcmPrefetch, MessageType::GcmTag, MessageType::GcmOpen, MessageType::Krb})
    expect_rejected(compute, decode_reply_as(other));
  const Bytes empty_ok = encode_reply(replies[1].second);
  for (MessageType other : {MessageType::Compute, MessageType::ListKeys, MessageType::Status, MessageType::GcmPrefetch,
                            MessageType::GcmTag, MessageType::GcmOpen, MessageType::Krb})
    expect_rejected(empty_ok, decode_reply_as(other));
  const Bytes krb = encode_reply(Reply{make_id(1), Status::Ok, "", KrbResult{pattern(16, 1), pattern(16, 2)}});
  for (MessageType other : {MessageType::Compute, MessageType::ImportKey, MessageType::ListKeys, MessageType::DeleteKey,
                            MessageType::Status, MessageType::GcmPrefetch, MessageType::GcmTag, MessageType::GcmOpen})
    expect_rejected(krb, decode_reply_as(other));

  expect_rejected(compute, decode_reply_as(MessageType::Reply));
  expect_rejected(compute, decode_reply_as(static_cast<MessageType>(0)));
}

TEST(ClientReply, ErrorRepliesCarryNoBody) {
  Reply reply{make_id(0), Status::Busy, "queue full", ComputeResult{1, Bytes(16), Bytes(16)}};
  const Bytes frame = encode_reply(reply);
  EXPECT_EQ(frame, reply_header(Status::Busy, "queue full"));
  const Reply decoded = decode_reply(frame, MessageType::Compute);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(decoded.body));
  // A failed reply followed by body bytes is malformed.
  Bytes extended = frame;
  extended.push_back(1);
  expect_rejected(extended, decode_reply_as(MessageType::Compute));
}

TEST(ClientReply, RejectsBadHeaderFields) {
  Bytes frame = encode_reply(sample_replies()[1].second);
  for (std::uint8_t version : {0, 2}) {
    Bytes bad = frame;
    bad[0] = version;
    expect_rejected(bad, decode_reply_as(MessageType::ImportKey));
  }
  for (std::uint8_t type : {1, 2, 5, 0x81, 0}) {
    Bytes bad = frame;
    bad[1] = type;
    expect_rejected(bad, decode_reply_as(MessageType::ImportKey));
  }
  // Unknown status values.
  for (std::uint16_t status : {int{kFirstUnknownStatus}, 0x100, 0xffff}) {
    Bytes bad = frame;
    bad[18] = static_cast<std::uint8_t>(status);
    bad[19] = static_cast<std::uint8_t>(status >> 8);
    expect_rejected(bad, decode_reply_as(MessageType::ImportKey));
  }
  EXPECT_THROW(encode_reply(Reply{make_id(1), static_cast<Status>(kFirstUnknownStatus), "", {}}), FormatError);
  // Error strings: 1024 bytes is the limit; an Ok reply has none.
  expect_rejected(reply_header(Status::Internal, std::string(1025, 'x')), decode_reply_as(MessageType::Status));
  EXPECT_THROW(encode_reply(Reply{make_id(1), Status::Internal, std::string(1025, 'x'), {}}), FormatError);
  expect_rejected(reply_header(Status::Ok, "oops"), decode_reply_as(MessageType::ImportKey));
  EXPECT_THROW(encode_reply(Reply{make_id(1), Status::Ok, "oops", {}}), FormatError);
  // A u16 error length far beyond the frame.
  Bytes huge = reply_header(Status::Internal);
  huge[20] = 0xff;
  huge[21] = 0xff;
  EXPECT_LT(expect_rejected(huge, decode_reply_as(MessageType::Status)), 4096u);
}

TEST(ClientReply, RejectsBadComputeResults) {
  for (std::uint32_t blocks : {0u, kMaxRequestBlocks + 1, 0xffffffffu, kMaxRequestBlocks}) {
    Bytes frame = reply_header(Status::Ok);
    ByteWriter writer(frame);
    writer.u32(blocks);
    writer.bytes(Bytes(64));
    EXPECT_LT(expect_rejected(frame, decode_reply_as(MessageType::Compute)), 4096u);
  }
  // Padded results: parts of no block or more blocks than the job, reports that do not fit.
  for (const std::uint32_t part_blocks : {0u, 3u}) {
    Bytes frame = reply_header(Status::Ok);
    ByteWriter writer(frame);
    writer.u32(2 | 0x80000000u);
    writer.u32(part_blocks);
    writer.bytes(Bytes(32 + kPaddedPartReportBytes));
    EXPECT_LT(expect_rejected(frame, decode_reply_as(MessageType::Compute)), 4096u);
  }
  EXPECT_THROW(encode_reply(Reply{make_id(1), Status::Ok, "",
                                  ComputeResult{2, Bytes(32), {}, PaddedReports{1, Bytes(kPaddedPartReportBytes)}}}),
               FormatError);
  EXPECT_THROW(encode_reply(Reply{make_id(1), Status::Ok, "",
                                  ComputeResult{2, Bytes(32), Bytes(32), PaddedReports{2, Bytes(kPaddedPartReportBytes)}}}),
               FormatError);
  // Shares of unequal or wrong length cannot be encoded.
  EXPECT_THROW(encode_reply(Reply{make_id(1), Status::Ok, "", ComputeResult{2, Bytes(32), Bytes(16)}}), FormatError);
  EXPECT_THROW(encode_reply(Reply{make_id(1), Status::Ok, "", ComputeResult{0, {}, {}}}), FormatError);
}

// Padded GCM results: a prefetch's reports must cover its keystream in parts no larger than it;
// an open's report follows its verdict byte.
TEST(ClientReply, RejectsBadPaddedGcmResults) {
  for (const auto& [part_blocks, reports] : std::vector<std::pair<std::uint32_t, std::size_t>>{
           {0, 0}, {5, 1}, {2, 1}, {4, 2}, {1, 1}}) {
    Bytes frame = reply_header(Status::Ok);
    ByteWriter writer(frame);
    writer.u32(2);
    writer.u32(2 | 0x80000000u);
    writer.u32(part_blocks);
    writer.bytes(Bytes(24 + 64 + reports * kPaddedPartReportBytes));
    EXPECT_LT(expect_rejected(frame, decode_reply_as(MessageType::GcmPrefetch)), 4096u) << part_blocks;
  }
  EXPECT_THROW(encode_reply(Reply{make_id(1), Status::Ok, "",
                                  GcmPrefetchResult{2, 2, Bytes(24), Bytes(64), {}, false, PaddedReports{2, {}}}}),
               FormatError);
  EXPECT_THROW(encode_reply(Reply{make_id(1), Status::Ok, "",
                                  GcmPrefetchResult{2, 2, Bytes(24), Bytes(64), Bytes(64), true,
                                                    PaddedReports{4, Bytes(kPaddedPartReportBytes)}}}),
               FormatError);
  Bytes open = reply_header(Status::Ok);
  ByteWriter writer(open);
  writer.u32(1 | 0x80000000u);
  writer.bytes(Bytes(16 + 1 + kPaddedPartReportBytes - 1));
  EXPECT_LT(expect_rejected(open, decode_reply_as(MessageType::GcmOpen)), 4096u);
  EXPECT_THROW(encode_reply(Reply{make_id(1), Status::Ok, "",
                                  GcmOpenResult{1, Bytes(16), Bytes(16), 0, 0, true, PaddedReport{}}}),
               FormatError);
}

TEST(ClientReply, RejectsBadGcmResults) {
  const auto as_prefetch = decode_reply_as(MessageType::GcmPrefetch);
  // Counts out of range, and counts whose shares are not all there, without allocating them.
  const std::pair<std::uint32_t, std::uint32_t> bad[] = {
      {0, 1}, {kMaxGcmPrefetchCount + 1, 1}, {1, kMaxGcmBlocksPerNonce + 1}, {kMaxGcmPrefetchCount, kMaxGcmBlocksPerNonce}, {2, 1}};
  for (const auto& [count, blocks] : bad) {
    Bytes frame = reply_header(Status::Ok);
    ByteWriter writer(frame);
    writer.u32(count);
    writer.u32(blocks);
    writer.bytes(Bytes(12 + 32));
    EXPECT_LT(expect_rejected(frame, as_prefetch), 4096u);
  }
  EXPECT_THROW(encode_reply(Reply{make_id(1), Status::Ok, "", GcmPrefetchResult{0, 0, {}, {}, {}}}), FormatError);
  EXPECT_THROW(encode_reply(Reply{make_id(1), Status::Ok, "", GcmPrefetchResult{2, 1, Bytes(12), Bytes(32), Bytes(32)}}),
               FormatError);
  EXPECT_THROW(encode_reply(Reply{make_id(1), Status::Ok, "", GcmPrefetchResult{2, 1, Bytes(24), Bytes(32), Bytes(16)}}),
               FormatError);
  EXPECT_THROW(encode_reply(Reply{make_id(1), Status::Ok, "",
                                  GcmPrefetchResult{1, kMaxGcmBlocksPerNonce + 1, Bytes(12), {}, {}}}),
               FormatError);

  const auto as_open = decode_reply_as(MessageType::GcmOpen);
  for (std::uint32_t blocks : {1024u, 0xffffffffu, 5u}) {
    Bytes frame = reply_header(Status::Ok);
    ByteWriter writer(frame);
    writer.u32(blocks);
    writer.bytes(Bytes(32));
    writer.u8(1);
    writer.u8(0);
    EXPECT_LT(expect_rejected(frame, as_open), 4096u);
  }
  EXPECT_THROW(encode_reply(Reply{make_id(1), Status::Ok, "", GcmOpenResult{1024, Bytes(16384), Bytes(16384), 0, 0}}),
               FormatError);
  EXPECT_THROW(encode_reply(Reply{make_id(1), Status::Ok, "", GcmOpenResult{1, Bytes(16), Bytes(15), 0, 0}}),
               FormatError);
}

TEST(ClientReply, RejectsBadKrbResults) {
  const auto as_krb = decode_reply_as(MessageType::Krb);
  // Lengths no Krb request has, and lengths whose shares are not all there, without
  // allocating them.
  for (std::uint32_t length : {0u, 11u, static_cast<std::uint32_t>(kKrbMaxDataBytes + 25), 0xffffffffu, 40u}) {
    Bytes frame = reply_header(Status::Ok);
    ByteWriter writer(frame);
    writer.u32(length);
    writer.bytes(Bytes(64));
    EXPECT_LT(expect_rejected(frame, as_krb), 4096u);
  }
  // x alone is a two-server cluster's reply; x and part of a is nobody's.
  Bytes frame = reply_header(Status::Ok);
  ByteWriter writer(frame);
  writer.u32(12);
  writer.bytes(Bytes(12, 7));
  const Reply two_server = decode_reply(frame, MessageType::Krb);
  EXPECT_EQ(std::get<KrbResult>(two_server.body).x, Bytes(12, 7));
  EXPECT_TRUE(std::get<KrbResult>(two_server.body).a.empty());
  writer.bytes(Bytes(5));
  expect_rejected(frame, as_krb);
  EXPECT_THROW(encode_reply(Reply{make_id(1), Status::Ok, "", KrbResult{Bytes(12), Bytes(13)}}), FormatError);
  EXPECT_THROW(encode_reply(Reply{make_id(1), Status::Ok, "", KrbResult{Bytes(11), Bytes(11)}}), FormatError);
  EXPECT_THROW(encode_reply(Reply{make_id(1), Status::Ok, "", KrbResult{}}), FormatError);
  EXPECT_THROW(encode_reply(Reply{make_id(1), Status::Ok, "",
                                  KrbResult{Bytes(kKrbMaxDataBytes + 25), Bytes(kKrbMaxDataBytes + 25)}}),
               FormatError);
}

TEST(ClientReply, VerdictSharesUseOnlyBitZero) {
  const Reply good{make_id(1), Status::Ok, "", GcmOpenResult{1, pattern(16, 1), pattern(16, 2), 1, 1}};
  const Bytes frame = encode_reply(good);
  for (std::size_t which : {frame.size() - 2, frame.size() - 1}) {
    for (std::uint8_t value : {0, 1}) {
      Bytes changed = frame;
      changed[which] = value;
      EXPECT_NO_THROW(decode_reply(changed, MessageType::GcmOpen));
    }
    for (std::uint8_t value : {2, 3, 0x80, 0x81, 0xfe, 0xff}) {
      Bytes changed = frame;
      changed[which] = value;
      expect_rejected(changed, decode_reply_as(MessageType::GcmOpen));
    }
  }
  for (std::uint8_t value : {2, 0xff}) {
    EXPECT_THROW(encode_reply(Reply{make_id(1), Status::Ok, "", GcmOpenResult{0, {}, {}, value, 0}}), FormatError);
    EXPECT_THROW(encode_reply(Reply{make_id(1), Status::Ok, "", GcmOpenResult{0, {}, {}, 0, value}}), FormatError);
  }
}

TEST(ClientReply, RejectsBadKeyListsAndStatus) {
  for (std::uint32_t count : {1u, 1000u, 0xffffffffu}) {
    Bytes frame = reply_header(Status::Ok);
    ByteWriter writer(frame);
    writer.u32(count);
    EXPECT_LT(expect_rejected(frame, decode_reply_as(MessageType::ListKeys)), 4096u);
  }
  {
    Bytes frame = reply_header(Status::Ok);
    ByteWriter writer(frame);
    writer.u32(1);
    write_raw_key(writer, "bad name", 1, 1);
    writer.u64(0);
    expect_rejected(frame, decode_reply_as(MessageType::ListKeys));
  }
  {
    Bytes frame = reply_header(Status::Ok);
    ByteWriter writer(frame);
    writer.u32(1);
    write_raw_key(writer, "k", 1, 8);
    writer.u64(0);
    expect_rejected(frame, decode_reply_as(MessageType::ListKeys));
  }
  for (std::uint8_t party : {3, 0xff}) {
    Bytes frame = reply_header(Status::Ok);
    ByteWriter writer(frame);
    writer.u8(party);
    writer.u64(0);
    writer.u64(0);
    writer.u64(0);
    writer.u32(0);
    expect_rejected(frame, decode_reply_as(MessageType::Status));
  }
  ServerStatus status;
  status.party = 3;
  EXPECT_THROW(encode_reply(Reply{make_id(1), Status::Ok, "", status}), FormatError);
  // A missing party goes with two-party service and only with it.
  status.party = 1;
  status.mode = ClusterMode::TwoParty;
  status.missing_party = kNoParty;
  EXPECT_THROW(encode_reply(Reply{make_id(1), Status::Ok, "", status}), FormatError);
  status.mode = ClusterMode::Full;
  status.missing_party = 2;
  EXPECT_THROW(encode_reply(Reply{make_id(1), Status::Ok, "", status}), FormatError);
}

TEST(ClientReply, StatusNames) {
  EXPECT_STREQ(status_name(Status::Ok), "ok");
  EXPECT_STREQ(status_name(Status::PeerFailure), "peer_failure");
  EXPECT_STREQ(status_name(Status::NotReady), "not_ready");
  EXPECT_STREQ(status_name(Status::UnknownNonce), "unknown_nonce");
  EXPECT_STREQ(status_name(Status::RequestMismatch), "request_mismatch");
  EXPECT_STREQ(status_name(Status::Regrouping), "regrouping");
  EXPECT_STREQ(status_name(Status::VerificationFailed), "verification_failed");
  EXPECT_STREQ(status_name(static_cast<Status>(77)), "unknown");
}

// ---------------------------------------------------------------------------- peers

}  // namespace
}  // namespace mpc::wire
