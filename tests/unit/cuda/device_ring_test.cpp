// tests/unit/cuda/device_ring_test.cpp: the host handshake of a DeviceRing (device_ring.hpp)
// without a GPU: messages go from party i to party i+1 per layer and generation, receipts
// back to the sender; a message of an earlier generation never satisfies a later one; a
// ring of one talks to itself; timeouts and abort end waits with PeerError.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <thread>
#include <vector>

#include "common/error.hpp"
#include "cuda/device_ring.hpp"

namespace mpc::cuda {
namespace {

using namespace std::chrono_literals;

// Fake handles: the ring never dereferences them.
const std::uint8_t* data_handle(int party, std::uint64_t generation, std::uint32_t layer) {
  return reinterpret_cast<const std::uint8_t*>(static_cast<std::uintptr_t>(0x10000 * (party + 1) + 0x100 * generation + layer));
}
void* event_handle(int party, std::uint64_t generation, std::uint32_t layer, int kind) {
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(0x1000000 * (kind + 1) + 0x10000 * (party + 1) +
                                                             0x100 * generation + layer));
}

// Three parties, several generations of several layers each, all at once: every take sees
// the predecessor's message of that layer and generation, every receipt the successor's.
TEST(DeviceRing, ThreePartiesHandOverMessagesAndReceipts) {
  DeviceRing ring(3, 5s);
  DeviceRing::State& state = ring.state();
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int party = 0; party < 3; ++party)
    threads.emplace_back([&, party] {
      for (int g = 0; g < 4; ++g) {
        const std::uint64_t generation = state.begin(party);
        for (std::uint32_t layer = 0; layer < 20; ++layer) {
          state.post(party, generation, layer, data_handle(party, generation, layer),
                     event_handle(party, generation, layer, 0));
          const auto message = state.take(party, generation, layer);
          const int from = (party + 2) % 3;
          if (message.data != data_handle(from, generation, layer) ||
              message.ready != event_handle(from, generation, layer, 0))
            ++wrong;
          state.acknowledge(party, generation, layer, event_handle(party, generation, layer, 1));
        }
        for (std::uint32_t layer = 0; layer < 20; ++layer) {
          const auto receipt = state.receipt(party, generation, layer);
          if (receipt.consumed != event_handle((party + 1) % 3, generation, layer, 1)) ++wrong;
        }
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(DeviceRing, RingOfOneTalksToItself) {
  DeviceRing ring(1, 1s);
  DeviceRing::State& state = ring.state();
  const std::uint64_t generation = state.begin(0);
  EXPECT_EQ(generation, 1u);
  state.post(0, generation, 3, data_handle(0, 1, 3), event_handle(0, 1, 3, 0));
  EXPECT_EQ(state.take(0, generation, 3).data, data_handle(0, 1, 3));
  state.acknowledge(0, generation, 3, event_handle(0, 1, 3, 1));
  EXPECT_EQ(state.receipt(0, generation, 3).consumed, event_handle(0, 1, 3, 1));
  EXPECT_EQ(ring.parties(), 1);
}

// A message of generation 1 does not answer a take of generation 2: the wait times out.
TEST(DeviceRing, EarlierGenerationsDoNotCount) {
  DeviceRing ring(2, 100ms);
  DeviceRing::State& state = ring.state();
  EXPECT_EQ(state.begin(0), 1u);
  EXPECT_EQ(state.begin(1), 1u);
  state.post(0, 1, 0, data_handle(0, 1, 0), nullptr);
  EXPECT_EQ(state.take(1, 1, 0).data, data_handle(0, 1, 0));
  EXPECT_EQ(state.begin(1), 2u);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW((void)state.take(1, 2, 0), PeerError);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 90ms);
  EXPECT_THROW((void)state.receipt(1, 2, 0), PeerError);
}

TEST(DeviceRing, AbortWakesWaitersAndFailsLaterCalls) {
  DeviceRing ring(3, 30s);
  DeviceRing::State& state = ring.state();
  const std::uint64_t generation = state.begin(1);
  std::thread waiter([&] { EXPECT_THROW((void)state.take(1, generation, 0), PeerError); });
  std::this_thread::sleep_for(50ms);
  ring.abort();
  waiter.join();
  EXPECT_TRUE(state.aborted());
  EXPECT_THROW((void)state.begin(0), PeerError);
  EXPECT_THROW((void)state.receipt(0, 1, 0), PeerError);
}

TEST(DeviceRing, BadArgumentsAreRefused) {
  EXPECT_THROW(DeviceRing(0), Error);
  DeviceRing ring(3);
  EXPECT_THROW((void)ring.state().begin(3), Error);
  EXPECT_THROW((void)ring.state().begin(-1), Error);
}

}  // namespace
}  // namespace mpc::cuda
