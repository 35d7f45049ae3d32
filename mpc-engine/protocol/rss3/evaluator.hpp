// Layer-by-layer evaluation of a compiled Program on one party's bitsliced shares
// (Araki et al., CCS 2016): XOR, NOT and copies are local; every AND costs one bit
// per party on the wire, all ANDs of one AND-depth level travel in one message.
//
// AND, party i: r_i = x_i&y_i ^ a_i&b_i ^ alpha_i, send r_i to i+1, receive r_{i-1};
// the new share is (r_i ^ r_{i-1}, r_i).
//
// Message layout per layer (identical at every party): instances are processed in
// chunks of kChunkInstances; for chunk c, for AND k of the layer, the bits of r for
// the chunk's instances, packed little-endian, ceil(n_c / 8) bytes each (n_c is the
// chunk's instance count, a partial last chunk sends no padding bytes). So a batch of
// N instances, N a multiple of 8, sends exactly one bit per AND per instance.
// Padding bits of a partial chunk's last byte are sent as zero.
//
// alpha (identical order at every party, and for every evaluator, CPU or GPU): for each
// layer with ANDs, in layer order, the next round_up(message_bytes, 16) bytes of
// CorrelatedRandomness::next_alpha; message byte j is XORed with alpha byte j (the CPU
// evaluator draws them chunk by chunk, which yields the same bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "circuits/program.hpp"
#include "common/secret.hpp"
#include "protocol/rss3/correlated_randomness.hpp"
#include "protocol/rss3/layer_exchange.hpp"
#include "protocol/rss3/shares.hpp"

namespace mpc::rss3 {

inline constexpr std::size_t kChunkInstances = 2048;

// Instruction-set variants of the CPU evaluator. All give bit-identical results.
enum class SimdLevel { Portable, Avx2, Avx512 };

SimdLevel best_simd_level();           // what this CPU supports
const char* simd_level_name(SimdLevel level);

// What the AND check (and_check.hpp) needs of one evaluation. Gate g is bit g (little-endian
// within bytes) of the concatenation of every AND layer's message in the layout above; for each
// gate: both operands' components as this party i and its neighbours share them (c_i, the a
// slot, and c_{i-1} = x ^ a) and the r it received; and the last AND layer's message as this
// party sent it. Padding bits of a partial chunk's last byte are zero in every plane, and so are
// the words that pad each plane to a multiple of kTranscriptWordMultiple, so that the check
// reads whole windows. Wiped when destroyed.
inline constexpr std::size_t kTranscriptWordMultiple = 64;

struct AndTranscript {
  SecretWords left_own, left_previous, right_own, right_previous, received;  // padded_words()
  std::vector<std::uint8_t> last_sent;
  std::vector<std::size_t> layer_bytes;  // message bytes of each AND layer, in order
  std::vector<std::size_t> layer_ands;   // ANDs of each AND layer
  std::size_t instances = 0;
  std::size_t bytes = 0;                 // the sum of layer_bytes

  AndTranscript() = default;
  AndTranscript(const AndTranscript&) = delete;
  AndTranscript& operator=(const AndTranscript&) = delete;
  ~AndTranscript() { wipe(); }
  std::size_t words() const { return (bytes + 7) / 8; }
  std::size_t padded_words() const {
    return (words() + kTranscriptWordMultiple - 1) / kTranscriptWordMultiple * kTranscriptWordMultiple;
  }
  // Sizes every plane for `total_bytes`: the bytes past total_bytes zero, the others for the
  // evaluator to write.
  void reset(std::size_t total_bytes);
  void wipe() noexcept;
  // Clears the padding bits of a partial chunk in `gates` (bytes, in gate order).
  void clear_padding(std::span<std::uint8_t> gates) const;
};

struct EvaluationStats {
  std::uint64_t bytes_sent = 0;      // payload bytes passed to LayerExchange
  std::uint64_t bytes_received = 0;  // payload bytes the LayerExchange handed back
  std::uint32_t layers_exchanged = 0;
};

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  // inputs.rows must equal program.num_inputs; outputs is resized to num_outputs rows
  // over inputs.instances (outputs may be the same object as inputs). Every party must
  // call this with the same program and instance count, and with randomness created for
  // the same batch nonce. Throws FormatError(Protocol) for an invalid program (index out
  // of range, slot read before written), Error(Protocol) for mismatched inputs, and
  // whatever the exchange throws (PeerError); if evaluation fails part-way, `outputs`
  // is wiped.
  virtual EvaluationStats evaluate(const circuits::Program& program, const ShareMatrix& inputs,
                                   ShareMatrix& outputs, CorrelatedRandomness& randomness,
                                   LayerExchange& exchange) = 0;
  // As evaluate, and fills `transcript`. An evaluator that keeps no transcript (the GPU's)
  // throws Error(Protocol).
  virtual EvaluationStats evaluate_recorded(const circuits::Program& program, const ShareMatrix& inputs,
                                            ShareMatrix& outputs, CorrelatedRandomness& randomness,
                                            LayerExchange& exchange, AndTranscript& transcript);
  virtual std::string name() const = 0;
  // Drops what the evaluator keeps between calls (the plans of recent programs, a workspace):
  // after a one-off program whose plan would otherwise be held until others push it out.
  virtual void forget_plans() {}
};

// Throws Error(Protocol) if `level` is not supported by this CPU.
std::unique_ptr<Evaluator> make_cpu_evaluator(SimdLevel level);

}  // namespace mpc::rss3
