// mpc-engine/wire/client_checks.cpp: the checks the request and reply codecs share, and the
// rules of GCM and Kerberos jobs that servers and clients apply before any computation.
#include "wire/client_checks.hpp"

#include "common/error.hpp"

namespace mpc::wire {
namespace detail {

void fail(const std::string& message) { throw FormatError(Component::Wire, message); }

void check_blocks(std::uint32_t blocks) {
  if (blocks == 0 || blocks > kMaxRequestBlocks)
    fail("block count " + std::to_string(blocks) + " outside 1.." + std::to_string(kMaxRequestBlocks));
}

void check_prefetch(std::uint32_t count, std::uint32_t blocks_per_nonce) {
  if (count == 0 || count > kMaxGcmPrefetchCount)
    fail("nonce count " + std::to_string(count) + " outside 1.." + std::to_string(kMaxGcmPrefetchCount));
  if (blocks_per_nonce > kMaxGcmBlocksPerNonce)
    fail("blocks per nonce " + std::to_string(blocks_per_nonce) + " outside 0.." +
         std::to_string(kMaxGcmBlocksPerNonce));
  if (static_cast<std::uint64_t>(count) * blocks_per_nonce > kMaxRequestBlocks)
    fail(std::to_string(count) + " nonces of " + std::to_string(blocks_per_nonce) + " blocks exceed " +
         std::to_string(kMaxRequestBlocks) + " blocks");
}

void check_krb_algorithm(KeyAlgorithm algorithm) {
  if (!is_krb_algorithm(algorithm))
    fail(std::string("Kerberos request for a key of algorithm ") + algorithm_name(algorithm));
}

const char* krb_operation_name(KrbOperation operation) {
  switch (operation) {
    case KrbOperation::Encrypt: return "encrypt";
    case KrbOperation::Decrypt: return "decrypt";
    case KrbOperation::Checksum: return "checksum";
  }
  return "unknown";
}

void write_header(ByteWriter& writer, MessageType type, const RequestId& id) {
  writer.u8(kProtocolVersion);
  writer.u8(static_cast<std::uint8_t>(type));
  writer.bytes(id);
}

}  // namespace detail

namespace {

using detail::check_krb_algorithm;
using detail::fail;
using detail::krb_operation_name;

std::size_t padded_blocks(std::size_t bytes) { return bytes / kBlockBytes + (bytes % kBlockBytes != 0 ? 1 : 0); }

}  // namespace

bool is_local_mask_nonce(const GcmNonce& nonce) noexcept { return (nonce[8] & 0x80u) != 0; }

std::size_t gcm_hash_blocks(std::size_t aad_bytes, std::size_t text_bytes) noexcept {
  // Each term is at most SIZE_MAX / 16 + 1, so the sum cannot overflow.
  return padded_blocks(aad_bytes) + padded_blocks(text_bytes) + 1;
}

namespace {

std::uint32_t operation_bit(KrbOperation operation) noexcept {
  switch (operation) {
    case KrbOperation::Encrypt: return MPC_KEY_OP_ENCRYPT;
    case KrbOperation::Decrypt: return MPC_KEY_OP_DECRYPT;
    case KrbOperation::Checksum: return MPC_KEY_OP_CHECKSUM;
  }
  return 0;
}

// "1: decrypt, 2: encrypt and decrypt, 3: encrypt, 17: checksum, 56: checksum", from the rows.
std::string usage_rules() {
  std::string out;
  for (std::size_t i = 0; i < MPC_KEY_USAGE_COUNT; ++i) {
    std::string operations;
    for (const auto operation : {KrbOperation::Encrypt, KrbOperation::Decrypt, KrbOperation::Checksum})
      if ((mpc_key_usage_operations[i] & operation_bit(operation)) != 0)
        operations += (operations.empty() ? "" : " and ") + std::string(detail::krb_operation_name(operation));
    out += (out.empty() ? "" : ", ") + std::to_string(mpc_key_usages[i]) + ": " + operations;
  }
  return out;
}

}  // namespace

bool krb_usage_allows(KrbOperation operation, std::uint32_t usage) noexcept {
  return mpc_key_usage_allows(usage, operation_bit(operation)) != 0;
}

std::optional<std::string> krb_usage_refusal(KrbOperation operation, std::uint32_t usage,
                                             const std::optional<KrbCombine>& combine) {
  if (combine) return krb_combine_refusal(operation, usage, *combine);
  if (mpc_key_usage_index(usage) < 0)
    return "key usage " + std::to_string(usage) + " is not one whose keys the servers hold (" + usage_rules() + ")";
  if (!krb_usage_allows(operation, usage))
    return std::string("Kerberos ") + detail::krb_operation_name(operation) + " under key usage " +
           std::to_string(usage) + " refused: a KDC never does it (" + usage_rules() + ")" +
           (usage == 1 ? "; an encrypted timestamp under a client's key would be that client's preauthentication"
                       : "");
  return std::nullopt;
}

std::optional<std::string> krb_combine_refusal(KrbOperation operation, std::uint32_t usage, const KrbCombine& combine) {
  if (!is_krb_algorithm(combine.combined))
    return std::string("KRB-FX-CF2 with a first key of algorithm ") + algorithm_name(combine.combined);
  if (combine.mask.size() != key_bytes(combine.combined))
    return "KRB-FX-CF2 mask of " + std::to_string(combine.mask.size()) + " bytes for a " +
           algorithm_name(combine.combined) + " key of " + std::to_string(key_bytes(combine.combined));
  struct Use {
    const char* pepper;
    KrbOperation operation;
    std::uint32_t usage;
  };
  // krb5kdc 1.20.1: the encrypted challenge (kdc_preauth_ec.c) and the FAST reply key
  // (fast_util.c, kdc_util.c). Anything else would let a KDC make what only a client makes
  // (its encrypted challenge, usage 54) or read what only a client reads.
  static constexpr Use kUses[] = {{"challengelongterm", KrbOperation::Decrypt, 54},
                                  {"challengelongterm", KrbOperation::Encrypt, 55},
                                  {"replykey", KrbOperation::Encrypt, 3},
                                  {"replykey", KrbOperation::Checksum, 56}};
  for (const Use& use : kUses)
    if (combine.pepper == use.pepper && operation == use.operation && usage == use.usage) return std::nullopt;
  return std::string("Kerberos ") + krb_operation_name(operation) + " under KRB-FX-CF2 with pepper \"" +
         combine.pepper + "\" and usage " + std::to_string(usage) +
         " refused: only the encrypted challenge (\"challengelongterm\": decrypt 54, encrypt 55) and the FAST "
         "reply key (\"replykey\": encrypt 3, checksum 56) are served";
}

KeyAlgorithm krb_job_algorithm(const KrbRequest& request) noexcept {
  return request.combine ? request.combine->combined : request.key.algorithm;
}

std::size_t krb_result_bytes(KrbOperation operation, KeyAlgorithm algorithm, std::size_t data_bytes) {
  const char* name = krb_operation_name(operation);
  check_krb_algorithm(algorithm);
  const std::size_t mac_bytes = krb_mac_bytes(algorithm);
  if (data_bytes > kKrbMaxDataBytes)
    fail(std::string("Kerberos ") + name + " of " + std::to_string(data_bytes) + " bytes exceeds " +
         std::to_string(kKrbMaxDataBytes));
  switch (operation) {
    case KrbOperation::Encrypt:
      if (data_bytes < kKrbConfounderBytes)
        fail("Kerberos encrypt of " + std::to_string(data_bytes) + " bytes, shorter than the " +
             std::to_string(kKrbConfounderBytes) + "-byte confounder");
      return data_bytes + mac_bytes;
    case KrbOperation::Decrypt:
      if (data_bytes < kKrbConfounderBytes + mac_bytes)
        fail("Kerberos decrypt of " + std::to_string(data_bytes) + " bytes, shorter than confounder and MAC (" +
             std::to_string(kKrbConfounderBytes + mac_bytes) + ")");
      return data_bytes - mac_bytes + 1;
    case KrbOperation::Checksum: return mac_bytes;
  }
  fail("unknown Kerberos operation " + std::to_string(static_cast<unsigned>(operation)));
}

std::size_t krb_result_bytes(KrbOperation operation, std::size_t data_bytes) {
  return krb_result_bytes(operation, KeyAlgorithm::Aes128CtsHmacSha1, data_bytes);
}

}  // namespace mpc::wire
