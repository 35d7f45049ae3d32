// Semi-honest garbled circuits for two servers: free-XOR (Kolesnikov-Schneider, ICALP 2008),
// half-gates (Zahur, Rosulek, Evans, "Two Halves Make a Whole", EUROCRYPT 2015: two
// ciphertexts, 256 bits, per AND gate; XOR and NOT free) and point-and-permute.
//
// Hash. H(x, t) = pi(sigma(x) ^ t) ^ sigma(x), pi = AES-128 under a fixed public key,
// sigma(x_L || x_R) = (x_L ^ x_R) || x_L a linear orthomorphism: the tweakable circular
// correlation-robust (TCCR) function of Guo, Katz, Wang, Yu, "Efficient and Secure Multiparty
// Computation from Fixed-Key Block Ciphers" (IEEE S&P 2020, eprint 2019/074), which they prove
// TCCR in the ideal-permutation model. Half-gates with free-XOR needs of its hash exactly
// circular correlation robustness for the offset delta, under tweaks that never repeat (ZRE
// 2015 state their proof for such a hash; GKWY instantiate half-gates with this one and give
// the concrete bound for many gates under one delta). A fixed key saves a key schedule per
// gate; sigma and the tweak are what make the fixed-key construction sound (GKWY show attacks
// on earlier fixed-key hashes that lack them). It is the function of
// two_party::tccr_hash; gate_kernels.hpp computes it fused into the gate algebra.
//
// Tweaks. Gate-instances (an AND gate in one instance) are numbered k = 0, 1, 2, ... in stream
// order (below); gate-instance k hashes its a labels under (tweak_high, 2k) and its b labels
// under (tweak_high, 2k + 1), tweak_high being the garbling's number. A Garbler draws delta
// once and numbers its garblings n0, n0 + 1, ... (below 2^63; OT extension's tweaks have the
// top bit set), so no tweak repeats under one delta, whether a server uses one Garbler per job
// or one per session (one delta for the server's life, or shared with a correlated-OT session,
// garbling many jobs). n0 is 0 unless the caller names it: a Garbler made per batch starts at
// a number of the batch's id, so its tweaks differ from those of every other batch too, not
// only from those of other garblings under its delta (engines/three_party/garbled_krb_batch.hpp). The
// number travels in the stream's header; an evaluator that knows which number to expect (the
// batch's) refuses any other, one that does not takes the header's.
//
// Labels. The garbler holds each wire's zero label W0 (W1 = W0 ^ delta, lsb(delta) = 1, so
// lsb(W0) != lsb(W1): the point-and-permute colour); the evaluator holds the active label
// W0 ^ v * delta. Inputs are labels given by the caller, row by row: input row r of instance e
// is entry r * instances + e. The garbler passes zero labels for every input (zero_labels()),
// the evaluator the active ones, which the server transfers: the garbler's own bits and public
// bits as garbler_input_labels(), the evaluator's by correlated OT. A row may carry the same
// labels in every instance (the key rows of a batch): all its instances then hold one value.
// Constants: the garbler draws a label C for constant 0 per garbling and sends it in the
// header (C ^ delta, constant 1's other label, is never sent).
//
// Garbling ahead (stored_garbling.hpp; the servers' use: engines/two_party/prepared_circuits.hpp). A
// garbling may be made before its public inputs exist and evaluated later from kept tables.
// Its number is drawn when it is garbled, from the same counter, so its tweaks differ from
// those of every other garbling under this delta, made ahead or online, used or dropped (a
// dropped garbling's number is never drawn again). That is why garblings made ahead may take
// the same input labels as online ones, namely the key rows' labels, which the evaluator
// holds once per key: the key wires are wires of one large circuit that fans out into every
// garbling, each of whose AND gates hashes under a tweak of its own, so the TCCR argument
// covers them all as it covers one circuit; holding a garbling longer changes nothing in it.
// Public input rows get fresh zero labels per garbling and the garbler sends their active
// labels once: a garbling evaluated twice on different public values would hand the evaluator
// both labels of a wire, hence delta, so each is evaluated at most once. Sending the tables
// before the public inputs are chosen is the adaptive setting of Bellare, Hoang and Rogaway
// (ASIACRYPT 2012), which the static proofs above do not cover. What it needs here is
// obliviousness alone: the inputs chosen late are public data that both servers receive from
// the client, and the evaluator never holds decoding information (its colour bits are its
// share; the garbler's decoding bits go to the client alone), so its view, tables first and
// labels later, is simulated by garbling any circuit of the same topology without knowing
// inputs or outputs. The adaptive attacks need an evaluator that learns outputs.
//
// Outputs. The garbler ends with the decoding bits lsb(W0) of the output wires, the evaluator
// with the lsb of its active output labels; their XOR is the output, and each side's bits
// alone are uniform (lsb(W0) is a pseudorandom bit per wire unknown to the evaluator), so the
// two servers' bits are an XOR sharing of the result that the client opens.
// open_to_evaluator_*() reveal chosen outputs to the evaluator alone (verdict bits).
//
// Streaming. Instances go through the program in tiles of up to 32 (each tile's slots stay in
// cache). garble() sends each chunk of a tile's AND tables (whole gates of one layer, 64 KiB
// or one gate if that is more) as soon as it is made and flushes at the end (a channel ships
// whole chunks of its own as they fill); evaluate() consumes the chunks in the same order. One message
// direction, one round, memory bounded by the program's slots x min(instances, 32) plus one
// chunk, whatever the circuit's size. Stream: garbling number (8 bytes, little-endian), C (16
// bytes), then per tile, per layer, per AND gate, the gate's T_G row (the tile's instances in
// order) followed by its T_E row; k counts along this order.
//
// Speed. The kernels (gate_kernels.hpp) take a chunk of one layer's ANDs at a time: the
// gate-instances of a layer are independent, so their hashes keep the AES units busy. With
// VAES (AVX-512) four labels go through each AES instruction and eight registers are in
// flight: each gate's instances fill them from 16 instances on, consecutive gates share them
// below (one block still fills them). Without VAES, two_party::tccr_hash per gate (AES-NI with
// eight blocks in flight, or OpenSSL). Chosen at run time (Kernel). gc2_bench measures it.
//
// Three-halves (Rosulek-Roy, CRYPTO 2021: 1.5 kappa bits per AND) is deliberately not used. It
// costs the garbler 6 hashes per AND instead of 4 and the evaluator 3 instead of 2, plus
// per-gate control bits, to send 24 bytes instead of 32. It pays only when the link, not the
// hashing, bounds the rate: where the garbler's tables outrun the link (a 10 Gbit/s link
// carries 39 M half-gates ANDs/s, 52 M three-halves ANDs/s; docs/benchmarks.md has the
// garbling rates) and batches are large. KDC jobs are small batches whose time is latency, so
// half-gates stays; three-halves is the step to take if large batches over a slow link matter.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "circuits/program.hpp"
#include "common/error.hpp"
#include "protocol/gc2/labels.hpp"
#include "protocol/two_party/channel.hpp"

