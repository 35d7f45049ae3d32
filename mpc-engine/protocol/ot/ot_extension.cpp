#include "protocol/ot/ot_extension.hpp"

#include <openssl/evp.h>
#include <sodium.h>

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/secret.hpp"
#include "protocol/ot/base_ot.hpp"
#include "protocol/ot/bit_transpose.hpp"
#include "protocol/ot/wipe_guard.hpp"
#include "protocol/two_party/fixed_key_hash.hpp"

namespace mpc::ot {
namespace {

// Tweak space of the OT hash: the top bit set, which the garbled circuits' job numbers
// (below 2^63) never have.
constexpr std::uint64_t kTweakHigh = (1ull << 63) | (0x4f542d455854ull);  // "OT-EXT"

// OTs per message of the receiver (128 KiB of u): bounds the buffers and lets the sender
// transpose and hash one batch while the receiver prepares the next.
constexpr std::size_t kBatch = 8192;

// What a call does, announced by the receiver with its count so that a sender making a
// different call fails clearly instead of reading a desynchronised stream.
enum class Call : std::uint8_t { Random = 1, Correlated = 2, Chosen = 3, Authenticated = 4 };
constexpr std::uint64_t kMaxCount = (1ull << 56) - 1;

const char* call_name(std::uint64_t call) {
  switch (call) {
    case static_cast<std::uint64_t>(Call::Random): return "random";
    case static_cast<std::uint64_t>(Call::Correlated): return "correlated";
    case static_cast<std::uint64_t>(Call::Chosen): return "chosen";
    case static_cast<std::uint64_t>(Call::Authenticated): return "authenticated";
    default: return "unknown";
  }
}

std::array<std::uint8_t, 8> encode_call(Call call, std::size_t n) {
  if (n > kMaxCount) throw Error(Component::Protocol, "OT extension: too many OTs in one call");
  const std::uint64_t word = (static_cast<std::uint64_t>(call) << 56) | n;
  std::array<std::uint8_t, 8> out{};
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::uint8_t>(word >> (8 * i));
  return out;
}

void expect_call(two_party::Channel& channel, Call call, std::size_t n) {
  std::array<std::uint8_t, 8> bytes{};
  channel.receive(bytes);
  std::uint64_t word = 0;
  for (int i = 0; i < 8; ++i) word |= static_cast<std::uint64_t>(bytes[i]) << (8 * i);
  const std::uint64_t peer_call = word >> 56;
  const std::uint64_t peer_n = word & kMaxCount;
  if (peer_call != static_cast<std::uint64_t>(call) || peer_n != n)
    throw Error(Component::Protocol, "OT extension: the receiver runs " + std::to_string(peer_n) + " " +
                                         call_name(peer_call) + " OTs where this side runs " + std::to_string(n) + " " +
                                         call_name(static_cast<std::uint64_t>(call)) +
                                         " (both sides must make the same calls)");
}

// AES-128-CTR under one base-OT key: a column's pseudorandom bits, continuing across calls.
class ColumnPrg {
 public:
  ColumnPrg() = default;
  void init(const Block& seed) {
    context_ = EVP_CIPHER_CTX_new();
    const std::uint8_t iv[16] = {};
    if (context_ == nullptr ||
        EVP_EncryptInit_ex(context_, EVP_aes_128_ctr(), nullptr, reinterpret_cast<const unsigned char*>(&seed), iv) != 1)
      throw Error(Component::Protocol, "OT extension: AES-128-CTR unavailable");
  }
  ~ColumnPrg() { EVP_CIPHER_CTX_free(context_); }  // OpenSSL cleanses the key schedule
  ColumnPrg(const ColumnPrg&) = delete;
  ColumnPrg& operator=(const ColumnPrg&) = delete;
  void fill(std::uint8_t* out, std::size_t bytes) {
    std::fill(out, out + bytes, 0);
    int written = 0;
    if (EVP_EncryptUpdate(context_, out, &written, out, static_cast<int>(bytes)) != 1)
      throw Error(Component::Protocol, "OT extension: AES-128-CTR failed");
  }

