// Client requests (wire/client_requests.cpp, client_checks.cpp): round trips of every type, known
// encodings, and every malformed frame refused (truncation, trailing bytes, bad enums, versions
// and types, oversized counts without large allocations, bad names); the request digest.
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

TEST(ClientRequest, RoundTripsEveryType) {
  for (const Request& request : sample_requests()) {
    const Bytes frame = encode_request(request);
    EXPECT_EQ(frame[0], kProtocolVersion);
    EXPECT_EQ(frame[1], static_cast<std::uint8_t>(type_of(request)));
    const Request decoded = decode_request(frame);
    expect_same(request, decoded);
    EXPECT_EQ(encode_request(decoded), frame);
  }
}

TEST(ClientRequest, KnownEncoding) {
  ComputeRequest request;
  request.id = make_id(0x10);
  request.key = KeyId{"k", 0x01020304, KeyAlgorithm::Aes256};
  request.operation = Operation::CtrKeystream;
  request.blocks = 0x00000102;
  const Bytes frame = encode_request(request);
  Bytes expected = {1, 1};
  for (std::size_t i = 0; i < 16; ++i) expected.push_back(static_cast<std::uint8_t>(0x10 + i));
  const Bytes body = {1, 1, 0, 'k', 4, 3, 2, 1, 2, 2, 1, 0, 0};
  expected.insert(expected.end(), body.begin(), body.end());
  expected.resize(expected.size() + 16, 0);
  EXPECT_EQ(frame, expected);
}

TEST(ClientRequest, RejectsEveryTruncation) {
  for (const Request& request : sample_requests()) {
    const Bytes frame = encode_request(request);
    for (std::size_t length = 0; length < frame.size(); ++length)
      expect_rejected(Bytes(frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(length)), decode_req);
  }
}

TEST(ClientRequest, RejectsTrailingBytes) {
  for (const Request& request : sample_requests()) {
    Bytes frame = encode_request(request);
    frame.push_back(0);
    expect_rejected(frame, decode_req);
  }
}

TEST(ClientRequest, RejectsBadVersionAndType) {
  for (const Request& request : sample_requests()) {
    for (std::uint8_t version : {0, 2, 0xff}) {
      Bytes frame = encode_request(request);
      frame[0] = version;
      expect_rejected(frame, decode_req);
    }
  }
  for (int type : {0, 10, 0x7f, 0x80, 0x81, 0xff}) {
    Bytes frame = request_header(static_cast<std::uint8_t>(type));
    expect_rejected(frame, decode_req);
  }
  // A reply is not a request.
  expect_rejected(encode_reply(sample_replies()[1].second), decode_req);
}

TEST(ClientRequest, ExclusionKnownEncodingAndChecks) {
  const Bytes frame = encode_request(ExclusionRequest{make_id(0x10), ExclusionAction::Exclude, 2, "op"});
  Bytes expected = {1, 14};
  for (std::size_t i = 0; i < 16; ++i) expected.push_back(static_cast<std::uint8_t>(0x10 + i));
  const Bytes body = {1, 2, 2, 0, 'o', 'p'};
  expected.insert(expected.end(), body.begin(), body.end());
  EXPECT_EQ(frame, expected);
  const std::size_t body_at = frame.size() - body.size();
  for (const auto& [offset, value] : std::vector<std::pair<std::size_t, std::uint8_t>>{
           {body_at, 0}, {body_at, 4}, {body_at + 1, 3}, {body_at + 1, 0xff}}) {
    Bytes bad = frame;
    bad[offset] = value;
    expect_rejected(bad, decode_req);
  }
  Bytes readmit_with_reason = frame;
  readmit_with_reason[body_at] = static_cast<std::uint8_t>(ExclusionAction::Readmit);
  expect_rejected(readmit_with_reason, decode_req);
  EXPECT_THROW(encode_request(ExclusionRequest{make_id(1), ExclusionAction::Exclude, 3, "x"}), FormatError);
  EXPECT_THROW(encode_request(ExclusionRequest{make_id(1), ExclusionAction::Readmit, 1, "x"}), FormatError);
  EXPECT_THROW(encode_request(ExclusionRequest{make_id(1), ExclusionAction::Exclude, 1,
                                               std::string(kMaxExclusionReasonBytes + 1, 'x')}),
               FormatError);
  EXPECT_NO_THROW(encode_request(
      ExclusionRequest{make_id(1), ExclusionAction::Exclude, 1, std::string(kMaxExclusionReasonBytes, 'x')}));
  // A client's failed check names the service it came from: a pair (the party it ran without)
  // or all three.
  for (const std::uint8_t served : {std::uint8_t{0}, std::uint8_t{2}, kServedByAllThree}) {
    const ExclusionRequest report{make_id(2), ExclusionAction::CheckFailed, served, "shares disagree"};
    const auto decoded = std::get<ExclusionRequest>(decode_request(encode_request(report)));
    EXPECT_EQ(decoded.action, ExclusionAction::CheckFailed);
    EXPECT_EQ(decoded.party, served);
    EXPECT_EQ(decoded.reason, "shares disagree");
  }
  EXPECT_THROW(encode_request(ExclusionRequest{make_id(2), ExclusionAction::CheckFailed, 4, "x"}), FormatError);
  Bytes report_frame = encode_request(ExclusionRequest{make_id(2), ExclusionAction::CheckFailed, 3, "x"});
  report_frame[report_frame.size() - 4] = 4;  // the party, before the reason's length and byte
  expect_rejected(report_frame, decode_req);
}

