// The labels of a Kerberos job's record mask R (wire/krb_record_mask.hpp) in the garbled-circuit
// engine: R = R_1 ^ R_2, server 1 holding R_1 and server 2 holding R_2, and the circuit takes
// R's rows after the key's (jobs/krb_jobs.hpp). Server 2 must get the label of each bit of R
// without either server learning the other's share, and for every job anew: an oblivious
// transfer per job, made cheap by correlated OTs stocked ahead.
//
// A stock is n correlated OTs under server 1's delta (IKNP, protocol/ot/ot_extension.hpp):
// server 1 keeps q_j, server 2 a random bit b_j and q_j ^ b_j delta. A job spends one per bit
// of R (Beaver's derandomisation, CRYPTO 1995):
//   2 -> 1  the stock's id, the first index it spends, e_j = b_j ^ R_2j (ask: it leaves with
//           server 2's first message of the job, so no round trip is added)
//   1 -> 2  0 (the stock serves) | 1, a fresh stock's id and size, the IKNP run that makes it,
//           then again 2 -> 1 the first index and the e_j
//   1 -> 2  y_j = Z_j ^ q_j ^ (R_1j ^ e_j) delta, Z_j the zero label of R's row j (answer)
// and server 2 takes y_j ^ q_j ^ b_j delta = Z_j ^ (R_1j ^ R_2j) delta, the label of R_j. It sees
// e_j, which b_j makes uniform, and one label per bit; server 1 sees e_j, uniform to it. Each
// correlated OT is spent once: server 2 hands out indices in order and never again, and server 1
// refuses an index it has spent, so neither b_j nor q_j ever masks two values. A stock server 1
// lacks (it restarted, or made a newer one for another job) is replaced in the job's stream.
// Semi-honest, as the rest of gc2, though IKNP holds server 2 to consistent choices (the KOS
// check of protocol/ot/ot_extension.hpp).
#pragma once

#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

#include "protocol/gc2/half_gates.hpp"
#include "protocol/gc2/labels.hpp"
#include "protocol/two_party/channel.hpp"

namespace mpc::two_party_engine {

class MaskLabelStock {
 public:
  // Correlated OTs made at once when a stock is made (or the job's bits, if more).
  static constexpr std::size_t kStockOts = std::size_t{1} << 18;
  static constexpr std::size_t kMaxStockOts = std::size_t{1} << 20;

  MaskLabelStock() = default;
  ~MaskLabelStock();
  MaskLabelStock(const MaskLabelStock&) = delete;
  MaskLabelStock& operator=(const MaskLabelStock&) = delete;

  // Server 2's request for n labels, as server 1 reads it (take_request).
  struct Asked {
    std::uint64_t stock = 0;
    std::uint32_t first = 0;
    std::vector<std::uint8_t> flips;  // e_j, packed
  };
  // Server 2's side of a request it sent (ask), until the labels come (collect).
  struct Pending {
    Asked asked;
    std::vector<gc2::Block> correlations;  // q_j ^ b_j delta of the OTs handed out
    ~Pending();
  };

  // Server 1: reads server 2's request for `n` labels (nothing for n = 0), then hands it the
  // labels of R's bits, given their zero labels and its own share's bits (one byte each, 0 or
  // 1). answer sends without flushing. Throws PeerError for an index spent before or a
  // malformed message.
  Asked take_request(two_party::Channel& peer, std::size_t n);
  void answer(two_party::Channel& peer, const gc2::Garbler& garbler, Asked& asked,
              std::span<const gc2::Block> zero_labels, std::span<const std::uint8_t> own_bits);
  // Server 2: sends its request (without flushing: it may leave with the job's next message),
  // then collects the active labels of R's bits, given its own share's bits.
  Pending ask(two_party::Channel& peer, std::span<const std::uint8_t> own_bits);
  gc2::Labels collect(two_party::Channel& peer, Pending& pending, std::span<const std::uint8_t> own_bits);

  // Both halves at once, one round trip: server 1 and server 2.
  void send(two_party::Channel& peer, const gc2::Garbler& garbler, std::span<const gc2::Block> zero_labels,
            std::span<const std::uint8_t> own_bits);
  gc2::Labels receive(two_party::Channel& peer, std::span<const std::uint8_t> own_bits);

  std::uint64_t stocks_made() const;

 private:
  struct Stock {
    std::uint64_t id = 0;
    std::vector<gc2::Block> correlations;  // server 1: q_j; server 2: q_j ^ b_j delta (wiped once spent)
    std::vector<std::uint8_t> choices;     // server 2: b_j
    std::vector<bool> spent;               // server 1
    std::size_t next = 0;                  // server 2: the first index not handed out
    void wipe_all();
  };
  // Server 1 keeps the stock it made last and the one before, for a job that began with it
  // while another job made a fresh one; server 2 hands out only from its newest.
  static constexpr std::size_t kStocksKept = 2;
  // Takes [first, first + n) of the stock `id` if held and unspent (mutex_ not held): copies q_j out.
  bool take(std::uint64_t id, std::uint32_t first, std::span<gc2::Block> q);
  // Hands out the next n correlated OTs of the newest stock (mutex_ held); false when it lacks them.
  bool hand_out(std::span<const std::uint8_t> own_bits, Pending& pending);

  mutable std::mutex mutex_;
  std::vector<Stock> stocks_;  // newest last
  std::uint64_t made_ = 0;
};

}  // namespace mpc::two_party_engine
