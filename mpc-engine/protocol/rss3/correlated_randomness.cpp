// Correlated randomness for AND gates (Araki et al., CCS 2016, eprint 2016/768,
// section 2.2): alpha_i = F(k_i, id) ^ F(k_{i-1}, id) with F = AES-128-CTR (OpenSSL
// EVP, AES-NI / VAES where the CPU has them).
//
// Speed: keystream is generated straight into the caller's buffer (zero it, encrypt it
// in place under k_i, then again under k_{i-1}); the alpha contexts are initialised
// once per batch and stream continuously, so no call allocates or re-expands a key.
#include "protocol/rss3/correlated_randomness.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <string_view>
#include <string>

#include "common/error.hpp"
#include "common/secret.hpp"
#include "protocol/rss3/prf_vaes.hpp"

namespace mpc::rss3 {
namespace {

constexpr std::size_t kBlock = 16;

struct CipherFree {
  void operator()(EVP_CIPHER_CTX* ctx) const noexcept { EVP_CIPHER_CTX_free(ctx); }
};
using CipherPtr = std::unique_ptr<EVP_CIPHER_CTX, CipherFree>;

std::array<std::uint8_t, 16> counter_block(BatchNonce nonce, std::uint32_t counter) {
  std::array<std::uint8_t, 16> iv{};
  for (int i = 0; i < 8; ++i) iv[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(nonce.epoch >> (56 - 8 * i));
  for (int i = 0; i < 4; ++i) iv[static_cast<std::size_t>(8 + i)] = static_cast<std::uint8_t>(nonce.sequence >> (24 - 8 * i));
  for (int i = 0; i < 4; ++i) iv[static_cast<std::size_t>(12 + i)] = static_cast<std::uint8_t>(counter >> (24 - 8 * i));
  return iv;
}

CipherPtr make_context(const EVP_CIPHER* cipher, const PrfKey& key, const std::array<std::uint8_t, 16>& iv) {
  CipherPtr ctx(EVP_CIPHER_CTX_new());
  if (!ctx) throw Error(Component::Protocol, "EVP_CIPHER_CTX_new failed");
  if (EVP_EncryptInit_ex2(ctx.get(), cipher, key.data(), iv.data(), nullptr) != 1)
    throw Error(Component::Protocol, "AES-128-CTR initialisation failed");
  return ctx;
}

// XORs the keystream of `ctx` into data[0, size) (CTR encryption in place).
void xor_keystream(EVP_CIPHER_CTX* ctx, std::uint8_t* data, std::size_t size) {
  while (size != 0) {
    const std::size_t piece = size > (std::size_t{1} << 30) ? (std::size_t{1} << 30) : size;
    int written = 0;
    if (EVP_EncryptUpdate(ctx, data, &written, data, static_cast<int>(piece)) != 1 ||
        written != static_cast<int>(piece))
      throw Error(Component::Protocol, "AES-128-CTR keystream generation failed");
    data += piece;
    size -= piece;
  }
}

// Fetched once: a fetch looks the algorithm up under a lock, too slow for every GCM tag.
const EVP_CIPHER* aes128_ctr() {
  static const EVP_CIPHER* const cipher = EVP_CIPHER_fetch(nullptr, "AES-128-CTR", nullptr);
  if (cipher == nullptr) throw Error(Component::Protocol, "AES-128-CTR is not available from OpenSSL");
  return cipher;
}

// out = the keystream of `key` from byte `skip` of counter block `counter` on. The caller has
// checked that the last counter stays below 2^32.
void vaes_output_mask(const detail::AesRoundKeys& key, const std::uint8_t prefix[12], std::uint32_t counter,
                      std::size_t skip, std::span<std::uint8_t> out) {
  std::uint8_t block[kBlock];
  std::size_t done = 0;
  if (skip != 0) {
    detail::vaes_ctr(key, prefix, counter++, block, 1);
    done = std::min(out.size(), kBlock - skip);
    std::memcpy(out.data(), block + skip, done);
  }
  const std::size_t whole = (out.size() - done) / kBlock;
  if (whole != 0) detail::vaes_ctr(key, prefix, counter, out.data() + done, whole);
  counter += static_cast<std::uint32_t>(whole);
  done += whole * kBlock;
  if (done < out.size()) {
    detail::vaes_ctr(key, prefix, counter, block, 1);
    std::memcpy(out.data() + done, block, out.size() - done);
  }
  wipe(block, sizeof block);
}

}  // namespace

namespace detail {
bool vaes512_supported() {
#if defined(MPC_RSS3_X86)
  __builtin_cpu_init();
  return __builtin_cpu_supports("vaes") && __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("aes");
#else
  return false;
#endif
}

bool vaes256_supported() {
#if defined(MPC_RSS3_X86)
  __builtin_cpu_init();
  return __builtin_cpu_supports("vaes") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("aes");
#else
  return false;
#endif
}

namespace {

// The widest width this CPU runs, chosen once.
enum class VaesWidth { None, Ymm, Zmm };
VaesWidth vaes_width() {
  static const VaesWidth width = vaes512_supported()   ? VaesWidth::Zmm
                                 : vaes256_supported() ? VaesWidth::Ymm
                                                       : VaesWidth::None;
  return width;
}

}  // namespace

bool vaes_prf_supported() { return vaes_width() != VaesWidth::None; }

const char* vaes_prf_width() {
  switch (vaes_width()) {
    case VaesWidth::Zmm: return "zmm";
    case VaesWidth::Ymm: return "ymm";
    default: return nullptr;
  }
}

void vaes_expand_key(const std::uint8_t key[16], AesRoundKeys& round_keys) {
  if (vaes_width() == VaesWidth::Zmm) vaes512_expand_key(key, round_keys);
  else vaes256_expand_key(key, round_keys);
}

void vaes_ctr_xor2(const AesRoundKeys& own, const AesRoundKeys& previous, const std::uint8_t prefix[12],
                   std::uint32_t counter, std::uint8_t* out, std::size_t blocks) {
  if (vaes_width() == VaesWidth::Zmm) vaes512_ctr_xor2(own, previous, prefix, counter, out, blocks);
  else vaes256_ctr_xor2(own, previous, prefix, counter, out, blocks);
}

void vaes_ctr(const AesRoundKeys& key, const std::uint8_t prefix[12], std::uint32_t counter, std::uint8_t* out,
              std::size_t blocks) {
  if (vaes_width() == VaesWidth::Zmm) vaes512_ctr(key, prefix, counter, out, blocks);
  else vaes256_ctr(key, prefix, counter, out, blocks);
}
}  // namespace detail

const char* prf_path_name() {
  const char* width = detail::vaes_prf_width();
  if (width == nullptr) return "openssl";
  return std::string_view(width) == "zmm" ? "vaes-zmm" : "vaes-ymm";
}

struct PrfStream::State {
  BatchNonce nonce;
  bool vaes = false;
  detail::AesRoundKeys round_keys;  // VAES
  std::uint8_t prefix[12] = {};
  PrfKey key{};

