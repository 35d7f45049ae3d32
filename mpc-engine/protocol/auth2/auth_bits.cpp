#include "protocol/auth2/auth_bits.hpp"

#include <sodium.h>

#include <algorithm>
#include <array>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "common/secret.hpp"
#include "protocol/ot/ot_extension.hpp"
#include "protocol/ot/wipe_guard.hpp"

namespace mpc::auth2 {
namespace {

constexpr std::uint8_t kFirstDeltaLowBits = 0b11;
constexpr std::uint8_t kSecondDeltaLowBits = 0b01;

// BLAKE2b-256 of a label and the given parts.
Digest hash_of(std::string_view label, std::initializer_list<std::span<const std::uint8_t>> parts) {
  crypto_generichash_state state;
  crypto_generichash_init(&state, nullptr, 0, 32);
  crypto_generichash_update(&state, reinterpret_cast<const unsigned char*>(label.data()), label.size());
  for (const auto& part : parts) crypto_generichash_update(&state, part.data(), part.size());
  Digest out{};
  crypto_generichash_final(&state, out.data(), out.size());
  return out;
}

// The digest of MACs that an opening carries: over the MACs the sender holds, or over the ones
// the receiver expects (its keys, moved by its delta where the peer's share is 1). Fed a chunk
// at a time from the stack: an opening of a job's masks covers two MACs per AND gate.
class MacDigest {
 public:
  MacDigest() {
    crypto_generichash_init(&state_, nullptr, 0, 32);
    constexpr std::string_view label = "mpc-kdc auth2 opening";
    crypto_generichash_update(&state_, reinterpret_cast<const unsigned char*>(label.data()), label.size());
  }
  ~MacDigest() { wipe(chunk_.data(), sizeof chunk_); }
  MacDigest(const MacDigest&) = delete;
  MacDigest& operator=(const MacDigest&) = delete;
  void add(const Block& mac) {
    chunk_[used_++] = mac;
    if (used_ == chunk_.size()) flush();
  }
  Digest finish() {
    flush();
    Digest out{};
    crypto_generichash_final(&state_, out.data(), out.size());
    return out;
  }

