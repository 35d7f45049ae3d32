// The in-memory ring and failure handling: wrong-sized or out-of-order messages, a
// silent peer (timeout) and aborts raise PeerError instead of hanging; a failing party
// aborts the others in evaluate_three_parties.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <thread>

#include "common/error.hpp"
#include "protocol/rss3/local_three_party.hpp"
#include "protocol/rss3/memory_ring.hpp"
#include "support/random_program.hpp"
#include "test_util.hpp"

namespace mpc::rss3 {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Runs party(i) for the three parties at once, each on its own thread.
template <typename Party>
void run_parties(Party&& party) {
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) threads.emplace_back([&party, i] { party(i); });
  for (auto& t : threads) t.join();
}

TEST(MemoryRing, PassesMessagesAroundTheRing) {
  MemoryRing ring(5s);
  std::array<std::vector<std::uint8_t>, 3> received;
  run_parties([&](int i) {
    for (std::uint32_t layer = 0; layer < 3; ++layer) {
      std::vector<std::uint8_t> out(5, static_cast<std::uint8_t>(10 * i + layer)), in(5);
      ring.endpoint(i).exchange(layer, out, in);
      received[i].push_back(in[0]);
    }
  });
  for (int i = 0; i < 3; ++i)
    for (std::uint32_t layer = 0; layer < 3; ++layer)
      EXPECT_EQ(received[i][layer], 10 * previous_party(i) + layer);
  EXPECT_THROW(ring.endpoint(3), Error);
}

TEST(MemoryRing, LendsMessagesUntilTheNextExchange) {
  MemoryRing ring(5s);
  std::array<std::vector<std::uint8_t>, 3> received;
  run_parties([&](int i) {
    for (std::uint32_t layer = 0; layer < 2; ++layer) {
      const std::vector<std::uint8_t> out(5, static_cast<std::uint8_t>(10 * i + layer + 1));
      const auto in = ring.endpoint(i).exchange_lent(layer, out, out.size());
      received[i].insert(received[i].end(), in.begin(), in.end());
    }
    EXPECT_THROW(ring.endpoint(i).exchange_lent(2, std::vector<std::uint8_t>(5), 4), Error);  // sizes differ
  });
  for (int i = 0; i < 3; ++i) {
    std::vector<std::uint8_t> expected(5, static_cast<std::uint8_t>(10 * previous_party(i) + 1));
    expected.insert(expected.end(), 5, static_cast<std::uint8_t>(10 * previous_party(i) + 2));
    EXPECT_EQ(received[i], expected);
  }
}

TEST(MemoryRing, WrongSizedMessageRaisesPeerError) {
  MemoryRing ring(5s);
  std::vector<std::uint8_t> small(3), big(4);
  std::thread sender([&] {
    std::vector<std::uint8_t> in(3);
    try {
      ring.endpoint(0).exchange(0, small, in);  // party 1 gets 3 bytes, expects 4
    } catch (const PeerError&) {
    }
  });
  std::vector<std::uint8_t> in(4);
  EXPECT_THROW(ring.endpoint(1).exchange(0, big, in), PeerError);
  ring.abort();
  sender.join();
}

TEST(MemoryRing, OutOfOrderLayerRaisesPeerError) {
  MemoryRing ring(5s);
  std::vector<std::uint8_t> out(2), in(2);
  std::thread sender([&] {
    std::vector<std::uint8_t> o(2), i(2);
    try {
      ring.endpoint(2).exchange(7, o, i);
    } catch (const PeerError&) {
    }
  });
  EXPECT_THROW(ring.endpoint(0).exchange(6, out, in), PeerError);
  ring.abort();
  sender.join();
}

TEST(MemoryRing, SilentPeerTimesOut) {
  MemoryRing ring(200ms);
  std::vector<std::uint8_t> out(2), in(2);
  const auto start = Clock::now();
  EXPECT_THROW(ring.endpoint(1).exchange(0, out, in), PeerError);
  EXPECT_LT(Clock::now() - start, 5s);
}