namespace mpc::gc2 {

// How the per-gate hashing runs: VAES where the CPU has it, else the portable path.
enum class Kernel { Portable, Vaes };
bool kernel_available(Kernel kernel);
Kernel best_kernel();
const char* kernel_name(Kernel kernel);

// Fresh uniform labels from the system CSPRNG: the garbler's zero labels of input rows.
Labels zero_labels(std::size_t count);

class Garbler {
 public:
  // A fresh random delta (lsb 1).
  explicit Garbler(Kernel kernel = best_kernel());
  // A given delta, e.g. the offset of a correlated-OT session; its lsb must be 1. Garblings
  // are numbered from first_number (below 2^63).
  explicit Garbler(const Block& delta, Kernel kernel = best_kernel());
  Garbler(const Block& delta, std::uint64_t first_number, Kernel kernel = best_kernel());
  ~Garbler();  // wipes delta
  Garbler(const Garbler&) = delete;
  Garbler& operator=(const Garbler&) = delete;

  const Block& delta() const { return delta_; }

  // Garbles `program` over `instances` instances and streams the tables; returns the decoding
  // bits, output j of instance e at j * instances + e. input_zero_labels: num_inputs rows of
  // `instances` labels. Safe to call from several threads at once (each with its own channel).
  std::vector<std::uint8_t> garble(const circuits::Program& program, std::size_t instances,
                                   std::span<const Block> input_zero_labels, two_party::Channel& channel);
  // The same, also handing out the output wires' zero labels (laid out as the decoding bits)
  // for a later garbling that takes them as inputs.
  std::vector<std::uint8_t> garble(const circuits::Program& program, std::size_t instances,
                                   std::span<const Block> input_zero_labels, two_party::Channel& channel,
                                   Labels& output_zero_labels);
  // The same with constant 0's label given rather than drawn: two garblers that must send
  // identical streams draw it from a seed they share.
  std::vector<std::uint8_t> garble(const circuits::Program& program, std::size_t instances,
                                   std::span<const Block> input_zero_labels, two_party::Channel& channel,
                                   Labels& output_zero_labels, const Block& constant_label);

