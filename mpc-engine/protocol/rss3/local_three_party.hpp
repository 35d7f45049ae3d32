// All three parties of Araki et al. (CCS 2016, eprint 2016/768) in one process: three
// threads over a MemoryRing. The server runs its start-up self-test with this; unit
// tests use it everywhere. Also dealer/client helpers for bitsliced share matrices.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "circuits/program.hpp"
#include "protocol/rss3/correlated_randomness.hpp"
#include "protocol/rss3/evaluator.hpp"
#include "protocol/rss3/shares.hpp"

namespace mpc::rss3 {

struct ThreePartyOptions {
  std::chrono::milliseconds timeout{30000};  // per exchange
  // When set: each party's EvaluationStats.
  std::array<EvaluationStats, kParties>* stats = nullptr;
  // When set: each party's outgoing messages, concatenated in layer order.
  std::array<std::vector<std::uint8_t>, kParties>* transcripts = nullptr;
  // When set (all three): the evaluators to use (their level must be `level`), so that
  // repeated calls reuse their cached plans and workspaces; else fresh ones per call.
  std::array<Evaluator*, kParties> evaluators{};
  // When set: after evaluating, every party checks every AND of the others (and_check.hpp), as
  // a server with security = "active" does; a failed check raises VerificationError.
  bool check_ands = false;
  // When set (with check_ands): each party's claims when its check fails (AndCheckFailure,
  // bit p: it holds party p to have deviated), 0 for a party whose check passed.
  std::array<std::uint8_t, kParties>* claims = nullptr;
  // When set (with check_ands): may change a party's record of the batch before it checks, so
  // that it proves and verifies from another view than the one it computed (a party deviating
  // consistently: what it signs agrees with what it sends).
  std::function<void(int party, AndTranscript& transcript)> alter_transcript;
  // When set: sees each party's outgoing messages before they leave and may change them. The
  // span is the party's own buffer, so a change to an AND layer's r alters its share as well:
  // tests make a party deviate with it.
  std::function<void(int party, std::uint32_t layer, std::span<std::uint8_t> outgoing)> deviate;
};

// Party i evaluates `program` on inputs[i] with CorrelatedRandomness(keys[i],
// keys[(i+2)%3], nonce). Returns the three output share matrices. If any party fails,
// the others are aborted and the first failure is rethrown (PeerError, Error, ...), a
// VerificationError before any other.
std::array<ShareMatrix, kParties> evaluate_three_parties(const circuits::Program& program,
                                                         const std::array<ShareMatrix, kParties>& inputs,
                                                         SimdLevel level, BatchNonce nonce,
                                                         const std::array<PrfKey, kParties>& keys);
std::array<ShareMatrix, kParties> evaluate_three_parties(const circuits::Program& program,
                                                         const std::array<ShareMatrix, kParties>& inputs,
                                                         SimdLevel level, BatchNonce nonce,
                                                         const std::array<PrfKey, kParties>& keys,
                                                         const ThreePartyOptions& options);

// Dealer: shares `rows` cleartext bitsliced rows over `instances` instances
// (rows * words_for(instances) words, row-major) with fresh OS randomness.
std::array<ShareMatrix, kParties> share_matrix(const std::vector<std::uint64_t>& cleartext_rows_words,
                                               std::size_t rows, std::size_t instances);

// A public constant matrix: every party holds (0, c).
ShareMatrix public_matrix(const std::vector<std::uint64_t>& cleartext_rows_words, std::size_t rows,
                          std::size_t instances);

// Client: reconstructs the cleartext rows (padding bits zero) three ways, compared in
// constant time; throws Error(Protocol) on disagreement or mismatched shapes.
std::vector<std::uint64_t> open_matrix(const std::array<ShareMatrix, kParties>& shares);

}  // namespace mpc::rss3