TEST(ClientRequest, AReasonIsKeptOnOneLineAndWithinItsLimit) {
  EXPECT_EQ(one_line_reason("tag\nrefused\r\nagain"), "tag refused  again");
  const std::string reason = one_line_reason(std::string(kMaxExclusionReasonBytes + 7, 'x') + "\n");
  EXPECT_EQ(reason, std::string(kMaxExclusionReasonBytes, 'x'));
  EXPECT_NO_THROW(encode_request(ExclusionRequest{make_id(3), ExclusionAction::CheckFailed, 1,
                                                  one_line_reason(std::string(500, '\n'))}));
}

TEST(ClientRequest, RejectsBadOperationAndAlgorithm) {
  for (std::uint8_t operation : {0, 4, 0xff}) {
    Bytes frame = request_header(1);
    ByteWriter writer(frame);
    writer.u8(operation);
    write_raw_key(writer, "k", 1, 1);
    writer.u32(1);
    writer.bytes(Bytes(16));
    expect_rejected(frame, decode_req);
  }
  for (std::uint8_t algorithm : {0, 8, 0xff}) {
    Bytes frame = request_header(4);
    ByteWriter writer(frame);
    write_raw_key(writer, "k", 1, algorithm);
    expect_rejected(frame, decode_req);
  }
  ComputeRequest request = std::get<ComputeRequest>(sample_requests()[0]);
  request.operation = static_cast<Operation>(9);
  EXPECT_THROW(encode_request(request), FormatError);
  request = std::get<ComputeRequest>(sample_requests()[0]);
  request.key.algorithm = static_cast<KeyAlgorithm>(8);
  EXPECT_THROW(encode_request(request), FormatError);
}

TEST(ClientRequest, RejectsBadBlockCounts) {
  for (std::uint32_t blocks : {0u, kMaxRequestBlocks + 1, 0xffffffffu}) {
    Bytes frame = request_header(1);
    ByteWriter writer(frame);
    writer.u8(1);
    write_raw_key(writer, "k", 1, 1);
    writer.u32(blocks);
    writer.bytes(Bytes(16));
    expect_rejected(frame, decode_req);
  }
  // ECB claiming many blocks with few bytes present: rejected before allocating.
  for (std::uint32_t blocks : {2u, kMaxRequestBlocks}) {
    Bytes frame = request_header(1);
    ByteWriter writer(frame);
    writer.u8(2);
    write_raw_key(writer, "k", 1, 1);
    writer.u32(blocks);
    writer.bytes(Bytes(16));
    EXPECT_LT(expect_rejected(frame, decode_req), 4096u);
  }
  // ECB input longer than blocks * 16.
  {
    Bytes frame = request_header(1);
    ByteWriter writer(frame);
    writer.u8(3);
    write_raw_key(writer, "k", 1, 1);
    writer.u32(1);
    writer.bytes(Bytes(32));
    expect_rejected(frame, decode_req);
  }
  ComputeRequest request = std::get<ComputeRequest>(sample_requests()[1]);
  request.input.pop_back();
  EXPECT_THROW(encode_request(request), FormatError);
  request = std::get<ComputeRequest>(sample_requests()[0]);
  request.blocks = 0;
  EXPECT_THROW(encode_request(request), FormatError);
  request.blocks = kMaxRequestBlocks + 1;
  EXPECT_THROW(encode_request(request), FormatError);
  request = std::get<ComputeRequest>(sample_requests()[0]);
  request.input = Bytes(16 * request.blocks);  // CTR carries no input
  EXPECT_THROW(encode_request(request), FormatError);
}

TEST(ClientRequest, RejectsWrongShareLength) {
  for (KeyAlgorithm algorithm : {KeyAlgorithm::Aes128, KeyAlgorithm::Aes256}) {
    // A share as it was before sealing is refused too.
    const std::size_t right = 2 * material_bytes(algorithm) + kSealedShareOverhead;
    for (std::size_t length : {std::size_t{0}, right - 1, right + 1, right - kSealedShareOverhead,
                               material_bytes(algorithm), 2 * material_bytes(KeyAlgorithm::Aes128) +
                                                              2 * material_bytes(KeyAlgorithm::Aes256) +
                                                              2 * kSealedShareOverhead - right}) {
      Bytes frame = request_header(2);
      ByteWriter writer(frame);
      write_raw_key(writer, "k", 1, static_cast<std::uint8_t>(algorithm));
      writer.u32(static_cast<std::uint32_t>(length));
      writer.bytes(Bytes(length));
      expect_rejected(frame, decode_req);
    }
    ImportKeyRequest request{make_id(1), KeyId{"k", 1, algorithm}, Bytes(right - 16)};
    EXPECT_THROW(encode_request(request), FormatError);
  }
  // A huge claimed length is rejected without allocating it.
  Bytes frame = request_header(2);
  ByteWriter writer(frame);
  write_raw_key(writer, "k", 1, 1);
  writer.u32(0xffffffffu);
  EXPECT_LT(expect_rejected(frame, decode_req), 4096u);
}

