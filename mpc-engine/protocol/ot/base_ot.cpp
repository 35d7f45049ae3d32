#include "protocol/ot/base_ot.hpp"

#include <sodium.h>

#include <array>

#include "common/error.hpp"
#include "common/secret.hpp"
#include "protocol/ot/wipe_guard.hpp"

namespace mpc::ot {
namespace {

constexpr char kLabel[] = "mpc-kdc chou-orlandi base ot v1";
constexpr std::size_t kPoint = crypto_core_ristretto255_BYTES;
constexpr std::size_t kScalar = crypto_core_ristretto255_SCALARBYTES;
using Point = std::array<std::uint8_t, kPoint>;

Block key_hash(const Point& a, const Point& b, std::uint64_t index, const Point& shared) {
  crypto_generichash_state state;
  crypto_generichash_init(&state, reinterpret_cast<const unsigned char*>(kLabel), sizeof kLabel - 1, sizeof(Block));
  std::uint8_t index_bytes[8];
  for (int i = 0; i < 8; ++i) index_bytes[i] = static_cast<std::uint8_t>(index >> (8 * i));
  crypto_generichash_update(&state, a.data(), a.size());
  crypto_generichash_update(&state, b.data(), b.size());
  crypto_generichash_update(&state, index_bytes, sizeof index_bytes);
  crypto_generichash_update(&state, shared.data(), shared.size());
  Block out;
  crypto_generichash_final(&state, reinterpret_cast<unsigned char*>(&out), sizeof out);
  wipe(&state, sizeof state);
  return out;
}

// sodium_init is idempotent and thread-safe; libsodium requires it before its random numbers.
void init_sodium() {
  if (sodium_init() < 0) throw Error(Component::Protocol, "libsodium initialisation failed");
}

void check_point(const Point& point) {
  if (crypto_core_ristretto255_is_valid_point(point.data()) != 1)
    throw FormatError(Component::Protocol, "base OT: the peer sent an invalid ristretto255 point");
}

// Scalar multiplication; the identity (a malformed transcript) is refused.
Point multiply(const std::uint8_t* scalar, const Point& point) {
  Point out{};
  if (crypto_scalarmult_ristretto255(out.data(), scalar, point.data()) != 0)
    throw FormatError(Component::Protocol, "base OT: a product is the identity");
  return out;
}

}  // namespace

void base_ot_send(two_party::Channel& channel, std::span<Block> keys0, std::span<Block> keys1) {
  if (keys0.size() != keys1.size()) throw Error(Component::Protocol, "base OT: key spans differ");
  init_sodium();
  std::array<std::uint8_t, kScalar> a{};
  Point a_a{};  // aA: a(B - A) = aB - aA costs a subtraction instead of a second product
  Point s0{}, s1{};
  const WipeGuard a_guard(a), a_a_guard(a_a), s0_guard(s0), s1_guard(s1);
  crypto_core_ristretto255_scalar_random(a.data());
  Point big_a{};
  crypto_scalarmult_ristretto255_base(big_a.data(), a.data());
  a_a = multiply(a.data(), big_a);
  channel.send(big_a);
  channel.flush();
  std::vector<Point> bs(keys0.size());
  channel.receive({reinterpret_cast<std::uint8_t*>(bs.data()), bs.size() * kPoint});
  for (std::size_t i = 0; i < bs.size(); ++i) {
    check_point(bs[i]);
    s0 = multiply(a.data(), bs[i]);
    crypto_core_ristretto255_sub(s1.data(), s0.data(), a_a.data());
    // B = A (so a(B - A) is the identity) is a malformed transcript, like an identity product.
    if (sodium_is_zero(s1.data(), s1.size()) == 1)
      throw FormatError(Component::Protocol, "base OT: the peer's point equals the sender's");
    keys0[i] = key_hash(big_a, bs[i], i, s0);
    keys1[i] = key_hash(big_a, bs[i], i, s1);
  }
}

void base_ot_receive(two_party::Channel& channel, std::span<const std::uint8_t> choices, std::span<Block> keys) {
  if (choices.size() != keys.size()) throw Error(Component::Protocol, "base OT: choices and keys differ in size");
  for (auto c : choices)
    if (c > 1) throw Error(Component::Protocol, "base OT: a choice is neither 0 nor 1");
  init_sodium();
  Point big_a{};
  channel.receive(big_a);
  check_point(big_a);
  std::vector<std::array<std::uint8_t, kScalar>> bs(choices.size());
  Point shared{};
  const WipeGuard bs_guard(bs), shared_guard(shared);
  std::vector<Point> points(choices.size());
  Point b_g{}, with_a{};  // the one not sent would tell which was
  const WipeGuard b_g_guard(b_g), with_a_guard(with_a);
  for (std::size_t i = 0; i < choices.size(); ++i) {
    crypto_core_ristretto255_scalar_random(bs[i].data());
    crypto_scalarmult_ristretto255_base(b_g.data(), bs[i].data());
    crypto_core_ristretto255_add(with_a.data(), big_a.data(), b_g.data());
    // Both candidates are computed and one is selected without a branch on the choice.
    const std::uint8_t mask = static_cast<std::uint8_t>(0 - choices[i]);
    for (std::size_t j = 0; j < kPoint; ++j)
      points[i][j] = static_cast<std::uint8_t>((b_g[j] & ~mask) | (with_a[j] & mask));
  }
  channel.send({reinterpret_cast<const std::uint8_t*>(points.data()), points.size() * kPoint});
  channel.flush();
  for (std::size_t i = 0; i < choices.size(); ++i) {
    shared = multiply(bs[i].data(), big_a);
    keys[i] = key_hash(big_a, points[i], i, shared);
  }
}

}  // namespace mpc::ot
