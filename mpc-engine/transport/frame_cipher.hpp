// AES-256-GCM frames of the peer data plane (data_link.hpp), one direction of a link.
//
// A frame on the wire is: u32be length of the ciphertext || ciphertext || 16-byte tag. The
// length is the associated data; the nonce is 32 zero bits and the frame's 64-bit counter,
// so a frame replayed, dropped, reordered or cut short fails its tag. Every
// `rekey_after_frames` frames both ends replace the key by BLAKE2b(key, label) and restart
// the counter: far below GCM's limits on one key, and a key taken from memory later
// does not open the frames sealed before it.
//
// AES-256-GCM runs on AES-NI/VAES and carry-less multiply, several times faster per core than
// the XSalsa20-Poly1305 of CurveZMQ (tests/bench/link_bench): through gcm_vaes.hpp where the
// CPU has VAES and VPCLMULQDQ with AVX-512, through OpenSSL's EVP elsewhere. The two are the
// same cipher: ends of a link may use either.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>

#include "common/secret.hpp"

namespace mpc::transport {

inline constexpr std::size_t kFrameHeaderBytes = 4;
inline constexpr std::size_t kFrameTagBytes = 16;
inline constexpr std::size_t kLinkKeyBytes = 32;
inline constexpr std::uint64_t kDefaultRekeyFrames = std::uint64_t{1} << 24;

enum class FrameCipherBackend {
  Auto,     // Vaes where the CPU has it, else OpenSsl
  OpenSsl,  // OpenSSL's EVP AES-256-GCM
  Vaes,     // gcm_vaes.hpp; Error(Transport) if the CPU lacks it
};

class FrameCipher {
 public:
  FrameCipher(std::span<const std::uint8_t> key, std::uint64_t rekey_after_frames = kDefaultRekeyFrames,
              FrameCipherBackend backend = FrameCipherBackend::Auto);
  ~FrameCipher();
  FrameCipher(const FrameCipher&) = delete;
  FrameCipher& operator=(const FrameCipher&) = delete;

  // Seals the next frame: the parts' bytes, in order, as one plaintext. Writes the header,
  // `ciphertext` (the parts' total size) and the tag.
  void seal(std::initializer_list<std::span<const std::uint8_t>> parts, std::uint8_t header[kFrameHeaderBytes],
            std::uint8_t* ciphertext, std::uint8_t tag[kFrameTagBytes]);
  // Opens the next frame in place. False when the tag fails: `text` is then wiped, and the
  // cipher must not be used again (the link it belongs to is finished).
  [[nodiscard]] bool open(const std::uint8_t header[kFrameHeaderBytes], std::span<std::uint8_t> text,
                          const std::uint8_t tag[kFrameTagBytes]);
  std::uint64_t frames() const noexcept { return frames_; }
  FrameCipherBackend backend() const noexcept { return backend_; }  // Auto resolved

 private:
  struct VaesKey;
  void next_nonce(std::uint8_t nonce[12]);
  void set_key();

  SecretBytes key_;
  std::uint64_t rekey_after_;
  std::uint64_t counter_ = 0;  // of the current key
  std::uint64_t frames_ = 0;   // of the link
  FrameCipherBackend backend_ = FrameCipherBackend::OpenSsl;
  void* context_ = nullptr;    // EVP_CIPHER_CTX (OpenSsl)
  std::unique_ptr<VaesKey> vaes_;  // Vaes
  bool encrypting_ = false;
  bool keyed_ = false;
};

// The ciphertext length a header announces.
std::uint32_t frame_length(const std::uint8_t header[kFrameHeaderBytes]) noexcept;

}  // namespace mpc::transport
