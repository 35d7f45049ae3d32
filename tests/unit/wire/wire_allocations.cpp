// The largest single allocation while g_tracking is set: decoders must refuse oversized counts
// before they allocate for them (wire_test_support.hpp).
#include <atomic>
#include <cstdlib>
#include <new>

std::atomic<bool> g_tracking{false};
std::atomic<std::size_t> g_largest{0};

namespace {
void* tracked_alloc(std::size_t size) {
  if (g_tracking.load(std::memory_order_relaxed)) {
    std::size_t seen = g_largest.load(std::memory_order_relaxed);
    while (size > seen && !g_largest.compare_exchange_weak(seen, size)) {
    }
  }
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(std::size_t size) { return tracked_alloc(size); }
void* operator new[](std::size_t size) { return tracked_alloc(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
