// Three parties in three threads over a MemoryRing (see local_three_party.hpp).
#include "protocol/rss3/local_three_party.hpp"

#include <sodium.h>

#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <memory>
#include <thread>

#include "common/error.hpp"
#include "common/identity_signature.hpp"
#include "common/secret.hpp"
#include "protocol/rss3/and_check.hpp"
#include "protocol/rss3/memory_ring.hpp"

namespace mpc::rss3 {
namespace {

class RecordingExchange final : public LayerExchange {
 public:
  RecordingExchange(LayerExchange& inner, std::vector<std::uint8_t>& log) : inner_(inner), log_(log) {}
  void exchange(std::uint32_t layer, std::span<const std::uint8_t> outgoing,
                std::span<std::uint8_t> incoming) override {
    log_.insert(log_.end(), outgoing.begin(), outgoing.end());
    inner_.exchange(layer, outgoing, incoming);
  }
  std::span<const std::uint8_t> exchange_lent(std::uint32_t layer, std::span<const std::uint8_t> outgoing,
                                              std::size_t incoming_bytes) override {
    log_.insert(log_.end(), outgoing.begin(), outgoing.end());
    return inner_.exchange_lent(layer, outgoing, incoming_bytes);
  }

 private:
  LayerExchange& inner_;
  std::vector<std::uint8_t>& log_;
};

// Hands each outgoing message to ThreePartyOptions::deviate first.
class DeviatingExchange final : public LayerExchange {
 public:
  DeviatingExchange(LayerExchange& inner, int party, const ThreePartyOptions& options)
      : inner_(inner), party_(party), options_(options) {}
  void exchange(std::uint32_t layer, std::span<const std::uint8_t> outgoing,
                std::span<std::uint8_t> incoming) override {
    // The evaluator's own buffer (never read-only memory): a deviation here is made in place.
    options_.deviate(party_, layer, {const_cast<std::uint8_t*>(outgoing.data()), outgoing.size()});
    inner_.exchange(layer, outgoing, incoming);
  }
  std::span<const std::uint8_t> exchange_lent(std::uint32_t layer, std::span<const std::uint8_t> outgoing,
                                              std::size_t incoming_bytes) override {
    options_.deviate(party_, layer, {const_cast<std::uint8_t*>(outgoing.data()), outgoing.size()});
    return inner_.exchange_lent(layer, outgoing, incoming_bytes);
  }

 private:
  LayerExchange& inner_;
  int party_;
  const ThreePartyOptions& options_;
};

void check_cleartext(const std::vector<std::uint64_t>& words, std::size_t rows, std::size_t instances) {
  if (words_for(instances) != 0 && rows > words.max_size() / words_for(instances))
    throw Error(Component::Protocol, "matrix too large");
  if (words.size() != rows * words_for(instances))
    throw Error(Component::Protocol, "cleartext has " + std::to_string(words.size()) + " words, expected " +
                                         std::to_string(rows * words_for(instances)));
}

}  // namespace

std::array<ShareMatrix, kParties> evaluate_three_parties(const circuits::Program& program,
                                                         const std::array<ShareMatrix, kParties>& inputs,
                                                         SimdLevel level, BatchNonce nonce,
                                                         const std::array<PrfKey, kParties>& keys) {
  return evaluate_three_parties(program, inputs, level, nonce, keys, ThreePartyOptions{});
}

std::array<ShareMatrix, kParties> evaluate_three_parties(const circuits::Program& program,
                                                         const std::array<ShareMatrix, kParties>& inputs,
                                                         SimdLevel level, BatchNonce nonce,
                                                         const std::array<PrfKey, kParties>& keys,
                                                         const ThreePartyOptions& options) {
  MemoryRing ring(options.timeout);
  // Each party signs its check messages under an X25519 identity of its own, as a server does.
  std::array<std::unique_ptr<IdentitySigner>, kParties> signers;
  and_check::CheckIdentities identities[kParties];
  if (options.check_ands) {
    std::array<std::array<std::uint8_t, 32>, kParties> public_keys{};
    for (std::size_t p = 0; p < kParties; ++p) {
      SecretBytes secret(32);
      randombytes_buf(secret.data(), secret.size());
      crypto_scalarmult_base(public_keys[p].data(), secret.data());
      signers[p] = std::make_unique<IdentitySigner>(secret.span());
    }
    for (std::size_t p = 0; p < kParties; ++p) identities[p] = {signers[p].get(), public_keys};
  }
  if (options.claims != nullptr) options.claims->fill(0);
  std::array<ShareMatrix, kParties> outputs;
  std::array<EvaluationStats, kParties> stats{};
  std::mutex error_mutex;
  std::exception_ptr first_error;
  bool verification_failed = false;
  if (options.transcripts != nullptr)
    for (auto& t : *options.transcripts) t.clear();

  auto party = [&](int i) {
    const auto index = static_cast<std::size_t>(i);
    try {
      CorrelatedRandomness randomness(keys[index], keys[static_cast<std::size_t>(previous_party(i))], nonce);
      std::unique_ptr<Evaluator> owned;
      Evaluator* evaluator = options.evaluators[index];
      if (evaluator == nullptr) {
        owned = make_cpu_evaluator(level);
        evaluator = owned.get();
      }
      LayerExchange& ring_endpoint = ring.endpoint(i);
      DeviatingExchange deviating(ring_endpoint, i, options);
      LayerExchange& endpoint = options.deviate ? static_cast<LayerExchange&>(deviating) : ring_endpoint;
      if (options.check_ands) {
        AndTranscript transcript;
        stats[index] = evaluator->evaluate_recorded(program, inputs[index], outputs[index], randomness, endpoint,
                                                    transcript);
        if (options.alter_transcript) options.alter_transcript(i, transcript);
        and_check::check_batch(transcript, i, keys[index], keys[static_cast<std::size_t>(previous_party(i))], nonce,
                               endpoint, static_cast<std::uint32_t>(program.layers.size()), identities[index]);
      } else if (options.transcripts != nullptr) {
        RecordingExchange recording(endpoint, (*options.transcripts)[index]);
        stats[index] = evaluator->evaluate(program, inputs[index], outputs[index], randomness, recording);
      } else {
        stats[index] = evaluator->evaluate(program, inputs[index], outputs[index], randomness, endpoint);
      }
    } catch (const and_check::AndCheckFailure& failure) {
      // Reached after every message of the check was sent: the others finish theirs and draw
      // their own conclusions, so the ring is not aborted under them.
      std::lock_guard<std::mutex> lock(error_mutex);
      if (options.claims != nullptr) (*options.claims)[index] = failure.claims();
      if (!verification_failed) first_error = std::current_exception();
      verification_failed = true;
    } catch (const VerificationError&) {
      {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!verification_failed) first_error = std::current_exception();
        verification_failed = true;
      }
      ring.abort();
    } catch (...) {
      {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!first_error) first_error = std::current_exception();
      }
      ring.abort();
    }
  };

  std::thread second(party, 1);
  std::thread third(party, 2);
  party(0);
  second.join();
  third.join();
  if (first_error) {
    for (auto& m : outputs) m.wipe();
    std::rethrow_exception(first_error);
  }
  if (options.stats != nullptr) *options.stats = stats;
  return outputs;
}

