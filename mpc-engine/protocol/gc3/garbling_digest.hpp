// The digest by which the evaluator of a batch garbled twice (dual_garbling.hpp) compares
// the garbling it received from one garbler with the other garbler's: GMAC, the GHASH of the
// bytes under a one-time AES-256 key, as AES-256-GCM computes its tag for additional data alone.
//
// Why GMAC and not a hash. The digest covers every garbled table of a login, megabytes, at the
// evaluator and at the second garbler; GHASH runs on the CPU's carry-less multiply at several
// GB/s per core, ten times a software hash. What it needs is a key the streaming garbler does
// not know: the evaluator and the second garbler share one (their edge's key, drawn anew for
// each batch), the first garbler does not hold it. For a fixed key the tag is the GHASH
// polynomial in H = AES_k(0) of the bytes, masked by AES_k(J0): two different streams of at
// most L blocks give the same tag for at most L + 1 of the 2^128 values of H (the polynomial of
// their difference has at most that many roots), and a garbler that does not know k has no
// information on H, even after it sees the honest stream's tag (the mask is uniform to it). So a
// stream other than the honest one passes with probability at most (L + 1) / 2^128, below
// 2^-100 for any batch the engine runs. Each key digests one stream only.
//
// Speed: OpenSSL 3.0 hashes additional data one 128-bit carry-less product at a time; where
// the CPU has VPCLMULQDQ with AVX-512 the digest hashes sixteen blocks per reduction itself (transport/ghash_vpclmul.hpp). Both give the same value: the peers' digests compare
// whichever each of them uses.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace mpc::gc3 {

class GarblingDigest {
 public:
  static constexpr std::size_t kKeyBytes = 32;
  static constexpr std::size_t kBytes = 16;
  using Value = std::array<std::uint8_t, kBytes>;

  enum class Backend {
    Auto,     // Vpclmul where the CPU has it, else OpenSsl
    OpenSsl,  // AES-256-GCM's tag over additional data
    Vpclmul,  // GHASH with VPCLMULQDQ; Error(Server) if the CPU lacks it
  };

  explicit GarblingDigest(std::span<const std::uint8_t> key,  // kKeyBytes, for this digest only
                          Backend backend = Backend::Auto);
  ~GarblingDigest();
  GarblingDigest(const GarblingDigest&) = delete;
  GarblingDigest& operator=(const GarblingDigest&) = delete;

  // The bytes digested are those of every add() in order, however they are split.
  void add(std::span<const std::uint8_t> bytes);
  Value finish();  // once

  Backend backend() const noexcept;  // Auto resolved

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace mpc::gc3
