#include "protocol/auth2/and_triples.hpp"

#include <sodium.h>

#include <cmath>
#include <numeric>

#include "common/error.hpp"
#include "common/secret.hpp"
#include "protocol/ot/wipe_guard.hpp"
#include "protocol/two_party/fixed_key_hash.hpp"

namespace mpc::auth2 {
namespace {

// Tweak space of the leaky AND's hash: apart from the garbled circuits' (below 2^63) and the
// OT extension's ("OT-EXT" with the top bit set).
constexpr std::uint64_t kTweakHigh = (1ull << 63) | 0x4c41414e44ull;  // "LAAND"

std::span<std::uint8_t> bytes_of(std::vector<Block>& blocks) {
  return {reinterpret_cast<std::uint8_t*>(blocks.data()), blocks.size() * sizeof(Block)};
}

// log2 of the binomial coefficient.
double log2_choose(double n, double k) {
  return (std::lgamma(n + 1) - std::lgamma(k + 1) - std::lgamma(n - k + 1)) / std::log(2.0);
}

// log2 of the chance that a deviating party, having probed k of n B leaky triples and passed
// every check (2^-k), finds some bucket of the permutation made of probed triples only,
// maximised over k.
double log2_failure(std::size_t n, unsigned b) {
  const double triples = static_cast<double>(n) * b;
  double worst = -1e9;
  const std::size_t last = static_cast<std::size_t>(std::min<double>(triples, 64.0 * b + 4096));
  for (std::size_t k = b; k <= last; ++k) {
    const double bound = -static_cast<double>(k) + std::log2(static_cast<double>(n)) + log2_choose(static_cast<double>(k), b) -
                         log2_choose(triples, b);
    worst = std::max(worst, bound);
  }
  return worst;
}

// A uniform permutation of [0, n) from a seed neither party chose (Fisher-Yates; the 64-bit
// draws reduced by multiply-and-shift differ from uniform by at most n / 2^64).
std::vector<std::size_t> permutation(const Digest& seed, std::size_t n) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::vector<std::uint64_t> draws(n);
  randombytes_buf_deterministic(draws.data(), draws.size() * sizeof(std::uint64_t), seed.data());
  for (std::size_t i = n; i > 1; --i) {
    const auto j = static_cast<std::size_t>((static_cast<unsigned __int128>(draws[i - 1]) * i) >> 64);
    std::swap(order[i - 1], order[j]);
  }
  return order;
}

}  // namespace

unsigned bucket_size(std::size_t n) {
  if (n == 0) throw Error(Component::Protocol, "AND triples: a call of zero triples");
  for (unsigned b = 2;; ++b)
    if (log2_failure(n, b) <= -static_cast<double>(kStatisticalSecurity)) return b;
}

