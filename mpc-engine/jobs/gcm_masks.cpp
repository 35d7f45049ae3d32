#include "jobs/gcm_masks.hpp"

#include <openssl/evp.h>
#include <sodium.h>

#include <algorithm>
#include <array>
#include <vector>

#include "common/error.hpp"
#include "jobs/nonce_pool.hpp"

namespace mpc::jobs {
namespace {

constexpr char kMaskKeyLabel[] = "mpc-kdc gcm local mask key v1";

// m_j = BLAKE2b-256 keyed by the component, over the label and the key id: a key of its own for
// every component and key, unrelated to K itself.
std::array<std::uint8_t, 32> mask_key(const wire::KeyId& key, std::span<const std::uint8_t> component) {
  crypto_generichash_state state;
  crypto_generichash_init(&state, component.data(), component.size(), 32);
  crypto_generichash_update(&state, reinterpret_cast<const unsigned char*>(kMaskKeyLabel), sizeof kMaskKeyLabel - 1);
  const std::uint8_t version[4] = {static_cast<std::uint8_t>(key.version >> 24), static_cast<std::uint8_t>(key.version >> 16),
                                   static_cast<std::uint8_t>(key.version >> 8), static_cast<std::uint8_t>(key.version)};
  crypto_generichash_update(&state, version, sizeof version);
  crypto_generichash_update(&state, reinterpret_cast<const unsigned char*>(key.name.data()), key.name.size());
  std::array<std::uint8_t, 32> out{};
  crypto_generichash_final(&state, out.data(), out.size());
  wipe(&state, sizeof state);
  return out;
}

struct CipherFree {
  void operator()(EVP_CIPHER_CTX* context) const { EVP_CIPHER_CTX_free(context); }
};

}  // namespace

struct MaskKeys::State {
  std::vector<std::unique_ptr<EVP_CIPHER_CTX, CipherFree>> ciphers;
};

SecretBytes replicated_mask_components(const SecretBytes& share) {
  const std::size_t half = share.size() / 2;
  if (share.size() % 2 != 0 || half < kMaskComponentBytes)
    throw Error(Component::Server, "a replicated key share too short for mask components");
  SecretBytes out(2 * kMaskComponentBytes);
  for (std::size_t i = 0; i < kMaskComponentBytes; ++i) {
    out[i] = share[half + i];                                                  // c_i = a_i
    out[kMaskComponentBytes + i] = static_cast<std::uint8_t>(share[i] ^ share[half + i]);  // c_{i-1} = x_i ^ a_i
  }
  return out;
}

SecretBytes xor_mask_component(std::span<const std::uint8_t> share) {
  if (share.size() < kMaskComponentBytes) throw Error(Component::Server, "an XOR key share too short for a mask component");
  SecretBytes out(kMaskComponentBytes);
  std::copy_n(share.begin(), kMaskComponentBytes, out.data());
  return out;
}

MaskKeys::MaskKeys(const wire::KeyId& key, std::span<const std::uint8_t> components) : state_(std::make_unique<State>()) {
  if (components.empty() || components.size() % kMaskComponentBytes != 0)
    throw Error(Component::Server, "mask components of " + std::to_string(components.size()) + " bytes");
  for (std::size_t j = 0; j < components.size() / kMaskComponentBytes; ++j) {
    auto secret = mask_key(key, components.subspan(j * kMaskComponentBytes, kMaskComponentBytes));
    std::unique_ptr<EVP_CIPHER_CTX, CipherFree> cipher(EVP_CIPHER_CTX_new());
    const bool ok = cipher && EVP_EncryptInit_ex(cipher.get(), EVP_aes_256_ecb(), nullptr, secret.data(), nullptr) == 1 &&
                    EVP_CIPHER_CTX_set_padding(cipher.get(), 0) == 1;
    wipe(secret.data(), secret.size());
    if (!ok) throw Error(Component::Server, "OpenSSL could not set up a mask key");
    state_->ciphers.push_back(std::move(cipher));
  }
}

MaskKeys::~MaskKeys() = default;

std::size_t MaskKeys::count() const noexcept { return state_->ciphers.size(); }

void MaskKeys::term(std::size_t component, const wire::GcmNonce& nonce, std::uint32_t first,
                    std::span<std::uint8_t> out) const {
  if (component >= count() || out.size() % 16 != 0) throw Error(Component::Server, "mask term out of range");
  for (std::size_t b = 0; b < out.size() / 16; ++b) {
    const auto counter = gcm_counter_block(nonce, first + static_cast<std::uint32_t>(b));
    std::copy(counter.begin(), counter.end(), out.begin() + static_cast<std::ptrdiff_t>(b * 16));
  }
  int written = 0;
  if (out.empty()) return;
  if (EVP_EncryptUpdate(state_->ciphers[component].get(), out.data(), &written, out.data(), static_cast<int>(out.size())) != 1 ||
      written != static_cast<int>(out.size()))
    throw Error(Component::Server, "OpenSSL could not compute a mask");
}

void MaskKeys::xor_terms(const wire::GcmNonce& nonce, std::uint32_t first, std::span<std::uint8_t> out) const {
  std::fill(out.begin(), out.end(), std::uint8_t{0});
  SecretBytes term_bytes(out.size());
  for (std::size_t j = 0; j < count(); ++j) {
    term(j, nonce, first, term_bytes.span());
    for (std::size_t i = 0; i < out.size(); ++i) out[i] ^= term_bytes[i];
  }
}

rss3::ByteShare replicated_masks(const MaskKeys& keys, const wire::GcmNonce& nonce, std::uint32_t first,
                                 std::size_t blocks) {
  if (keys.count() != 2) throw Error(Component::Server, "a replicated share of the masks needs two components");
  rss3::ByteShare out;
  out.x.resize(blocks * 16);
  out.a.resize(blocks * 16);
  SecretBytes previous(blocks * 16);
  keys.term(0, nonce, first, out.a);
  keys.term(1, nonce, first, previous.span());
  for (std::size_t i = 0; i < out.x.size(); ++i) out.x[i] = static_cast<std::uint8_t>(out.a[i] ^ previous[i]);
  return out;
}

}  // namespace mpc::jobs