  // The next garbling's number (garblings started so far, with the default first number).
  std::uint64_t garblings() const { return next_garbling_.load(); }

  // Draws the next garbling number as garble() does, for a garbling made elsewhere under this
  // delta (the GPU garbler, cuda/gpu_garbling.hpp): one counter for both, so no tweak repeats.
  // Throws Error(Protocol) once the numbers below 2^63 are used up, as garble() does.
  std::uint64_t draw_garbling_number() {
    const std::uint64_t number = next_garbling_.fetch_add(1);
    if (number >= (std::uint64_t{1} << 63)) throw Error(Component::Protocol, "garbler: garbling numbers exhausted");
    return number;
  }

 private:
  std::vector<std::uint8_t> garble_into(const circuits::Program& program, std::size_t instances,
                                        std::span<const Block> input_zero_labels, two_party::Channel& channel,
                                        Labels* output_zero_labels, const Block* constant_label);

  Block delta_;
  Kernel kernel_;
  std::atomic<std::uint64_t> next_garbling_{0};
};

// The active labels of bits the garbler knows (its own key share, public inputs):
// zero_labels[i] ^ values[i] * delta. values are 0 or 1.
Labels garbler_input_labels(const Garbler& garbler, std::span<const std::uint8_t> values,
                            std::span<const Block> zero_labels);

// Evaluates the garbler's stream with the active input labels (laid out as garble()'s). Returns
// the lsb of the output labels, laid out as garble()'s result. Throws PeerError when the stream
// stops (the channel's timeout) or is malformed.
std::vector<std::uint8_t> evaluate(const circuits::Program& program, std::size_t instances,
                                   std::span<const Block> input_labels, two_party::Channel& channel,
                                   Kernel kernel = best_kernel());
// The same, also handing out the active output labels (laid out as the result).
std::vector<std::uint8_t> evaluate(const circuits::Program& program, std::size_t instances,
                                   std::span<const Block> input_labels, two_party::Channel& channel,
                                   Labels& output_labels, Kernel kernel = best_kernel());
// The same for a stream that must carry garbling number `expected_number` (the caller's batch):
// a stream with any other number throws PeerError before a table is read.
std::vector<std::uint8_t> evaluate(const circuits::Program& program, std::size_t instances,
                                   std::span<const Block> input_labels, two_party::Channel& channel,
                                   std::uint64_t expected_number, Kernel kernel = best_kernel());
// Both: the expected number, and the active output labels handed out.
std::vector<std::uint8_t> evaluate(const circuits::Program& program, std::size_t instances,
                                   std::span<const Block> input_labels, two_party::Channel& channel,
                                   Labels& output_labels, std::uint64_t expected_number,
                                   Kernel kernel = best_kernel());

// A garbled stream's header: the garbling's number (8 bytes) and constant 0's label. The tables
// follow it.
inline constexpr std::size_t kStreamHeaderBytes = 8 + sizeof(Block);

// Bytes the garbler sends for `program` over `instances` instances (header included).
std::uint64_t garbled_bytes(const circuits::Program& program, std::size_t instances);
// The same for a program of `and_gates` AND gates per instance.
std::uint64_t garbled_bytes_of(std::uint64_t and_gates, std::size_t instances);

// Opening outputs to the evaluator alone: the garbler sends the decoding bits of the chosen
// outputs (packed, 8 per byte) and flushes; the evaluator XORs them onto its own bits and
// returns the values (0 or 1). Both sides pass the same number of bits.
void open_to_evaluator_send(std::span<const std::uint8_t> decoding_bits, two_party::Channel& channel);
std::vector<std::uint8_t> open_to_evaluator_receive(std::span<const std::uint8_t> evaluator_bits,
                                                    two_party::Channel& channel);

}  // namespace mpc::gc2
