// Peer messages (wire/peer_messages.cpp): batch headers, layers, aborts, notes, hellos, pair
// checks and degraded frames round trip, and malformed ones are refused.
#include <gtest/gtest.h>

#include <set>

#include "common/bytes.hpp"
#include "common/error.hpp"
#include "wire/client_messages.hpp"
#include "wire/codec.hpp"
#include "wire/key_id.hpp"
#include "wire/krb_record_mask.hpp"
#include "wire/peer_messages.hpp"
#include "wire/sealed_share.hpp"
#include "wire_test_support.hpp"

namespace mpc::wire {
namespace {

using namespace test;

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

TEST(PeerMessage, RejectsEveryTruncationAndTrailingByte) {
  for (Bytes frame : {encode_batch(sample_batch()), encode_abort(AbortNotice{1, 2, 5, "detail"})}) {
    for (std::size_t length = 0; length < frame.size(); ++length)
      expect_rejected(Bytes(frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(length)), decode_peer);
    frame.push_back(0);
    expect_rejected(frame, decode_peer);
  }
}

TEST(PeerMessage, PairChecksRoundTripAndAreSizedByTheirKeysAlgorithm) {
  const KeyId gcm{"krbtgt/EXAMPLE.COM", 3, KeyAlgorithm::Aes256Gcm};
  const KeyId krb{"alice@EXAMPLE.COM", 1, KeyAlgorithm::Aes256CtsHmacSha1};
  std::vector<PairCheckDeal> deals(3);
  deals[0] = {gcm, true, SecretBytes(share_check_bytes(gcm.algorithm))};
  deals[1] = {krb, false, SecretBytes(share_check_bytes(krb.algorithm))};
  deals[2] = {krb, false, SecretBytes(share_check_bytes(krb.algorithm)), true};
  for (std::size_t i = 0; i < deals[1].checks.size(); ++i) deals[1].checks[i] = static_cast<std::uint8_t>(i);
  const auto frame = encode_pair_checks(deals);
  const auto decoded = std::get<std::vector<PairCheckDeal>>(decode_peer_message(frame));
  ASSERT_EQ(decoded.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(decoded[i].key, deals[i].key);
    EXPECT_EQ(decoded[i].mutual, deals[i].mutual);
    if (!deals[i].mutual) EXPECT_EQ(decoded[i].for_leader, deals[i].for_leader);
    EXPECT_TRUE(std::ranges::equal(decoded[i].checks.span(), deals[i].checks.span()));
  }
  // Checks of another size than the key's algorithm takes, none, or an unknown role.
  std::vector<PairCheckDeal> wrong(1);
  wrong[0] = {gcm, true, SecretBytes(share_check_bytes(krb.algorithm))};
  EXPECT_THROW(encode_pair_checks(wrong), FormatError);
  EXPECT_THROW(encode_pair_checks({}), FormatError);
  auto bad_role = encode_pair_checks(std::span(deals).first(1));
  bad_role[14 + 4 + encoded_key_id_bytes(gcm)] = 3;
  EXPECT_THROW(decode_peer_message(bad_role), FormatError);
  auto truncated = frame;
  truncated.pop_back();
  EXPECT_THROW(decode_peer_message(truncated), FormatError);
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
  const Hello excluding{0b011, ClusterMode::TwoParty, 2, 2};
  EXPECT_EQ(std::get<Hello>(decode_peer_message(encode_hello(excluding))), excluding);
  EXPECT_THROW(encode_hello(Hello{0, ClusterMode::Full, kNoParty, 3}), FormatError);
  const Hello disputing{0b011, ClusterMode::TwoParty, 1, kNoParty, 0b010, true, 0b101, 0x01020304};
  EXPECT_EQ(std::get<Hello>(decode_peer_message(encode_hello(disputing))), disputing);
  EXPECT_THROW(encode_hello(Hello{0, ClusterMode::Full, kNoParty, kNoParty, 0b1000}), FormatError);
  EXPECT_THROW(encode_hello(Hello{0, ClusterMode::Full, kNoParty, kNoParty, 0, false, 0b1000}), FormatError);
  const std::size_t body = frame.size() - 11;
  for (const auto& [offset, value] : std::vector<std::pair<std::size_t, std::uint8_t>>{
           {body, 0b1000}, {body + 1, 2}, {body + 2, 3}, {body + 2, kNoParty}, {body + 3, 3}, {body + 4, 0b1000},
           {body + 5, 2}, {body + 6, 0b1000}}) {
    Bytes bad = frame;
    bad[offset] = value;
    expect_rejected(bad, decode_peer);
  }
  Bytes longer = frame;
  longer.push_back(0);
  expect_rejected(longer, decode_peer);
  expect_rejected(Bytes(frame.begin(), frame.end() - 1), decode_peer);  // a hello without its readmissions
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
  // masks; 5: the release before the AND check's receipt of the prover's last layer; 6: the
  // release before pair checks, whose pair served semi-honestly; 7: the release before disputes
  // in the hellos; 8: the release before the AND check's signed messages; 9: the release before
  // the signed messages of Kerberos batches garbled twice.
  EXPECT_EQ(frame[0], kPeerProtocolVersion);
  for (std::uint8_t version : {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 0xff}) {
    Bytes bad = frame;
    bad[0] = version;
    expect_rejected(bad, decode_peer);
  }
  for (std::uint8_t type : {0, 7, 8, 0x80, 0xff}) {
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