TEST(ClientRequest, GcmKnownEncoding) {
  const KeyId key{"k", 0x01020304, KeyAlgorithm::Aes256Gcm};
  const Bytes key_bytes_ = {1, 0, 'k', 4, 3, 2, 1, 3};
  auto header = [](std::uint8_t type) {
    Bytes out = {1, type};
    for (std::size_t i = 0; i < 16; ++i) out.push_back(static_cast<std::uint8_t>(0x20 + i));
    return out;
  };
  {
    Bytes expected = header(6);
    expected.insert(expected.end(), key_bytes_.begin(), key_bytes_.end());
    const Bytes body = {0x02, 0x01, 0, 0, 0x00, 0x10, 0, 0};
    expected.insert(expected.end(), body.begin(), body.end());
    EXPECT_EQ(encode_request(GcmPrefetchRequest{make_id(0x20), key, 0x102, 4096}), expected);
  }
  const GcmNonce nonce = gcm_nonce(0x40);
  const GcmTagBytes tag = gcm_tag(0x50);
  Bytes expected = header(7);
  expected.insert(expected.end(), key_bytes_.begin(), key_bytes_.end());
  expected.insert(expected.end(), nonce.begin(), nonce.end());
  const Bytes rest = {2, 0, 0, 0, 0xaa, 0xbb, 3, 0, 0, 0, 0xc0, 0xc1, 0xc2};
  expected.insert(expected.end(), rest.begin(), rest.end());
  EXPECT_EQ(encode_request(GcmTagRequest{make_id(0x20), key, nonce, {0xaa, 0xbb}, {0xc0, 0xc1, 0xc2}}), expected);
  expected[1] = 8;
  expected.insert(expected.end(), tag.begin(), tag.end());
  EXPECT_EQ(encode_request(GcmOpenRequest{make_id(0x20), key, nonce, {0xaa, 0xbb}, {0xc0, 0xc1, 0xc2}, tag}), expected);
}

TEST(ClientRequest, AlgorithmMustMatchTheJob) {
  // Compute serves only plain AES keys; the GCM jobs only Aes256Gcm keys.
  for (std::uint8_t operation : {1, 2}) {
    Bytes frame = request_header(1);
    ByteWriter writer(frame);
    writer.u8(operation);
    write_raw_key(writer, "k", 1, static_cast<std::uint8_t>(KeyAlgorithm::Aes256Gcm));
    writer.u32(1);
    writer.bytes(Bytes(16));
    expect_rejected(frame, decode_req);
  }
  ComputeRequest compute = std::get<ComputeRequest>(sample_requests()[0]);
  compute.key.algorithm = KeyAlgorithm::Aes256Gcm;
  EXPECT_THROW(encode_request(compute), FormatError);
  for (KeyAlgorithm wrong : {KeyAlgorithm::Aes128, KeyAlgorithm::Aes256}) {
    for (const Request& request : sample_requests()) {
      if (!std::holds_alternative<GcmPrefetchRequest>(request) && !std::holds_alternative<GcmTagRequest>(request) &&
          !std::holds_alternative<GcmOpenRequest>(request))
        continue;
      Request changed = request;
      std::visit(
          [wrong](auto& r) {
            if constexpr (requires { r.key; }) r.key.algorithm = wrong;
          },
          changed);
      EXPECT_THROW(encode_request(changed), FormatError);
      // The same frame with the algorithm byte patched is rejected by the decoder.
      Bytes frame = encode_request(request);
      const std::size_t algorithm_offset = 18 + 2 + krbtgt().name.size() + 4;
      ASSERT_EQ(frame[algorithm_offset], static_cast<std::uint8_t>(KeyAlgorithm::Aes256Gcm));
      frame[algorithm_offset] = static_cast<std::uint8_t>(wrong);
      expect_rejected(frame, decode_req);
    }
  }
}

TEST(ClientRequest, RejectsBadPrefetchCounts) {
  const std::pair<std::uint32_t, std::uint32_t> bad[] = {{0, 1},
                                                         {kMaxGcmPrefetchCount + 1, 1},
                                                         {0xffffffffu, 0},
                                                         {1, kMaxGcmBlocksPerNonce + 1},
                                                         {1, 0xffffffffu},
                                                         // each in range, the product over kMaxRequestBlocks
                                                         {kMaxGcmPrefetchCount, kMaxRequestBlocks / kMaxGcmPrefetchCount + 1},
                                                         {kMaxRequestBlocks / kMaxGcmBlocksPerNonce + 1, kMaxGcmBlocksPerNonce},
                                                         {kMaxGcmPrefetchCount, kMaxGcmBlocksPerNonce}};
  for (const auto& [count, blocks] : bad) {
    Bytes frame = request_header(6);
    ByteWriter writer(frame);
    write_raw_key(writer, "k", 1, 3);
    writer.u32(count);
    writer.u32(blocks);
    expect_rejected(frame, decode_req);
    EXPECT_THROW(encode_request(GcmPrefetchRequest{make_id(1), KeyId{"k", 1, KeyAlgorithm::Aes256Gcm}, count, blocks}),
                 FormatError);
  }
}