 private:
  EVP_CIPHER_CTX* context_ = nullptr;
};

// Bytes of one column for n OTs: whole 128-OT tiles, so both sides advance their PRGs alike.
std::size_t column_bytes(std::size_t n) { return ((n + 127) / 128) * 16; }

void check_choices(std::span<const std::uint8_t> choices, std::size_t n) {
  if (choices.size() != n) throw Error(Component::Protocol, "OT extension: choices and outputs differ in size");
  for (auto c : choices)
    if (c > 1) throw Error(Component::Protocol, "OT extension: a choice is neither 0 nor 1");
}

// The consistency check of Keller, Orsini and Scholl (KOS15, "Actively Secure OT Extension
// with Optimal Overhead", CRYPTO 2015, section 3.1), over GF(2^128) = GF(2)[x] / (x^128 + x^7 +
// x^2 + x + 1) in polynomial basis (bit k of lo is x^k). Every call extends kCheckRows OTs more
// than asked, with random choices, and sacrifices them: once all u is sent, the sender draws
// chi from a fresh seed, the receiver answers x = sum chi_j c_j and t = sum chi_j t_j, and the
// sender checks sum chi_j q_j = t + x s. A receiver whose columns disagree on a choice bit
// passes only by guessing the bits of s the disagreement touches: it learns k bits of s with
// probability 2^-k, and fails the call otherwise.
constexpr std::size_t kCheckRows = 256;  // kappa + s rounded to whole 128-OT tiles

struct Wide {
  std::uint64_t w[4] = {0, 0, 0, 0};
};

// acc ^= sum a_j * b_j, unreduced, with PCLMULQDQ (one loop, so the products stay in registers).
__attribute__((target("pclmul,sse2"))) void mul_acc_clmul(Wide& acc, const Block* a, const Block* b, std::size_t n) {
  __m128i lo = _mm_setzero_si128(), hi = _mm_setzero_si128(), mid = _mm_setzero_si128();
  for (std::size_t j = 0; j < n; ++j) {
    const __m128i x = _mm_load_si128(reinterpret_cast<const __m128i*>(a + j));
    const __m128i y = _mm_load_si128(reinterpret_cast<const __m128i*>(b + j));
    lo = _mm_xor_si128(lo, _mm_clmulepi64_si128(x, y, 0x00));
    hi = _mm_xor_si128(hi, _mm_clmulepi64_si128(x, y, 0x11));
    mid = _mm_xor_si128(mid, _mm_xor_si128(_mm_clmulepi64_si128(x, y, 0x01), _mm_clmulepi64_si128(x, y, 0x10)));
  }
  std::uint64_t l[2], h[2], m[2];
  _mm_storeu_si128(reinterpret_cast<__m128i*>(l), lo);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(h), hi);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(m), mid);
  acc.w[0] ^= l[0];
  acc.w[1] ^= l[1] ^ m[0];
  acc.w[2] ^= h[0] ^ m[1];
  acc.w[3] ^= h[1];
}

// The same without PCLMULQDQ: constant time, a bit at a time.
void clmul64(std::uint64_t a, std::uint64_t b, std::uint64_t& lo, std::uint64_t& hi) {
  lo = 0;
  hi = 0;
  for (int i = 0; i < 64; ++i) {
    const std::uint64_t mask = 0 - ((b >> i) & 1);
    lo ^= (a << i) & mask;
    hi ^= (i == 0 ? 0 : a >> (64 - i)) & mask;
  }
}

void mul_acc_portable(Wide& acc, const Block& a, const Block& b) {
  std::uint64_t l0, l1, h0, h1, m0, m1, n0, n1;
  clmul64(a.lo, b.lo, l0, l1);
  clmul64(a.hi, b.hi, h0, h1);
  clmul64(a.lo, b.hi, m0, m1);
  clmul64(a.hi, b.lo, n0, n1);
  acc.w[0] ^= l0;
  acc.w[1] ^= l1 ^ m0 ^ n0;
  acc.w[2] ^= h0 ^ m1 ^ n1;
  acc.w[3] ^= h1;
}

const bool kHasClmul = [] {
  __builtin_cpu_init();
  return __builtin_cpu_supports("pclmul") != 0;
}();

