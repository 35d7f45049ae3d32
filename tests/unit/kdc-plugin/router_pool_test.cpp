// tests/unit/kdc-plugin/router_pool_test.cpp - the crypto router's nonce pools
// (kdc-plugin/router/nonces/pool.h), without an engine: bounds, capacity, FIFO order,
// take-once, TTL, stamps in order, wiping of every freed slot, and what a forked child
// sees (nothing: no entries, zero pages).

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "nonces/pool.h"

namespace {

constexpr size_t kNonce = NONCE_POOL_NONCE_LEN;

// Entry i: nonce bytes i+1 (never zero) and keystream bytes 0x80 | i (never zero), so a
// slot that still holds any of it has nonzero bytes.
struct Batch {
  std::vector<uint8_t> nonces;
  std::vector<uint8_t> keystream;
};

Batch make_batch(size_t first, size_t count, size_t keystream_len) {
  Batch b;
  b.nonces.resize(count * kNonce);
  b.keystream.resize(count * keystream_len);
  for (size_t i = 0; i < count; ++i) {
    std::memset(b.nonces.data() + i * kNonce, static_cast<int>((first + i) % 250 + 1), kNonce);
    std::memset(b.keystream.data() + i * keystream_len, static_cast<int>(0x80 | ((first + i) & 0x7f)),
                keystream_len);
  }
  return b;
}

struct PoolDeleter {
  void operator()(nonce_pool* p) const { nonce_pool_destroy(p); }
};
using Pool = std::unique_ptr<nonce_pool, PoolDeleter>;

Pool make_pool(size_t capacity, size_t keystream_len) {
  return Pool(nonce_pool_create(capacity, keystream_len));
}

TEST(RouterNoncePool, RejectsBadSizes) {
  EXPECT_EQ(nonce_pool_create(0, 16), nullptr);
  EXPECT_EQ(nonce_pool_create(NONCE_POOL_MAX_CAPACITY + 1, 16), nullptr);
  EXPECT_EQ(nonce_pool_create(4, NONCE_POOL_MAX_KEYSTREAM + 1), nullptr);
  Pool largest = make_pool(1, NONCE_POOL_MAX_KEYSTREAM);
  EXPECT_NE(largest, nullptr);
  nonce_pool_destroy(nullptr);  // ignored
}

TEST(RouterNoncePool, KeepsAtMostCapacity) {
  const size_t ks = 64 * 16;
  Pool pool = make_pool(5, ks);
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(nonce_pool_capacity(pool.get()), 5u);
  EXPECT_EQ(nonce_pool_keystream_len(pool.get()), ks);
  Batch b = make_batch(0, 8, ks);
  EXPECT_EQ(nonce_pool_put(pool.get(), 10, b.nonces.data(), b.keystream.data(), 8), 5u);
  EXPECT_EQ(nonce_pool_count(pool.get()), 5u);
  Batch more = make_batch(8, 1, ks);
  EXPECT_EQ(nonce_pool_put(pool.get(), 10, more.nonces.data(), more.keystream.data(), 1), 0u);
  EXPECT_EQ(nonce_pool_count(pool.get()), 5u);
}

TEST(RouterNoncePool, TakesEachEntryOnceOldestFirst) {
  const size_t ks = 3 * 16;
  Pool pool = make_pool(4, ks);
  ASSERT_NE(pool, nullptr);
  Batch b = make_batch(0, 4, ks);
  ASSERT_EQ(nonce_pool_put(pool.get(), 1, b.nonces.data(), b.keystream.data(), 4), 4u);
  std::set<std::vector<uint8_t>> seen;
  for (size_t i = 0; i < 4; ++i) {
    uint8_t nonce[kNonce];
    std::vector<uint8_t> stream(ks);
    ASSERT_EQ(nonce_pool_take(pool.get(), 2, 100, nonce, stream.data()), 1);
    EXPECT_EQ(std::memcmp(nonce, b.nonces.data() + i * kNonce, kNonce), 0) << "entry " << i;
    EXPECT_EQ(std::memcmp(stream.data(), b.keystream.data() + i * ks, ks), 0) << "entry " << i;
    EXPECT_TRUE(seen.insert(std::vector<uint8_t>(nonce, nonce + kNonce)).second);
    EXPECT_EQ(nonce_pool_count(pool.get()), 3 - i);
  }
  uint8_t nonce[kNonce];
  std::vector<uint8_t> stream(ks, 0xAA);
  std::memset(nonce, 0xAA, sizeof(nonce));
  EXPECT_EQ(nonce_pool_take(pool.get(), 2, 100, nonce, stream.data()), 0);
  // Nothing handed out on an empty take.
  EXPECT_EQ(nonce[0], 0xAA);
  EXPECT_EQ(stream[0], 0xAA);
}

TEST(RouterNoncePool, WrapsAroundTheRing) {
  const size_t ks = 16;
  Pool pool = make_pool(3, ks);
  ASSERT_NE(pool, nullptr);
  size_t next_put = 0, next_take = 0;
  for (int round = 0; round < 20; ++round) {
    const size_t room = 3 - nonce_pool_count(pool.get());
    const size_t n = room == 0 ? 0 : 1 + static_cast<size_t>(round) % room;
    Batch b = make_batch(next_put, n, ks);
    ASSERT_EQ(nonce_pool_put(pool.get(), static_cast<uint64_t>(round), b.nonces.data(), b.keystream.data(), n), n);
    next_put += n;
    const size_t takes = 1 + static_cast<size_t>(round) % 2;
    for (size_t t = 0; t < takes && nonce_pool_count(pool.get()) > 0; ++t) {
      uint8_t nonce[kNonce];
      uint8_t stream[16];
      ASSERT_EQ(nonce_pool_take(pool.get(), static_cast<uint64_t>(round), 1000, nonce, stream), 1);
      Batch want = make_batch(next_take, 1, ks);
      EXPECT_EQ(std::memcmp(nonce, want.nonces.data(), kNonce), 0) << "entry " << next_take;
      EXPECT_EQ(std::memcmp(stream, want.keystream.data(), ks), 0) << "entry " << next_take;
      ++next_take;
    }
    EXPECT_EQ(nonce_pool_nonzero_bytes(pool.get(), 0), 0u) << "round " << round;
  }
}

TEST(RouterNoncePool, DropsEntriesAtTheirTtl) {
  const size_t ks = 16;
  Pool pool = make_pool(8, ks);
  ASSERT_NE(pool, nullptr);
  Batch old_batch = make_batch(0, 2, ks), new_batch = make_batch(2, 2, ks);
  ASSERT_EQ(nonce_pool_put(pool.get(), 100, old_batch.nonces.data(), old_batch.keystream.data(), 2), 2u);
  ASSERT_EQ(nonce_pool_put(pool.get(), 150, new_batch.nonces.data(), new_batch.keystream.data(), 2), 2u);
  // ttl 60: the first two live while now < 160, the others while now < 210.
  EXPECT_EQ(nonce_pool_expire(pool.get(), 159, 60), 0u);
  EXPECT_EQ(nonce_pool_count(pool.get()), 4u);
  uint8_t nonce[kNonce];
  uint8_t stream[16];
  // take at 160 skips (and wipes) both expired entries and hands out the third.
  ASSERT_EQ(nonce_pool_take(pool.get(), 160, 60, nonce, stream), 1);
  EXPECT_EQ(std::memcmp(nonce, new_batch.nonces.data(), kNonce), 0);
  EXPECT_EQ(nonce_pool_count(pool.get()), 1u);
  EXPECT_EQ(nonce_pool_nonzero_bytes(pool.get(), 0), 0u);
  EXPECT_EQ(nonce_pool_expire(pool.get(), 210, 60), 1u);
  EXPECT_EQ(nonce_pool_count(pool.get()), 0u);
  EXPECT_EQ(nonce_pool_take(pool.get(), 210, 60, nonce, stream), 0);
  EXPECT_EQ(nonce_pool_nonzero_bytes(pool.get(), 1), 0u);
}

TEST(RouterNoncePool, RefusesStampsOutOfOrder) {
  Pool pool = make_pool(4, 0);
  ASSERT_NE(pool, nullptr);
  Batch a = make_batch(0, 1, 0), b = make_batch(1, 1, 0);
  ASSERT_EQ(nonce_pool_put(pool.get(), 50, a.nonces.data(), nullptr, 1), 1u);
  EXPECT_EQ(nonce_pool_put(pool.get(), 49, b.nonces.data(), nullptr, 1), 0u);
  EXPECT_EQ(nonce_pool_put(pool.get(), 50, b.nonces.data(), nullptr, 1), 1u);
  EXPECT_EQ(nonce_pool_count(pool.get()), 2u);
}

TEST(RouterNoncePool, ChecksumPoolsHoldNoKeystream) {
  Pool pool = make_pool(2, 0);
  ASSERT_NE(pool, nullptr);
  Batch b = make_batch(0, 2, 0);
  ASSERT_EQ(nonce_pool_put(pool.get(), 1, b.nonces.data(), nullptr, 2), 2u);
  uint8_t nonce[kNonce];
  ASSERT_EQ(nonce_pool_take(pool.get(), 1, 10, nonce, nullptr), 1);
  EXPECT_EQ(std::memcmp(nonce, b.nonces.data(), kNonce), 0);
  // A ticket pool needs somewhere to put the keystream.
  Pool ticket = make_pool(1, 16);
  Batch t = make_batch(0, 1, 16);
  EXPECT_EQ(nonce_pool_put(ticket.get(), 1, t.nonces.data(), nullptr, 1), 0u);
  ASSERT_EQ(nonce_pool_put(ticket.get(), 1, t.nonces.data(), t.keystream.data(), 1), 1u);
  EXPECT_EQ(nonce_pool_take(ticket.get(), 1, 10, nonce, nullptr), 0);
  EXPECT_EQ(nonce_pool_count(ticket.get()), 1u);
}

TEST(RouterNoncePool, WipesEveryFreedSlot) {
  const size_t ks = 64 * 16;
  Pool pool = make_pool(6, ks);
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(nonce_pool_nonzero_bytes(pool.get(), 1), 0u);
  Batch b = make_batch(0, 6, ks);
  ASSERT_EQ(nonce_pool_put(pool.get(), 7, b.nonces.data(), b.keystream.data(), 6), 6u);
  // Every held slot has its nonce and keystream (and stamp) nonzero.
  EXPECT_GE(nonce_pool_nonzero_bytes(pool.get(), 1), 6 * (kNonce + ks));
  EXPECT_EQ(nonce_pool_nonzero_bytes(pool.get(), 0), 0u);
  uint8_t nonce[kNonce];
  std::vector<uint8_t> stream(ks);
  ASSERT_EQ(nonce_pool_take(pool.get(), 8, 100, nonce, stream.data()), 1);
  ASSERT_EQ(nonce_pool_take(pool.get(), 8, 100, nonce, stream.data()), 1);
  EXPECT_EQ(nonce_pool_nonzero_bytes(pool.get(), 0), 0u);  // taken slots wiped
  EXPECT_GE(nonce_pool_nonzero_bytes(pool.get(), 1), 4 * (kNonce + ks));
  nonce_pool_clear(pool.get());
  EXPECT_EQ(nonce_pool_count(pool.get()), 0u);
  EXPECT_EQ(nonce_pool_nonzero_bytes(pool.get(), 1), 0u);  // cleared slots wiped
  EXPECT_EQ(nonce_pool_take(pool.get(), 8, 100, nonce, stream.data()), 0);
}

TEST(RouterNoncePool, AForkedChildSeesNothing) {
  const size_t ks = 2 * 16;
  Pool pool = make_pool(4, ks);
  ASSERT_NE(pool, nullptr);
  Batch b = make_batch(0, 3, ks);
  ASSERT_EQ(nonce_pool_put(pool.get(), 1, b.nonces.data(), b.keystream.data(), 3), 3u);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // No gtest assertions here: report through the exit status.
    uint8_t nonce[kNonce];
    uint8_t stream[32];
    int status = 0;
    if (nonce_pool_count(pool.get()) != 0) status |= 1;
    if (nonce_pool_take(pool.get(), 1, 100, nonce, stream) != 0) status |= 2;
    if (nonce_pool_nonzero_bytes(pool.get(), 1) != 0) status |= 4;  // MADV_WIPEONFORK
    if (nonce_pool_put(pool.get(), 2, b.nonces.data(), b.keystream.data(), 1) != 0) status |= 8;
    nonce_pool_destroy(pool.release());
    _exit(status);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "bit 1: count, 2: take, 4: pages not wiped, 8: put";
  // The parent's entries are untouched.
  EXPECT_EQ(nonce_pool_count(pool.get()), 3u);
  uint8_t nonce[kNonce];
  uint8_t stream[32];
  ASSERT_EQ(nonce_pool_take(pool.get(), 1, 100, nonce, stream), 1);
  EXPECT_EQ(std::memcmp(stream, b.keystream.data(), ks), 0);
}

}  // namespace
