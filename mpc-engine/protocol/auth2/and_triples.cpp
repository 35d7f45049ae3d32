#include "protocol/auth2/and_triples.hpp"

#include <sodium.h>

#include <array>
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

// A uniform permutation of [0, n) from a seed neither party chose (Fisher-Yates over a
// ChaCha20 stream, drawn a chunk at a time; the 64-bit draws reduced by multiply-and-shift
// differ from uniform by at most n / 2^64).
std::vector<std::uint32_t> permutation(const Digest& seed, std::size_t n) {
  if (n > 0xffffffffu) throw Error(Component::Protocol, "AND triples: a batch too large to permute");
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), std::uint32_t{0});
  constexpr std::size_t kChunk = 8192;  // draws, 64 KiB: 1,024 ChaCha20 blocks
  std::array<std::uint64_t, kChunk> draws{};
  const std::array<std::uint8_t, crypto_stream_chacha20_ietf_NONCEBYTES> nonce{};
  std::size_t left = 0;
  std::uint32_t block = 0;
  for (std::size_t i = n; i > 1; --i) {
    if (left == 0) {
      draws.fill(0);
      crypto_stream_chacha20_ietf_xor_ic(reinterpret_cast<unsigned char*>(draws.data()),
                                         reinterpret_cast<const unsigned char*>(draws.data()), sizeof draws,
                                         nonce.data(), block, seed.data());
      block += sizeof draws / 64;
      left = kChunk;
    }
    const std::uint64_t draw = draws[kChunk - left--];
    const auto j = static_cast<std::size_t>((static_cast<unsigned __int128>(draw) * i) >> 64);
    std::swap(order[i - 1], order[j]);
  }
  return order;
}

}  // namespace

unsigned bucket_size(std::size_t n) {
  if (n == 0) throw Error(Component::Protocol, "AND triples: a call of zero triples");
  // A pool asks for batches of one size: the bound (thousands of lgamma calls) once per size.
  thread_local std::size_t last_n = 0;
  thread_local unsigned last_b = 0;
  if (n == last_n) return last_b;
  for (unsigned b = 2;; ++b)
    if (log2_failure(n, b) <= -static_cast<double>(kStatisticalSecurity)) {
      last_n = n;
      last_b = b;
      return b;
    }
}

static_assert(sizeof(AuthTriple) == 3 * sizeof(AuthBit), "a triple is its three bits in a row");

namespace {

// The leaky AND into `triples` (every field written): one call's batch, wherever the caller keeps it.
void make_leaky_triples(Session& session, std::span<AuthTriple> triples) {
  const std::size_t n = triples.size();
  session.random_bits(std::span<AuthBit>(&triples.data()->x, 3 * n));  // x, y, r of each triple
  const Block delta = session.delta();
  const bool first = session.role() == Role::First;
  // Tweak of the first party's x of triple i: base + 2i; the second's: base + 2i + 1.
  const std::uint64_t base = session.take_tweaks(2 * n);
  const std::uint64_t own_tweak = base + (first ? 0 : 1), peer_tweak = base + (first ? 1 : 0);

  // h_mac becomes v once S is made; products holds H(K ^ delta) until it is the product.
  std::vector<Block> c(n), h_key(n), h_mac(n), products(n);
  const ot::WipeGuard c_guard(c), key_guard(h_key), mac_guard(h_mac), products_guard(products);

  for (std::size_t i = 0; i < n; ++i) {
    const AuthTriple& t = triples[i];
    c[i] = t.y.key ^ t.y.mac ^ (delta & two_party::select_mask(t.y.bit != 0));
    h_key[i] = t.x.key;
    products[i] = t.x.key ^ delta;
    h_mac[i] = t.x.mac;
  }
  two_party::tccr_hash(h_key.data(), h_key.data(), n, kTweakHigh, peer_tweak, 2);
  two_party::tccr_hash(products.data(), products.data(), n, kTweakHigh, peer_tweak, 2);
  two_party::tccr_hash(h_mac.data(), h_mac.data(), n, kTweakHigh, own_tweak, 2);
  for (std::size_t i = 0; i < n; ++i) products[i] ^= h_key[i] ^ c[i];
  session.send(Step::LeakyProducts, bytes_of(products));
  session.channel().flush();
  std::vector<Block>& peer_products = products;  // ours are sent: the buffer takes the peer's
  session.channel().receive(bytes_of(peer_products));

  std::vector<Block>& v = h_mac;
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
}

// The leaky triples of one bucketing call, in a buffer each thread keeps: a batch's (tens of
// MiB) would otherwise be mapped, zeroed and unmapped again for every call. Wiped after each use.
std::span<AuthTriple> leaky_scratch(std::size_t n) {
  thread_local std::vector<AuthTriple> buffer;
  if (buffer.size() < n) {
    wipe(buffer.data(), buffer.size() * sizeof(AuthTriple));
    buffer = std::vector<AuthTriple>(n);
  }
  return {buffer.data(), n};
}

// Starts loading the triples of a bucket a few ahead of the one combined: the permutation
// scatters them over the whole batch.
void prefetch_bucket(const AuthTriple* leaky, const std::uint32_t* order, unsigned b) {
  for (unsigned j = 0; j < b; ++j) {
    const char* at = reinterpret_cast<const char*>(leaky + order[j]);
    for (std::size_t line = 0; line < sizeof(AuthTriple); line += 64) __builtin_prefetch(at + line);
  }
}
constexpr std::size_t kPrefetchBuckets = 4;

}  // namespace