void mul_acc(Wide& acc, std::span<const Block> a, std::span<const Block> b) {
  if (kHasClmul) {
    mul_acc_clmul(acc, a.data(), b.data(), a.size());
    return;
  }
  for (std::size_t j = 0; j < a.size(); ++j) mul_acc_portable(acc, a[j], b[j]);
}

// acc mod x^128 + x^7 + x^2 + x + 1.
Block reduce(const Wide& acc) {
  // x^128 = x^7 + x^2 + x + 1: fold the high 128 bits down, then the few bits that overflow.
  std::uint64_t lo = acc.w[0], hi = acc.w[1];
  const std::uint64_t h0 = acc.w[2], h1 = acc.w[3];
  const auto fold = [](std::uint64_t v, int shift) { return shift == 0 ? v : v << shift; };
  const auto carry = [](std::uint64_t v, int shift) { return shift == 0 ? 0 : v >> (64 - shift); };
  std::uint64_t over = 0;  // bits of x^128 and above left after folding h1 into hi
  for (int shift : {0, 1, 2, 7}) {
    lo ^= fold(h0, shift);
    hi ^= carry(h0, shift) ^ fold(h1, shift);
    over ^= carry(h1, shift);
  }
  for (int shift : {0, 1, 2, 7}) lo ^= fold(over, shift);
  return Block{lo, hi};
}

Block gf_mul(const Block& a, const Block& b) {
  Wide acc;
  mul_acc(acc, std::span(&a, 1), std::span(&b, 1));
  return reduce(acc);
}

// sum chi_j * rows_j (unreduced) and, with choices, sum chi_j c_j: chi_j is AES-128-CTR under
// the sender's seed, one block per row, made a tile of rows at a time.
Wide check_sum(const Block& seed, std::span<const Block> rows, std::span<const Block> extra,
               std::span<const std::uint8_t> choices = {}, Block* x = nullptr);

// A batch's rows, the first of them row `first` of the call: those below out.size() into out,
// the sacrificed ones after them into extra.
void place_rows(std::span<const Block> rows, std::size_t first, std::span<Block> out, std::span<Block> extra) {
  for (std::size_t j = 0; j < rows.size(); ++j) {
    const std::size_t row = first + j;
    if (row < out.size()) out[row] = rows[j];
    else extra[row - out.size()] = rows[j];
  }
}

std::span<const std::uint8_t> bytes_of(std::span<const Block> blocks) {
  return {reinterpret_cast<const std::uint8_t*>(blocks.data()), blocks.size() * sizeof(Block)};
}
std::span<std::uint8_t> bytes_of(std::span<Block> blocks) {
  return {reinterpret_cast<std::uint8_t*>(blocks.data()), blocks.size() * sizeof(Block)};
}

Wide check_sum(const Block& seed, std::span<const Block> rows, std::span<const Block> extra,
               std::span<const std::uint8_t> choices, Block* x) {
  ColumnPrg prg;
  prg.init(seed);
  constexpr std::size_t kTile = 1024;
  std::vector<Block> chi(kTile);
  Wide sum;
  std::size_t row = 0;  // of the call: rows, then extra
  for (const std::span<const Block> part : {rows, extra}) {
    for (std::size_t first = 0; first < part.size(); first += kTile) {
      const std::size_t count = std::min(kTile, part.size() - first);
      prg.fill(reinterpret_cast<std::uint8_t*>(chi.data()), count * sizeof(Block));
      mul_acc(sum, std::span<const Block>(chi.data(), count), part.subspan(first, count));
      if (x != nullptr)
        for (std::size_t j = 0; j < count; ++j) *x ^= chi[j] & two_party::select_mask(choices[row + j] != 0);
      row += count;
    }
  }
  return sum;
}

}  // namespace

// The IKNP sender is the base-OT receiver with random choices s.
struct OtExtensionSender::State {
  two_party::Channel* channel;
  bool ready = false;
  Block s;                                        // the base-OT choices as one block
  std::array<std::uint8_t, kBaseOts> s_bits{};    // the same, one byte each
  ColumnPrg prgs[kBaseOts];                       // G(k_{s_i}) of base OT i
  std::uint64_t counter = 0;                      // OTs so far: the hash tweak
  int fixed_low_bits = -1;                        // bits 0 and 1 of s, or -1 when random
  explicit State(two_party::Channel& c) : channel(&c) {}
  ~State() {
    wipe(&s, sizeof s);
    wipe(s_bits.data(), s_bits.size());
  }

