// Shared by the wire format tests: sample messages of every type, builders of raw frames, and
// checks that two messages are the same. The allocation tracker (wire_allocations.cpp) records
// the largest allocation while g_tracking is set.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "common/bytes.hpp"
#include "common/error.hpp"
#include "wire/client_messages.hpp"
#include "wire/codec.hpp"
#include "wire/key_id.hpp"
#include "wire/peer_messages.hpp"

extern std::atomic<bool> g_tracking;
extern std::atomic<std::size_t> g_largest;

namespace mpc::wire::test {

using Bytes = std::vector<std::uint8_t>;

// Runs `decode` on `frame`, expects FormatError, and returns the largest allocation made.
template <typename Decode>
inline std::size_t expect_rejected(const Bytes& frame, Decode decode) {
  g_largest = 0;
  g_tracking = true;
  bool threw = false;
  try {
    decode(std::span<const std::uint8_t>(frame));
  } catch (const FormatError& error) {
    threw = true;
    EXPECT_EQ(error.component(), Component::Wire);
  }
  g_tracking = false;
  EXPECT_TRUE(threw) << "accepted a frame of " << frame.size() << " bytes";
  return g_largest;
}

// The first status value no version of the protocol defines.
constexpr std::uint8_t kFirstUnknownStatus = static_cast<std::uint8_t>(kLastStatus) + 1;

inline RequestId make_id(std::uint8_t seed) {
  RequestId id{};
  for (std::size_t i = 0; i < id.size(); ++i) id[i] = static_cast<std::uint8_t>(seed + i);
  return id;
}

inline KeyId krbtgt(KeyAlgorithm algorithm = KeyAlgorithm::Aes256) { return KeyId{"krbtgt/EXAMPLE.COM", 7, algorithm}; }

inline Bytes pattern(std::size_t size, std::uint8_t seed) {
  Bytes out(size);
  for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<std::uint8_t>(seed * 31 + i * 7);
  return out;
}

inline GcmNonce gcm_nonce(std::uint8_t seed) {
  GcmNonce nonce{};
  for (std::size_t i = 0; i < nonce.size(); ++i) nonce[i] = static_cast<std::uint8_t>(seed ^ (i * 29));
  return nonce;
}

inline GcmTagBytes gcm_tag(std::uint8_t seed) {
  GcmTagBytes tag{};
  for (std::size_t i = 0; i < tag.size(); ++i) tag[i] = static_cast<std::uint8_t>(seed + i * 13);
  return tag;
}

inline std::vector<Request> sample_requests() {
  std::vector<Request> out;
  ComputeRequest ctr;
  ctr.id = make_id(1);
  ctr.key = krbtgt();
  ctr.operation = Operation::CtrKeystream;
  ctr.blocks = 5;
  for (std::size_t i = 0; i < 16; ++i) ctr.counter[i] = static_cast<std::uint8_t>(0xf0 + i);
  out.push_back(ctr);
  ComputeRequest ecb;
  ecb.id = make_id(2);
  ecb.key = krbtgt(KeyAlgorithm::Aes128);
  ecb.operation = Operation::EcbEncrypt;
  ecb.blocks = 3;
  ecb.input = pattern(3 * 16, 2);
  out.push_back(ecb);
  ecb.id = make_id(3);
  ecb.operation = Operation::EcbDecrypt;
  ecb.blocks = 1;
  ecb.input = pattern(16, 3);
  out.push_back(ecb);
  // With this server's output pad (a two-server cluster).
  ctr.id = make_id(31);
  ctr.output_pad.emplace();
  for (std::size_t i = 0; i < kOutputPadSeedBytes; ++i) (*ctr.output_pad)[i] = static_cast<std::uint8_t>(0x30 + i);
  out.push_back(ctr);
  ecb.id = make_id(32);
  ecb.output_pad = ctr.output_pad;
  out.push_back(ecb);
  for (KeyAlgorithm algorithm : {KeyAlgorithm::Aes128, KeyAlgorithm::Aes256, KeyAlgorithm::Aes256Gcm}) {
    ImportKeyRequest import;
    import.id = make_id(4);
    import.key = KeyId{"alice@EXAMPLE.COM", 0xffffffffu, algorithm};
    import.sealed_share = pattern(2 * material_bytes(algorithm) + kSealedShareOverhead, 4);
    out.push_back(import);
  }
  out.push_back(ListKeysRequest{make_id(5), ""});
  out.push_back(ListKeysRequest{make_id(6), "krbtgt/"});
  out.push_back(DeleteKeyRequest{make_id(7), krbtgt()});
  out.push_back(StatusRequest{make_id(8)});
  GenerateKeyRequest generate{make_id(33), krbtgt(KeyAlgorithm::Aes256Gcm), {}};
  for (std::size_t i = 0; i < generate.seed.size(); ++i) generate.seed[i] = static_cast<std::uint8_t>(0xa0 + i);
  out.push_back(generate);
  out.push_back(ExclusionRequest{make_id(35), ExclusionAction::Exclude, 2, "operator: host under investigation"});
  out.push_back(ExclusionRequest{make_id(36), ExclusionAction::Readmit, 0, ""});
  out.push_back(GcmPrefetchRequest{make_id(9), krbtgt(KeyAlgorithm::Aes256Gcm), 3, 2});
  out.push_back(GcmPrefetchRequest{make_id(10), krbtgt(KeyAlgorithm::Aes256Gcm), kMaxGcmPrefetchCount,
                                   kMaxRequestBlocks / kMaxGcmPrefetchCount});
  out.push_back(GcmPrefetchRequest{make_id(10), krbtgt(KeyAlgorithm::Aes256Gcm),
                                   kMaxRequestBlocks / kMaxGcmBlocksPerNonce, kMaxGcmBlocksPerNonce});
  out.push_back(GcmPrefetchRequest{make_id(11), krbtgt(KeyAlgorithm::Aes256Gcm), 1, 0});
  out.push_back(GcmPrefetchRequest{make_id(29), krbtgt(KeyAlgorithm::Aes256Gcm), 4, 2, true});  // local masks
  // Under a client's output pad (a two-server cluster of security = "active").
  out.push_back(GcmPrefetchRequest{make_id(34), krbtgt(KeyAlgorithm::Aes256Gcm), 5, 2, false, ctr.output_pad});
  out.push_back(GcmTagRequest{make_id(12), krbtgt(KeyAlgorithm::Aes256Gcm), gcm_nonce(12), pattern(20, 12),
                              pattern(37, 13)});
  out.push_back(GcmTagRequest{make_id(13), krbtgt(KeyAlgorithm::Aes256Gcm), gcm_nonce(13), {}, {}});
  out.push_back(GcmTagRequest{make_id(28), krbtgt(KeyAlgorithm::Aes256Gcm), gcm_nonce(28), pattern(30, 28), {},
                              GcmChainedTag{gcm_nonce(29), pattern(5, 29)}, std::nullopt});
  out.push_back(GcmTagRequest{make_id(30), krbtgt(KeyAlgorithm::Aes256Gcm), gcm_nonce(30), pattern(5, 30),
                              pattern(64, 31), std::nullopt, GcmTagCheck{gcm_nonce(31), pattern(33, 32), gcm_tag(31)}});
  out.push_back(GcmTagRequest{make_id(32), krbtgt(KeyAlgorithm::Aes256Gcm), gcm_nonce(32), {}, {},
                              GcmChainedTag{gcm_nonce(33), {}}, GcmTagCheck{gcm_nonce(34), {}, gcm_tag(34)}});
  out.push_back(GcmOpenRequest{make_id(14), krbtgt(KeyAlgorithm::Aes256Gcm), gcm_nonce(14), pattern(5, 14),
                               pattern(48, 15), gcm_tag(14)});
  out.push_back(GcmOpenRequest{make_id(15), krbtgt(KeyAlgorithm::Aes256Gcm), gcm_nonce(15), {}, {}, gcm_tag(15)});
  out.push_back(GcmOpenRequest{make_id(35), krbtgt(KeyAlgorithm::Aes256Gcm), gcm_nonce(35), pattern(5, 35),
                               pattern(32, 36), gcm_tag(35), ctr.output_pad});
  out.push_back(GcmReopenRequest{{make_id(26), krbtgt(KeyAlgorithm::Aes256Gcm), gcm_nonce(26), pattern(70, 26),
                                  Bytes(32), gcm_tag(26)}});
  out.push_back(GcmReopenRequest{{make_id(27), krbtgt(KeyAlgorithm::Aes256Gcm), gcm_nonce(27), pattern(9, 27), {},
                                  gcm_tag(27)}});
  // The largest input the hash key powers cover: 1023 blocks of AAD and text, one length block.
  out.push_back(GcmOpenRequest{make_id(16), krbtgt(KeyAlgorithm::Aes256Gcm), gcm_nonce(16), pattern(16 * 500, 16),
                               pattern(16 * 522 + 1, 17), gcm_tag(16)});
  for (KeyAlgorithm algorithm : {KeyAlgorithm::Aes128CtsHmacSha1, KeyAlgorithm::Aes256CtsHmacSha1}) {
    ImportKeyRequest import;
    import.id = make_id(17);
    import.key = KeyId{"alice@EXAMPLE.COM", 3, algorithm};
    import.sealed_share = pattern(material_bytes(algorithm) + kSealedShareOverhead, 5);
    out.push_back(import);
    const KeyId key{"alice@EXAMPLE.COM", 3, algorithm};
    // The shortest and longest data of each operation.
    out.push_back(KrbRequest{make_id(18), key, KrbOperation::Encrypt, 3, pattern(16, 18)});
    out.push_back(KrbRequest{make_id(19), key, KrbOperation::Encrypt, 2, pattern(kKrbMaxDataBytes, 19)});
    out.push_back(KrbRequest{make_id(20), key, KrbOperation::Decrypt, 1, pattern(28, 20)});
    out.push_back(KrbRequest{make_id(21), key, KrbOperation::Decrypt, 2, pattern(kKrbMaxDataBytes, 21)});
    out.push_back(KrbRequest{make_id(22), key, KrbOperation::Checksum, 17, {}});
    out.push_back(KrbRequest{make_id(23), key, KrbOperation::Checksum, 56, pattern(kKrbMaxDataBytes, 23)});
    // Under KRB-FX-CF2 with an aes256 armor key: the combined key's lengths apply.
    out.push_back(KrbRequest{make_id(24), key, KrbOperation::Decrypt, 54, pattern(16 + 12, 24),
                             KrbCombine{KeyAlgorithm::Aes256CtsHmacSha1, "challengelongterm", pattern(32, 25)}});
    out.push_back(KrbRequest{make_id(25), key, KrbOperation::Checksum, 56, pattern(7, 26),
                             KrbCombine{KeyAlgorithm::Aes128CtsHmacSha256, "replykey", pattern(16, 27)}});
  }
  return out;
}

// A reopen carries what an open does.
inline void expect_same_open(const GcmOpenRequest& x, const GcmOpenRequest& y) {
  EXPECT_EQ(x.key, y.key);
  EXPECT_EQ(x.nonce, y.nonce);
  EXPECT_EQ(x.aad, y.aad);
  EXPECT_EQ(x.text, y.text);
  EXPECT_EQ(x.tag, y.tag);
  EXPECT_EQ(x.output_pad, y.output_pad);
}

inline void expect_same(const Request& a, const Request& b) {
  ASSERT_EQ(a.index(), b.index());
  EXPECT_EQ(request_id(a), request_id(b));
  if (auto* x = std::get_if<ComputeRequest>(&a)) {
    const auto& y = std::get<ComputeRequest>(b);
    EXPECT_EQ(x->key, y.key);
    EXPECT_EQ(x->operation, y.operation);
    EXPECT_EQ(x->blocks, y.blocks);
    EXPECT_EQ(x->counter, y.counter);
    EXPECT_EQ(x->input, y.input);
    EXPECT_EQ(x->output_pad, y.output_pad);
  } else if (auto* x = std::get_if<ImportKeyRequest>(&a)) {
    const auto& y = std::get<ImportKeyRequest>(b);
    EXPECT_EQ(x->key, y.key);
    EXPECT_EQ(x->sealed_share, y.sealed_share);
  } else if (auto* x = std::get_if<ListKeysRequest>(&a)) {
    EXPECT_EQ(x->name_prefix, std::get<ListKeysRequest>(b).name_prefix);
  } else if (auto* x = std::get_if<DeleteKeyRequest>(&a)) {
    EXPECT_EQ(x->key, std::get<DeleteKeyRequest>(b).key);
  } else if (auto* x = std::get_if<GcmPrefetchRequest>(&a)) {
    const auto& y = std::get<GcmPrefetchRequest>(b);
    EXPECT_EQ(x->key, y.key);
    EXPECT_EQ(x->count, y.count);
    EXPECT_EQ(x->blocks_per_nonce, y.blocks_per_nonce);
    EXPECT_EQ(x->local_masks, y.local_masks);
    EXPECT_EQ(x->output_pad, y.output_pad);
  } else if (auto* x = std::get_if<GcmTagRequest>(&a)) {
    const auto& y = std::get<GcmTagRequest>(b);
    EXPECT_EQ(x->key, y.key);
    EXPECT_EQ(x->nonce, y.nonce);
    EXPECT_EQ(x->aad, y.aad);
    EXPECT_EQ(x->text, y.text);
    ASSERT_EQ(x->chained.has_value(), y.chained.has_value());
    if (x->chained) {
      EXPECT_EQ(x->chained->nonce, y.chained->nonce);
      EXPECT_EQ(x->chained->prefix, y.chained->prefix);
    }
    ASSERT_EQ(x->check.has_value(), y.check.has_value());
    if (x->check) {
      EXPECT_EQ(x->check->nonce, y.check->nonce);
      EXPECT_EQ(x->check->aad, y.check->aad);
      EXPECT_EQ(x->check->tag, y.check->tag);
    }
  } else if (auto* x = std::get_if<GcmOpenRequest>(&a)) {
    expect_same_open(*x, std::get<GcmOpenRequest>(b));
  } else if (auto* x = std::get_if<GcmReopenRequest>(&a)) {
    expect_same_open(*x, std::get<GcmReopenRequest>(b));
  } else if (auto* x = std::get_if<ExclusionRequest>(&a)) {
    const auto& y = std::get<ExclusionRequest>(b);
    EXPECT_EQ(x->action, y.action);
    EXPECT_EQ(x->party, y.party);
    EXPECT_EQ(x->reason, y.reason);
  } else if (auto* x = std::get_if<GenerateKeyRequest>(&a)) {
    const auto& y = std::get<GenerateKeyRequest>(b);
    EXPECT_EQ(x->key, y.key);
    EXPECT_EQ(x->seed, y.seed);
  } else if (auto* x = std::get_if<KrbRequest>(&a)) {
    const auto& y = std::get<KrbRequest>(b);
    EXPECT_EQ(x->key, y.key);
    EXPECT_EQ(x->operation, y.operation);
    EXPECT_EQ(x->usage, y.usage);
    EXPECT_EQ(x->data, y.data);
    EXPECT_EQ(x->combine, y.combine);
    EXPECT_EQ(x->record_mask, y.record_mask);
  }
}

inline MessageType type_of(const Request& request) {
  static constexpr MessageType kTypes[] = {MessageType::Compute,     MessageType::ImportKey, MessageType::ListKeys,
                                           MessageType::DeleteKey,   MessageType::Status,    MessageType::GcmPrefetch,
                                           MessageType::GcmTag,      MessageType::GcmOpen,   MessageType::Krb,
                                           MessageType::GcmReopen, MessageType::GenerateKey, MessageType::Exclusion};
  static_assert(std::size(kTypes) == std::variant_size_v<Request>);
  if (const auto* tag = std::get_if<GcmTagRequest>(&request); tag && (tag->chained || tag->check))
    return MessageType::GcmTagParts;
  if (const auto* prefetch = std::get_if<GcmPrefetchRequest>(&request); prefetch && prefetch->local_masks)
    return MessageType::GcmPrefetchLocal;
  return kTypes[request.index()];
}

// A valid reply per request type, plus error replies.
inline std::vector<std::pair<MessageType, Reply>> sample_replies() {
  std::vector<std::pair<MessageType, Reply>> out;
  ComputeResult result;
  result.blocks = 2;
  result.x = pattern(32, 9);
  result.a = pattern(32, 10);
  out.push_back({MessageType::Compute, Reply{make_id(1), Status::Ok, "", result}});
  out.push_back({MessageType::ImportKey, Reply{make_id(2), Status::Ok, "", std::monostate{}}});
  KeyList list;
  list.keys.push_back({krbtgt(), 1700000000});
  list.keys.push_back({KeyId{"x", 0, KeyAlgorithm::Aes128}, 0});
  out.push_back({MessageType::ListKeys, Reply{make_id(3), Status::Ok, "", list}});
  out.push_back({MessageType::ListKeys, Reply{make_id(4), Status::Ok, "", KeyList{}}});
  out.push_back({MessageType::DeleteKey, Reply{make_id(5), Status::Ok, "", std::monostate{}}});
  out.push_back({MessageType::GenerateKey, Reply{make_id(26), Status::Ok, "", std::monostate{}}});
  ServerStatus status;
  status.party = 2;
  status.epoch = 0x0102030405060708ull;
  status.batches = 99;
  status.jobs = 1234;
  status.stored_keys = 17;
  status.payload_bytes_sent = 0x1122334455667788ull;
  status.layer_messages_sent = 60;
  status.and_gates_evaluated = 5120ull * 65536;
  status.request_mismatches = 3;
  out.push_back({MessageType::Status, Reply{make_id(6), Status::Ok, "", status}});
  status.mode = ClusterMode::TwoParty;
  status.missing_party = 0;
  status.mode_since_unix_ms = 1795000000123ull;
  status.mode_switches = 7;
  status.verification_failures = 5;
  out.push_back({MessageType::Status, Reply{make_id(9), Status::Ok, "", status}});
  status.excluded_party = 0;
  status.excluded_since_unix_ms = 1795000000456ull;
  status.exclusion_reason = "operator: host under investigation";
  status.distrusts = 0b100;
  status.three_party_suspended = true;
  status.failed_pairs = 0b101;
  status.dispute_reason = "auth2 check with server 3 in job 17";
  status.disputes = 2;
  status.exclusions = 2;
  out.push_back({MessageType::Status, Reply{make_id(37), Status::Ok, "", status}});
  out.push_back({MessageType::Exclusion, Reply{make_id(38), Status::Ok, "", std::monostate{}}});
  out.push_back({MessageType::Compute, Reply{make_id(7), Status::UnknownKey, "no such key", std::monostate{}}});
  out.push_back({MessageType::Status, Reply{make_id(8), Status::NotReady, std::string(1024, 'e'), std::monostate{}}});
  out.push_back({MessageType::ImportKey, Reply{make_id(9), Status::KeyExists, "", std::monostate{}}});
  out.push_back({MessageType::GcmPrefetch,
                 Reply{make_id(10), Status::Ok, "", GcmPrefetchResult{3, 2, pattern(36, 1), pattern(96, 2), pattern(96, 3)}}});
  out.push_back({MessageType::GcmPrefetch, Reply{make_id(11), Status::Ok, "", GcmPrefetchResult{2, 0, pattern(24, 4), {}, {}}}});
  // Two servers' XOR shares, with keystream and without: only the form byte tells the latter.
  out.push_back({MessageType::GcmPrefetch,
                 Reply{make_id(24), Status::Ok, "", GcmPrefetchResult{1, 1, pattern(12, 17), pattern(16, 18), {}, false}}});
  out.push_back({MessageType::GcmPrefetch,
                 Reply{make_id(25), Status::Ok, "", GcmPrefetchResult{2, 0, pattern(24, 19), {}, {}, false}}});
  // Keystream padded for the client: in parts of 10 blocks (five nonces of two), and none.
  out.push_back({MessageType::GcmPrefetch,
                 Reply{make_id(26), Status::Ok, "",
                       GcmPrefetchResult{6, 2, pattern(72, 20), pattern(192, 21), {}, false,
                                         PaddedReports{10, pattern(2 * kPaddedPartReportBytes, 22)}}}});
  out.push_back({MessageType::GcmPrefetch, Reply{make_id(27), Status::Ok, "",
                                                 GcmPrefetchResult{3, 0, pattern(36, 23), {}, {}, false, PaddedReports{}}}});
  out.push_back({MessageType::GcmTag, Reply{make_id(12), Status::Ok, "", GcmTagResult{gcm_tag(5), gcm_tag(6)}}});
  out.push_back({MessageType::GcmTagParts, Reply{make_id(13), Status::Ok, "",
                                            GcmTagResult{gcm_tag(7), gcm_tag(8), true, gcm_tag(9), std::nullopt}}});
  out.push_back({MessageType::GcmTagParts, Reply{make_id(14), Status::Ok, "",
                                            GcmTagResult{gcm_tag(10), gcm_tag(11), true, gcm_tag(12), gcm_tag(13)}}});
  out.push_back({MessageType::GcmOpen,
                 Reply{make_id(13), Status::Ok, "", GcmOpenResult{3, pattern(48, 7), pattern(48, 8), 1, 0}}});
  out.push_back({MessageType::GcmOpen, Reply{make_id(14), Status::Ok, "", GcmOpenResult{0, {}, {}, 0, 1}}});
  // Padded for the client: the verdict byte is a pad's byte, any value.
  PaddedReport open_report{};
  for (std::size_t i = 0; i < open_report.size(); ++i) open_report[i] = static_cast<std::uint8_t>(0x60 + i);
  out.push_back({MessageType::GcmOpen,
                 Reply{make_id(28), Status::Ok, "", GcmOpenResult{2, pattern(32, 24), {}, 0xa5, 0, false, open_report}}});
  out.push_back({MessageType::GcmOpen,
                 Reply{make_id(15), Status::Ok, "", GcmOpenResult{1023, pattern(16368, 9), pattern(16368, 10), 1, 1}}});
  out.push_back({MessageType::GcmTag, Reply{make_id(16), Status::UnknownNonce, "nonce not held", std::monostate{}}});
  out.push_back({MessageType::GcmReopen,
                 Reply{make_id(18), Status::Ok, "", GcmReopenResult{2, pattern(32, 11), pattern(32, 12), gcm_tag(7)}}});
  out.push_back({MessageType::GcmReopen, Reply{make_id(19), Status::Ok, "", GcmReopenResult{0, {}, {}, gcm_tag(8)}}});
  // Two servers' XOR shares of a reopen with local masks, with text and without.
  out.push_back({MessageType::GcmReopen,
                 Reply{make_id(21), Status::Ok, "", GcmReopenResult{2, pattern(32, 13), {}, gcm_tag(9), false}}});
  out.push_back({MessageType::GcmReopen, Reply{make_id(22), Status::Ok, "", GcmReopenResult{0, {}, {}, gcm_tag(10), false}}});
  out.push_back({MessageType::GcmPrefetchLocal,
                 Reply{make_id(23), Status::Ok, "",
                       GcmPrefetchResult{1, 1, pattern(12, 14), pattern(16, 15), pattern(16, 16)}}});
  out.push_back({MessageType::GcmReopen, Reply{make_id(20), Status::UnknownNonce, "not held", std::monostate{}}});
  // Kerberos results: a checksum (the shortest), a decryption with its verdict byte, the
  // encryption of the longest data.
  out.push_back({MessageType::Krb, Reply{make_id(17), Status::Ok, "", KrbResult{pattern(12, 1), pattern(12, 2)}}});
  out.push_back({MessageType::Krb, Reply{make_id(18), Status::Ok, "", KrbResult{pattern(37, 3), pattern(37, 4)}}});
  out.push_back({MessageType::Krb, Reply{make_id(19), Status::Ok, "",
                                         KrbResult{pattern(kKrbMaxDataBytes + 12, 5), pattern(kKrbMaxDataBytes + 12, 6)}}});
  out.push_back({MessageType::Krb, Reply{make_id(20), Status::BadRequest, "usage 4 is not held", std::monostate{}}});
  // Padded for the client: 3 blocks in parts of 2, so two reports.
  ComputeResult padded;
  padded.blocks = 3;
  padded.x = pattern(48, 11);
  padded.padded = PaddedReports{2, pattern(2 * kPaddedPartReportBytes, 12)};
  out.push_back({MessageType::Compute, Reply{make_id(27), Status::Ok, "", padded}});
  return out;
}

inline void expect_same(const Reply& a, const Reply& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.error, b.error);
  ASSERT_EQ(a.body.index(), b.body.index());
  if (auto* x = std::get_if<ComputeResult>(&a.body)) {
    const auto& y = std::get<ComputeResult>(b.body);
    EXPECT_EQ(x->blocks, y.blocks);
    EXPECT_EQ(x->x, y.x);
    EXPECT_EQ(x->a, y.a);
    EXPECT_EQ(x->padded, y.padded);
  } else if (auto* x = std::get_if<KeyList>(&a.body)) {
    const auto& y = std::get<KeyList>(b.body);
    ASSERT_EQ(x->keys.size(), y.keys.size());
    for (std::size_t i = 0; i < x->keys.size(); ++i) {
      EXPECT_EQ(x->keys[i].key, y.keys[i].key);
      EXPECT_EQ(x->keys[i].created_unix, y.keys[i].created_unix);
    }
  } else if (auto* x = std::get_if<ServerStatus>(&a.body)) {
    const auto& y = std::get<ServerStatus>(b.body);
    EXPECT_EQ(x->party, y.party);
    EXPECT_EQ(x->epoch, y.epoch);
    EXPECT_EQ(x->batches, y.batches);
    EXPECT_EQ(x->jobs, y.jobs);
    EXPECT_EQ(x->stored_keys, y.stored_keys);
    EXPECT_EQ(x->payload_bytes_sent, y.payload_bytes_sent);
    EXPECT_EQ(x->layer_messages_sent, y.layer_messages_sent);
    EXPECT_EQ(x->and_gates_evaluated, y.and_gates_evaluated);
    EXPECT_EQ(x->request_mismatches, y.request_mismatches);
    EXPECT_EQ(x->mode, y.mode);
    EXPECT_EQ(x->missing_party, y.missing_party);
    EXPECT_EQ(x->mode_since_unix_ms, y.mode_since_unix_ms);
    EXPECT_EQ(x->mode_switches, y.mode_switches);
    EXPECT_EQ(x->verification_failures, y.verification_failures);
    EXPECT_EQ(x->excluded_party, y.excluded_party);
    EXPECT_EQ(x->excluded_since_unix_ms, y.excluded_since_unix_ms);
    EXPECT_EQ(x->exclusion_reason, y.exclusion_reason);
    EXPECT_EQ(x->distrusts, y.distrusts);
    EXPECT_EQ(x->three_party_suspended, y.three_party_suspended);
    EXPECT_EQ(x->failed_pairs, y.failed_pairs);
    EXPECT_EQ(x->dispute_reason, y.dispute_reason);
    EXPECT_EQ(x->disputes, y.disputes);
    EXPECT_EQ(x->exclusions, y.exclusions);
  } else if (auto* x = std::get_if<GcmPrefetchResult>(&a.body)) {
    const auto& y = std::get<GcmPrefetchResult>(b.body);
    EXPECT_EQ(x->count, y.count);
    EXPECT_EQ(x->blocks_per_nonce, y.blocks_per_nonce);
    EXPECT_EQ(x->nonces, y.nonces);
    EXPECT_EQ(x->x, y.x);
    EXPECT_EQ(x->a, y.a);
    EXPECT_EQ(x->replicated, y.replicated);
    EXPECT_EQ(x->padded, y.padded);
  } else if (auto* x = std::get_if<GcmTagResult>(&a.body)) {
    const auto& y = std::get<GcmTagResult>(b.body);
    EXPECT_EQ(x->x, y.x);
    EXPECT_EQ(x->a, y.a);
    EXPECT_EQ(x->chained, y.chained);
    EXPECT_EQ(x->check, y.check);
  } else if (auto* x = std::get_if<GcmOpenResult>(&a.body)) {
    const auto& y = std::get<GcmOpenResult>(b.body);
    EXPECT_EQ(x->blocks, y.blocks);
    EXPECT_EQ(x->x, y.x);
    EXPECT_EQ(x->a, y.a);
    EXPECT_EQ(x->verdict_x, y.verdict_x);
    EXPECT_EQ(x->verdict_a, y.verdict_a);
    EXPECT_EQ(x->padded_report, y.padded_report);
  } else if (auto* x = std::get_if<GcmReopenResult>(&a.body)) {
    const auto& y = std::get<GcmReopenResult>(b.body);
    EXPECT_EQ(x->blocks, y.blocks);
    EXPECT_EQ(x->x, y.x);
    EXPECT_EQ(x->a, y.a);
    EXPECT_EQ(x->check, y.check);
    EXPECT_EQ(x->replicated, y.replicated);
  } else if (auto* x = std::get_if<KrbResult>(&a.body)) {
    const auto& y = std::get<KrbResult>(b.body);
    EXPECT_EQ(x->x, y.x);
    EXPECT_EQ(x->a, y.a);
  }
}