 private:
  void flush() {
    crypto_generichash_update(&state_, reinterpret_cast<const unsigned char*>(chunk_.data()), used_ * sizeof(Block));
    used_ = 0;
  }
  crypto_generichash_state state_;
  std::array<Block, 256> chunk_;
  std::size_t used_ = 0;
};

}  // namespace

const char* step_name(Step step) noexcept {
  switch (step) {
    case Step::Opening: return "opening";
    case Step::LeakyProducts: return "leaky products";
    case Step::LeakyReveal: return "leaky reveal";
    case Step::EqualityCommit: return "equality commitment";
    case Step::EqualityDigest: return "equality digest";
    case Step::EqualityOpening: return "equality opening";
    case Step::CoinCommit: return "coin commitment";
    case Step::CoinShare: return "coin share";
    case Step::CoinOpening: return "coin opening";
    case Step::GarbledRows: return "garbled rows";
    case Step::MaskedInputs: return "masked inputs";
    case Step::InputLabels: return "input labels";
    case Step::OutputClaim: return "output claim";
  }
  return "unknown";
}

std::vector<std::uint8_t> pack_bits(std::span<const std::uint8_t> bits) {
  std::vector<std::uint8_t> packed((bits.size() + 7) / 8, 0);
  for (std::size_t i = 0; i < bits.size(); ++i) packed[i / 8] |= static_cast<std::uint8_t>((bits[i] & 1) << (i % 8));
  return packed;
}

std::vector<std::uint8_t> unpack_bits(std::span<const std::uint8_t> packed, std::size_t count) {
  std::vector<std::uint8_t> bits(count);
  for (std::size_t i = 0; i < count; ++i) bits[i] = (packed[i / 8] >> (i % 8)) & 1;
  return bits;
}

// One OT-extension session in each direction: this party sends in the one keyed by its delta.
struct Session::Extension {
  ot::OtExtensionSender as_sender;
  ot::OtExtensionReceiver as_receiver;
  Extension(two_party::Channel& channel, Role role)
      : as_sender(channel, role == Role::First ? kFirstDeltaLowBits : kSecondDeltaLowBits), as_receiver(channel) {}
};

Session::Session(two_party::Channel& channel, Role role)
    : channel_(&channel), role_(role), extension_(std::make_unique<Extension>(channel, role)) {
  if (sodium_init() < 0) throw Error(Component::Protocol, "libsodium initialisation failed");
}

Session::Session(two_party::Channel& channel, Role role, std::nullptr_t) : channel_(&channel), role_(role) {}

Session::~Session() { wipe(&delta_, sizeof delta_); }

Session::Session(Session&& other) noexcept
    : channel_(other.channel_),
      role_(other.role_),
      extension_(std::move(other.extension_)),
      delta_(other.delta_),
      ready_(other.ready_),
      tweaks_(other.tweaks_),
      deviation_(std::move(other.deviation_)),
      input_label_deviation_(std::move(other.input_label_deviation_)) {
  wipe(&other.delta_, sizeof other.delta_);
  other.ready_ = false;
}

void Session::use_channel(two_party::Channel& channel) {
  channel_ = &channel;
  if (extension_) {
    extension_->as_sender.use_channel(channel);
    extension_->as_receiver.use_channel(channel);
  }
}

Session Session::job_session(two_party::Channel& channel) const {
  if (!ready_) throw Error(Component::Protocol, "auth2: a job session of a session that has made no bits");
  Session job(channel, role_, nullptr);
  job.delta_ = delta_;
  job.ready_ = true;
  return job;
}

const Block& Session::delta() {
  if (!ready_) {
    if (!extension_) throw Error(Component::Protocol, "auth2: a job session has no delta of its own");
    // Both directions' base OTs, in one order on both sides: the first party's session first.
    if (role_ == Role::First) {
      extension_->as_sender.setup();
      extension_->as_receiver.setup();
    } else {
      extension_->as_receiver.setup();
      extension_->as_sender.setup();
    }
    delta_ = extension_->as_sender.delta();
    ready_ = true;
  }
  return delta_;
}

std::vector<AuthBit> Session::random_bits(std::size_t n) {
  std::vector<AuthBit> out(n);
  random_bits(out);
  return out;
}

void Session::random_bits(std::span<AuthBit> out) {
  if (!extension_) throw Error(Component::Protocol, "auth2: a job session makes no authenticated bits");
  delta();
  const std::size_t chunk = std::min(out.size(), kBitsPerCall);
  std::vector<std::uint8_t> choices(chunk);
  std::vector<Block> keys(chunk), macs(chunk);
  const ot::WipeGuard choices_guard(choices), keys_guard(keys), macs_guard(macs);
  for (std::size_t first = 0; first < out.size(); first += chunk) {
    const std::size_t n = std::min(chunk, out.size() - first);
    const std::span<std::uint8_t> c(choices.data(), n);
    const std::span<Block> k(keys.data(), n), m(macs.data(), n);
    // A fresh seed expanded in user space: the kernel's generator costs a system call per
    // 256 bytes, most of this call's time for a batch of bits.
    std::array<std::uint8_t, randombytes_SEEDBYTES> seed{};
    randombytes_buf(seed.data(), seed.size());
    randombytes_buf_deterministic(c.data(), n, seed.data());
    wipe(seed.data(), seed.size());
    for (auto& bit : c) bit &= 1;
    // The first party's session (its delta) first, on both sides.
    if (role_ == Role::First) {
      extension_->as_sender.authenticated(k);
      extension_->as_receiver.authenticated(c, m);
    } else {
      extension_->as_receiver.authenticated(c, m);
      extension_->as_sender.authenticated(k);
    }
    for (std::size_t i = 0; i < n; ++i) out[first + i] = AuthBit{m[i], k[i], c[i]};
  }
}

void Session::send(Step step, std::span<std::uint8_t> message) {
  if (deviation_) deviation_(step, message);
  channel_->send(message);
}

namespace {

// This party's half of an opening: its shares, packed, then the digest of their MACs.
std::vector<std::uint8_t> opening_message(std::span<const AuthBit> bits) {
  const std::size_t packed = (bits.size() + 7) / 8;
  std::vector<std::uint8_t> message(packed + sizeof(Digest), 0);
  MacDigest macs;
  for (std::size_t i = 0; i < bits.size(); ++i) {
    message[i / 8] |= static_cast<std::uint8_t>((bits[i].bit & 1) << (i % 8));
    macs.add(bits[i].mac);
  }
  const Digest digest = macs.finish();
  std::copy(digest.begin(), digest.end(), message.begin() + static_cast<std::ptrdiff_t>(packed));
  return message;
}

}  // namespace

// The peer's shares from its opening message, once its MAC digest matches this party's keys.
std::vector<std::uint8_t> Session::check_opening(std::span<const AuthBit> bits, std::span<const std::uint8_t> message) {
  const std::size_t n = bits.size(), packed = (n + 7) / 8;
  std::vector<std::uint8_t> peer = unpack_bits(message.first(packed), n);
  const Block& own_delta = delta();
  MacDigest expected_macs;
  for (std::size_t i = 0; i < n; ++i) expected_macs.add(bits[i].key ^ (own_delta & two_party::select_mask(peer[i] != 0)));
  const Digest expected = expected_macs.finish();
  if (sodium_memcmp(expected.data(), message.data() + packed, expected.size()) != 0)
    throw VerificationError(Component::Protocol,
                            "authenticated opening: the peer's shares do not carry its MACs (it deviated)", "mac_check");
  for (std::size_t i = 0; i < n; ++i) peer[i] ^= bits[i].bit;
  return peer;
}

std::vector<std::uint8_t> Session::open(std::span<const AuthBit> bits) {
  std::vector<std::uint8_t> message = opening_message(bits);
  send(Step::Opening, message);
  channel_->flush();
  std::vector<std::uint8_t> peer_message(message.size());
  channel_->receive(peer_message);
  return check_opening(bits, peer_message);
}

std::vector<std::uint8_t> Session::reveal_to(Role to, std::span<const AuthBit> bits) {
  if (role_ != to) {
    std::vector<std::uint8_t> message = opening_message(bits);
    send(Step::Opening, message);
    channel_->flush();
    return {};
  }
  std::vector<std::uint8_t> peer_message((bits.size() + 7) / 8 + sizeof(Digest));
  channel_->receive(peer_message);
  return check_opening(bits, peer_message);
}

void Session::check_equal(const Digest& digest, const char* check) {
  const auto fail = [check] {
    throw VerificationError(Component::Protocol,
                            std::string("equality check (") + check + "): the two parties' values differ (one deviated)",
                            check);
  };
  if (role_ == Role::First) {
    Digest nonce{};
    randombytes_buf(nonce.data(), nonce.size());
    Digest commitment = hash_of("mpc-kdc auth2 equality", {nonce, digest});
    send(Step::EqualityCommit, commitment);
    channel_->flush();
    Digest peer{};
    channel_->receive(peer);
    if (sodium_memcmp(peer.data(), digest.data(), digest.size()) != 0) fail();
    std::array<std::uint8_t, 64> opening{};
    std::copy(digest.begin(), digest.end(), opening.begin());
    std::copy(nonce.begin(), nonce.end(), opening.begin() + 32);
    send(Step::EqualityOpening, opening);
    channel_->flush();
    return;
  }
  Digest commitment{};
  channel_->receive(commitment);
  Digest own = digest;
  send(Step::EqualityDigest, own);
  channel_->flush();
  std::array<std::uint8_t, 64> opening{};
  channel_->receive(opening);
  const std::span<const std::uint8_t> peer_digest(opening.data(), 32), nonce(opening.data() + 32, 32);
  const Digest recomputed = hash_of("mpc-kdc auth2 equality", {nonce, peer_digest});
  if (sodium_memcmp(recomputed.data(), commitment.data(), commitment.size()) != 0 ||
      sodium_memcmp(peer_digest.data(), digest.data(), digest.size()) != 0)
    fail();
}

Digest Session::coin_toss() {
  Digest own{};
  randombytes_buf(own.data(), own.size());
  if (role_ == Role::First) {
    Digest commitment = hash_of("mpc-kdc auth2 coin", {own});
    send(Step::CoinCommit, commitment);
    channel_->flush();
    Digest peer{};
    channel_->receive(peer);
    Digest opening = own;
    send(Step::CoinOpening, opening);
    channel_->flush();
    return hash_of("mpc-kdc auth2 seed", {own, peer});
  }
  Digest commitment{};
  channel_->receive(commitment);
  Digest share = own;
  send(Step::CoinShare, share);
  channel_->flush();
  Digest peer{};
  channel_->receive(peer);
  const Digest recomputed = hash_of("mpc-kdc auth2 coin", {peer});
  if (sodium_memcmp(recomputed.data(), commitment.data(), commitment.size()) != 0)
    throw VerificationError(Component::Protocol, "coin toss: the peer opened another seed than it committed to",
                            "coin_toss");
  return hash_of("mpc-kdc auth2 seed", {peer, own});
}

std::uint64_t Session::take_tweaks(std::size_t n) {
  const std::uint64_t first = tweaks_;
  tweaks_ += n;
  return first;
}

}  // namespace mpc::auth2
