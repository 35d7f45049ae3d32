#include "protocol/ot/ot_extension.hpp"

#include <openssl/evp.h>
#include <sodium.h>

#include <vector>

#include "common/error.hpp"
#include "common/secret.hpp"
#include "protocol/ot/base_ot.hpp"
#include "protocol/two_party/fixed_key_hash.hpp"

namespace mpc::ot {
namespace {

// Tweak space of the OT hash: the top bit set, which the garbled circuits' job numbers
// (below 2^63) never have.
constexpr std::uint64_t kTweakHigh = (1ull << 63) | (0x4f542d455854ull);  // "OT-EXT"

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
  ~ColumnPrg() { EVP_CIPHER_CTX_free(context_); }
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

std::size_t column_bytes(std::size_t n) { return ((n + 127) / 128) * 16; }

void check_choices(std::span<const std::uint8_t> choices, std::size_t n) {
  if (choices.size() != n) throw Error(Component::Protocol, "OT extension: choices and outputs differ in size");
  for (auto c : choices)
    if (c > 1) throw Error(Component::Protocol, "OT extension: a choice is neither 0 nor 1");
}

// rows[j] bit i = bit j of column i (columns of column_bytes(n) bytes each).
void transpose(const std::vector<std::uint8_t>& columns, std::size_t stride, std::size_t n, std::vector<Block>& rows) {
  rows.assign(n, Block{});
  for (std::size_t i = 0; i < kBaseOts; ++i) {
    const std::uint8_t* column = columns.data() + i * stride;
    std::uint64_t* half = nullptr;
    const std::uint64_t bit = 1ull << (i % 64);
    for (std::size_t j = 0; j < n; ++j) {
      half = i < 64 ? &rows[j].lo : &rows[j].hi;
      *half |= bit & (0 - static_cast<std::uint64_t>((column[j / 8] >> (j % 8)) & 1));
    }
  }
}

}  // namespace

struct OtExtensionSender::State {
  two_party::Channel& channel;
  bool ready = false;
  Block s;                          // the base-OT choices as one block
  std::vector<std::uint8_t> s_bits;  // the same, one byte each
  ColumnPrg prgs[kBaseOts];
  std::uint64_t counter = 0;
  explicit State(two_party::Channel& c) : channel(c) {}
  ~State() {
    wipe(&s, sizeof s);
    wipe(s_bits.data(), s_bits.size());
  }

  void setup() {
    if (ready) return;
    randombytes_buf(&s, sizeof s);
    s_bits.resize(kBaseOts);
    for (std::size_t i = 0; i < kBaseOts; ++i) s_bits[i] = ((i < 64 ? s.lo >> i : s.hi >> (i - 64)) & 1);
    std::vector<Block> seeds(kBaseOts);
    base_ot_receive(channel, s_bits, seeds);
    for (std::size_t i = 0; i < kBaseOts; ++i) prgs[i].init(seeds[i]);
    wipe(seeds.data(), seeds.size() * sizeof(Block));
    ready = true;
  }

  // Rows q_j = t_j ^ c_j * s of the next n OTs.
  std::vector<Block> extend(std::size_t n) {
    setup();
    const std::size_t stride = column_bytes(n);
    std::vector<std::uint8_t> u(kBaseOts * stride);
    channel.receive(u);
    std::vector<std::uint8_t> q(kBaseOts * stride);
    for (std::size_t i = 0; i < kBaseOts; ++i) {
      prgs[i].fill(q.data() + i * stride, stride);
      const std::uint8_t mask = static_cast<std::uint8_t>(0 - s_bits[i]);
      for (std::size_t b = 0; b < stride; ++b) q[i * stride + b] ^= u[i * stride + b] & mask;
    }
    std::vector<Block> rows;
    transpose(q, stride, n, rows);
    wipe(q.data(), q.size());
    return rows;
  }

  // out0 = H(q_j), out1 = H(q_j ^ s), tweaked by the session's OT counter.
  void hash_pairs(std::vector<Block>& rows, std::span<Block> out0, std::span<Block> out1) {
    const std::size_t n = rows.size();
    two_party::tccr_hash(rows.data(), out0.data(), n, kTweakHigh, counter, 1);
    for (auto& row : rows) row ^= s;
    two_party::tccr_hash(rows.data(), out1.data(), n, kTweakHigh, counter, 1);
    wipe(rows.data(), rows.size() * sizeof(Block));
    counter += n;
  }
};

struct OtExtensionReceiver::State {
  two_party::Channel& channel;
  bool ready = false;
  ColumnPrg prgs0[kBaseOts];
  ColumnPrg prgs1[kBaseOts];
  std::uint64_t counter = 0;
  explicit State(two_party::Channel& c) : channel(c) {}

  void setup() {
    if (ready) return;
    std::vector<Block> keys0(kBaseOts), keys1(kBaseOts);
    base_ot_send(channel, keys0, keys1);
    for (std::size_t i = 0; i < kBaseOts; ++i) {
      prgs0[i].init(keys0[i]);
      prgs1[i].init(keys1[i]);
    }
    wipe(keys0.data(), keys0.size() * sizeof(Block));
    wipe(keys1.data(), keys1.size() * sizeof(Block));
    ready = true;
  }

