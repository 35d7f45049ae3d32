#include "protocol/gc3/garbling_digest.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "common/error.hpp"
#include "common/secret.hpp"
#include "transport/ghash_vpclmul.hpp"

namespace mpc::gc3 {
namespace {

constexpr std::size_t kBlock = 16;
// Bytes gathered before they are hashed. A garbler adds each AND layer's tables as it makes
// them, often one gate's 32 bytes (an adder's carry chain is a layer per gate), and every
// absorb ends in a reduction: hashed 32 bytes at a time GHASH runs at an eighth of its speed
// on whole runs.
constexpr std::size_t kGatherBytes = 64 * kBlock;

[[noreturn]] void fail(const char* step) {
  throw Error(Component::Server, std::string("garbling digest: OpenSSL AES-256-GCM ") + step + " failed");
}

struct CipherFree {
  void operator()(EVP_CIPHER_CTX* context) const noexcept { EVP_CIPHER_CTX_free(context); }
};
using CipherPtr = std::unique_ptr<EVP_CIPHER_CTX, CipherFree>;

// The key is this digest's alone, so a fixed nonce never repeats under it.
constexpr std::uint8_t kNonce[12] = {};

}  // namespace

struct GarblingDigest::State {
  Backend backend = Backend::OpenSsl;
  bool finished = false;
  CipherPtr context;  // OpenSsl: freeing it wipes its key schedule and hash key
  // Vpclmul: GCM's computation of a tag over additional data alone, done here.
  transport::detail::GhashPowers powers;
  std::uint8_t sum[kBlock] = {};   // POLYVAL's running state
  std::uint8_t mask[kBlock] = {};  // AES_k(nonce || 1), added to the hash at the end
  std::uint8_t pending[kGatherBytes] = {};  // bytes not yet hashed, fewer than kGatherBytes
  std::size_t pending_bytes = 0;
  std::uint64_t total_bytes = 0;

  State() = default;
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  ~State() {
    wipe(&powers, sizeof powers);
    wipe(sum, sizeof sum);
    wipe(mask, sizeof mask);
    wipe(pending, sizeof pending);
  }
};

GarblingDigest::GarblingDigest(std::span<const std::uint8_t> key, Backend backend) : state_(std::make_unique<State>()) {
  if (key.size() != kKeyBytes) throw Error(Component::Server, "a garbling digest key has 32 bytes");
  if (backend == Backend::Auto)
    backend = transport::detail::ghash_vpclmul_supported() ? Backend::Vpclmul : Backend::OpenSsl;
  if (backend == Backend::Vpclmul && !transport::detail::ghash_vpclmul_supported())
    throw Error(Component::Server, "garbling digest: this CPU has no VPCLMULQDQ with AVX-512");
  state_->backend = backend;
  state_->context.reset(EVP_CIPHER_CTX_new());
  if (!state_->context) fail("context");
  if (backend == Backend::OpenSsl) {
    if (EVP_EncryptInit_ex(state_->context.get(), EVP_aes_256_gcm(), nullptr, key.data(), kNonce) != 1)
      fail("key setup");
    return;
  }
  // H = AES_k(0^128) and the mask AES_k(nonce || 0^31 || 1), as GCM derives them (SP 800-38D, 7.1).
  std::uint8_t blocks[2 * kBlock] = {};
  std::memcpy(blocks + kBlock, kNonce, sizeof kNonce);
  blocks[2 * kBlock - 1] = 1;
  int written = 0;
  if (EVP_EncryptInit_ex(state_->context.get(), EVP_aes_256_ecb(), nullptr, key.data(), nullptr) != 1 ||
      EVP_CIPHER_CTX_set_padding(state_->context.get(), 0) != 1 ||
      EVP_EncryptUpdate(state_->context.get(), blocks, &written, blocks, sizeof blocks) != 1 ||
      written != static_cast<int>(sizeof blocks))
    fail("key setup");
  state_->context.reset();
  transport::detail::ghash_vpclmul_powers(blocks, state_->powers);
  std::memcpy(state_->mask, blocks + kBlock, kBlock);
  wipe(blocks, sizeof blocks);
}

GarblingDigest::~GarblingDigest() = default;

GarblingDigest::Backend GarblingDigest::backend() const noexcept { return state_->backend; }

void GarblingDigest::add(std::span<const std::uint8_t> bytes) {
  State& state = *state_;
  if (state.finished) throw Error(Component::Server, "garbling digest: bytes added after the end");
  if (state.backend == Backend::OpenSsl) {
    while (!bytes.empty()) {
      const std::size_t part = std::min<std::size_t>(bytes.size(), INT_MAX / 2);
      int written = 0;
      if (EVP_EncryptUpdate(state.context.get(), nullptr, &written, bytes.data(), static_cast<int>(part)) != 1)
        fail("additional data");
      bytes = bytes.subspan(part);
    }
    return;
  }
  if (bytes.empty()) return;
  state.total_bytes += bytes.size();
  if (state.pending_bytes != 0 || bytes.size() < kGatherBytes) {
    const std::size_t taken = std::min(bytes.size(), kGatherBytes - state.pending_bytes);
    std::memcpy(state.pending + state.pending_bytes, bytes.data(), taken);
    state.pending_bytes += taken;
    bytes = bytes.subspan(taken);
    if (state.pending_bytes < kGatherBytes) return;
    transport::detail::ghash_vpclmul_absorb(state.powers, state.sum, state.pending, kGatherBytes);
    state.pending_bytes = 0;
  }
  // What is left of a large addition is hashed in place, but for a partial block.
  const std::size_t whole = bytes.size() < kGatherBytes ? 0 : bytes.size() / kBlock * kBlock;
  if (whole != 0) transport::detail::ghash_vpclmul_absorb(state.powers, state.sum, bytes.data(), whole);
  bytes = bytes.subspan(whole);
  std::memcpy(state.pending, bytes.data(), bytes.size());
  state.pending_bytes = bytes.size();
}

GarblingDigest::Value GarblingDigest::finish() {
  State& state = *state_;
  if (state.finished) throw Error(Component::Server, "garbling digest: finished twice");
  state.finished = true;
  Value out{};
  if (state.backend == Backend::OpenSsl) {
    std::uint8_t none[16];  // GCM writes nothing at the end; OpenSSL wants a buffer all the same
    int written = 0;
    if (EVP_EncryptFinal_ex(state.context.get(), none, &written) != 1) fail("final");
    if (EVP_CIPHER_CTX_ctrl(state.context.get(), EVP_CTRL_GCM_GET_TAG, static_cast<int>(out.size()), out.data()) != 1)
      fail("tag");
    return out;
  }
  // The additional data's last block (absorb zero-pads it), then the lengths block: the data's
  // length in bits, and a text of none.
  const std::uint64_t bits = state.total_bytes * 8;
  std::uint8_t lengths[kBlock] = {};
  for (std::size_t i = 0; i < 8; ++i) lengths[i] = static_cast<std::uint8_t>(bits >> (56 - 8 * i));
  transport::detail::ghash_vpclmul_absorb(state.powers, state.sum, state.pending, state.pending_bytes);
  transport::detail::ghash_vpclmul_absorb(state.powers, state.sum, lengths, kBlock);
  transport::detail::ghash_vpclmul_value(state.sum, out.data());
  for (std::size_t i = 0; i < kBlock; ++i) out[i] ^= state.mask[i];
  return out;
}

}  // namespace mpc::gc3