// Raw GcmTag (type 7) or GcmOpen (type 8) frame with the given lengths and their bytes.
Bytes gcm_frame(std::uint8_t type, std::uint32_t aad_length, std::size_t aad_present, std::uint32_t text_length,
                std::size_t text_present) {
  Bytes frame = request_header(type);
  ByteWriter writer(frame);
  write_raw_key(writer, "k", 1, 3);
  writer.bytes(gcm_nonce(1));
  writer.u32(aad_length);
  writer.bytes(Bytes(aad_present));
  writer.u32(text_length);
  writer.bytes(Bytes(text_present));
  if (type == 8) writer.bytes(gcm_tag(1));
  return frame;
}

TEST(ClientRequest, GcmHashBlockLimit) {
  EXPECT_EQ(gcm_hash_blocks(0, 0), 1u);
  EXPECT_EQ(gcm_hash_blocks(1, 0), 2u);
  EXPECT_EQ(gcm_hash_blocks(16, 16), 3u);
  EXPECT_EQ(gcm_hash_blocks(17, 33), 6u);
  EXPECT_EQ(gcm_hash_blocks(SIZE_MAX, 0), SIZE_MAX / 16 + 2);
  for (std::uint8_t type : {7, 8}) {
    // 1024 blocks exactly is accepted, one byte more is not, however it is split.
    EXPECT_NO_THROW(decode_request(gcm_frame(type, 16 * 1023, 16 * 1023, 0, 0)));
    EXPECT_NO_THROW(decode_request(gcm_frame(type, 0, 0, 16 * 1023, 16 * 1023)));
    EXPECT_NO_THROW(decode_request(gcm_frame(type, 1, 1, 16 * 1021 + 1, 16 * 1021 + 1)));
    expect_rejected(gcm_frame(type, 16 * 1023 + 1, 16 * 1023 + 1, 0, 0), decode_req);
    expect_rejected(gcm_frame(type, 0, 0, 16 * 1023 + 1, 16 * 1023 + 1), decode_req);
    expect_rejected(gcm_frame(type, 1, 1, 16 * 1022 + 1, 16 * 1022 + 1), decode_req);
    expect_rejected(gcm_frame(type, 16 * 512, 16 * 512, 16 * 512, 16 * 512), decode_req);
    // Huge claimed lengths fail on the limit without allocating.
    EXPECT_LT(expect_rejected(gcm_frame(type, 0xffffffffu, 0, 0, 0), decode_req), 4096u);
    EXPECT_LT(expect_rejected(gcm_frame(type, 0, 0, 0xffffffffu, 0), decode_req), 4096u);
    // A length longer than the bytes present.
    expect_rejected(gcm_frame(type, 100, 10, 0, 0), decode_req);
  }
  const KeyId key{"k", 1, KeyAlgorithm::Aes256Gcm};
  EXPECT_THROW(encode_request(GcmTagRequest{make_id(1), key, {}, Bytes(16 * 1023 + 1), {}}), FormatError);
  EXPECT_THROW(encode_request(GcmOpenRequest{make_id(1), key, {}, Bytes(8), Bytes(16 * 1022 + 1), {}}), FormatError);
  EXPECT_NO_THROW(encode_request(GcmOpenRequest{make_id(1), key, {}, Bytes(8), Bytes(16 * 1022), {}}));
}

TEST(ClientRequest, KrbKnownEncoding) {
  const Bytes data = pattern(28, 0x33);
  const Bytes frame =
      encode_request(KrbRequest{make_id(0x20), KeyId{"k", 0x01020304, KeyAlgorithm::Aes128CtsHmacSha1},
                                KrbOperation::Decrypt, 2, data});
  Bytes expected = {1, 9};
  for (std::size_t i = 0; i < 16; ++i) expected.push_back(static_cast<std::uint8_t>(0x20 + i));
  const Bytes body = {2, 1, 0, 'k', 4, 3, 2, 1, 4, 2, 0, 0, 0, 28, 0, 0, 0};
  expected.insert(expected.end(), body.begin(), body.end());
  expected.insert(expected.end(), data.begin(), data.end());
  EXPECT_EQ(frame, expected);
}