  void setup() {
    if (ready) return;
    if (sodium_init() < 0) throw Error(Component::Protocol, "libsodium initialisation failed");
    randombytes_buf(&s, sizeof s);
    if (fixed_low_bits >= 0) s.lo = (s.lo & ~std::uint64_t{3}) | static_cast<std::uint64_t>(fixed_low_bits);
    for (std::size_t i = 0; i < kBaseOts; ++i)
      s_bits[i] = static_cast<std::uint8_t>((i < 64 ? s.lo >> i : s.hi >> (i - 64)) & 1);
    std::array<Block, kBaseOts> seeds{};
    const WipeGuard seeds_guard(seeds);
    base_ot_receive(*channel, s_bits, seeds);
    for (std::size_t i = 0; i < kBaseOts; ++i) prgs[i].init(seeds[i]);
    ready = true;
  }

  // out0[j] = H(q_j, counter + j), out1[j] = H(q_j ^ s, counter + j) with q_j = t_j ^ c_j * s,
  // from the receiver's u batch by batch, once its rows pass the consistency check.
  // Authenticated calls stop before the hash: out0 gets q_j and out1 is not written.
  void extend(Call call, std::span<Block> out0, std::span<Block> out1) {
    setup();
    const std::size_t n = out0.size();
    expect_call(*channel, call, n);
    const std::size_t total = n + kCheckRows;
    // Rows [0, n) go to out0 (hashed once checked), the sacrificed ones to `extra`.
    std::vector<Block> batch_rows(std::min(total, kBatch)), extra(kCheckRows);
    const WipeGuard batch_guard(batch_rows), extra_guard(extra);
    const std::size_t buffer = kBaseOts * column_bytes(std::min(total, kBatch));
    std::vector<std::uint8_t> u(buffer), q(buffer);
    const WipeGuard q_guard(q);
    for (std::size_t first = 0; first < total; first += kBatch) {
      const std::size_t count = std::min(kBatch, total - first);
      const std::size_t stride = column_bytes(count);
      channel->receive({u.data(), kBaseOts * stride});
      for (std::size_t i = 0; i < kBaseOts; ++i) {
        std::uint8_t* column = q.data() + i * stride;
        const std::uint8_t* u_column = u.data() + i * stride;
        prgs[i].fill(column, stride);
        const auto mask = static_cast<std::uint8_t>(0 - s_bits[i]);
        for (std::size_t b = 0; b < stride; ++b) column[b] ^= u_column[b] & mask;
      }
      transpose_columns(q.data(), stride, count, batch_rows.data());
      place_rows(std::span<const Block>(batch_rows.data(), count), first, out0, extra);
    }
    check(out0, extra);
    if (call == Call::Authenticated) return;
    for (std::size_t j = 0; j < n; ++j) out1[j] = out0[j] ^ s;
    two_party::tccr_hash(out0.data(), out0.data(), n, kTweakHigh, counter, 1);
    two_party::tccr_hash(out1.data(), out1.data(), n, kTweakHigh, counter, 1);
    counter += n;
  }

  // KOS15's check of the rows q_j: PeerError if the receiver's columns were inconsistent.
  void check(std::span<const Block> q_rows, std::span<const Block> q_extra) {
    Block seed;
    randombytes_buf(&seed, sizeof seed);
    channel->send({reinterpret_cast<const std::uint8_t*>(&seed), sizeof seed});
    channel->flush();
    std::array<Block, 2> answer{};  // x, t
    channel->receive({reinterpret_cast<std::uint8_t*>(answer.data()), sizeof answer});
    const Block expected = answer[1] ^ gf_mul(answer[0], s);
    const Block got = reduce(check_sum(seed, q_rows, q_extra));
    if (sodium_memcmp(&got, &expected, sizeof got) != 0)
      throw PeerError(Component::Protocol,
                      "OT extension: the receiver's columns failed the consistency check (it deviated)");
  }
};

