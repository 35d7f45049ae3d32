#include "protocol/ot/ot_extension.hpp"

#include <openssl/evp.h>
#include <sodium.h>

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
enum class Call : std::uint8_t { Random = 1, Correlated = 2, Chosen = 3 };
constexpr std::uint64_t kMaxCount = (1ull << 56) - 1;

const char* call_name(std::uint64_t call) {
  switch (call) {
    case static_cast<std::uint64_t>(Call::Random): return "random";
    case static_cast<std::uint64_t>(Call::Correlated): return "correlated";
    case static_cast<std::uint64_t>(Call::Chosen): return "chosen";
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

std::span<const std::uint8_t> bytes_of(std::span<const Block> blocks) {
  return {reinterpret_cast<const std::uint8_t*>(blocks.data()), blocks.size() * sizeof(Block)};
}
std::span<std::uint8_t> bytes_of(std::span<Block> blocks) {
  return {reinterpret_cast<std::uint8_t*>(blocks.data()), blocks.size() * sizeof(Block)};
}

}  // namespace

// The IKNP sender is the base-OT receiver with random choices s.
struct OtExtensionSender::State {
  two_party::Channel& channel;
  bool ready = false;
  Block s;                                        // the base-OT choices as one block
  std::array<std::uint8_t, kBaseOts> s_bits{};    // the same, one byte each
  ColumnPrg prgs[kBaseOts];                       // G(k_{s_i}) of base OT i
  std::uint64_t counter = 0;                      // OTs so far: the hash tweak
  explicit State(two_party::Channel& c) : channel(c) {}
  ~State() {
    wipe(&s, sizeof s);
    wipe(s_bits.data(), s_bits.size());
  }

  void setup() {
    if (ready) return;
    if (sodium_init() < 0) throw Error(Component::Protocol, "libsodium initialisation failed");
    randombytes_buf(&s, sizeof s);
    for (std::size_t i = 0; i < kBaseOts; ++i)
      s_bits[i] = static_cast<std::uint8_t>((i < 64 ? s.lo >> i : s.hi >> (i - 64)) & 1);
    std::array<Block, kBaseOts> seeds{};
    const WipeGuard seeds_guard(seeds);
    base_ot_receive(channel, s_bits, seeds);
    for (std::size_t i = 0; i < kBaseOts; ++i) prgs[i].init(seeds[i]);
    ready = true;
  }

  // out0[j] = H(q_j, counter + j), out1[j] = H(q_j ^ s, counter + j) with q_j = t_j ^ c_j * s,
  // batch by batch as the receiver's u arrives.
  void extend(Call call, std::span<Block> out0, std::span<Block> out1) {
    setup();
    const std::size_t n = out0.size();
    expect_call(channel, call, n);
    const std::size_t buffer = kBaseOts * column_bytes(std::min(n, kBatch));
    std::vector<std::uint8_t> u(buffer), q(buffer);
    const WipeGuard q_guard(q);
    for (std::size_t first = 0; first < n; first += kBatch) {
      const std::size_t count = std::min(kBatch, n - first);
      const std::size_t stride = column_bytes(count);
      channel.receive({u.data(), kBaseOts * stride});
      for (std::size_t i = 0; i < kBaseOts; ++i) {
        std::uint8_t* column = q.data() + i * stride;
        const std::uint8_t* u_column = u.data() + i * stride;
        prgs[i].fill(column, stride);
        const auto mask = static_cast<std::uint8_t>(0 - s_bits[i]);
        for (std::size_t b = 0; b < stride; ++b) column[b] ^= u_column[b] & mask;
      }
      Block* rows0 = out0.data() + first;
      Block* rows1 = out1.data() + first;
      transpose_columns(q.data(), stride, count, rows0);
      for (std::size_t j = 0; j < count; ++j) rows1[j] = rows0[j] ^ s;
      two_party::tccr_hash(rows0, rows0, count, kTweakHigh, counter, 1);
      two_party::tccr_hash(rows1, rows1, count, kTweakHigh, counter, 1);
      counter += count;
    }
  }
};

// The IKNP receiver is the base-OT sender.
struct OtExtensionReceiver::State {
  two_party::Channel& channel;
  bool ready = false;
  ColumnPrg prgs0[kBaseOts];  // G(k0_i)
  ColumnPrg prgs1[kBaseOts];  // G(k1_i)
  std::uint64_t counter = 0;
  explicit State(two_party::Channel& c) : channel(c) {}

  void setup() {
    if (ready) return;
    std::array<Block, kBaseOts> keys0{}, keys1{};
    const WipeGuard keys0_guard(keys0), keys1_guard(keys1);
    base_ot_send(channel, keys0, keys1);
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
    channel.send(encode_call(call, n));
    const std::size_t buffer = kBaseOts * column_bytes(std::min(n, kBatch));
    std::vector<std::uint8_t> t(buffer), u(buffer), packed(column_bytes(std::min(n, kBatch)));
    const WipeGuard t_guard(t), packed_guard(packed);
    for (std::size_t first = 0; first < n; first += kBatch) {
      const std::size_t count = std::min(kBatch, n - first);
      const std::size_t stride = column_bytes(count);
      std::fill(packed.begin(), packed.end(), 0);
      for (std::size_t j = 0; j < count; ++j)
        packed[j / 8] |= static_cast<std::uint8_t>(choices[first + j] << (j % 8));
      for (std::size_t i = 0; i < kBaseOts; ++i) {
        std::uint8_t* t_column = t.data() + i * stride;
        std::uint8_t* u_column = u.data() + i * stride;
        prgs0[i].fill(t_column, stride);
        prgs1[i].fill(u_column, stride);
        for (std::size_t b = 0; b < stride; ++b) u_column[b] ^= t_column[b] ^ packed[b];
      }
      channel.send({u.data(), kBaseOts * stride});
      channel.flush();
      Block* rows = out.data() + first;
      transpose_columns(t.data(), stride, count, rows);
      two_party::tccr_hash(rows, rows, count, kTweakHigh, counter, 1);
      counter += count;
    }
    channel.flush();
  }
};

OtExtensionSender::OtExtensionSender(two_party::Channel& channel) : state_(std::make_unique<State>(channel)) {}
OtExtensionSender::~OtExtensionSender() = default;

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
  state_->channel.send(bytes_of(std::span<const Block>(out1)));
  state_->channel.flush();
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
  state_->channel.send(bytes_of(std::span<const Block>(pads)));
  state_->channel.flush();
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
  state_->channel.receive(bytes_of(std::span<Block>(corrections)));
  for (std::size_t j = 0; j < out.size(); ++j) out[j] ^= corrections[j] & two_party::select_mask(choices[j] != 0);
}

void OtExtensionReceiver::chosen(std::span<const std::uint8_t> choices, std::span<Block> out) {
  check_choices(choices, out.size());
  state_->extend(Call::Chosen, choices, out);
  std::vector<Block> pads(2 * out.size());
  state_->channel.receive(bytes_of(std::span<Block>(pads)));
  for (std::size_t j = 0; j < out.size(); ++j) {
    const Block mask = two_party::select_mask(choices[j] != 0);
    out[j] ^= (pads[2 * j] & ~mask) ^ (pads[2 * j + 1] & mask);
  }
}

}  // namespace mpc::ot