inline Bytes request_header(std::uint8_t type, std::uint8_t version = kProtocolVersion) {
  Bytes out;
  ByteWriter writer(out);
  writer.u8(version);
  writer.u8(type);
  writer.bytes(make_id(0));
  return out;
}

inline Bytes reply_header(Status status, std::string_view error = "") {
  Bytes out;
  ByteWriter writer(out);
  writer.u8(kProtocolVersion);
  writer.u8(static_cast<std::uint8_t>(MessageType::Reply));
  writer.bytes(make_id(0));
  writer.u16(static_cast<std::uint16_t>(status));
  writer.short_string(error);
  return out;
}

inline void write_raw_key(ByteWriter& writer, std::string_view name, std::uint32_t version, std::uint8_t algorithm) {
  writer.short_string(name);
  writer.u32(version);
  writer.u8(algorithm);
}

inline auto decode_req = [](std::span<const std::uint8_t> f) { (void)decode_request(f); };
inline auto decode_peer = [](std::span<const std::uint8_t> f) { (void)decode_peer_message(f); };
inline auto decode_reply_as(MessageType type) {
  return [type](std::span<const std::uint8_t> f) { (void)decode_reply(f, type); };
}

// ---------------------------------------------------------------------------- key ids

}  // namespace mpc::wire::test
