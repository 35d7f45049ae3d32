// Correlated randomness for the AND gates: alpha_0 ^ alpha_1 ^ alpha_2 = 0 without
// communication (Araki et al., CCS 2016, section 2.2), from a PRF F = AES-128-CTR.
//
// Party i holds two PRF keys: k_i, which it shares with party i+1, and k_{i-1},
// which it shares with party i-1. Then alpha_i = F(k_i, id) ^ F(k_{i-1}, id) and
// the three sum to zero because every key appears twice.
//
// Ids are 128-bit AES-CTR counter blocks: epoch (64, big-endian) || batch sequence
// (32) || block counter (32). An epoch is chosen at random by the batch leader when
// it starts, the sequence grows by one per batch, and the block counter restarts at
// zero per batch; the followers refuse a sequence that does not grow and any epoch they
// computed under before (store/epoch_ledger.hpp), so an id is never used twice under one
// key, whatever the leader does.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace mpc::rss3 {

using PrfKey = std::array<std::uint8_t, 16>;

struct BatchNonce {
  std::uint64_t epoch = 0;
  std::uint32_t sequence = 0;
};

// Block counters from this value on are reserved for output re-randomisation.
inline constexpr std::uint32_t kOutputMaskCounterBase = 0x80000000u;

// Which AES implementation produces alpha; all give identical bytes. (OpenSSL 3.0's CTR
// mode uses 128-bit AES-NI; the VAES path runs four blocks per instruction with AVX-512, two
// with AVX2 alone, and both keys in one pass. Output masks come from the same backend.)
enum class PrfBackend {
  Auto,     // Vaes where the CPU has it, else OpenSsl
  OpenSsl,  // OpenSSL EVP AES-128-CTR (AES-NI where available)
  Vaes,     // VAES with AVX-512 or AVX2; Error(Protocol) if the CPU lacks it
};

// The path Auto takes on this CPU: "vaes-zmm", "vaes-ymm" or "openssl" (for benchmark reports).
const char* prf_path_name();

// F(key, id) for the batch's block counters 0, 1, ...: the half of the alpha stream that
// `key` contributes (alpha_i = prf_stream(k_i) ^ prf_stream(k_{i-1}), byte for byte). The AND
// check needs each half on its own. out.size() must be a multiple of 16 and stay below the
// output-mask counters.
void prf_stream(const PrfKey& key, BatchNonce nonce, std::span<std::uint8_t> out);

// The same stream from any block counter on, for a caller that draws it a few kilobytes at a
// time: the key is expanded once.
class PrfStream {
 public:
  PrfStream(const PrfKey& key, BatchNonce nonce);
  ~PrfStream();
  PrfStream(const PrfStream&) = delete;
  PrfStream& operator=(const PrfStream&) = delete;
  // out: the keystream of counters first, first + 1, ...; out.size() a multiple of 16, and the
  // last counter below the output-mask counters.
  void blocks(std::uint32_t first, std::span<std::uint8_t> out);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

class CorrelatedRandomness {
 public:
  // own_key = k_i (shared with the next party), previous_key = k_{i-1} (shared with the previous party).
  CorrelatedRandomness(const PrfKey& own_key, const PrfKey& previous_key, BatchNonce nonce);
  CorrelatedRandomness(const PrfKey& own_key, const PrfKey& previous_key, BatchNonce nonce, PrfBackend backend);
  ~CorrelatedRandomness();
  CorrelatedRandomness(const CorrelatedRandomness&) = delete;
  CorrelatedRandomness& operator=(const CorrelatedRandomness&) = delete;

  // Fills `out` with the next bytes of alpha_i. Every party must call this with the same
  // sequence of lengths; `out.size()` must be a multiple of 16. Throws Error(Protocol)
  // when the batch's counter space (kOutputMaskCounterBase blocks) would be exceeded.
  void next_alpha(std::span<std::uint8_t> out);

  // Output re-randomisation masks for output bytes [offset, offset + out.size()):
  // own = F(k_i, ...), previous = F(k_{i-1}, ...), both from the reserved counter range.
  // Party i sends (x_i ^ own, a_i ^ previous); see output.hpp.
  void output_masks(std::size_t offset, std::span<std::uint8_t> own, std::span<std::uint8_t> previous);

  // The backend in use for alpha (Auto resolved): for logs and tests.
  PrfBackend backend() const noexcept;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace mpc::rss3