  ~State() {
    wipe(&round_keys, sizeof round_keys);
    wipe(key.data(), key.size());
  }
};

PrfStream::PrfStream(const PrfKey& key, BatchNonce nonce) : state_(std::make_unique<State>()) {
  state_->nonce = nonce;
  state_->vaes = detail::vaes_prf_supported();
  if (state_->vaes) {
    detail::vaes_expand_key(key.data(), state_->round_keys);
    const auto iv = counter_block(nonce, 0);
    std::memcpy(state_->prefix, iv.data(), sizeof state_->prefix);
    return;
  }
  (void)aes128_ctr();
  state_->key = key;
}

PrfStream::~PrfStream() = default;

void PrfStream::blocks(std::uint32_t first, std::span<std::uint8_t> out) {
  if (out.size() % kBlock != 0 || first > kOutputMaskCounterBase ||
      out.size() / kBlock > kOutputMaskCounterBase - first)
    throw Error(Component::Protocol, "PRF stream of " + std::to_string(out.size()) + " bytes from block " +
                                         std::to_string(first) + " refused");
  if (out.empty()) return;
  if (state_->vaes) {
    detail::vaes_ctr(state_->round_keys, state_->prefix, first, out.data(), out.size() / kBlock);
    return;
  }
  const CipherPtr ctx = make_context(aes128_ctr(), state_->key, counter_block(state_->nonce, first));
  std::memset(out.data(), 0, out.size());
  xor_keystream(ctx.get(), out.data(), out.size());
}

void prf_stream(const PrfKey& key, BatchNonce nonce, std::span<std::uint8_t> out) {
  PrfStream(key, nonce).blocks(0, out);
}

struct CorrelatedRandomness::State {
  BatchNonce nonce;
  PrfBackend backend = PrfBackend::OpenSsl;
  // OpenSsl backend: the keys, for contexts made on first use (a GCM tag's answer draws output
  // masks only, and a batch's alpha is drawn before any output mask).
  PrfKey own_key{};
  PrfKey previous_key{};
  CipherPtr own_alpha;
  CipherPtr previous_alpha;
  CipherPtr own_output;
  CipherPtr previous_output;
  detail::AesRoundKeys own_round_keys;  // Vaes backend
  detail::AesRoundKeys previous_round_keys;
  std::uint8_t prefix[12] = {};
  std::uint64_t alpha_blocks_used = 0;