std::vector<AuthTriple> leaky_triples(Session& session, std::size_t n) {
  std::vector<AuthBit> bits = session.random_bits(3 * n);
  const ot::WipeGuard bits_guard(bits);
  std::vector<AuthTriple> triples(n);
  for (std::size_t i = 0; i < n; ++i) triples[i] = AuthTriple{bits[3 * i], bits[3 * i + 1], bits[3 * i + 2]};
  const Block delta = session.delta();
  const bool first = session.role() == Role::First;
  // Tweak of the first party's x of triple i: base + 2i; the second's: base + 2i + 1.
  const std::uint64_t base = session.take_tweaks(2 * n);
  const std::uint64_t own_tweak = base + (first ? 0 : 1), peer_tweak = base + (first ? 1 : 0);

  std::vector<Block> c(n), h_key(n), h_key_delta(n), h_mac(n), products(n), v(n);
  const ot::WipeGuard c_guard(c), key_guard(h_key), key_delta_guard(h_key_delta), mac_guard(h_mac), v_guard(v);

  for (std::size_t i = 0; i < n; ++i) {
    const AuthTriple& t = triples[i];
    c[i] = t.y.key ^ t.y.mac ^ (delta & two_party::select_mask(t.y.bit != 0));
    h_key[i] = t.x.key;
    h_key_delta[i] = t.x.key ^ delta;
    h_mac[i] = t.x.mac;
  }
  two_party::tccr_hash(h_key.data(), h_key.data(), n, kTweakHigh, peer_tweak, 2);
  two_party::tccr_hash(h_key_delta.data(), h_key_delta.data(), n, kTweakHigh, peer_tweak, 2);
  two_party::tccr_hash(h_mac.data(), h_mac.data(), n, kTweakHigh, own_tweak, 2);
  for (std::size_t i = 0; i < n; ++i) products[i] = h_key[i] ^ h_key_delta[i] ^ c[i];
  session.send(Step::LeakyProducts, bytes_of(products));
  session.channel().flush();
  std::vector<Block> peer_products(n);
  session.channel().receive(bytes_of(peer_products));

  std::vector<std::uint8_t> own_d(n);
  for (std::size_t i = 0; i < n; ++i) {
    const AuthTriple& t = triples[i];
    const Block s = h_mac[i] ^ h_key[i] ^ t.z.mac ^ t.z.key ^
                    ((peer_products[i] ^ c[i]) & two_party::select_mask(t.x.bit != 0));
    v[i] = s ^ (delta & two_party::select_mask(t.z.bit != 0));
    own_d[i] = static_cast<std::uint8_t>((v[i].lo >> 1) & 1);
  }
  std::vector<std::uint8_t> reveal = pack_bits(own_d);
  session.send(Step::LeakyReveal, reveal);
  session.channel().flush();
  std::vector<std::uint8_t> peer_reveal(reveal.size());
  session.channel().receive(peer_reveal);
  const std::vector<std::uint8_t> peer_d = unpack_bits(peer_reveal, n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint8_t d = own_d[i] ^ peer_d[i];
    session.add_public(triples[i].z, d);  // z = r ^ d
    v[i] ^= delta & two_party::select_mask(d != 0);
  }
  crypto_generichash_state state;
  crypto_generichash_init(&state, nullptr, 0, 32);
  crypto_generichash_update(&state, reinterpret_cast<const unsigned char*>(v.data()), n * sizeof(Block));
  Digest digest{};
  crypto_generichash_final(&state, digest.data(), digest.size());
  session.check_equal(digest, "leaky_and");
  return triples;
}

std::vector<AuthTriple> and_triples(Session& session, std::size_t n) {
  const unsigned b = bucket_size(n);
  std::vector<AuthTriple> leaky = leaky_triples(session, n * b);
  // The permutation only now, with every leaky triple fixed and checked.
  const std::vector<std::size_t> order = permutation(session.coin_toss(), leaky.size());
  std::vector<AuthBit> differences;
  differences.reserve(n * (b - 1));
  for (std::size_t bucket = 0; bucket < n; ++bucket) {
    const AuthTriple& head = leaky[order[bucket * b]];
    for (unsigned j = 1; j < b; ++j) differences.push_back(head.y ^ leaky[order[bucket * b + j]].y);
  }
  const std::vector<std::uint8_t> d = session.open(differences);
  std::vector<AuthTriple> out(n);
  for (std::size_t bucket = 0; bucket < n; ++bucket) {
    AuthTriple combined = leaky[order[bucket * b]];
    for (unsigned j = 1; j < b; ++j) {
      const AuthTriple& other = leaky[order[bucket * b + j]];
      const bool public_d = d[bucket * (b - 1) + (j - 1)] != 0;
      combined.x ^= other.x;
      combined.z ^= other.z;
      if (public_d) combined.z ^= other.x;
    }
    out[bucket] = combined;
  }
  wipe(leaky.data(), leaky.size() * sizeof(AuthTriple));
  return out;
}

std::vector<AndMaterial> and_material(Session& session, std::size_t n) {
  std::vector<AuthTriple> triples = and_triples(session, n);
  std::vector<AuthBit> lambdas = session.random_bits(n);
  std::vector<AndMaterial> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = AndMaterial{triples[i], lambdas[i]};
  wipe(triples.data(), triples.size() * sizeof(AuthTriple));
  wipe(lambdas.data(), lambdas.size() * sizeof(AuthBit));
  return out;
}

}  // namespace mpc::auth2
