#include "protocol/ot/base_ot.hpp"

#include <sodium.h>

#include <array>

#include "common/error.hpp"
#include "common/secret.hpp"
#include "protocol/ot/wipe_guard.hpp"

namespace mpc::ot {
namespace {

constexpr char kKeyLabel[] = "mpc-kdc masny-rindal base ot key v1";
constexpr char kGroupLabel[] = "mpc-kdc masny-rindal base ot hash-to-group v1";
constexpr std::size_t kPoint = crypto_core_ristretto255_BYTES;
constexpr std::size_t kScalar = crypto_core_ristretto255_SCALARBYTES;
using Point = std::array<std::uint8_t, kPoint>;

std::array<std::uint8_t, 8> index_bytes(std::uint64_t index) {
  std::array<std::uint8_t, 8> out{};
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::uint8_t>(index >> (8 * i));
  return out;
}

// H_i(point): the OT index and a point onto a uniform element of the group.
Point hash_to_group(std::uint64_t index, const Point& point) {
  std::array<std::uint8_t, crypto_core_ristretto255_HASHBYTES> wide{};
  crypto_generichash_state state;
  crypto_generichash_init(&state, reinterpret_cast<const unsigned char*>(kGroupLabel), sizeof kGroupLabel - 1,
                          wide.size());
  const auto index_le = index_bytes(index);
  crypto_generichash_update(&state, index_le.data(), index_le.size());
  crypto_generichash_update(&state, point.data(), point.size());
  crypto_generichash_final(&state, wide.data(), wide.size());
  Point out{};
  crypto_core_ristretto255_from_hash(out.data(), wide.data());
  return out;
}

Block key_hash(const Point& a, const Point& r0, const Point& r1, std::uint64_t index, const Point& shared) {
  crypto_generichash_state state;
  crypto_generichash_init(&state, reinterpret_cast<const unsigned char*>(kKeyLabel), sizeof kKeyLabel - 1,
                          sizeof(Block));
  const auto index_le = index_bytes(index);
  crypto_generichash_update(&state, a.data(), a.size());
  crypto_generichash_update(&state, r0.data(), r0.size());
  crypto_generichash_update(&state, r1.data(), r1.size());
  crypto_generichash_update(&state, index_le.data(), index_le.size());
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
  Point shared{};
  const WipeGuard a_guard(a), shared_guard(shared);
  crypto_core_ristretto255_scalar_random(a.data());
  Point big_a{};
  crypto_scalarmult_ristretto255_base(big_a.data(), a.data());
  channel.send(big_a);
  channel.flush();
  std::vector<Point> rs(2 * keys0.size());  // r_0i, r_1i
  channel.receive({reinterpret_cast<std::uint8_t*>(rs.data()), rs.size() * kPoint});
  for (const auto& r : rs) check_point(r);
  for (std::size_t i = 0; i < keys0.size(); ++i) {
    const Point& r0 = rs[2 * i];
    const Point& r1 = rs[2 * i + 1];
    for (int j = 0; j < 2; ++j) {
      Point m{};
      const Point offset = hash_to_group(i, j == 0 ? r1 : r0);
      crypto_core_ristretto255_add(m.data(), (j == 0 ? r0 : r1).data(), offset.data());
      shared = multiply(a.data(), m);
      (j == 0 ? keys0 : keys1)[i] = key_hash(big_a, r0, r1, i, shared);
    }
  }
}

void base_ot_receive(two_party::Channel& channel, std::span<const std::uint8_t> choices, std::span<Block> keys) {
  if (choices.size() != keys.size()) throw Error(Component::Protocol, "base OT: choices and keys differ in size");
  for (auto c : choices)
    if (c > 1) throw Error(Component::Protocol, "base OT: a choice is neither 0 nor 1");
  init_sodium();
  std::vector<std::array<std::uint8_t, kScalar>> bs(choices.size());
  Point shared{}, b_g{}, chosen{};
  const WipeGuard bs_guard(bs), shared_guard(shared), b_g_guard(b_g), chosen_guard(chosen);
  std::vector<Point> rs(2 * choices.size());
  for (std::size_t i = 0; i < choices.size(); ++i) {
    crypto_core_ristretto255_scalar_random(bs[i].data());
    crypto_scalarmult_ristretto255_base(b_g.data(), bs[i].data());
    Point other{};
    crypto_core_ristretto255_random(other.data());
    const Point offset = hash_to_group(i, other);
    crypto_core_ristretto255_sub(chosen.data(), b_g.data(), offset.data());
    // r_{c_i} = chosen, r_{1-c_i} = other, placed without a branch on the choice.
    const std::uint8_t mask = static_cast<std::uint8_t>(0 - choices[i]);
    for (std::size_t k = 0; k < kPoint; ++k) {
      rs[2 * i][k] = static_cast<std::uint8_t>((chosen[k] & ~mask) | (other[k] & mask));
      rs[2 * i + 1][k] = static_cast<std::uint8_t>((other[k] & ~mask) | (chosen[k] & mask));
    }
  }
  channel.send({reinterpret_cast<const std::uint8_t*>(rs.data()), rs.size() * kPoint});
  channel.flush();
  Point big_a{};
  channel.receive(big_a);
  check_point(big_a);
  for (std::size_t i = 0; i < choices.size(); ++i) {
    shared = multiply(bs[i].data(), big_a);
    keys[i] = key_hash(big_a, rs[2 * i], rs[2 * i + 1], i, shared);
  }
}

}  // namespace mpc::ot