std::array<ShareMatrix, kParties> share_matrix(const std::vector<std::uint64_t>& cleartext_rows_words,
                                               std::size_t rows, std::size_t instances) {
  check_cleartext(cleartext_rows_words, rows, instances);
  if (sodium_init() < 0) throw Error(Component::Protocol, "libsodium initialisation failed");
  std::array<ShareMatrix, kParties> shares{ShareMatrix(rows, instances), ShareMatrix(rows, instances),
                                           ShareMatrix(rows, instances)};
  const std::size_t count = cleartext_rows_words.size();
  if (count != 0) {
    randombytes_buf(shares[0].x.data(), count * sizeof(std::uint64_t));
    randombytes_buf(shares[1].x.data(), count * sizeof(std::uint64_t));
  }
  for (std::size_t w = 0; w < count; ++w) shares[2].x[w] = shares[0].x[w] ^ shares[1].x[w];
  for (int i = 0; i < kParties; ++i) {
    const auto& previous = shares[static_cast<std::size_t>(previous_party(i))].x;
    auto& a = shares[static_cast<std::size_t>(i)].a;
    for (std::size_t w = 0; w < count; ++w) a[w] = previous[w] ^ cleartext_rows_words[w];
  }
  return shares;
}

ShareMatrix public_matrix(const std::vector<std::uint64_t>& cleartext_rows_words, std::size_t rows,
                          std::size_t instances) {
  check_cleartext(cleartext_rows_words, rows, instances);
  ShareMatrix m(rows, instances);
  m.a = cleartext_rows_words;
  return m;
}

std::vector<std::uint64_t> open_matrix(const std::array<ShareMatrix, kParties>& shares) {
  const ShareMatrix& first = shares[0];
  for (const auto& m : shares) {
    if (m.rows != first.rows || m.instances != first.instances || m.words_per_row != words_for(first.instances) ||
        m.x.size() != m.rows * m.words_per_row || m.a.size() != m.x.size())
      throw Error(Component::Protocol, "share matrices differ in shape");
  }
  const std::size_t words = first.words_per_row;
  const std::size_t count = first.x.size();
  const unsigned tail = static_cast<unsigned>(first.instances % 64);
  const std::uint64_t last_mask = tail == 0 ? ~std::uint64_t{0} : (std::uint64_t{1} << tail) - 1;
  std::array<std::vector<std::uint64_t>, kParties> views;
  for (int i = 0; i < kParties; ++i) {
    const auto& a = shares[static_cast<std::size_t>(i)].a;
    const auto& previous_x = shares[static_cast<std::size_t>(previous_party(i))].x;
    auto& view = views[static_cast<std::size_t>(i)];
    view.resize(count);
    for (std::size_t w = 0; w < count; ++w) {
      const std::uint64_t mask = (w % words == words - 1) ? last_mask : ~std::uint64_t{0};
      view[w] = (a[w] ^ previous_x[w]) & mask;
    }
  }
  auto bytes = [](const std::vector<std::uint64_t>& v) {
    return std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(v.data()), v.size() * 8);
  };
  const bool agree = equal_constant_time(bytes(views[0]), bytes(views[1])) &
                     equal_constant_time(bytes(views[0]), bytes(views[2]));
  for (int i = 1; i < kParties; ++i)
    if (!views[static_cast<std::size_t>(i)].empty())
      wipe(views[static_cast<std::size_t>(i)].data(), count * sizeof(std::uint64_t));
  if (!agree) {
    if (count != 0) wipe(views[0].data(), count * sizeof(std::uint64_t));
    throw Error(Component::Protocol, "share reconstructions disagree: a party's share was altered");
  }
  return std::move(views[0]);
}

}  // namespace mpc::rss3