TEST(ClientRequest, KrbCombineServesOnlyWhatKrb5kdcDoes) {
  const KeyId key{"alice@EXAMPLE.COM", 1, KeyAlgorithm::Aes128CtsHmacSha1};
  auto request = [&](KrbOperation operation, std::uint32_t usage, const char* pepper, std::size_t data) {
    return KrbRequest{make_id(3), key, operation, usage, Bytes(data),
                      KrbCombine{KeyAlgorithm::Aes256CtsHmacSha1, pepper, Bytes(32, 7)}};
  };
  for (const auto& good : {request(KrbOperation::Decrypt, 54, "challengelongterm", 40),
                           request(KrbOperation::Encrypt, 55, "challengelongterm", 16),
                           request(KrbOperation::Encrypt, 3, "replykey", 100),
                           request(KrbOperation::Checksum, 56, "replykey", 0)}) {
    const auto decoded = std::get<KrbRequest>(decode_request(encode_request(good)));
    EXPECT_EQ(decoded.combine, good.combine);
    EXPECT_EQ(krb_job_algorithm(decoded), KeyAlgorithm::Aes256CtsHmacSha1);
  }
  // A KDC that could encrypt under the client's challenge key (54) could forge the client's
  // challenge; it never decrypts its own (55) or an AS-REP, nor uses another pepper.
  for (const auto& bad : {request(KrbOperation::Encrypt, 54, "challengelongterm", 16),
                          request(KrbOperation::Decrypt, 55, "challengelongterm", 40),
                          request(KrbOperation::Decrypt, 3, "replykey", 40),
                          request(KrbOperation::Encrypt, 3, "challengelongterm", 16),
                          request(KrbOperation::Encrypt, 1, "replykey", 16),
                          request(KrbOperation::Checksum, 56, "subkeyarmor", 0)})
    EXPECT_THROW(encode_request(bad), FormatError);
  KrbRequest short_mask = request(KrbOperation::Encrypt, 3, "replykey", 16);
  short_mask.combine->mask.resize(16);
  EXPECT_THROW(encode_request(short_mask), FormatError);
  KrbRequest not_krb = request(KrbOperation::Encrypt, 3, "replykey", 16);
  not_krb.combine->combined = KeyAlgorithm::Aes256;
  EXPECT_THROW(encode_request(not_krb), FormatError);
  // The lengths follow the combined key: a 12-byte MAC is too short for aes256-sha384.
  KrbRequest sha384 = request(KrbOperation::Decrypt, 54, "challengelongterm", 28);
  sha384.combine->combined = KeyAlgorithm::Aes256CtsHmacSha384;
  EXPECT_THROW(encode_request(sha384), FormatError);
  // Truncated after the flag: the decoder wants the combine fields.
  Bytes frame = encode_request(request(KrbOperation::Checksum, 56, "replykey", 0));
  frame.resize(frame.size() - 1);
  expect_rejected(frame, decode_req);
}

TEST(KrbResultBytes, LengthsOfEveryOperation) {
  EXPECT_EQ(krb_result_bytes(KrbOperation::Encrypt, 16), 28u);
  EXPECT_EQ(krb_result_bytes(KrbOperation::Encrypt, 100), 112u);
  EXPECT_EQ(krb_result_bytes(KrbOperation::Encrypt, kKrbMaxDataBytes), kKrbMaxDataBytes + 12);
  EXPECT_EQ(krb_result_bytes(KrbOperation::Decrypt, 28), 17u);  // confounder, no plaintext, verdict
  EXPECT_EQ(krb_result_bytes(KrbOperation::Decrypt, 100), 89u);
  EXPECT_EQ(krb_result_bytes(KrbOperation::Checksum, 0), 12u);
  EXPECT_EQ(krb_result_bytes(KrbOperation::Checksum, kKrbMaxDataBytes), 12u);
  const std::pair<KrbOperation, std::size_t> bad[] = {
      {KrbOperation::Encrypt, 0},  {KrbOperation::Encrypt, 15},   {KrbOperation::Encrypt, kKrbMaxDataBytes + 1},
      {KrbOperation::Decrypt, 0},  {KrbOperation::Decrypt, 27},   {KrbOperation::Decrypt, kKrbMaxDataBytes + 1},
      {KrbOperation::Checksum, kKrbMaxDataBytes + 1},             {KrbOperation::Checksum, SIZE_MAX},
      {static_cast<KrbOperation>(0), 16}, {static_cast<KrbOperation>(4), 16}, {static_cast<KrbOperation>(5), 16}};
  for (const auto& [operation, bytes] : bad)
    EXPECT_THROW((void)krb_result_bytes(operation, bytes), FormatError)
        << static_cast<int>(operation) << " of " << bytes << " bytes";
}

TEST(KrbResultBytes, Rfc8009LengthsFollowTheAlgorithm) {
  const KeyAlgorithm a128 = KeyAlgorithm::Aes128CtsHmacSha256;
  const KeyAlgorithm a256 = KeyAlgorithm::Aes256CtsHmacSha384;
  EXPECT_EQ(krb_result_bytes(KrbOperation::Encrypt, a128, 16), 32u);
  EXPECT_EQ(krb_result_bytes(KrbOperation::Encrypt, a256, 16), 40u);
  EXPECT_EQ(krb_result_bytes(KrbOperation::Encrypt, a256, kKrbMaxDataBytes), kKrbMaxDataBytes + 24);
  EXPECT_EQ(krb_result_bytes(KrbOperation::Decrypt, a128, 32), 17u);
  EXPECT_EQ(krb_result_bytes(KrbOperation::Decrypt, a256, 40), 17u);
  EXPECT_EQ(krb_result_bytes(KrbOperation::Checksum, a128, 0), 16u);
  EXPECT_EQ(krb_result_bytes(KrbOperation::Checksum, a256, 77), 24u);
  EXPECT_THROW((void)krb_result_bytes(KrbOperation::Decrypt, a128, 31), FormatError);
  EXPECT_THROW((void)krb_result_bytes(KrbOperation::Decrypt, a256, 39), FormatError);
  EXPECT_THROW((void)krb_result_bytes(KrbOperation::Checksum, KeyAlgorithm::Aes256, 0), FormatError);
  // Names, material sizes and the layout of wire/key_id.hpp.
  EXPECT_EQ(parse_algorithm("aes128-cts-hmac-sha256-128"), a128);
  EXPECT_EQ(parse_algorithm("aes256-cts-hmac-sha384-192"), a256);
  EXPECT_STREQ(algorithm_name(a256), "aes256-cts-hmac-sha384-192");
  EXPECT_EQ(material_bytes(a128), 5u * (176 + 2 * 64) + 64);
  EXPECT_EQ(material_bytes(a256), 5u * (240 + 2 * 128) + 128);
  EXPECT_EQ(krb_kc_offset(a256, 1), 496u + 240 + 128);
  EXPECT_EQ(krb_prf_offset(a128), 5u * 304);
  EXPECT_TRUE(is_krb_algorithm(a128) && is_krb_sha2_algorithm(a256));
  EXPECT_FALSE(is_krb_sha2_algorithm(KeyAlgorithm::Aes128CtsHmacSha1));
}

