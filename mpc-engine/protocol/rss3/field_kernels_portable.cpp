#include "protocol/rss3/field_kernels_impl.hpp"

namespace mpc::rss3 {

Gf128 gf128_mul_portable(Gf128 a, Gf128 b) {
  Gf128 product;
  Gf128 v = b;  // b * x^i mod p
  for (unsigned i = 0; i < 128; ++i) {
    const std::uint64_t bit = (i < 64 ? a.lo >> i : a.hi >> (i - 64)) & 1;
    product ^= detail::select(v, bit);
    const std::uint64_t carry = v.hi >> 63;
    v.hi = (v.hi << 1) | (v.lo >> 63);
    v.lo = (v.lo << 1) ^ (0x87 & (0 - carry));
  }
  return product;
}

namespace detail {
namespace {

// No lazy reduction: each product is reduced as it is made.
struct PortableField {
  using Value = Gf128;
  using Wide = Gf128;
  static Value load(Gf128 v) { return v; }
  static Gf128 store(Value v) { return v; }
  static Value add(Value a, Value b) { return a ^ b; }
  static Wide zero() { return {}; }
  static Wide product(Value a, Value b) { return gf128_mul_portable(a, b); }
  static void accumulate(Wide& acc, Value a, Value b) { acc ^= gf128_mul_portable(a, b); }
  static void accumulate_words(Wide& acc, std::uint64_t a, std::uint64_t b) {
    acc ^= gf128_mul_portable({a, 0}, {b, 0});
  }
  static Gf128 reduce(Wide w) { return w; }
};

}  // namespace

const FieldKernels& portable_field_kernels() {
  static const FieldKernels kernels = KernelSet<PortableField>::table("portable");
  return kernels;
}

const FieldKernels& field_kernels() {
  static const FieldKernels& best = [] () -> const FieldKernels& {
    if (const FieldKernels* widest = vpclmul_field_kernels()) return *widest;
    if (const FieldKernels* wide = vpclmul_ymm_field_kernels()) return *wide;
    if (const FieldKernels* fast = pclmul_field_kernels()) return *fast;
    return portable_field_kernels();
  }();
  return best;
}

}  // namespace detail
}  // namespace mpc::rss3