// The IKNP receiver is the base-OT sender.
struct OtExtensionReceiver::State {
  two_party::Channel* channel;
  bool ready = false;
  ColumnPrg prgs0[kBaseOts];  // G(k0_i)
  ColumnPrg prgs1[kBaseOts];  // G(k1_i)
  std::uint64_t counter = 0;
  explicit State(two_party::Channel& c) : channel(&c) {}

  void setup() {
    if (ready) return;
    std::array<Block, kBaseOts> keys0{}, keys1{};
    const WipeGuard keys0_guard(keys0), keys1_guard(keys1);
    base_ot_send(*channel, keys0, keys1);
    for (std::size_t i = 0; i < kBaseOts; ++i) {
      prgs0[i].init(keys0[i]);
      prgs1[i].init(keys1[i]);
    }
    ready = true;
  }

  // Sends u^i = G(k0_i) ^ G(k1_i) ^ c batch by batch; out[j] = H(t_j, counter + j) with
  // t^i = G(k0_i).
  void extend(Call call, std::span<const std::uint8_t> choices, std::span<Block> out) {
    setup();
    const std::size_t n = choices.size();
    channel->send(encode_call(call, n));
    // The sacrificed rows of the consistency check, with random choices.
    const std::size_t total = n + kCheckRows;
    std::vector<std::uint8_t> all_choices(choices.begin(), choices.end());
    all_choices.resize(total);
    randombytes_buf(all_choices.data() + n, kCheckRows);
    for (std::size_t j = n; j < total; ++j) all_choices[j] &= 1;
    std::vector<Block> batch_rows(std::min(total, kBatch)), extra(kCheckRows);
    const WipeGuard batch_guard(batch_rows), extra_guard(extra), choices_guard(all_choices);
    const std::size_t buffer = kBaseOts * column_bytes(std::min(total, kBatch));
    std::vector<std::uint8_t> t(buffer), u(buffer), packed(column_bytes(std::min(total, kBatch)));
    const WipeGuard t_guard(t), packed_guard(packed);
    for (std::size_t first = 0; first < total; first += kBatch) {
      const std::size_t count = std::min(kBatch, total - first);
      const std::size_t stride = column_bytes(count);
      std::fill(packed.begin(), packed.end(), 0);
      for (std::size_t j = 0; j < count; ++j)
        packed[j / 8] |= static_cast<std::uint8_t>(all_choices[first + j] << (j % 8));
      for (std::size_t i = 0; i < kBaseOts; ++i) {
        std::uint8_t* t_column = t.data() + i * stride;
        std::uint8_t* u_column = u.data() + i * stride;
        prgs0[i].fill(t_column, stride);
        prgs1[i].fill(u_column, stride);
        for (std::size_t b = 0; b < stride; ++b) u_column[b] ^= t_column[b] ^ packed[b];
      }
      channel->send({u.data(), kBaseOts * stride});
      channel->flush();
      transpose_columns(t.data(), stride, count, batch_rows.data());
      place_rows(std::span<const Block>(batch_rows.data(), count), first, out, extra);
    }
    channel->flush();
    // The check's answer to the sender's challenges: x = sum chi_j c_j, t = sum chi_j t_j.
    Block seed;
    channel->receive({reinterpret_cast<std::uint8_t*>(&seed), sizeof seed});
    Block x{};
    const Wide sum = check_sum(seed, out, extra, all_choices, &x);
    const std::array<Block, 2> answer{x, reduce(sum)};
    channel->send({reinterpret_cast<const std::uint8_t*>(answer.data()), sizeof answer});
    channel->flush();
    if (call == Call::Authenticated) return;
    two_party::tccr_hash(out.data(), out.data(), n, kTweakHigh, counter, 1);
    counter += n;
  }
};

OtExtensionSender::OtExtensionSender(two_party::Channel& channel) : state_(std::make_unique<State>(channel)) {}
OtExtensionSender::OtExtensionSender(two_party::Channel& channel, std::uint8_t delta_low_bits)
    : state_(std::make_unique<State>(channel)) {
  if (delta_low_bits > 3) throw Error(Component::Protocol, "OT extension: only bits 0 and 1 of delta can be fixed");
  state_->fixed_low_bits = delta_low_bits;
}
OtExtensionSender::~OtExtensionSender() = default;

