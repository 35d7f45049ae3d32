#include "transport/frame_cipher.hpp"

#include <openssl/evp.h>
#include <sodium.h>

#include <climits>
#include <string>

#include "common/error.hpp"
#include "transport/gcm_vaes.hpp"

namespace mpc::transport {

struct FrameCipher::VaesKey {
  detail::GcmVaesKey key;
  ~VaesKey() { wipe(&key, sizeof key); }
};

namespace {

constexpr char kRekeyLabel[] = "mpc-kdc data link rekey";

EVP_CIPHER_CTX* native(void* context) { return static_cast<EVP_CIPHER_CTX*>(context); }

[[noreturn]] void fail(const std::string& what) { throw Error(Component::Transport, "AES-256-GCM " + what + " failed"); }

}  // namespace

std::uint32_t frame_length(const std::uint8_t header[kFrameHeaderBytes]) noexcept {
  return static_cast<std::uint32_t>(header[0]) << 24 | static_cast<std::uint32_t>(header[1]) << 16 |
         static_cast<std::uint32_t>(header[2]) << 8 | header[3];
}

FrameCipher::FrameCipher(std::span<const std::uint8_t> key, std::uint64_t rekey_after_frames,
                         FrameCipherBackend backend)
    : key_(key), rekey_after_(rekey_after_frames) {
  if (key.size() != kLinkKeyBytes) throw Error(Component::Transport, "a link key has 32 bytes");
  if (rekey_after_frames == 0) throw Error(Component::Transport, "a link must rekey after at least one frame");
  if (backend == FrameCipherBackend::Auto)
    backend = detail::gcm_vaes_supported() ? FrameCipherBackend::Vaes : FrameCipherBackend::OpenSsl;
  if (backend == FrameCipherBackend::Vaes && !detail::gcm_vaes_supported())
    throw Error(Component::Transport, "this CPU has no VAES and VPCLMULQDQ with AVX-512 for AES-256-GCM");
  backend_ = backend;
  if (backend_ == FrameCipherBackend::Vaes) {
    vaes_ = std::make_unique<VaesKey>();
    return;
  }
  context_ = EVP_CIPHER_CTX_new();
  if (context_ == nullptr) fail("context");
}

FrameCipher::~FrameCipher() { EVP_CIPHER_CTX_free(native(context_)); }

void FrameCipher::set_key() {
  if (backend_ == FrameCipherBackend::Vaes)
    detail::gcm_vaes_set_key(key_.data(), vaes_->key);
  else if (EVP_CipherInit_ex(native(context_), EVP_aes_256_gcm(), nullptr, key_.data(), nullptr, encrypting_ ? 1 : 0) !=
           1)
    fail("key setup");
  keyed_ = true;
}

void FrameCipher::next_nonce(std::uint8_t nonce[12]) {
  if (counter_ == rekey_after_) {
    SecretBytes next(kLinkKeyBytes);
    crypto_generichash(next.data(), next.size(), reinterpret_cast<const unsigned char*>(kRekeyLabel),
                       sizeof kRekeyLabel - 1, key_.data(), key_.size());
    key_ = std::move(next);
    counter_ = 0;
    keyed_ = false;
  }
  for (int i = 0; i < 4; ++i) nonce[i] = 0;
  for (int i = 0; i < 8; ++i) nonce[4 + i] = static_cast<std::uint8_t>(counter_ >> (56 - 8 * i));
  ++counter_;
  ++frames_;
}

void FrameCipher::seal(std::initializer_list<std::span<const std::uint8_t>> parts,
                       std::uint8_t header[kFrameHeaderBytes], std::uint8_t* ciphertext,
                       std::uint8_t tag[kFrameTagBytes]) {
  std::size_t total = 0;
  for (const auto& part : parts) total += part.size();
  if (total > UINT32_MAX || total > static_cast<std::size_t>(INT_MAX))
    throw Error(Component::Transport, "a frame of " + std::to_string(total) + " bytes is too long");
  if (!encrypting_ && frames_ != 0) throw Error(Component::Transport, "a frame cipher seals or opens, not both");
  encrypting_ = true;
  std::uint8_t nonce[12];
  next_nonce(nonce);
  if (!keyed_) set_key();
  for (int i = 0; i < 4; ++i) header[i] = static_cast<std::uint8_t>(total >> (24 - 8 * i));
  if (backend_ == FrameCipherBackend::Vaes) {
    std::size_t offset = 0;
    for (const auto& part : parts) {
      detail::gcm_vaes_encrypt(vaes_->key, nonce, offset, part.data(), ciphertext + offset, part.size());
      offset += part.size();
    }
    detail::gcm_vaes_tag(vaes_->key, nonce, header, kFrameHeaderBytes, ciphertext, total, tag);
    return;
  }
  EVP_CIPHER_CTX* context = native(context_);
  int written = 0;
  if (EVP_EncryptInit_ex(context, nullptr, nullptr, nullptr, nonce) != 1 ||
      EVP_EncryptUpdate(context, nullptr, &written, header, kFrameHeaderBytes) != 1)
    fail("frame setup");
  std::uint8_t* out = ciphertext;
  for (const auto& part : parts) {
    if (part.empty()) continue;
    if (EVP_EncryptUpdate(context, out, &written, part.data(), static_cast<int>(part.size())) != 1) fail("encryption");
    out += written;
  }
  if (EVP_EncryptFinal_ex(context, out, &written) != 1 ||
      EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, kFrameTagBytes, tag) != 1)
    fail("tag");
}

bool FrameCipher::open(const std::uint8_t header[kFrameHeaderBytes], std::span<std::uint8_t> text,
                       const std::uint8_t tag[kFrameTagBytes]) {
  if (encrypting_) throw Error(Component::Transport, "a frame cipher seals or opens, not both");
  if (text.size() != frame_length(header) || text.size() > static_cast<std::size_t>(INT_MAX)) {
    wipe(text.data(), text.size());
    return false;
  }
  std::uint8_t nonce[12];
  next_nonce(nonce);
  if (!keyed_) set_key();
  if (backend_ == FrameCipherBackend::Vaes) {
    if (detail::gcm_vaes_open(vaes_->key, nonce, header, kFrameHeaderBytes, text.data(), text.size(), tag)) return true;
    wipe(text.data(), text.size());
    return false;
  }
  EVP_CIPHER_CTX* context = native(context_);
  int written = 0;
  std::uint8_t expected[kFrameTagBytes];
  std::copy(tag, tag + kFrameTagBytes, expected);
  if (EVP_DecryptInit_ex(context, nullptr, nullptr, nullptr, nonce) != 1 ||
      EVP_DecryptUpdate(context, nullptr, &written, header, kFrameHeaderBytes) != 1 ||
      (!text.empty() &&
       EVP_DecryptUpdate(context, text.data(), &written, text.data(), static_cast<int>(text.size())) != 1) ||
      EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, kFrameTagBytes, expected) != 1)
    fail("decryption");
  if (EVP_DecryptFinal_ex(context, text.data() + text.size(), &written) != 1) {
    wipe(text.data(), text.size());
    return false;
  }
  return true;
}

}  // namespace mpc::transport