std::vector<AuthTriple> leaky_triples(Session& session, std::size_t n) {
  std::vector<AuthTriple> triples(n);
  make_leaky_triples(session, triples);
  return triples;
}

namespace {

// Bucketed triples, handed to `store` one by one (index, triple) so that callers keep them
// where they want them without another copy of the batch.
template <typename Store>  // void(std::size_t, const AuthTriple&), called once per bucket
void combine_buckets(Session& session, std::size_t n, const Store& store) {
  const unsigned b = bucket_size(n);
  const std::span<AuthTriple> leaky = leaky_scratch(n * b);
  const ot::WipeGuard leaky_guard(leaky.data(), leaky.size_bytes());
  make_leaky_triples(session, leaky);
  // The permutation only now, with every leaky triple fixed and checked.
  const std::vector<std::uint32_t> order = permutation(session.coin_toss(), leaky.size());
  std::vector<AuthBit> differences(n * (b - 1));
  const ot::WipeGuard differences_guard(differences);
  for (std::size_t bucket = 0; bucket < n; ++bucket) {
    if (bucket + kPrefetchBuckets < n) prefetch_bucket(leaky.data(), &order[(bucket + kPrefetchBuckets) * b], b);
    const AuthBit& head = leaky[order[bucket * b]].y;
    for (unsigned j = 1; j < b; ++j) differences[bucket * (b - 1) + j - 1] = head ^ leaky[order[bucket * b + j]].y;
  }
  const std::vector<std::uint8_t> d = session.open(differences);
  for (std::size_t bucket = 0; bucket < n; ++bucket) {
    if (bucket + kPrefetchBuckets < n) prefetch_bucket(leaky.data(), &order[(bucket + kPrefetchBuckets) * b], b);
    AuthTriple combined = leaky[order[bucket * b]];
    for (unsigned j = 1; j < b; ++j) {
      const AuthTriple& other = leaky[order[bucket * b + j]];
      combined.x ^= other.x;
      combined.z ^= other.z;
      if (d[bucket * (b - 1) + (j - 1)] != 0) combined.z ^= other.x;
    }
    store(bucket, combined);
    wipe(&combined, sizeof combined);
  }
}

}  // namespace

std::vector<AuthTriple> and_triples(Session& session, std::size_t n) {
  std::vector<AuthTriple> out(n);
  combine_buckets(session, n, [&](std::size_t i, const AuthTriple& triple) { out[i] = triple; });
  return out;
}

std::vector<AndMaterial> and_material(Session& session, std::size_t n) {
  std::vector<AndMaterial> out(n);
  combine_buckets(session, n, [&](std::size_t i, const AuthTriple& triple) { out[i].triple = triple; });
  std::vector<AuthBit> lambdas(std::min(n, Session::kBitsPerCall));
  const ot::WipeGuard lambdas_guard(lambdas);
  for (std::size_t first = 0; first < n; first += lambdas.size()) {
    const std::size_t count = std::min(lambdas.size(), n - first);
    session.random_bits(std::span<AuthBit>(lambdas.data(), count));
    for (std::size_t i = 0; i < count; ++i) out[first + i].lambda = lambdas[i];
  }
  return out;
}

}  // namespace mpc::auth2
