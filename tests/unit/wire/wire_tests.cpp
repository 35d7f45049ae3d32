// Wire formats: round trips of every message, then the negative cases every decoder
// must reject (truncation at every length, trailing bytes, bad enums, versions and
// types, oversized counts without large allocations, bad key names).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <set>

#include "common/bytes.hpp"
#include "common/error.hpp"
#include "wire/client_messages.hpp"
#include "wire/codec.hpp"
#include "wire/key_id.hpp"
#include "wire/krb_record_mask.hpp"
#include "wire/peer_messages.hpp"

// ---- allocation tracking: the largest single allocation while `g_tracking` is set ----
namespace {
std::atomic<bool> g_tracking{false};
std::atomic<std::size_t> g_largest{0};
void* tracked_alloc(std::size_t size) {
  if (g_tracking.load(std::memory_order_relaxed)) {
    std::size_t seen = g_largest.load(std::memory_order_relaxed);
    while (size > seen && !g_largest.compare_exchange_weak(seen, size)) {
    }
  }
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
}  // namespace
void* operator new(std::size_t size) { return tracked_alloc(size); }
void* operator new[](std::size_t size) { return tracked_alloc(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace mpc::wire {
namespace {

using Bytes = std::vector<std::uint8_t>;

// Runs `decode` on `frame`, expects FormatError, and returns the largest allocation made.
template <typename Decode>
std::size_t expect_rejected(const Bytes& frame, Decode decode) {
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

RequestId make_id(std::uint8_t seed) {
  RequestId id{};
  for (std::size_t i = 0; i < id.size(); ++i) id[i] = static_cast<std::uint8_t>(seed + i);
  return id;
}

KeyId krbtgt(KeyAlgorithm algorithm = KeyAlgorithm::Aes256) { return KeyId{"krbtgt/EXAMPLE.COM", 7, algorithm}; }

Bytes pattern(std::size_t size, std::uint8_t seed) {
  Bytes out(size);
  for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<std::uint8_t>(seed * 31 + i * 7);
  return out;
}

GcmNonce gcm_nonce(std::uint8_t seed) {
  GcmNonce nonce{};
  for (std::size_t i = 0; i < nonce.size(); ++i) nonce[i] = static_cast<std::uint8_t>(seed ^ (i * 29));
  return nonce;
}

GcmTagBytes gcm_tag(std::uint8_t seed) {
  GcmTagBytes tag{};
  for (std::size_t i = 0; i < tag.size(); ++i) tag[i] = static_cast<std::uint8_t>(seed + i * 13);
  return tag;
}

std::vector<Request> sample_requests() {
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
  out.push_back(GcmPrefetchRequest{make_id(9), krbtgt(KeyAlgorithm::Aes256Gcm), 3, 2});
  out.push_back(GcmPrefetchRequest{make_id(10), krbtgt(KeyAlgorithm::Aes256Gcm), kMaxGcmPrefetchCount,
                                   kMaxRequestBlocks / kMaxGcmPrefetchCount});
  out.push_back(GcmPrefetchRequest{make_id(10), krbtgt(KeyAlgorithm::Aes256Gcm),
                                   kMaxRequestBlocks / kMaxGcmBlocksPerNonce, kMaxGcmBlocksPerNonce});
  out.push_back(GcmPrefetchRequest{make_id(11), krbtgt(KeyAlgorithm::Aes256Gcm), 1, 0});
  out.push_back(GcmPrefetchRequest{make_id(29), krbtgt(KeyAlgorithm::Aes256Gcm), 4, 2, true});  // local masks
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
void expect_same_open(const GcmOpenRequest& x, const GcmOpenRequest& y) {
  EXPECT_EQ(x.key, y.key);
  EXPECT_EQ(x.nonce, y.nonce);
  EXPECT_EQ(x.aad, y.aad);
  EXPECT_EQ(x.text, y.text);
  EXPECT_EQ(x.tag, y.tag);
}

void expect_same(const Request& a, const Request& b) {
  ASSERT_EQ(a.index(), b.index());
  EXPECT_EQ(request_id(a), request_id(b));
  if (auto* x = std::get_if<ComputeRequest>(&a)) {
    const auto& y = std::get<ComputeRequest>(b);
    EXPECT_EQ(x->key, y.key);
    EXPECT_EQ(x->operation, y.operation);
    EXPECT_EQ(x->blocks, y.blocks);
    EXPECT_EQ(x->counter, y.counter);
    EXPECT_EQ(x->input, y.input);
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

MessageType type_of(const Request& request) {
  static constexpr MessageType kTypes[] = {MessageType::Compute,     MessageType::ImportKey, MessageType::ListKeys,
                                           MessageType::DeleteKey,   MessageType::Status,    MessageType::GcmPrefetch,
                                           MessageType::GcmTag,      MessageType::GcmOpen,   MessageType::Krb,
                                           MessageType::GcmReopen, MessageType::GenerateKey};
  static_assert(std::size(kTypes) == std::variant_size_v<Request>);
  if (const auto* tag = std::get_if<GcmTagRequest>(&request); tag && (tag->chained || tag->check))
    return MessageType::GcmTagParts;
  if (const auto* prefetch = std::get_if<GcmPrefetchRequest>(&request); prefetch && prefetch->local_masks)
    return MessageType::GcmPrefetchLocal;
  return kTypes[request.index()];
}

// A valid reply per request type, plus error replies.
std::vector<std::pair<MessageType, Reply>> sample_replies() {
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
  out.push_back({MessageType::GcmTag, Reply{make_id(12), Status::Ok, "", GcmTagResult{gcm_tag(5), gcm_tag(6)}}});
  out.push_back({MessageType::GcmTagParts, Reply{make_id(13), Status::Ok, "",
                                            GcmTagResult{gcm_tag(7), gcm_tag(8), true, gcm_tag(9), std::nullopt}}});
  out.push_back({MessageType::GcmTagParts, Reply{make_id(14), Status::Ok, "",
                                            GcmTagResult{gcm_tag(10), gcm_tag(11), true, gcm_tag(12), gcm_tag(13)}}});
  out.push_back({MessageType::GcmOpen,
                 Reply{make_id(13), Status::Ok, "", GcmOpenResult{3, pattern(48, 7), pattern(48, 8), 1, 0}}});
  out.push_back({MessageType::GcmOpen, Reply{make_id(14), Status::Ok, "", GcmOpenResult{0, {}, {}, 0, 1}}});
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
  return out;
}

void expect_same(const Reply& a, const Reply& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.error, b.error);
  ASSERT_EQ(a.body.index(), b.body.index());
  if (auto* x = std::get_if<ComputeResult>(&a.body)) {
    const auto& y = std::get<ComputeResult>(b.body);
    EXPECT_EQ(x->blocks, y.blocks);
    EXPECT_EQ(x->x, y.x);
    EXPECT_EQ(x->a, y.a);
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
  } else if (auto* x = std::get_if<GcmPrefetchResult>(&a.body)) {
    const auto& y = std::get<GcmPrefetchResult>(b.body);
    EXPECT_EQ(x->count, y.count);
    EXPECT_EQ(x->blocks_per_nonce, y.blocks_per_nonce);
    EXPECT_EQ(x->nonces, y.nonces);
    EXPECT_EQ(x->x, y.x);
    EXPECT_EQ(x->a, y.a);
    EXPECT_EQ(x->replicated, y.replicated);
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

Bytes request_header(std::uint8_t type, std::uint8_t version = kProtocolVersion) {
  Bytes out;
  ByteWriter writer(out);
  writer.u8(version);
  writer.u8(type);
  writer.bytes(make_id(0));
  return out;
}

Bytes reply_header(Status status, std::string_view error = "") {
  Bytes out;
  ByteWriter writer(out);
  writer.u8(kProtocolVersion);
  writer.u8(static_cast<std::uint8_t>(MessageType::Reply));
  writer.bytes(make_id(0));
  writer.u16(static_cast<std::uint16_t>(status));
  writer.short_string(error);
  return out;
}

void write_raw_key(ByteWriter& writer, std::string_view name, std::uint32_t version, std::uint8_t algorithm) {
  writer.short_string(name);
  writer.u32(version);
  writer.u8(algorithm);
}

auto decode_req = [](std::span<const std::uint8_t> f) { (void)decode_request(f); };
auto decode_peer = [](std::span<const std::uint8_t> f) { (void)decode_peer_message(f); };
auto decode_reply_as(MessageType type) {
  return [type](std::span<const std::uint8_t> f) { (void)decode_reply(f, type); };
}

// ---------------------------------------------------------------------------- key ids

TEST(KeyId, NamesAndSizes) {
  EXPECT_STREQ(algorithm_name(KeyAlgorithm::Aes128), "aes128");
  EXPECT_STREQ(algorithm_name(KeyAlgorithm::Aes256), "aes256");
  EXPECT_EQ(parse_algorithm("aes128"), KeyAlgorithm::Aes128);
  EXPECT_EQ(parse_algorithm("aes256"), KeyAlgorithm::Aes256);
  EXPECT_FALSE(parse_algorithm("AES256").has_value());
  EXPECT_FALSE(parse_algorithm("").has_value());
  EXPECT_EQ(material_bytes(KeyAlgorithm::Aes128), 176u);
  EXPECT_EQ(material_bytes(KeyAlgorithm::Aes256), 240u);
  EXPECT_EQ(aes_rounds(KeyAlgorithm::Aes128), 10u);
  EXPECT_EQ(aes_rounds(KeyAlgorithm::Aes256), 14u);
  EXPECT_STREQ(algorithm_name(KeyAlgorithm::Aes256Gcm), "aes256-gcm");
  EXPECT_EQ(parse_algorithm("aes256-gcm"), KeyAlgorithm::Aes256Gcm);
  EXPECT_FALSE(parse_algorithm("aes256gcm").has_value());
  EXPECT_EQ(material_bytes(KeyAlgorithm::Aes256Gcm), 16624u);
  EXPECT_EQ(aes_rounds(KeyAlgorithm::Aes256Gcm), 14u);
  EXPECT_EQ(key_bytes(KeyAlgorithm::Aes128), 16u);
  EXPECT_EQ(key_bytes(KeyAlgorithm::Aes256), 32u);
  EXPECT_EQ(key_bytes(KeyAlgorithm::Aes256Gcm), 32u);
  EXPECT_EQ(kGcmHashPowers, 1024u);
  EXPECT_EQ(describe(KeyId{"k", 1, KeyAlgorithm::Aes256Gcm}), "k kvno 1 aes256-gcm");
  EXPECT_EQ(describe(KeyId{"krbtgt/EXAMPLE.COM", 2, KeyAlgorithm::Aes256}), "krbtgt/EXAMPLE.COM kvno 2 aes256");
}

TEST(KeyId, ValidatesNames) {
  EXPECT_NO_THROW(validate_key_name("krbtgt/EXAMPLE.COM"));
  EXPECT_NO_THROW(validate_key_name("!"));
  EXPECT_NO_THROW(validate_key_name("~"));
  EXPECT_NO_THROW(validate_key_name(std::string(255, 'a')));
  for (const std::string& bad : {std::string(), std::string(256, 'a'), std::string("a b"), std::string("a\tb"),
                                std::string("a\nb"), std::string("a\x01"), std::string("\x7f"), std::string("caf\xc3\xa9"),
                                std::string("a\0b", 3)}) {
    EXPECT_THROW(validate_key_name(bad), FormatError) << bad;
  }
}

// ------------------------------------------------------------------------ requests

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

TEST(PeerMessage, Rfc8009CircuitIds) {
  for (std::uint8_t value = 16; value <= 21; ++value) {
    const auto id = static_cast<CircuitId>(value);
    EXPECT_TRUE(is_valid_circuit_id(value));
    EXPECT_TRUE(is_krb_circuit(id));
    EXPECT_FALSE(is_krb_cf2_circuit(id));
    EXPECT_TRUE(is_krb_sha2_algorithm(krb_algorithm_of(id))) << int{value};
  }
  EXPECT_EQ(krb_operation_of(CircuitId::KrbSha2DecryptAes256), KrbOperation::Decrypt);
  EXPECT_EQ(krb_algorithm_of(CircuitId::KrbSha2ChecksumSha256), KeyAlgorithm::Aes128CtsHmacSha256);
  EXPECT_EQ(krb_algorithm_of(CircuitId::KrbChecksum), KeyAlgorithm::Aes128CtsHmacSha1);
  BatchHeader header;
  header.circuit = CircuitId::KrbSha2DecryptAes256;
  header.data_bytes = 39;  // shorter than confounder and MAC
  BatchSlice slice;
  slice.blocks = 1;
  header.slices.push_back(slice);
  EXPECT_THROW(encode_batch(header), FormatError);
}

TEST(PeerMessage, Cf2BatchesCarryTheirCombineShape) {
  EXPECT_FALSE(is_valid_circuit_id(27));
  EXPECT_TRUE(is_valid_circuit_id(25));  // GcmLocalMasks: no circuit
  EXPECT_TRUE(is_valid_circuit_id(26));  // GcmKeyMaterial
  EXPECT_FALSE(is_krb_circuit(CircuitId::GcmKeyMaterial));
  EXPECT_FALSE(is_krb_circuit(CircuitId::GcmLocalMasks));
  for (std::uint8_t value = 22; value <= 24; ++value) {
    EXPECT_TRUE(is_valid_circuit_id(value));
    EXPECT_TRUE(is_krb_cf2_circuit(static_cast<CircuitId>(value)));
  }
  EXPECT_EQ(krb_cf2_circuit(KrbOperation::Decrypt), CircuitId::KrbCf2Decrypt);
  EXPECT_EQ(krb_operation_of(CircuitId::KrbCf2Checksum), KrbOperation::Checksum);
  EXPECT_THROW((void)krb_algorithm_of(CircuitId::KrbCf2Encrypt), FormatError);

  const KrbCombineShape shape{KeyAlgorithm::Aes128CtsHmacSha1, KeyAlgorithm::Aes256CtsHmacSha384, 54, 17};
  EXPECT_EQ(unpack_krb_combine(pack_krb_combine(shape)), shape);
  BatchHeader header;
  header.circuit = CircuitId::KrbCf2Decrypt;
  header.data_bytes = 16 + 24;  // the combined key's MAC length decides
  header.krb_combine = pack_krb_combine(shape);
  BatchSlice slice;
  slice.blocks = 1;
  header.slices.push_back(slice);
  const auto decoded = std::get<BatchHeader>(decode_peer_message(encode_batch(header)));
  EXPECT_EQ(decoded.krb_combine, header.krb_combine);
  EXPECT_EQ(decoded.data_bytes, 40u);
  header.data_bytes = 39;
  EXPECT_THROW(encode_batch(header), FormatError);
  header.data_bytes = 40;
  header.krb_combine = 0;  // no shape
  EXPECT_THROW(encode_batch(header), FormatError);
  header.krb_combine = pack_krb_combine(shape) & 0xffffff00u;  // stored algorithm 0
  EXPECT_THROW(encode_batch(header), FormatError);
  // Only the KrbCf2 ids carry a shape.
  header.circuit = CircuitId::KrbSha2DecryptAes256;
  header.krb_combine = pack_krb_combine(shape);
  EXPECT_THROW(encode_batch(header), FormatError);
  EXPECT_THROW(pack_krb_combine({KeyAlgorithm::Aes256, KeyAlgorithm::Aes256CtsHmacSha1, 3, 8}), FormatError);
  EXPECT_THROW(pack_krb_combine({KeyAlgorithm::Aes256CtsHmacSha1, KeyAlgorithm::Aes256CtsHmacSha1, 3, 0}), FormatError);
  EXPECT_THROW(pack_krb_combine({KeyAlgorithm::Aes256CtsHmacSha1, KeyAlgorithm::Aes256CtsHmacSha1, 256, 8}), FormatError);
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
    if (prefetch && !prefetch->replicated && prefetch->x.empty()) prefetch_forms.insert(frame.size() - 1);
    if (type == MessageType::GcmTag && std::holds_alternative<GcmTagResult>(reply.body)) two_server_length -= kGcmTagBytes;
    if (const auto* krb = std::get_if<KrbResult>(&reply.body)) two_server_length -= krb->a.size();
    if (const auto* open = std::get_if<GcmOpenResult>(&reply.body)) two_server_length -= open->a.size() + 1;
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
  // Shares of unequal or wrong length cannot be encoded.
  EXPECT_THROW(encode_reply(Reply{make_id(1), Status::Ok, "", ComputeResult{2, Bytes(32), Bytes(16)}}), FormatError);
  EXPECT_THROW(encode_reply(Reply{make_id(1), Status::Ok, "", ComputeResult{0, {}, {}}}), FormatError);
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

BatchHeader sample_batch() {
  BatchHeader header;
  header.epoch = 0x1122334455667788ull;
  header.sequence = 42;
  header.circuit = CircuitId::Aes256DecryptDepth4;
  for (std::uint8_t i = 0; i < 3; ++i) {
    BatchSlice slice;
    for (std::size_t j = 0; j < 32; ++j) slice.client[j] = static_cast<std::uint8_t>(i * 50 + j);
    slice.request = make_id(static_cast<std::uint8_t>(i * 20));
    for (std::size_t j = 0; j < 32; ++j) slice.digest[j] = static_cast<std::uint8_t>(0xd0 ^ (i * 7 + j));
    slice.first_block = i * 1000u;
    slice.blocks = i + 1u;
    if (i == 2) {  // a GCM prefetch slice: 3 nonces of one block each
      slice.first_nonce = 0xfffffff0u;
      slice.nonces = 3;
    }
    header.slices.push_back(slice);
  }
  return header;
}

Bytes peer_header(std::uint8_t type, std::uint8_t version = kPeerProtocolVersion) {
  Bytes out;
  ByteWriter writer(out);
  writer.u8(version);
  writer.u8(type);
  writer.u64(5);
  writer.u32(6);
  return out;
}

TEST(PeerMessage, BatchRoundTrip) {
  const BatchHeader header = sample_batch();
  const Bytes frame = encode_batch(header);
  EXPECT_EQ(frame.size(), 14u + 5u + 3u * 96u);
  const auto decoded = std::get<BatchHeader>(decode_peer_message(frame));
  EXPECT_EQ(decoded.epoch, header.epoch);
  EXPECT_EQ(decoded.sequence, header.sequence);
  EXPECT_EQ(decoded.circuit, header.circuit);
  ASSERT_EQ(decoded.slices.size(), header.slices.size());
  for (std::size_t i = 0; i < header.slices.size(); ++i) {
    EXPECT_EQ(decoded.slices[i].client, header.slices[i].client);
    EXPECT_EQ(decoded.slices[i].request, header.slices[i].request);
    EXPECT_EQ(decoded.slices[i].digest, header.slices[i].digest);
    EXPECT_EQ(decoded.slices[i].first_block, header.slices[i].first_block);
    EXPECT_EQ(decoded.slices[i].blocks, header.slices[i].blocks);
    EXPECT_EQ(decoded.slices[i].first_nonce, header.slices[i].first_nonce);
    EXPECT_EQ(decoded.slices[i].nonces, header.slices[i].nonces);
  }
  EXPECT_EQ(encode_batch(decoded), frame);
}

BatchHeader krb_batch(CircuitId circuit, std::uint32_t data_bytes) {
  BatchHeader header;
  header.epoch = 0x0102030405060708ull;
  header.sequence = 9;
  header.circuit = circuit;
  header.data_bytes = data_bytes;
  for (std::uint8_t i = 0; i < 2; ++i) {
    BatchSlice slice;
    slice.client.fill(static_cast<std::uint8_t>(0xc0 + i));
    slice.request = make_id(static_cast<std::uint8_t>(0x40 + i));
    slice.blocks = 1;
    header.slices.push_back(slice);
  }
  return header;
}

TEST(PeerMessage, KrbBatchCarriesTheDataLength) {
  EXPECT_EQ(krb_operation_of(CircuitId::KrbEncryptAes128), KrbOperation::Encrypt);
  EXPECT_EQ(krb_operation_of(CircuitId::KrbEncryptAes256), KrbOperation::Encrypt);
  EXPECT_EQ(krb_operation_of(CircuitId::KrbDecryptAes128), KrbOperation::Decrypt);
  EXPECT_EQ(krb_operation_of(CircuitId::KrbDecryptAes256), KrbOperation::Decrypt);
  EXPECT_EQ(krb_operation_of(CircuitId::KrbChecksum), KrbOperation::Checksum);
  EXPECT_THROW(krb_operation_of(CircuitId::Aes256EncryptDepth4), FormatError);

  BatchHeader header = krb_batch(CircuitId::KrbDecryptAes256, 0x0203);
  header.krb_evaluation = KrbEvaluation::Garbled;
  const Bytes frame = encode_batch(header);
  ASSERT_EQ(frame.size(), 14u + 1u + 4u + 1u + 4u + 2u * 96u);
  // Circuit id, data length, evaluation, slice count.
  EXPECT_EQ(frame[14], 14);
  EXPECT_EQ((Bytes(frame.begin() + 15, frame.begin() + 24)), (Bytes{0x03, 0x02, 0, 0, 1, 2, 0, 0, 0}));
  const auto decoded = std::get<BatchHeader>(decode_peer_message(frame));
  EXPECT_EQ(decoded.circuit, CircuitId::KrbDecryptAes256);
  EXPECT_EQ(decoded.data_bytes, 0x0203u);
  EXPECT_EQ(decoded.krb_evaluation, KrbEvaluation::Garbled);
  // Layered is 0; an unknown evaluation is refused.
  EXPECT_EQ(std::get<BatchHeader>(decode_peer_message(encode_batch(krb_batch(CircuitId::KrbDecryptAes256, 0x0203))))
                .krb_evaluation,
            KrbEvaluation::Layered);
  Bytes twice = frame;
  twice[19] = 2;
  EXPECT_EQ(std::get<BatchHeader>(decode_peer_message(twice)).krb_evaluation, KrbEvaluation::GarbledTwice);
  Bytes unknown = frame;
  unknown[19] = 5;
  EXPECT_THROW(decode_peer_message(unknown), FormatError);
  // Only Kerberos batches are garbled.
  BatchHeader aes = sample_batch();
  aes.krb_evaluation = KrbEvaluation::Garbled;
  EXPECT_THROW(encode_batch(aes), FormatError);
  ASSERT_EQ(decoded.slices.size(), 2u);
  EXPECT_EQ(decoded.slices[1].request, header.slices[1].request);
  EXPECT_EQ(encode_batch(decoded), frame);
  // A checksum of an empty message is a valid batch.
  EXPECT_EQ(std::get<BatchHeader>(decode_peer_message(encode_batch(krb_batch(CircuitId::KrbChecksum, 0)))).data_bytes,
            0u);
  // Batches of the other circuits keep their format: no data length.
  EXPECT_EQ(std::get<BatchHeader>(decode_peer_message(encode_batch(sample_batch()))).data_bytes, 0u);
}

// A batch that prepares a garbling has no job; one that uses it names the preparing batch's
// sequence, earlier in the same epoch, for one job.
TEST(PeerMessage, PreparedGarblingBatches) {
  BatchHeader prepare = krb_batch(CircuitId::KrbEncryptAes256, 265);
  prepare.slices.clear();
  prepare.krb_evaluation = KrbEvaluation::PrepareTwice;
  const Bytes prepare_frame = encode_batch(prepare);
  ASSERT_EQ(prepare_frame.size(), 14u + 1u + 4u + 1u + 4u);
  const auto prepared_back = std::get<BatchHeader>(decode_peer_message(prepare_frame));
  EXPECT_EQ(prepared_back.krb_evaluation, KrbEvaluation::PrepareTwice);
  EXPECT_TRUE(prepared_back.slices.empty());
  EXPECT_EQ(prepared_back.prepared, 0u);

  BatchHeader use = krb_batch(CircuitId::KrbEncryptAes256, 265);
  use.slices.resize(1);
  use.krb_evaluation = KrbEvaluation::PreparedTwice;
  use.prepared = 7;
  const Bytes use_frame = encode_batch(use);
  ASSERT_EQ(use_frame.size(), 14u + 1u + 4u + 1u + 4u + 4u + 96u);
  EXPECT_EQ((Bytes(use_frame.begin() + 20, use_frame.begin() + 24)), (Bytes{7, 0, 0, 0}));
  const auto use_back = std::get<BatchHeader>(decode_peer_message(use_frame));
  EXPECT_EQ(use_back.krb_evaluation, KrbEvaluation::PreparedTwice);
  EXPECT_EQ(use_back.prepared, 7u);
  EXPECT_EQ(encode_batch(use_back), use_frame);

  BatchHeader bad = prepare;
  bad.slices.resize(1);  // a preparation with a job
  EXPECT_THROW(encode_batch(bad), FormatError);
  bad = use;
  bad.prepared = use.sequence;  // not an earlier batch
  EXPECT_THROW(encode_batch(bad), FormatError);
  bad.prepared = 0;
  EXPECT_THROW(encode_batch(bad), FormatError);
  bad = use;
  bad.slices.resize(2);  // one garbling for two jobs
  EXPECT_THROW(encode_batch(bad), FormatError);
  bad = krb_batch(CircuitId::KrbEncryptAes256, 265);
  bad.krb_evaluation = KrbEvaluation::GarbledTwice;
  bad.prepared = 3;  // named by a batch that garbles online
  EXPECT_THROW(encode_batch(bad), FormatError);
  // The same refusals on the way in: a use frame whose sequence is not past the one it names.
  Bytes late = use_frame;
  late[20] = 9;  // names the batch's own sequence
  EXPECT_THROW(decode_peer_message(late), FormatError);
  Bytes with_job = prepare_frame;
  with_job[19] = static_cast<std::uint8_t>(KrbEvaluation::GarbledTwice);
  EXPECT_THROW(decode_peer_message(with_job), FormatError);  // no slices otherwise
}

TEST(PeerMessage, RejectsBadKrbBatches) {
  const std::pair<CircuitId, std::uint32_t> bad[] = {
      {CircuitId::KrbEncryptAes128, 15}, {CircuitId::KrbEncryptAes256, 4097}, {CircuitId::KrbDecryptAes128, 27},
      {CircuitId::KrbDecryptAes256, 0},  {CircuitId::KrbChecksum, 4097},      {CircuitId::KrbChecksum, 0xffffffffu}};
  for (const auto& [circuit, data_bytes] : bad) {
    EXPECT_THROW(encode_batch(krb_batch(circuit, data_bytes)), FormatError);
    Bytes frame = encode_batch(krb_batch(circuit, 100));
    for (int b = 0; b < 4; ++b) frame[15 + static_cast<std::size_t>(b)] = static_cast<std::uint8_t>(data_bytes >> (8 * b));
    expect_rejected(frame, decode_peer);
  }
  // A data length on a batch of another circuit.
  BatchHeader header = sample_batch();
  header.data_bytes = 16;
  EXPECT_THROW(encode_batch(header), FormatError);
  // Slices that are not one whole job.
  for (int which = 0; which < 3; ++which) {
    header = krb_batch(CircuitId::KrbEncryptAes128, 64);
    BatchSlice& slice = header.slices[1];
    if (which == 0) slice.blocks = 2;
    if (which == 1) slice.first_block = 1;
    if (which == 2) slice.nonces = 1;
    EXPECT_THROW(encode_batch(header), FormatError);
    Bytes frame = encode_batch(krb_batch(CircuitId::KrbEncryptAes128, 64));
    const std::size_t at = 14 + 1 + 4 + 1 + 4 + 96 + 80 + (which == 0 ? 4 : which == 1 ? 0 : 12);
    frame[at] = which == 0 ? 2 : 1;  // blocks 2, first block 1, or 1 nonce
    expect_rejected(frame, decode_peer);
  }
  // Every truncation and a trailing byte.
  Bytes frame = encode_batch(krb_batch(CircuitId::KrbChecksum, 1));
  for (std::size_t length = 0; length < frame.size(); ++length)
    expect_rejected(Bytes(frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(length)), decode_peer);
  frame.push_back(0);
  expect_rejected(frame, decode_peer);
}

TEST(PeerMessage, RejectsBadNonceRanges) {
  struct Bad {
    std::uint32_t first_block, blocks, first_nonce, nonces;
  };
  for (const Bad& bad : {Bad{0, 4, 5, 0},             // a first nonce without nonces
                         Bad{0, 5, 0, 2},             // blocks do not split into whole nonces
                         Bad{3, 4, 0, 2},             // does not start on a whole nonce
                         Bad{0, 2, 0xffffffffu, 2}})  // nonce counter wraps
  {
    BatchHeader header = sample_batch();
    header.slices[0].first_block = bad.first_block;
    header.slices[0].blocks = bad.blocks;
    header.slices[0].first_nonce = bad.first_nonce;
    header.slices[0].nonces = bad.nonces;
    EXPECT_THROW(encode_batch(header), FormatError);
    Bytes frame = encode_batch(sample_batch());
    const std::size_t slice = 14 + 5;
    for (int k = 0; k < 4; ++k) {
      const std::uint32_t values[] = {bad.first_block, bad.blocks, bad.first_nonce, bad.nonces};
      for (int b = 0; b < 4; ++b) frame[slice + 80 + 4 * k + b] = static_cast<std::uint8_t>(values[k] >> (8 * b));
    }
    expect_rejected(frame, decode_peer);
  }
}

TEST(PeerMessage, LayerRoundTripIsZeroCopy) {
  Bytes frame(kLayerHeaderBytes + 100);
  for (std::size_t i = kLayerHeaderBytes; i < frame.size(); ++i) frame[i] = static_cast<std::uint8_t>(i);
  write_layer_header(LayerHeader{0xdeadbeefcafef00dull, 77, 12}, frame);
  const auto layer = std::get<DecodedLayer>(decode_peer_message(frame));
  EXPECT_EQ(layer.header.epoch, 0xdeadbeefcafef00dull);
  EXPECT_EQ(layer.header.sequence, 77u);
  EXPECT_EQ(layer.header.layer, 12u);
  EXPECT_EQ(layer.payload.data(), frame.data() + kLayerHeaderBytes);
  EXPECT_EQ(layer.payload.size(), 100u);
  // Empty payload is a valid layer message; a frame too short for the header is not.
  Bytes bare(kLayerHeaderBytes);
  write_layer_header(LayerHeader{1, 2, 3}, bare);
  EXPECT_TRUE(std::get<DecodedLayer>(decode_peer_message(bare)).payload.empty());
  for (std::size_t length = 0; length < kLayerHeaderBytes; ++length)
    expect_rejected(Bytes(bare.begin(), bare.begin() + static_cast<std::ptrdiff_t>(length)), decode_peer);
  Bytes small(kLayerHeaderBytes - 1);
  EXPECT_THROW(write_layer_header(LayerHeader{}, small), FormatError);
}

TEST(PeerMessage, AbortRoundTrip) {
  for (const AbortNotice& notice :
       {AbortNotice{1, 2, static_cast<std::uint16_t>(Status::PeerFailure), "party 3 is unreachable"},
        AbortNotice{0, 0, 0, ""}, AbortNotice{~0ull, ~0u, 9, std::string(1024, 'd')}}) {
    const Bytes frame = encode_abort(notice);
    const auto decoded = std::get<AbortNotice>(decode_peer_message(frame));
    EXPECT_EQ(decoded.epoch, notice.epoch);
    EXPECT_EQ(decoded.sequence, notice.sequence);
    EXPECT_EQ(decoded.reason, notice.reason);
    EXPECT_EQ(decoded.detail, notice.detail);
    EXPECT_EQ(encode_abort(decoded), frame);
  }
  EXPECT_THROW(encode_abort(AbortNotice{1, 2, 3, std::string(1025, 'd')}), FormatError);
  EXPECT_THROW(encode_abort(AbortNotice{1, 2, kFirstUnknownStatus, ""}), FormatError);
}

std::vector<RequestNote> sample_notes() {
  std::vector<RequestNote> notes(3);
  for (std::uint8_t i = 0; i < 3; ++i) {
    notes[i].client.fill(static_cast<std::uint8_t>(0x10 + i));
    notes[i].request = make_id(static_cast<std::uint8_t>(0x70 + i));
    notes[i].digest.fill(static_cast<std::uint8_t>(0xa0 + i));
  }
  notes[1].status = Status::Busy;
  notes[1].detail = "too many pending jobs";
  notes[2].status = Status::RequestMismatch;
  notes[2].detail = std::string(1024, 'm');
  return notes;
}

TEST(PeerMessage, NotesRoundTrip) {
  const auto notes = sample_notes();
  const Bytes frame = encode_notes(notes);
  EXPECT_EQ(frame.size(), 14u + 4u + 3u * (32u + 16u + 32u + 2u + 2u) + 21u + 1024u);
  EXPECT_EQ(std::get<std::vector<RequestNote>>(decode_peer_message(frame)), notes);
  for (std::size_t length = 0; length < frame.size(); ++length)
    expect_rejected(Bytes(frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(length)), decode_peer);
  Bytes longer = frame;
  longer.push_back(0);
  expect_rejected(longer, decode_peer);
}

TEST(PeerMessage, RejectsBadNotes) {
  EXPECT_THROW(encode_notes({}), FormatError);
  EXPECT_THROW(encode_notes(std::vector<RequestNote>(kMaxNotesPerMessage + 1)), FormatError);
  EXPECT_NO_THROW(encode_notes(std::vector<RequestNote>(kMaxNotesPerMessage)));
  auto notes = sample_notes();
  notes[0].detail = std::string(1025, 'd');
  EXPECT_THROW(encode_notes(notes), FormatError);
  notes = sample_notes();
  notes[0].status = static_cast<Status>(kFirstUnknownStatus);
  EXPECT_THROW(encode_notes(notes), FormatError);
  // A status beyond the last, a note count of zero and a batch id are refused on decoding.
  Bytes frame = encode_notes(sample_notes());
  Bytes bad = frame;
  bad[14 + 4 + 80] = kFirstUnknownStatus;  // the first note's status, low byte
  expect_rejected(bad, decode_peer);
  bad = frame;
  bad[14] = bad[15] = bad[16] = bad[17] = 0;
  expect_rejected(bad, decode_peer);
  bad = frame;
  bad[10] = 1;  // sequence
  expect_rejected(bad, decode_peer);
}

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

TEST(PeerMessage, RejectsEveryTruncationAndTrailingByte) {
  for (Bytes frame : {encode_batch(sample_batch()), encode_abort(AbortNotice{1, 2, 5, "detail"})}) {
    for (std::size_t length = 0; length < frame.size(); ++length)
      expect_rejected(Bytes(frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(length)), decode_peer);
    frame.push_back(0);
    expect_rejected(frame, decode_peer);
  }
}

TEST(PeerMessage, HelloRoundTripAndChecks) {
  const Hello hello{0b101, ClusterMode::TwoParty, 1};
  const Bytes frame = encode_hello(hello);
  EXPECT_EQ(std::get<Hello>(decode_peer_message(frame)), hello);
  const Hello full{0b011, ClusterMode::Full, kNoParty};
  EXPECT_EQ(std::get<Hello>(decode_peer_message(encode_hello(full))), full);
  EXPECT_THROW(encode_hello(Hello{0b1000, ClusterMode::Full, kNoParty}), FormatError);
  EXPECT_THROW(encode_hello(Hello{0, ClusterMode::TwoParty, kNoParty}), FormatError);
  EXPECT_THROW(encode_hello(Hello{0, ClusterMode::Full, 2}), FormatError);
  const std::size_t body = frame.size() - 3;
  for (const auto& [offset, value] : std::vector<std::pair<std::size_t, std::uint8_t>>{
           {body, 0b1000}, {body + 1, 2}, {body + 2, 3}, {body + 2, kNoParty}}) {
    Bytes bad = frame;
    bad[offset] = value;
    expect_rejected(bad, decode_peer);
  }
  Bytes longer = frame;
  longer.push_back(0);
  expect_rejected(longer, decode_peer);
}

TEST(PeerMessage, DegradedFramesWrapAnyInnerFrame) {
  const Bytes inner{9, 8, 7, 6, 5};
  const Bytes wrapped = wrap_degraded(inner);
  const auto unwrapped = unwrap_degraded(wrapped);
  ASSERT_TRUE(unwrapped);
  EXPECT_EQ(Bytes(unwrapped->begin(), unwrapped->end()), inner);
  EXPECT_FALSE(unwrap_degraded(encode_hello(Hello{})));
  EXPECT_FALSE(unwrap_degraded(Bytes{kPeerProtocolVersion}));
  Bytes other_version = wrapped;
  other_version[0] = kPeerProtocolVersion + 1;
  EXPECT_FALSE(unwrap_degraded(other_version));
  // The three-party decoder has no business with them.
  expect_rejected(wrapped, decode_peer);
}

TEST(PeerMessage, RejectsBadHeaderFields) {
  Bytes frame = encode_batch(sample_batch());
  // 1: the version of releases before the peer protocol had its own, which a server of this
  // release must not take for its own; 2: the release before the AND check's seed share; 3: the
  // release before its window weights of degree < 64; 4: the release before batches of local
  // masks; 5: the release before the AND check's receipt of the prover's last layer.
  EXPECT_EQ(frame[0], kPeerProtocolVersion);
  for (std::uint8_t version : {0, 1, 2, 3, 4, 5, 7, 0xff}) {
    Bytes bad = frame;
    bad[0] = version;
    expect_rejected(bad, decode_peer);
  }
  for (std::uint8_t type : {0, 7, 0x80, 0xff}) {
    Bytes bad = peer_header(type);
    bad.resize(bad.size() + 64);
    expect_rejected(bad, decode_peer);
  }
  for (std::uint8_t circuit : {0, 27, 0xff}) {
    Bytes bad = frame;
    bad[14] = circuit;
    expect_rejected(bad, decode_peer);
    EXPECT_FALSE(is_valid_circuit_id(circuit));
  }
  for (std::uint8_t circuit = 1; circuit <= 26; ++circuit) EXPECT_TRUE(is_valid_circuit_id(circuit));
  for (std::uint8_t circuit = 1; circuit <= 10; ++circuit) EXPECT_FALSE(is_krb_circuit(static_cast<CircuitId>(circuit)));
  for (std::uint8_t circuit = 11; circuit <= 24; ++circuit) EXPECT_TRUE(is_krb_circuit(static_cast<CircuitId>(circuit)));
  for (std::uint16_t reason : {int{kFirstUnknownStatus}, 0xffff}) {
    Bytes bad = peer_header(3);
    ByteWriter writer(bad);
    writer.u16(reason);
    writer.short_string("");
    expect_rejected(bad, decode_peer);
  }
  Bytes long_detail = peer_header(3);
  ByteWriter writer(long_detail);
  writer.u16(1);
  writer.short_string(std::string(1025, 'x'));
  expect_rejected(long_detail, decode_peer);
}

TEST(PeerMessage, RejectsBadSliceCounts) {
  for (std::uint32_t count : {0u, kMaxBatchSlices + 1, 0xffffffffu, 2u, kMaxBatchSlices}) {
    Bytes frame = peer_header(1);
    ByteWriter writer(frame);
    writer.u8(1);
    writer.u32(count);
    writer.bytes(Bytes(96));  // one slice present
    EXPECT_LT(expect_rejected(frame, decode_peer), 4096u);
  }
  BatchHeader header = sample_batch();
  header.slices[1].blocks = 0;
  EXPECT_THROW(encode_batch(header), FormatError);
  Bytes frame = encode_batch(sample_batch());
  // Zero out the blocks field of the first slice.
  const std::size_t blocks_at = 14 + 5 + 84;
  for (std::size_t i = 0; i < 4; ++i) frame[blocks_at + i] = 0;
  expect_rejected(frame, decode_peer);
  header = sample_batch();
  header.slices[0].first_block = 0xffffffffu;
  header.slices[0].blocks = 2;
  EXPECT_THROW(encode_batch(header), FormatError);
  header.slices.clear();
  EXPECT_THROW(encode_batch(header), FormatError);
  header.slices.resize(kMaxBatchSlices + 1, BatchSlice{{}, {}, {}, 0, 1});
  EXPECT_THROW(encode_batch(header), FormatError);
  header.slices.resize(kMaxBatchSlices);
  EXPECT_EQ(std::get<BatchHeader>(decode_peer_message(encode_batch(header))).slices.size(), kMaxBatchSlices);
}

}  // namespace
}  // namespace mpc::wire
