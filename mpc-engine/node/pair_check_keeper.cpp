#include "node/pair_check_keeper.hpp"

#include <sodium.h>

#include <algorithm>
#include <string_view>

#include "common/bytes.hpp"
#include "common/error.hpp"
#include "protocol/client_checks/pair_checks.hpp"
#include "wire/codec.hpp"
#include "wire/sealed_share.hpp"

namespace mpc::node {
namespace {

constexpr std::string_view kDealerLabel = "mpc-kdc pair check dealer v1";
constexpr std::string_view kSeedLabel = "mpc-kdc pair check seed v1";
constexpr std::string_view kMutualSharedLabel = "mpc-kdc mutual pair check v1";
constexpr std::string_view kMutualOwnLabel = "mpc-kdc mutual pair blinding v1";

// A 32-byte hash under `key` (none: empty) of a label, a key id and one secret.
client_checks::CheckSeed seed_of(std::span<const std::uint8_t> key, std::string_view label, const wire::KeyId& id,
                                 std::span<const std::uint8_t> secret) {
  std::vector<std::uint8_t> encoded;
  ByteWriter writer(encoded);
  wire::write_key_id(writer, id);
  client_checks::CheckSeed seed{};
  crypto_generichash_state state;
  crypto_generichash_init(&state, key.empty() ? nullptr : key.data(), key.size(), seed.size());
  crypto_generichash_update(&state, reinterpret_cast<const unsigned char*>(label.data()), label.size());
  crypto_generichash_update(&state, encoded.data(), encoded.size());
  crypto_generichash_update(&state, secret.data(), secret.size());
  crypto_generichash_final(&state, seed.data(), seed.size());
  sodium_memzero(&state, sizeof state);
  return seed;
}

void wipe_check(client_checks::ShareCheck& check) {
  sodium_memzero(check.own_key.data(), check.own_key.size());
  sodium_memzero(check.segments.data(), check.segments.size() * sizeof(client_checks::SegmentCheck));
}

std::vector<client_checks::Segment> segments_of(wire::KeyAlgorithm algorithm) {
  std::vector<client_checks::Segment> out;
  for (const auto& segment : wire::share_check_segments(algorithm)) out.push_back({segment.offset, segment.bytes});
  return out;
}

// The two halves of a replicated share x || a, or nullopt for one of another size.
std::optional<std::pair<std::span<const std::uint8_t>, std::span<const std::uint8_t>>> halves(
    const wire::KeyId& key, const SecretBytes& share) {
  const std::size_t bytes = wire::material_bytes(key.algorithm);
  if (share.size() != 2 * bytes) return std::nullopt;
  return std::pair{share.span().first(bytes), share.span().subspan(bytes, bytes)};
}

SecretBytes xor_of(std::span<const std::uint8_t> left, std::span<const std::uint8_t> right) {
  SecretBytes out(left.size());
  for (std::size_t i = 0; i < left.size(); ++i) out[i] = static_cast<std::uint8_t>(left[i] ^ right[i]);
  return out;
}

SecretBytes serialized(const client_checks::ShareCheck& check) {
  auto bytes = client_checks::serialize(check);
  SecretBytes out{std::span<const std::uint8_t>(bytes)};
  sodium_memzero(bytes.data(), bytes.size());
  return out;
}

}  // namespace

PairCheckKeeper::PairCheckKeeper(int party, const transport::CurveKeyPair& own, store::ShareStore& store,
                                 const Logger& log)
    : party_(party), dealer_secret_(crypto_generichash_BYTES), store_(store), log_(log) {
  if (sodium_init() < 0) throw Error(Component::Server, "libsodium initialisation failed");
  crypto_generichash(dealer_secret_.data(), dealer_secret_.size(),
                     reinterpret_cast<const unsigned char*>(kDealerLabel.data()), kDealerLabel.size(),
                     own.secret_key.data(), own.secret_key.size());
}

PairCheckKeeper::~PairCheckKeeper() {
  for (auto& early : early_) early.deal.checks.clear();
}

std::array<wire::PairCheckDeal, 2> PairCheckKeeper::deal(const wire::KeyId& key, const SecretBytes& share) const {
  const auto parts = halves(key, share);
  if (!parts) throw Error(Component::Server, "a share of another size than " + wire::describe(key) + " takes");
  // c_m = a; c_(m+2) = x ^ a. The seed covers the share, so a new share deals new checks.
  const SecretBytes second_half = xor_of(parts->first, parts->second);
  std::vector<std::uint8_t> id;
  ByteWriter writer(id);
  wire::write_key_id(writer, key);
  client_checks::CheckSeed seed{};
  crypto_generichash_state state;
  crypto_generichash_init(&state, dealer_secret_.data(), dealer_secret_.size(), seed.size());
  crypto_generichash_update(&state, reinterpret_cast<const unsigned char*>(kSeedLabel.data()), kSeedLabel.size());
  crypto_generichash_update(&state, id.data(), id.size());
  crypto_generichash_update(&state, share.data(), share.size());
  crypto_generichash_final(&state, seed.data(), seed.size());
  sodium_memzero(&state, sizeof state);
  const auto segments = segments_of(key.algorithm);
  auto dealt = client_checks::deal_pair_checks(seed, parts->second, second_half.span(), segments);
  sodium_memzero(seed.data(), seed.size());
  std::array<wire::PairCheckDeal, 2> out;
  out[0] = {key, true, serialized(dealt.leader)};
  out[1] = {key, false, serialized(dealt.second_partial)};
  for (auto* check : {&dealt.leader, &dealt.second_partial}) {
    sodium_memzero(check->own_key.data(), check->own_key.size());
    sodium_memzero(check->segments.data(), check->segments.size() * sizeof(client_checks::SegmentCheck));
  }
  return out;
}

bool PairCheckKeeper::expected_role(int from, const wire::PairCheckDeal& deal) const {
  // Either peer is this server's partner in the pair serving without the other.
  if (deal.mutual) return from != party_ && from >= 0 && from < 3;
  // Server m deals to its leader m + 1 the leader's checks, to m + 2 the second member's part.
  if (from == (party_ + 2) % 3) return deal.for_leader;
  if (from == (party_ + 1) % 3) return !deal.for_leader;
  return false;
}

void PairCheckKeeper::take(int from, std::vector<wire::PairCheckDeal> deals) {
  for (auto& deal : deals) {
    if (!expected_role(from, deal)) {
      log_.warn("pair checks in a role the sender does not deal", {{"from", from + 1}, {"key", wire::describe(deal.key)}});
      deal.checks.clear();
      continue;
    }
    if (deal.mutual) {
      std::lock_guard lock(mutual_mutex_);
      auto& held = mutual_received_[slot(deal.key, 3 - party_ - from)];
      held = std::move(deal.checks);
      continue;
    }
    try {
      if (store_.get(deal.key)) {
        store_.put_pair_check(deal.key, from, deal.checks);
        deal.checks.clear();
        continue;
      }
    } catch (const Error& error) {
      log_.warn("pair checks not stored", {{"key", wire::describe(deal.key)}, {"error", error.what()}});
      deal.checks.clear();
      continue;
    }
    if (early_.size() == kMaxEarly) {
      early_.front().deal.checks.clear();
      early_.pop_front();
    }
    early_.push_back({from, std::move(deal)});
  }
}

void PairCheckKeeper::key_stored(const wire::KeyId& key) {
  {
    // A key stored again under its id is another share: tags made for the one before are void.
    std::lock_guard lock(mutual_mutex_);
    for (int missing = 0; missing < 3; ++missing) {
      mutual_received_.erase(slot(key, missing));
      mutual_sent_.erase(slot(key, missing));
    }
  }
  for (auto it = early_.begin(); it != early_.end();) {
    if (it->deal.key != key) {
      ++it;
      continue;
    }
    store_.put_pair_check(it->deal.key, it->from, it->deal.checks);
    it->deal.checks.clear();
    it = early_.erase(it);
  }
}

PairCheckKeeper::MutualSlot PairCheckKeeper::slot(const wire::KeyId& key, int missing) {
  return {key.name, key.version, static_cast<int>(key.algorithm), missing};
}

std::optional<std::pair<client_checks::CheckSeed, client_checks::CheckSeed>> PairCheckKeeper::mutual_seeds(
    const wire::KeyId& key, int missing, const SecretBytes& share) const {
  if (missing == party_ || missing < 0 || missing > 2) return std::nullopt;
  const auto parts = halves(key, share);
  if (!parts) return std::nullopt;
  // c_(m+1): the leader's a; the second member's x ^ a.
  const bool leader = party_ == (missing + 1) % 3;
  const SecretBytes second_common = xor_of(parts->first, parts->second);
  const std::span<const std::uint8_t> common = leader ? parts->second : second_common.span();
  return std::pair{seed_of({}, kMutualSharedLabel, key, common),
                   seed_of(dealer_secret_.span(), kMutualOwnLabel, key, share.span())};
}

std::optional<wire::PairCheckDeal> PairCheckKeeper::mutual_deal(const wire::KeyId& key, int missing,
                                                                const SecretBytes& share) const {
  auto seeds = mutual_seeds(key, missing, share);
  if (!seeds) return std::nullopt;
  const bool leader = party_ == (missing + 1) % 3;
  const auto parts = halves(key, share);
  // The half this server feeds in that pair: the leader x, the second member a.
  auto tags = client_checks::mutual_tags(seeds->first, leader ? client_checks::kLeaderRole : client_checks::kSecondRole,
                                         seeds->second, leader ? parts->first : parts->second,
                                         segments_of(key.algorithm));
  sodium_memzero(seeds->first.data(), seeds->first.size());
  sodium_memzero(seeds->second.data(), seeds->second.size());
  wire::PairCheckDeal deal{key, false, serialized(tags), true};
  wipe_check(tags);
  return deal;
}

void PairCheckKeeper::mutual_sent(const wire::KeyId& key, int missing) {
  std::lock_guard lock(mutual_mutex_);
  mutual_sent_.insert(slot(key, missing));
}

std::optional<SecretBytes> PairCheckKeeper::checks_for(const wire::KeyId& key, int missing, const SecretBytes& share,
                                                       bool missing_proven) const {
  if (missing == party_ || missing < 0 || missing > 2) return std::nullopt;
  if (missing_proven) {
    std::unique_lock lock(mutual_mutex_);
    const auto received = mutual_received_.find(slot(key, missing));
    if (received != mutual_received_.end() && mutual_sent_.count(slot(key, missing)) != 0) {
      auto from_partner = client_checks::parse_share_check(received->second.span());
      lock.unlock();
      auto seeds = mutual_seeds(key, missing, share);
      if (seeds) {
        const bool leader = party_ == (missing + 1) % 3;
        auto own = client_checks::complete_mutual_check(
            seeds->first, leader ? client_checks::kLeaderRole : client_checks::kSecondRole, seeds->second,
            from_partner, segments_of(key.algorithm));
        sodium_memzero(seeds->first.data(), seeds->first.size());
        sodium_memzero(seeds->second.data(), seeds->second.size());
        SecretBytes out = serialized(own);
        wipe_check(own);
        wipe_check(from_partner);
        return out;
      }
      wipe_check(from_partner);
    }
  }
  auto stored = store_.pair_check(key, missing);
  if (!stored || stored->size() != wire::share_check_bytes(key.algorithm)) return std::nullopt;
  if (party_ == (missing + 1) % 3) return stored;  // the leader's: complete as dealt
  const auto parts = halves(key, share);
  if (!parts) return std::nullopt;
  // The second member's part lacks H(c_(m+1)), c_(m+1) = x ^ a.
  const SecretBytes shared_component = xor_of(parts->first, parts->second);
  auto partial = client_checks::parse_share_check(stored->span());
  auto complete = client_checks::complete_pair_check(partial, shared_component.span(), segments_of(key.algorithm));
  SecretBytes out = serialized(complete);
  for (auto* check : {&partial, &complete}) {
    sodium_memzero(check->own_key.data(), check->own_key.size());
    sodium_memzero(check->segments.data(), check->segments.size() * sizeof(client_checks::SegmentCheck));
  }
  return out;
}

void PairCheckKeeper::deal_all_again() {
  to_deal_.clear();
  for (const auto& stored : store_.list()) to_deal_.push_back(stored.key);
  std::reverse(to_deal_.begin(), to_deal_.end());  // taken from the back, in list order
}

std::vector<wire::KeyId> PairCheckKeeper::next_to_deal(std::size_t at_most) {
  std::vector<wire::KeyId> out;
  while (!to_deal_.empty() && out.size() < at_most) {
    out.push_back(std::move(to_deal_.back()));
    to_deal_.pop_back();
  }
  return out;
}

}  // namespace mpc::node