void OtExtensionSender::authenticated(std::span<Block> keys) { state_->extend(Call::Authenticated, keys, {}); }

void OtExtensionSender::setup() { state_->setup(); }

void OtExtensionSender::use_channel(two_party::Channel& channel) { state_->channel = &channel; }

const Block& OtExtensionSender::delta() {
  state_->setup();
  return state_->s;
}

void OtExtensionSender::random(std::span<Block> out0, std::span<Block> out1) {
  if (out0.size() != out1.size()) throw Error(Component::Protocol, "OT extension: output spans differ");
  state_->extend(Call::Random, out0, out1);
}

void OtExtensionSender::correlated(const Block& delta, std::span<Block> out0) {
  std::vector<Block> out1(out0.size());
  const WipeGuard out1_guard(out1);
  state_->extend(Call::Correlated, out0, out1);
  // The correction H(q_j ^ s) ^ H(q_j) ^ delta turns the receiver's H(t_j) into out0 ^ c_j * delta.
  for (std::size_t j = 0; j < out0.size(); ++j) out1[j] ^= out0[j] ^ delta;
  state_->channel->send(bytes_of(std::span<const Block>(out1)));
  state_->channel->flush();
}

void OtExtensionSender::chosen(std::span<const Block> m0, std::span<const Block> m1) {
  if (m0.size() != m1.size()) throw Error(Component::Protocol, "OT extension: message spans differ");
  std::vector<Block> out0(m0.size()), out1(m0.size());
  const WipeGuard out0_guard(out0), out1_guard(out1);
  state_->extend(Call::Chosen, out0, out1);
  // Pads m0 ^ H(q_j), m1 ^ H(q_j ^ s), interleaved per OT; the keys are overwritten by them.
  std::vector<Block> pads(2 * m0.size());
  for (std::size_t j = 0; j < m0.size(); ++j) {
    pads[2 * j] = m0[j] ^ out0[j];
    pads[2 * j + 1] = m1[j] ^ out1[j];
  }
  state_->channel->send(bytes_of(std::span<const Block>(pads)));
  state_->channel->flush();
}

OtExtensionReceiver::OtExtensionReceiver(two_party::Channel& channel) : state_(std::make_unique<State>(channel)) {}
OtExtensionReceiver::~OtExtensionReceiver() = default;

void OtExtensionReceiver::random(std::span<const std::uint8_t> choices, std::span<Block> out) {
  check_choices(choices, out.size());
  state_->extend(Call::Random, choices, out);
}

void OtExtensionReceiver::correlated(std::span<const std::uint8_t> choices, std::span<Block> out) {
  check_choices(choices, out.size());
  state_->extend(Call::Correlated, choices, out);
  std::vector<Block> corrections(out.size());
  state_->channel->receive(bytes_of(std::span<Block>(corrections)));
  for (std::size_t j = 0; j < out.size(); ++j) out[j] ^= corrections[j] & two_party::select_mask(choices[j] != 0);
}

void OtExtensionReceiver::setup() { state_->setup(); }

void OtExtensionReceiver::use_channel(two_party::Channel& channel) { state_->channel = &channel; }

void OtExtensionReceiver::authenticated(std::span<const std::uint8_t> choices, std::span<Block> macs) {
  check_choices(choices, macs.size());
  state_->extend(Call::Authenticated, choices, macs);
}

void OtExtensionReceiver::chosen(std::span<const std::uint8_t> choices, std::span<Block> out) {
  check_choices(choices, out.size());
  state_->extend(Call::Chosen, choices, out);
  std::vector<Block> pads(2 * out.size());
  state_->channel->receive(bytes_of(std::span<Block>(pads)));
  for (std::size_t j = 0; j < out.size(); ++j) {
    const Block mask = two_party::select_mask(choices[j] != 0);
    out[j] ^= (pads[2 * j] & ~mask) ^ (pads[2 * j + 1] & mask);
  }
}

}  // namespace mpc::ot