// Raw Krb frame: operation, key algorithm, usage, a claimed data length and the data present.
Bytes krb_frame(std::uint8_t operation, std::uint8_t algorithm, std::uint32_t usage, std::uint32_t length,
                std::size_t present) {
  Bytes frame = request_header(static_cast<std::uint8_t>(MessageType::Krb));
  ByteWriter writer(frame);
  writer.u8(operation);
  write_raw_key(writer, "k", 1, algorithm);
  writer.u32(usage);
  writer.u32(length);
  writer.bytes(pattern(present, 9));
  return frame;
}

// Each server's copy of a Compute request carries its own output pad: the frames differ, their
// digests do not; the common part still shows any change.
// Each server's copy of `request` under its own pad seed: the frames differ, their digests do
// not, and a copy without a pad has another digest (a server sees which form it was sent).
template <typename Request>
void expect_pads_outside_the_digest(Request request) {
  std::vector<Bytes> frames;
  std::vector<RequestDigest> digests;
  for (std::uint8_t party = 0; party < 2; ++party) {
    request.output_pad.emplace();
    request.output_pad->fill(party);
    frames.push_back(encode_request(request));
    const wire::Request decoded = decode_request(frames.back());
    expect_same(wire::Request(request), decoded);
    digests.push_back(request_digest(frames.back(), decoded));
  }
  EXPECT_NE(frames[0], frames[1]);
  EXPECT_EQ(digests[0], digests[1]);
  request.output_pad.reset();
  const Bytes plain = encode_request(request);
  EXPECT_NE(request_digest(plain, decode_request(plain)), digests[0]);
}

TEST(ClientRequest, OutputPadTravelsOutsideTheDigest) {
  ComputeRequest request{make_id(33), krbtgt(KeyAlgorithm::Aes128), Operation::EcbEncrypt, 2, {}, pattern(32, 33)};
  expect_pads_outside_the_digest(request);
  request.input[5] ^= 1;
  request.output_pad.emplace();
  const Bytes changed = encode_request(request);
  request.input[5] ^= 1;
  const Bytes original = encode_request(request);
  EXPECT_NE(request_digest(changed, decode_request(changed)), request_digest(original, decode_request(original)));
}

// A GCM prefetch's and a GCM open's pads travel the same way; a local prefetch and a reopen
// take none.
TEST(ClientRequest, GcmOutputPadsTravelOutsideTheDigest) {
  GcmPrefetchRequest prefetch{make_id(34), krbtgt(KeyAlgorithm::Aes256Gcm), 5, 2};
  GcmOpenRequest open{make_id(35), krbtgt(KeyAlgorithm::Aes256Gcm), gcm_nonce(35), pattern(5, 35), pattern(32, 36),
                      gcm_tag(35)};
  expect_pads_outside_the_digest(prefetch);
  expect_pads_outside_the_digest(open);
  prefetch.local_masks = true;
  prefetch.output_pad.emplace();
  EXPECT_THROW(encode_request(prefetch), FormatError);
  GcmReopenRequest reopen{open};
  reopen.output_pad.emplace();
  EXPECT_THROW(encode_request(reopen), FormatError);
  // A reopen frame with the pad's flag in its text length is refused.
  open.output_pad.emplace();
  Bytes frame = encode_request(open);
  frame[1] = static_cast<std::uint8_t>(MessageType::GcmReopen);
  EXPECT_THROW(decode_request(frame), FormatError);
}