  // Sends u^i = G(k0_i) ^ G(k1_i) ^ c and returns H(t_j) for the next n OTs.
  std::vector<Block> extend(std::span<const std::uint8_t> choices) {
    setup();
    const std::size_t n = choices.size();
    const std::size_t stride = column_bytes(n);
    std::vector<std::uint8_t> packed(stride, 0);
    for (std::size_t j = 0; j < n; ++j) packed[j / 8] |= static_cast<std::uint8_t>(choices[j] << (j % 8));
    std::vector<std::uint8_t> t(kBaseOts * stride), u(kBaseOts * stride);
    for (std::size_t i = 0; i < kBaseOts; ++i) {
      prgs0[i].fill(t.data() + i * stride, stride);
      prgs1[i].fill(u.data() + i * stride, stride);
      for (std::size_t b = 0; b < stride; ++b) u[i * stride + b] ^= t[i * stride + b] ^ packed[b];
    }
    channel.send(u);
    channel.flush();
    std::vector<Block> rows;
    transpose(t, stride, n, rows);
    wipe(t.data(), t.size());
    wipe(packed.data(), packed.size());
    std::vector<Block> hashed(n);
    two_party::tccr_hash(rows.data(), hashed.data(), n, kTweakHigh, counter, 1);
    wipe(rows.data(), rows.size() * sizeof(Block));
    counter += n;
    return hashed;
  }
};

OtExtensionSender::OtExtensionSender(two_party::Channel& channel) : state_(std::make_unique<State>(channel)) {}
OtExtensionSender::~OtExtensionSender() = default;

void OtExtensionSender::random(std::span<Block> out0, std::span<Block> out1) {
  if (out0.size() != out1.size()) throw Error(Component::Protocol, "OT extension: output spans differ");
  auto rows = state_->extend(out0.size());
  state_->hash_pairs(rows, out0, out1);
}

void OtExtensionSender::correlated(const Block& delta, std::span<Block> out0) {
  std::vector<Block> out1(out0.size());
  random(out0, out1);
  for (std::size_t j = 0; j < out0.size(); ++j) out1[j] ^= out0[j] ^ delta;  // the correction
  state_->channel.send({reinterpret_cast<const std::uint8_t*>(out1.data()), out1.size() * sizeof(Block)});
  state_->channel.flush();
  wipe(out1.data(), out1.size() * sizeof(Block));
}

void OtExtensionSender::chosen(std::span<const Block> m0, std::span<const Block> m1) {
  if (m0.size() != m1.size()) throw Error(Component::Protocol, "OT extension: message spans differ");
  std::vector<Block> pads(2 * m0.size());
  std::vector<Block> out0(m0.size()), out1(m0.size());
  random(out0, out1);
  for (std::size_t j = 0; j < m0.size(); ++j) {
    pads[2 * j] = m0[j] ^ out0[j];
    pads[2 * j + 1] = m1[j] ^ out1[j];
  }
  state_->channel.send({reinterpret_cast<const std::uint8_t*>(pads.data()), pads.size() * sizeof(Block)});
  state_->channel.flush();
  wipe(out0.data(), out0.size() * sizeof(Block));
  wipe(out1.data(), out1.size() * sizeof(Block));
}

OtExtensionReceiver::OtExtensionReceiver(two_party::Channel& channel) : state_(std::make_unique<State>(channel)) {}
OtExtensionReceiver::~OtExtensionReceiver() = default;

void OtExtensionReceiver::random(std::span<const std::uint8_t> choices, std::span<Block> out) {
  check_choices(choices, out.size());
  auto hashed = state_->extend(choices);
  std::copy(hashed.begin(), hashed.end(), out.begin());
  wipe(hashed.data(), hashed.size() * sizeof(Block));
}

void OtExtensionReceiver::correlated(std::span<const std::uint8_t> choices, std::span<Block> out) {
  random(choices, out);
  std::vector<Block> corrections(out.size());
  state_->channel.receive({reinterpret_cast<std::uint8_t*>(corrections.data()), corrections.size() * sizeof(Block)});
  for (std::size_t j = 0; j < out.size(); ++j) out[j] ^= corrections[j] & two_party::select_mask(choices[j] != 0);
}

void OtExtensionReceiver::chosen(std::span<const std::uint8_t> choices, std::span<Block> out) {
  random(choices, out);
  std::vector<Block> pads(2 * out.size());
  state_->channel.receive({reinterpret_cast<std::uint8_t*>(pads.data()), pads.size() * sizeof(Block)});
  for (std::size_t j = 0; j < out.size(); ++j) {
    const Block mask = two_party::select_mask(choices[j] != 0);
    out[j] ^= (pads[2 * j] & ~mask) ^ (pads[2 * j + 1] & mask);
  }
  wipe(pads.data(), pads.size() * sizeof(Block));
}

}  // namespace mpc::ot
