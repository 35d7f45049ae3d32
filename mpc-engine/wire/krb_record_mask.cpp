#include "wire/krb_record_mask.hpp"

#include <sodium.h>

#include <string_view>

#include "common/error.hpp"

namespace mpc::wire {
namespace {

constexpr std::string_view kSeedHashKey = "mpc-kdc krb record mask seed";

// out ^= S(seed)
void xor_stream(const KrbMaskSeed& seed, std::span<std::uint8_t> out) {
  if (out.empty()) return;
  SecretBytes stream(out.size());
  randombytes_buf_deterministic(stream.data(), stream.size(), seed.data());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] ^= stream[i];
}

void require_shape(const KrbRecordMask& mask, std::size_t components) {
  if (mask.seed_hashes.size() != components || mask.seeds.size() != (components == 3 ? 2u : 1u) ||
      mask.held.size() != mask.seeds.size())
    throw Error(Component::Server, "a Kerberos record mask of another shape than this cluster's");
}

}  // namespace

KrbMaskSeedHash record_mask_seed_hash(const KrbMaskSeed& seed) {
  KrbMaskSeedHash hash{};
  crypto_generichash(hash.data(), hash.size(), seed.data(), seed.size(),
                     reinterpret_cast<const unsigned char*>(kSeedHashKey.data()), kSeedHashKey.size());
  return hash;
}

std::size_t krb_secret_record_bytes(const KrbRequest& request) {
  return (request.combine ? request.combine->mask.size() : 0) +
         (request.operation == KrbOperation::Decrypt ? 0 : request.data.size());
}

RecordMaskDeal::RecordMaskDeal(std::size_t components, std::size_t bytes) : seeds_(components), mask_(bytes) {
  if (components != 2 && components != 3) throw Error(Component::Client, "a record mask for 2 or 3 servers");
  for (auto& seed : seeds_) {
    randombytes_buf(seed.data(), seed.size());
    xor_stream(seed, mask_.span());
  }
}

RecordMaskDeal::~RecordMaskDeal() {
  for (auto& seed : seeds_) wipe(seed.data(), seed.size());
}

void RecordMaskDeal::mask(KrbRequest& request) const {
  if (krb_secret_record_bytes(request) != mask_.size())
    throw Error(Component::Client, "a record mask of " + std::to_string(mask_.size()) + " bytes for a record of " +
                                       std::to_string(krb_secret_record_bytes(request)) + " secret bytes");
  std::size_t at = 0;
  if (request.combine)
    for (auto& byte : request.combine->mask) byte ^= mask_[at++];
  if (request.operation != KrbOperation::Decrypt)
    for (auto& byte : request.data) byte ^= mask_[at++];
}

KrbRecordMask RecordMaskDeal::for_server(int party) const {
  const int components = static_cast<int>(seeds_.size());
  if (party < 0 || party >= components) throw Error(Component::Client, "a record mask for no server");
  KrbRecordMask out;
  for (const auto& seed : seeds_) out.seed_hashes.push_back(record_mask_seed_hash(seed));
  out.held.push_back(static_cast<std::uint8_t>(party));
  if (components == 3) out.held.push_back(static_cast<std::uint8_t>((party + 2) % 3));
  for (std::uint8_t component : out.held) out.seeds.push_back(seeds_[component]);
  return out;
}

std::optional<std::string> record_mask_refusal(const KrbRecordMask& mask, int party, int servers) {
  if (mask.seed_hashes.size() != static_cast<std::size_t>(servers))
    return "a Kerberos record mask of " + std::to_string(mask.seed_hashes.size()) + " components for a cluster of " +
           std::to_string(servers) + " servers";
  std::vector<std::uint8_t> expected{static_cast<std::uint8_t>(party)};
  if (servers == 3) expected.push_back(static_cast<std::uint8_t>((party + 2) % 3));
  if (mask.held != expected || mask.seeds.size() != expected.size())
    return "a Kerberos record mask with other seeds than server " + std::to_string(party + 1) + "'s";
  for (std::size_t i = 0; i < mask.seeds.size(); ++i) {
    const KrbMaskSeedHash hash = record_mask_seed_hash(mask.seeds[i]);
    if (sodium_memcmp(hash.data(), mask.seed_hashes[mask.held[i]].data(), hash.size()) != 0)
      return "a Kerberos record mask seed that does not match its hash";
  }
  return std::nullopt;
}

SecretBytes replicated_record_mask(const KrbRecordMask& mask, std::size_t bytes) {
  require_shape(mask, 3);
  SecretBytes out(2 * bytes);
  xor_stream(mask.seeds[0], out.span().first(bytes));
  xor_stream(mask.seeds[1], out.span().first(bytes));
  xor_stream(mask.seeds[0], out.span().subspan(bytes));
  return out;
}

const KrbMaskSeed& pad_seed_of(const KrbRecordMask& mask, bool pair_leader) {
  require_shape(mask, mask.seed_hashes.size() == 3 ? 3 : 2);
  return mask.seed_hashes.size() == 3 && pair_leader ? mask.seeds[1] : mask.seeds[0];
}

SecretBytes xor_record_mask(const KrbRecordMask& mask, bool pair_leader, std::size_t bytes) {
  require_shape(mask, mask.seed_hashes.size() == 3 ? 3 : 2);
  SecretBytes out(bytes);
  xor_stream(mask.seeds[0], out.span());
  if (mask.seed_hashes.size() == 3 && pair_leader) xor_stream(mask.seeds[1], out.span());
  return out;
}

}  // namespace mpc::wire