// Each server's copy of a Krb request carries its own seeds of the record mask: the frames
// differ, their digests do not, and any other change (a seed's hash included) does show.
TEST(ClientRequest, KrbRecordMaskTravelsWithTheSeedsOutsideTheDigest) {
  const KeyId key{"krbtgt/R@R", 2, KeyAlgorithm::Aes256CtsHmacSha1};
  KrbRequest request{make_id(30), key, KrbOperation::Encrypt, 3, pattern(16 + 40, 30)};
  const RecordMaskDeal deal(3, krb_secret_record_bytes(request));
  deal.mask(request);
  std::vector<Bytes> frames;
  std::vector<RequestDigest> digests;
  for (int party = 0; party < 3; ++party) {
    request.record_mask = deal.for_server(party);
    frames.push_back(encode_request(request));
    const Request decoded = decode_request(frames.back());
    expect_same(Request(request), decoded);
    digests.push_back(request_digest(frames.back(), decoded));
    // The frame's last bytes are the seeds; without them it is the common part.
    EXPECT_NE(digests.back(), request_digest(frames.back()));
  }
  EXPECT_NE(frames[0], frames[1]);
  EXPECT_EQ(digests[0], digests[1]);
  EXPECT_EQ(digests[1], digests[2]);
  KrbRequest other_hash = request;
  other_hash.record_mask->seed_hashes[0][0] ^= 1;
  const Bytes changed = encode_request(other_hash);
  EXPECT_NE(request_digest(changed, decode_request(changed)), digests[2]);
  // Two servers get one seed each.
  const RecordMaskDeal pair(2, krb_secret_record_bytes(request));
  request.record_mask = pair.for_server(1);
  expect_same(Request(request), decode_request(encode_request(request)));
  // Malformed: a third seed, four components, a component named twice.
  KrbRequest three_seeds = request;
  three_seeds.record_mask = deal.for_server(0);
  three_seeds.record_mask->held.push_back(1);
  three_seeds.record_mask->seeds.push_back(three_seeds.record_mask->seeds[0]);
  EXPECT_THROW(encode_request(three_seeds), FormatError);
  KrbRequest four = request;
  four.record_mask = deal.for_server(0);
  four.record_mask->seed_hashes.push_back(four.record_mask->seed_hashes[0]);
  EXPECT_THROW(encode_request(four), FormatError);
  KrbRequest twice = request;
  twice.record_mask = deal.for_server(0);
  twice.record_mask->held[1] = twice.record_mask->held[0];
  EXPECT_THROW(encode_request(twice), FormatError);
}

TEST(ClientRequest, RejectsMalformedKrbRequests) {
  constexpr std::uint8_t kAes128Krb = 4;
  constexpr std::uint8_t kAes256Krb = 5;
  // Well-formed frames built the same way are accepted (so each rejection below is about
  // the one field changed).
  EXPECT_NO_THROW(decode_request(krb_frame(1, kAes128Krb, 3, 16, 16)));
  EXPECT_NO_THROW(decode_request(krb_frame(2, kAes256Krb, 1, 28, 28)));
  EXPECT_NO_THROW(decode_request(krb_frame(3, kAes256Krb, 56, 0, 0)));
  for (std::uint32_t usage : {17u, 56u}) EXPECT_NO_THROW(decode_request(krb_frame(3, kAes128Krb, usage, 5, 5)));
  // Unknown operations (4 was the PRF, whose output is never opened).
  for (std::uint8_t operation : {0, 4, 5, 0x84, 0xff})
    expect_rejected(krb_frame(operation, kAes128Krb, 3, 16, 16), decode_req);
  // Usages served for other operations only.
  expect_rejected(krb_frame(1, kAes128Krb, 1, 16, 16), decode_req);
  expect_rejected(krb_frame(2, kAes128Krb, 3, 28, 28), decode_req);
  for (std::uint32_t usage : {1u, 2u, 3u}) expect_rejected(krb_frame(3, kAes128Krb, usage, 5, 5), decode_req);
  // Keys that are not Kerberos keys, and unknown algorithms.
  for (std::uint8_t algorithm : {0, 1, 2, 3, 8, 0xff}) expect_rejected(krb_frame(1, algorithm, 3, 16, 16), decode_req);
  // Usages whose keys the material does not hold; a PRF names no usage.
  for (std::uint32_t usage : {0u, 4u, 18u, 55u, 57u, 0x80000003u, 0xffffffffu})
    for (std::uint8_t operation : {1, 2, 3})
      expect_rejected(krb_frame(operation, kAes256Krb, usage, 28, 28), decode_req);
  // Data lengths an operation cannot take.
  const std::pair<std::uint8_t, std::uint32_t> lengths[] = {{1, 0},  {1, 15}, {1, 4097}, {2, 0},
                                                            {2, 16}, {2, 27}, {2, 4097}, {3, 4097}};
  for (const auto& [operation, length] : lengths)
    expect_rejected(krb_frame(operation, kAes128Krb, operation == 3 ? 17 : 2, length, length), decode_req);
  // Huge claimed lengths fail on the limit without allocating.
  for (std::uint8_t operation : {1, 2, 3})
    EXPECT_LT(expect_rejected(krb_frame(operation, kAes128Krb, operation == 3 ? 17 : 2, 0xffffffffu, 0), decode_req),
              4096u);
  // A claimed length longer or shorter than the data present.
  expect_rejected(krb_frame(1, kAes128Krb, 2, 40, 39), decode_req);
  expect_rejected(krb_frame(1, kAes128Krb, 2, 40, 41), decode_req);
  expect_rejected(krb_frame(3, kAes128Krb, 2, 0, 1), decode_req);

  // The encoder refuses the same requests.
  const KeyId key{"k", 1, KeyAlgorithm::Aes256CtsHmacSha1};
  EXPECT_NO_THROW(encode_request(KrbRequest{make_id(1), key, KrbOperation::Encrypt, 2, Bytes(16)}));
  EXPECT_THROW(encode_request(KrbRequest{make_id(1), key, KrbOperation::Encrypt, 2, Bytes(15)}), FormatError);
  EXPECT_THROW(encode_request(KrbRequest{make_id(1), key, KrbOperation::Encrypt, 2, Bytes(4097)}), FormatError);
  EXPECT_THROW(encode_request(KrbRequest{make_id(1), key, KrbOperation::Decrypt, 2, Bytes(27)}), FormatError);
  EXPECT_THROW(encode_request(KrbRequest{make_id(1), key, KrbOperation::Checksum, 2, Bytes(4097)}), FormatError);
  // A KDC never encrypts a preauth timestamp, decrypts an AS-REP or checksums a ticket.
  EXPECT_THROW(encode_request(KrbRequest{make_id(1), key, KrbOperation::Encrypt, 1, Bytes(16)}), FormatError);
  EXPECT_THROW(encode_request(KrbRequest{make_id(1), key, KrbOperation::Decrypt, 3, Bytes(28)}), FormatError);
  EXPECT_THROW(encode_request(KrbRequest{make_id(1), key, KrbOperation::Checksum, 2, Bytes(1)}), FormatError);
  EXPECT_THROW(encode_request(KrbRequest{make_id(1), key, static_cast<KrbOperation>(4), 0, Bytes(16)}), FormatError);
  EXPECT_THROW(encode_request(KrbRequest{make_id(1), key, KrbOperation::Checksum, 4, Bytes(1)}), FormatError);
  EXPECT_THROW(encode_request(KrbRequest{make_id(1), key, static_cast<KrbOperation>(7), 2, Bytes(16)}), FormatError);
  for (KeyAlgorithm wrong : {KeyAlgorithm::Aes128, KeyAlgorithm::Aes256, KeyAlgorithm::Aes256Gcm})
    EXPECT_THROW(encode_request(KrbRequest{make_id(1), KeyId{"k", 1, wrong}, KrbOperation::Checksum, 17, {}}),
                 FormatError);
  // A Kerberos key serves no Compute or GCM request.
  for (KeyAlgorithm krb : {KeyAlgorithm::Aes128CtsHmacSha1, KeyAlgorithm::Aes256CtsHmacSha1}) {
    ComputeRequest compute = std::get<ComputeRequest>(sample_requests()[0]);
    compute.key.algorithm = krb;
    EXPECT_THROW(encode_request(compute), FormatError);
    Bytes frame = encode_request(sample_requests()[0]);
    const std::size_t algorithm_offset = 18 + 1 + 2 + krbtgt().name.size() + 4;
    ASSERT_EQ(frame[algorithm_offset], static_cast<std::uint8_t>(KeyAlgorithm::Aes256));
    frame[algorithm_offset] = static_cast<std::uint8_t>(krb);
    expect_rejected(frame, decode_req);
    EXPECT_THROW(encode_request(GcmPrefetchRequest{make_id(1), KeyId{"k", 1, krb}, 1, 1}), FormatError);
    EXPECT_THROW(encode_request(GcmTagRequest{make_id(1), KeyId{"k", 1, krb}, {}, {}, {}}), FormatError);
  }
}