  State() = default;
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  ~State() {
    wipe(own_key.data(), own_key.size());
    wipe(previous_key.data(), previous_key.size());
    wipe(&own_round_keys, sizeof own_round_keys);
    wipe(&previous_round_keys, sizeof previous_round_keys);
  }
};

CorrelatedRandomness::CorrelatedRandomness(const PrfKey& own_key, const PrfKey& previous_key, BatchNonce nonce)
    : CorrelatedRandomness(own_key, previous_key, nonce, PrfBackend::Auto) {}

CorrelatedRandomness::CorrelatedRandomness(const PrfKey& own_key, const PrfKey& previous_key, BatchNonce nonce,
                                           PrfBackend backend)
    : state_(std::make_unique<State>()) {
  state_->nonce = nonce;
  if (backend == PrfBackend::Auto) backend = detail::vaes_prf_supported() ? PrfBackend::Vaes : PrfBackend::OpenSsl;
  if (backend == PrfBackend::Vaes && !detail::vaes_prf_supported())
    throw Error(Component::Protocol, "this CPU has no VAES for the PRF");
  state_->backend = backend;
  if (backend == PrfBackend::Vaes) {
    detail::vaes_expand_key(own_key.data(), state_->own_round_keys);
    detail::vaes_expand_key(previous_key.data(), state_->previous_round_keys);
    const auto iv = counter_block(nonce, 0);
    std::memcpy(state_->prefix, iv.data(), sizeof state_->prefix);
  } else {
    (void)aes128_ctr();  // a missing cipher fails here, not at the first draw
    state_->own_key = own_key;
    state_->previous_key = previous_key;
  }
}

// EVP_CIPHER_CTX_free cleanses OpenSSL's expanded keys, State wipes the VAES ones and the
// keys it keeps for contexts not yet made.
CorrelatedRandomness::~CorrelatedRandomness() = default;

PrfBackend CorrelatedRandomness::backend() const noexcept { return state_->backend; }

void CorrelatedRandomness::next_alpha(std::span<std::uint8_t> out) {
  if (out.size() % kBlock != 0)
    throw Error(Component::Protocol, "alpha request of " + std::to_string(out.size()) +
                                         " bytes is not a multiple of 16");
  const std::uint64_t blocks = out.size() / kBlock;
  if (blocks > kOutputMaskCounterBase - state_->alpha_blocks_used)
    throw Error(Component::Protocol, "correlated randomness exhausted for this batch");
  if (out.empty()) return;
  if (state_->backend == PrfBackend::Vaes) {
    // Counters stay below kOutputMaskCounterBase = 2^31 (checked above): no 32-bit wrap.
    detail::vaes_ctr_xor2(state_->own_round_keys, state_->previous_round_keys, state_->prefix,
                          static_cast<std::uint32_t>(state_->alpha_blocks_used), out.data(), blocks);
  } else {
    if (!state_->own_alpha) {
      const auto iv = counter_block(state_->nonce, 0);
      state_->own_alpha = make_context(aes128_ctr(), state_->own_key, iv);
      state_->previous_alpha = make_context(aes128_ctr(), state_->previous_key, iv);
    }
    std::memset(out.data(), 0, out.size());
    xor_keystream(state_->own_alpha.get(), out.data(), out.size());
    xor_keystream(state_->previous_alpha.get(), out.data(), out.size());
  }
  state_->alpha_blocks_used += blocks;
}

void CorrelatedRandomness::output_masks(std::size_t offset, std::span<std::uint8_t> own,
                                        std::span<std::uint8_t> previous) {
  if (own.size() != previous.size())
    throw Error(Component::Protocol, "output mask spans differ in length");
  if (own.empty()) return;
  // Counter of the last block touched must stay below 2^32 (the counter field).
  const std::uint64_t reserved_blocks = std::uint64_t{0x100000000} - kOutputMaskCounterBase;
  if (offset / kBlock >= reserved_blocks || own.size() > reserved_blocks * kBlock - offset)
    throw Error(Component::Protocol, "output mask offset beyond the reserved counter range");
  const auto counter = static_cast<std::uint32_t>(kOutputMaskCounterBase + offset / kBlock);
  const std::size_t skip = offset % kBlock;
  if (state_->backend == PrfBackend::Vaes) {
    vaes_output_mask(state_->own_round_keys, state_->prefix, counter, skip, own);
    vaes_output_mask(state_->previous_round_keys, state_->prefix, counter, skip, previous);
    return;
  }
  if (!state_->own_output) {
    const auto base = counter_block(state_->nonce, kOutputMaskCounterBase);
    state_->own_output = make_context(aes128_ctr(), state_->own_key, base);
    state_->previous_output = make_context(aes128_ctr(), state_->previous_key, base);
  }
  const auto iv = counter_block(state_->nonce, counter);
  std::uint8_t discard[kBlock];
  const std::pair<EVP_CIPHER_CTX*, std::span<std::uint8_t>> jobs[2] = {{state_->own_output.get(), own},
                                                                       {state_->previous_output.get(), previous}};
  for (const auto& [ctx, out] : jobs) {
    // Re-seeding the IV keeps the expanded key.
    if (EVP_EncryptInit_ex2(ctx, nullptr, nullptr, iv.data(), nullptr) != 1)
      throw Error(Component::Protocol, "AES-128-CTR re-initialisation failed");
    if (skip != 0) {
      std::memset(discard, 0, skip);
      xor_keystream(ctx, discard, skip);
    }
    std::memset(out.data(), 0, out.size());
    xor_keystream(ctx, out.data(), out.size());
  }
  wipe(discard, sizeof discard);
}

}  // namespace mpc::rss3
