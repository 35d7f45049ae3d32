// The shared secret record of Kerberos jobs: the client's mask, each server's share of it, the
// servers' checks of their seeds, and circuits that compute on the unmasked record.
#include "wire/krb_record_mask.hpp"

#include <gtest/gtest.h>
#include <sodium.h>

#include <algorithm>
#include <vector>

#include "circuits/evaluate.hpp"
#include "circuits/kerberos.hpp"
#include "circuits/masked_inputs.hpp"
#include "common/error.hpp"
#include "jobs/krb_jobs.hpp"

namespace mpc::jobs {
namespace {

using wire::KeyAlgorithm;
using wire::KrbOperation;
using wire::KrbRequest;
using Bytes = std::vector<std::uint8_t>;

Bytes random_bytes(std::size_t n) {
  Bytes out(n);
  randombytes_buf(out.data(), out.size());
  return out;
}

KrbRequest request_of(KrbOperation operation, std::uint32_t usage, std::size_t data_bytes,
                      KeyAlgorithm algorithm = KeyAlgorithm::Aes256CtsHmacSha1) {
  KrbRequest request;
  request.key = wire::KeyId{"krbtgt/EXAMPLE.COM@EXAMPLE.COM", 2, algorithm};
  request.operation = operation;
  request.usage = usage;
  request.data = random_bytes(data_bytes);
  return request;
}

Bytes xor_of(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) {
  Bytes out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) out[i] = a[i] ^ b[i];
  return out;
}

TEST(KrbRecordMask, EveryTwoServersHoldTheMaskAndEachChecksItsSeeds) {
  KrbRequest request = request_of(KrbOperation::Encrypt, 3, 16 + 200);
  const Bytes plaintext = request.data;
  const wire::RecordMaskDeal deal(3, wire::krb_secret_record_bytes(request));
  deal.mask(request);
  const Bytes mask = xor_of(request.data, plaintext);
  ASSERT_NE(mask, Bytes(mask.size(), 0));
  const std::size_t n = mask.size();

  std::vector<wire::KrbRecordMask> sent;
  std::vector<SecretBytes> shares;
  for (int party = 0; party < 3; ++party) {
    sent.push_back(deal.for_server(party));
    EXPECT_EQ(wire::record_mask_refusal(sent.back(), party, 3), std::nullopt);
    EXPECT_NE(wire::record_mask_refusal(sent.back(), (party + 1) % 3, 3), std::nullopt);
    EXPECT_NE(wire::record_mask_refusal(sent.back(), party, 2), std::nullopt);
    shares.push_back(wire::replicated_record_mask(sent.back(), n));
  }
  for (int i = 0; i < 3; ++i) {
    // v = a_i ^ x_{i-1}, as for the key's shares.
    const auto& own = shares[static_cast<std::size_t>(i)];
    const auto& previous = shares[static_cast<std::size_t>((i + 2) % 3)];
    EXPECT_EQ(xor_of(own.span().subspan(n), previous.span().first(n)), mask) << "server " << i + 1;
    // The pair (i, i + 1) serving without the third: the leader's x and the second's a.
    const SecretBytes leader = wire::xor_record_mask(sent[static_cast<std::size_t>(i)], true, n);
    const SecretBytes second = wire::xor_record_mask(sent[static_cast<std::size_t>((i + 1) % 3)], false, n);
    EXPECT_EQ(xor_of(leader.span(), second.span()), mask) << "pair led by server " << i + 1;
  }
  // One server's seeds alone do not give R: its x is R ^ a_{i+1}, not R.
  EXPECT_NE(Bytes(shares[0].span().first(n).begin(), shares[0].span().first(n).end()), mask);

  // A seed that is not the one the others hold under the same hash is refused.
  wire::KrbRecordMask altered = sent[1];
  altered.seeds[1][7] ^= 1;
  EXPECT_NE(wire::record_mask_refusal(altered, 1, 3), std::nullopt);
  wire::KrbRecordMask renamed = sent[1];
  std::swap(renamed.held[0], renamed.held[1]);
  std::swap(renamed.seeds[0], renamed.seeds[1]);
  EXPECT_NE(wire::record_mask_refusal(renamed, 1, 3), std::nullopt);
}

TEST(KrbRecordMask, TwoServersHoldXorShares) {
  KrbRequest request = request_of(KrbOperation::Checksum, 17, 40);
  const Bytes message = request.data;
  const wire::RecordMaskDeal deal(2, wire::krb_secret_record_bytes(request));
  deal.mask(request);
  const Bytes mask = xor_of(request.data, message);
  const auto first = deal.for_server(0);
  const auto second = deal.for_server(1);
  EXPECT_EQ(wire::record_mask_refusal(first, 0, 2), std::nullopt);
  EXPECT_EQ(wire::record_mask_refusal(second, 1, 2), std::nullopt);
  EXPECT_NE(wire::record_mask_refusal(second, 0, 2), std::nullopt);
  EXPECT_EQ(xor_of(wire::xor_record_mask(first, true, 40).span(), wire::xor_record_mask(second, false, 40).span()), mask);
  // What travels: the hashes to both, one seed to each, and never the other's.
  EXPECT_EQ(first.seed_hashes, second.seed_hashes);
  EXPECT_NE(first.seeds[0], second.seeds[0]);
}

// The bytes the client masks are exactly the range the circuit unmasks, for plain jobs and
// KRB-FX-CF2 jobs (whose caller's mask is secret, and whose decryption's data is not).
TEST(KrbRecordMask, ClientMasksExactlyTheRangeTheCircuitUnmasks) {
  std::vector<KrbRequest> requests{request_of(KrbOperation::Encrypt, 3, 16 + 33),
                                   request_of(KrbOperation::Decrypt, 2, 16 + 30 + 12),
                                   request_of(KrbOperation::Checksum, 17, 25)};
  for (KrbOperation operation : {KrbOperation::Encrypt, KrbOperation::Decrypt, KrbOperation::Checksum}) {
    const std::uint32_t usage = operation == KrbOperation::Encrypt ? 3 : operation == KrbOperation::Decrypt ? 54 : 56;
    KrbRequest request = request_of(operation, usage, operation == KrbOperation::Decrypt ? 16 + 20 + 12 : 16 + 20);
    request.combine = wire::KrbCombine{KeyAlgorithm::Aes256CtsHmacSha1,
                                       operation == KrbOperation::Decrypt ? "challengelongterm" : "replykey",
                                       random_bytes(32)};
    if (operation == KrbOperation::Encrypt) request.combine->pepper = "replykey";
    requests.push_back(std::move(request));
  }
  for (KrbRequest& request : requests) {
    const KrbJobPlan clear = plan_krb_job(request);
    const wire::RecordMaskDeal deal(3, wire::krb_secret_record_bytes(request));
    deal.mask(request);
    const KrbJobPlan masked = plan_krb_job(request);
    const KrbMaskedRange range = krb_masked_range(masked.circuit);
    ASSERT_EQ(range.bytes, masked.mask_bytes);
    ASSERT_EQ(clear.public_record.size(), masked.public_record.size());
    for (std::size_t i = 0; i < clear.public_record.size(); ++i) {
      const bool inside = i >= range.offset && i < range.offset + range.bytes;
      if (!inside) EXPECT_EQ(clear.public_record[i], masked.public_record[i]) << "byte " << i << " left clear";
    }
    const Bytes r = xor_of(std::span(clear.public_record).subspan(range.offset, range.bytes),
                           std::span(masked.public_record).subspan(range.offset, range.bytes));
    const SecretBytes shares = wire::replicated_record_mask(deal.for_server(0), range.bytes);
    const SecretBytes previous = wire::replicated_record_mask(deal.for_server(2), range.bytes);
    EXPECT_EQ(xor_of(shares.span().subspan(range.bytes), previous.span().first(range.bytes)), r);
    if (request.operation != KrbOperation::Decrypt || request.combine) EXPECT_GT(range.bytes, 0u);
    else EXPECT_EQ(range.bytes, 0u);
  }
}

std::vector<std::uint8_t> bits_of(std::span<const std::uint8_t> bytes) {
  std::vector<std::uint8_t> bits(bytes.size() * 8);
  for (std::size_t i = 0; i < bits.size(); ++i) bits[i] = (bytes[i / 8] >> (i % 8)) & 1;
  return bits;
}

// C'(k, R, d ^ R) = C'(k, 0, d): the circuit computes on the record nobody holds.
TEST(KrbRecordMask, MaskedCircuitComputesOnTheUnmaskedRecord) {
  for (const KrbCircuitKey key : {KrbCircuitKey{wire::CircuitId::KrbChecksum, 23, 0},
                                  KrbCircuitKey{wire::CircuitId::KrbEncryptAes128, 16 + 5, 0}}) {
    const circuits::Circuit circuit = build_krb_circuit(key);
    const KrbBatchLayout layout = krb_batch_layout(key.id, key.data_bytes);
    const std::size_t key_bits = layout.key_rows - layout.mask_rows;
    const Bytes key_bytes = random_bytes(key_bits / 8);
    const Bytes record = random_bytes(key.data_bytes);
    const Bytes mask = random_bytes(layout.mask_rows / 8);
    const auto inputs = [&](const Bytes& r, const Bytes& d) {
      std::vector<std::uint8_t> bits = bits_of(key_bytes);
      const auto r_bits = bits_of(r);
      const auto d_bits = bits_of(d);
      bits.insert(bits.end(), r_bits.begin(), r_bits.end());
      bits.insert(bits.end(), d_bits.begin(), d_bits.end());
      return bits;
    };
    const auto clear = circuits::evaluate(circuit, inputs(Bytes(mask.size(), 0), record));
    const auto shared = circuits::evaluate(circuit, inputs(mask, xor_of(record, mask)));
    EXPECT_EQ(clear, shared);
    // And the mask matters: the masked record unmasked by another R gives another result.
    const auto wrong = circuits::evaluate(circuit, inputs(random_bytes(mask.size()), xor_of(record, mask)));
    EXPECT_NE(clear, wrong);
  }
  // The mask costs one XOR per secret record bit and no AND.
  const auto count = [](const circuits::Circuit& c, circuits::GateKind kind) {
    return std::count_if(c.gates.begin(), c.gates.end(), [&](const circuits::Gate& g) { return g.kind == kind; });
  };
  const circuits::Circuit plain = circuits::build_krb_encrypt_circuit(circuits::AesKeySize::Aes128, 16 + 300);
  const circuits::Circuit masked = build_krb_circuit(wire::CircuitId::KrbEncryptAes128, 16 + 300);
  EXPECT_EQ(count(masked, circuits::GateKind::And), count(plain, circuits::GateKind::And));
  EXPECT_EQ(count(masked, circuits::GateKind::Xor), count(plain, circuits::GateKind::Xor) + 8 * (16 + 300));
}

TEST(KrbRecordMask, MaskedInputsGoAfterAGroupAndInsideTheCircuit) {
  circuits::Circuit c;
  c.input_widths = {2, 3};
  c.output_widths = {3};
  c.num_wires = 8;
  // out = (k0 & d0, d1 ^ k1, d2)
  c.gates = {{circuits::GateKind::And, 0, 2, 5}, {circuits::GateKind::Xor, 3, 1, 6}, {circuits::GateKind::Copy, 4, 0, 7}};
  EXPECT_THROW(circuits::with_masked_inputs(c, 1, 0, 2), FormatError);
  EXPECT_THROW(circuits::with_masked_inputs(c, 2, 2, 2), FormatError);
  EXPECT_EQ(circuits::with_masked_inputs(c, 2, 0, 0).gates.size(), c.gates.size());
  const circuits::Circuit masked = circuits::with_masked_inputs(c, 2, 1, 2);  // d1, d2 masked
  circuits::validate(masked);
  EXPECT_EQ(masked.input_widths, (std::vector<std::uint32_t>{2, 2, 3}));
  for (unsigned v = 0; v < 32; ++v)
    for (unsigned r = 0; r < 4; ++r) {
      const std::vector<std::uint8_t> plain{std::uint8_t(v & 1), std::uint8_t(v >> 1 & 1), std::uint8_t(v >> 2 & 1),
                                            std::uint8_t(v >> 3 & 1), std::uint8_t(v >> 4 & 1)};
      const std::vector<std::uint8_t> hidden{plain[0], plain[1], std::uint8_t(r & 1), std::uint8_t(r >> 1), plain[2],
                                             std::uint8_t(plain[3] ^ (r & 1)), std::uint8_t(plain[4] ^ (r >> 1))};
      EXPECT_EQ(circuits::evaluate(masked, hidden), circuits::evaluate(c, plain));
    }
}

}  // namespace
}  // namespace mpc::jobs