TEST(ClientRequest, RejectsBadNames) {
  for (const std::string& bad : {std::string(), std::string(256, 'a'), std::string("a b"), std::string("a\x01"),
                                std::string("\x7f"), std::string("\xff"), std::string(" ")}) {
    Bytes frame = request_header(4);
    ByteWriter writer(frame);
    write_raw_key(writer, bad, 1, 1);
    expect_rejected(frame, decode_req);
    EXPECT_THROW(encode_request(DeleteKeyRequest{make_id(1), KeyId{bad, 1, KeyAlgorithm::Aes128}}), FormatError);
    if (!bad.empty()) {
      Bytes list = request_header(3);
      ByteWriter list_writer(list);
      list_writer.short_string(bad);
      expect_rejected(list, decode_req);
      EXPECT_THROW(encode_request(ListKeysRequest{make_id(1), bad}), FormatError);
    }
  }
  // A 65535-byte name length with nothing behind it.
  Bytes frame = request_header(4);
  ByteWriter writer(frame);
  writer.u16(0xffff);
  EXPECT_LT(expect_rejected(frame, decode_req), 4096u);
  // 255 bytes is the limit.
  const DeleteKeyRequest longest{make_id(1), KeyId{std::string(255, 'n'), 1, KeyAlgorithm::Aes128}};
  expect_same(Request(longest), decode_request(encode_request(longest)));
}

// -------------------------------------------------------------------------- replies

TEST(RequestDigest, DependsOnEveryByte) {
  Bytes frame(300);
  for (std::size_t i = 0; i < frame.size(); ++i) frame[i] = static_cast<std::uint8_t>(i * 13);
  const RequestDigest digest = request_digest(frame);
  EXPECT_EQ(request_digest(frame), digest);
  for (std::size_t i = 0; i < frame.size(); i += 37) {
    Bytes other = frame;
    other[i] ^= 1;
    EXPECT_NE(request_digest(other), digest) << i;
  }
  EXPECT_NE(request_digest(Bytes(frame.begin(), frame.end() - 1)), digest);
}

}  // namespace
}  // namespace mpc::wire