TEST(MemoryRing, AbortWakesWaitingParties) {
  MemoryRing ring(60s);
  std::atomic<int> raised{0};
  std::vector<std::thread> threads;
  for (int i = 1; i < 3; ++i)
    threads.emplace_back([&, i] {
      std::vector<std::uint8_t> out(1), in(1);
      try {
        ring.endpoint(i).exchange(0, out, in);
        ring.endpoint(i).exchange(1, out, in);  // party 0 never sends
      } catch (const PeerError&) {
        ++raised;
      }
    });
  std::this_thread::sleep_for(50ms);
  const auto start = Clock::now();
  ring.abort();
  for (auto& t : threads) t.join();
  EXPECT_EQ(raised.load(), 2);
  EXPECT_LT(Clock::now() - start, 5s);
  EXPECT_TRUE(ring.aborted());
  std::vector<std::uint8_t> out(1), in(1);
  EXPECT_THROW(ring.endpoint(0).exchange(0, out, in), PeerError);
}

// A party whose transport delivers a truncated message to its neighbour: the evaluation
// fails with PeerError everywhere, nobody hangs.
class TruncatingExchange final : public LayerExchange {
 public:
  explicit TruncatingExchange(MemoryRing& ring, int party) : ring_(ring), party_(party) {}
  void exchange(std::uint32_t layer, std::span<const std::uint8_t> outgoing, std::span<std::uint8_t> incoming) override {
    // Sends one byte too few, then waits for the neighbour's message as usual.
    std::vector<std::uint8_t> in(outgoing.size() - 1);
    ring_.endpoint(party_).exchange(layer, outgoing.first(outgoing.size() - 1), in);
  }

 private:
  MemoryRing& ring_;
  int party_;
};

TEST(MemoryRing, EvaluatorFailsCleanlyOnTruncatedMessage) {
  std::mt19937_64 rng(61);
  testing::RandomProgramShape shape;
  const auto program = testing::random_program(rng, shape);
  const std::size_t n = 100;
  const auto inputs = share_matrix(testing::random_words(rng, shape.inputs * words_for(n)), shape.inputs, n);
  const auto keys = test::random_keys(rng);
  MemoryRing ring(10s);
  std::exception_ptr errors[3];
  std::vector<std::thread> threads;
  const auto start = Clock::now();
  for (int i = 0; i < 3; ++i)
    threads.emplace_back([&, i] {
      try {
        CorrelatedRandomness randomness(keys[i], keys[previous_party(i)], BatchNonce{1, 1});
        ShareMatrix out;
        TruncatingExchange truncating(ring, i);
        LayerExchange& exchange = i == 1 ? static_cast<LayerExchange&>(truncating) : ring.endpoint(i);
        make_cpu_evaluator(SimdLevel::Portable)->evaluate(program, inputs[i], out, randomness, exchange);
      } catch (...) {
        errors[i] = std::current_exception();
        ring.abort();
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_LT(Clock::now() - start, 8s);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(errors[i]) << i;
    EXPECT_THROW(std::rethrow_exception(errors[i]), PeerError) << i;
  }
}

TEST(LocalThreeParty, FailingPartyAbortsTheOthers) {
  std::mt19937_64 rng(62);
  testing::RandomProgramShape shape;
  const auto program = testing::random_program(rng, shape);
  const std::size_t n = 64;
  auto inputs = share_matrix(testing::random_words(rng, shape.inputs * words_for(n)), shape.inputs, n);
  inputs[2] = ShareMatrix(shape.inputs + 1, n);  // party 2 fails validation at once
  ThreePartyOptions options;
  options.timeout = 60s;  // the others must be woken by the abort, not by the timeout
  const auto start = Clock::now();
  try {
    evaluate_three_parties(program, inputs, SimdLevel::Portable, BatchNonce{1, 1}, test::random_keys(rng), options);
    FAIL() << "expected an error";
  } catch (const PeerError&) {
    FAIL() << "the root cause, not the abort, must be reported";
  } catch (const Error& e) {
    EXPECT_EQ(e.component(), Component::Protocol);
  }
  EXPECT_LT(Clock::now() - start, 10s);
}

TEST(LocalThreeParty, TimeoutWhenAPartyStalls) {
  // A LayerExchange-level stall: run only two parties of three; both time out.
  MemoryRing ring(300ms);
  std::exception_ptr errors[2];
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i)
    threads.emplace_back([&, i] {
      try {
        std::vector<std::uint8_t> out(16), in(16);
        ring.endpoint(i).exchange(0, out, in);
        ring.endpoint(i).exchange(1, out, in);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors) {
    ASSERT_TRUE(e);
    EXPECT_THROW(std::rethrow_exception(e), PeerError);
  }
}

}  // namespace
}  // namespace mpc::rss3
