#include "engines/two_party/gc2_backend.hpp"

#include <sodium.h>

#include "circuits/aes.hpp"
#include "circuits/equality.hpp"
#include "common/error.hpp"
#include "common/secret.hpp"
#include "protocol/ot/ot_extension.hpp"
#include "jobs/krb_jobs.hpp"
#if defined(MPC_FAULT_INJECTION)
#include "common/fault_injection.hpp"
#endif

namespace mpc::two_party_engine {
namespace {

using gc2::Block;

// Instances garbled at once: bounds the label memory of a job part (slots x instances x 16 bytes).
constexpr std::size_t kPartBlocks = 512;

void send_u64(two_party::Channel& channel, std::uint64_t value) {
  std::uint8_t bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<std::uint8_t>(value >> (8 * i));
  channel.send(bytes);
}

std::uint64_t receive_u64(two_party::Channel& channel) {
  std::uint8_t bytes[8];
  channel.receive(bytes);
  std::uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value |= static_cast<std::uint64_t>(bytes[i]) << (8 * i);
  return value;
}

// Output bit j of instance e (gc2 layout) into byte j / 8 of block e: the share bytes.
void pack_output(std::span<const std::uint8_t> bits, std::size_t instances, std::uint8_t* out) {
  for (std::size_t e = 0; e < instances; ++e)
    for (std::size_t j = 0; j < 128; ++j)
      out[e * 16 + j / 8] |= static_cast<std::uint8_t>(bits[j * instances + e] << (j % 8));
}

// Input labels of one part: the key rows' labels in every instance, then the block rows.
gc2::Labels part_inputs(std::span<const Block> key_labels, std::span<const Block> block_labels,
                        std::size_t instances) {
  gc2::Labels inputs((key_labels.size() + 128) * instances);
  for (std::size_t r = 0; r < key_labels.size(); ++r)
    std::fill_n(inputs.data() + r * instances, instances, key_labels[r]);
  std::copy(block_labels.begin(), block_labels.end(), inputs.data() + key_labels.size() * instances);
  return inputs;
}

std::vector<Block> copy_of(const gc2::Labels& labels) {
  return std::vector<Block>(labels.data(), labels.data() + labels.size());
}

// Which share a label set was made for (kept in memory beside it, never sent).
std::array<std::uint8_t, 32> share_digest(std::span<const std::uint8_t> share) {
  std::array<std::uint8_t, 32> digest{};
  crypto_generichash(digest.data(), digest.size(), share.data(), share.size(), nullptr, 0);
  return digest;
}

#if defined(MPC_FAULT_INJECTION)
// A garbler that alters its tables (test server only, common/fault_injection.hpp):
// "gc2-table-bits=N" flips one bit in each of 64 blocks from byte N of what server 1 sends in
// an AES job (after the key's handshake: N counts from the job's first byte).
class FlippingChannel final : public two_party::Channel {
 public:
  FlippingChannel(two_party::Channel& inner, std::uint64_t from) : inner_(inner), from_(from) {}
  void send(std::span<const std::uint8_t> bytes) override {
    std::vector<std::uint8_t> copy(bytes.begin(), bytes.end());
    for (std::uint64_t block = 0; block < 64; ++block)
      if (const std::uint64_t at = from_ + 16 * block; at >= sent_ && at - sent_ < copy.size()) copy[at - sent_] ^= 1;
    sent_ += copy.size();
    inner_.send(copy);
  }
  void flush() override { inner_.flush(); }
  void receive(std::span<std::uint8_t> out) override { inner_.receive(out); }
  std::uint64_t bytes_sent() const override { return inner_.bytes_sent(); }
  void allow_extra_wait(std::chrono::milliseconds extra) override { inner_.allow_extra_wait(extra); }

 private:
  two_party::Channel& inner_;
  std::uint64_t from_;
  std::uint64_t sent_ = 0;
};
#endif

}  // namespace

Gc2Backend::Gc2Backend(int party, const Logger& log, bool authenticated, std::uint64_t pool_entries)
    : party_(party),
      log_(log),
      and_material_(authenticated ? std::make_unique<AndMaterialStock>(party) : nullptr),
      authenticated_aes_(authenticated ? std::make_unique<AuthenticatedAes>(party, *and_material_) : nullptr),
      authenticated_krb_(authenticated ? std::make_unique<AuthenticatedKrb>(party, *and_material_) : nullptr),
      authenticated_gcm_(authenticated ? std::make_unique<AuthenticatedGcm>(party, *and_material_) : nullptr),
      pool_entries_(pool_entries) {
  using circuits::AesDirection;
  using circuits::AesKeySize;
  for (int size = 0; size < 2; ++size)
    for (int direction = 0; direction < 2; ++direction)
      programs_[size][direction] = circuits::compile(circuits::build_aes_circuit(
          size == 0 ? AesKeySize::Aes128 : AesKeySize::Aes256,
          direction == 0 ? AesDirection::Encrypt : AesDirection::Decrypt, circuits::SboxVariant::And32));
  equality_ = circuits::compile(circuits::build_equality_circuit(128));
  // Rounds cost a garbled circuit nothing and every AND 32 bytes: the Kerberos circuits are
  // built for fewest ANDs.
  own_krb_circuits_ = std::make_unique<jobs::KrbCircuitCache>(
      jobs::KrbCircuitCache::kDefaultBudgetOps, [](const jobs::KrbCircuitKey& key) {
        return jobs::build_krb_circuit(key, circuits::CircuitCost::FewestAnds);
      });
  krb_circuits_ = own_krb_circuits_.get();
  prepared_ = std::make_unique<PreparedCircuits>(0);
  if (party_ == 0) {
    garbler_ = std::make_unique<gc2::Garbler>();
    do randombytes_buf(&nonce_epoch_, sizeof nonce_epoch_);
    while (nonce_epoch_ == 0);
    do randombytes_buf(&garbler_instance_, sizeof garbler_instance_);
    while (garbler_instance_ == 0);
  }
}

void Gc2Backend::use_gpu(std::unique_ptr<cuda::GpuGarbling> gpu) { gpu_ = std::move(gpu); }

Gc2Backend::~Gc2Backend() {
  for (auto& [key, set] : label_sets_) wipe(set.labels.data(), set.labels.size() * sizeof(Block));
}

const circuits::Program& Gc2Backend::program(wire::KeyAlgorithm algorithm, bool decrypt) const {
  return programs_[algorithm == wire::KeyAlgorithm::Aes256 ? 1 : 0][decrypt ? 1 : 0];
}

void Gc2Backend::preprocess(two_party::Channel& peer, std::uint64_t epoch, std::uint64_t start, std::uint64_t count) {
  if (!authenticated_aes_) throw Error(Component::Server, "gc2 of security = \"passive\" needs no preprocessing");
  and_material_->preprocess(peer, epoch, start, count);
}

std::string Gc2Backend::describe_state() const {
  std::lock_guard lock(mutex_);
  return "keys with labels " + std::to_string(label_sets_.size()) + ", key transfers " +
         std::to_string(key_transfers_) + ", " + prepared_->describe() +
         (and_material_ ? ", " + and_material_->describe() : std::string());
}

void Gc2Backend::agree_on_mode(two_party::Channel& peer) const {
  const auto name = [](std::uint8_t mode) { return mode == 1 ? "security = \"active\"" : "security = \"passive\""; };
  const std::uint8_t own = authenticated_aes_ ? 1 : 0;
  peer.send({&own, 1});
  peer.flush();
  std::uint8_t theirs = 0;
  peer.receive({&theirs, 1});
  if (theirs != own)
    throw Error(Component::Server, std::string("the other server runs ") + (theirs > 1 ? "an unknown mode" : name(theirs)) +
                                       " and this one " + name(own) + ": both servers must say the same");
}

void Gc2Backend::agree_on_request(two_party::Channel& peer, const std::array<std::uint8_t, 32>& digest) const {
  if (party_ == 0) {
    peer.send(digest);
    peer.flush();
    return;
  }
  std::array<std::uint8_t, 32> theirs{};
  peer.receive(theirs);
  if (sodium_memcmp(theirs.data(), digest.data(), digest.size()) != 0)
    throw PeerError(Component::Server, "the two servers got different requests for this job: refused");
}

std::uint64_t Gc2Backend::circuit_pool_entries(const wire::Request& request) const {
  if (!authenticated_krb_) return 0;
  if (const auto* krb = std::get_if<wire::KrbRequest>(&request)) return authenticated_krb_->entries(*krb);
  if (const auto* prefetch = std::get_if<wire::GcmPrefetchRequest>(&request))
    return prefetch->local_masks ? 0 : authenticated_gcm_->prefetch_entries(prefetch->count, prefetch->blocks_per_nonce);
  if (const auto* open = std::get_if<wire::GcmOpenRequest>(&request))
    return authenticated_gcm_->open_entries(static_cast<std::uint32_t>((open->text.size() + 15) / 16));
  return 0;
}

std::optional<std::uint64_t> Gc2Backend::circuit_pool_entries_if_built(const wire::Request& request) const {
  if (const auto* krb = std::get_if<wire::KrbRequest>(&request); krb != nullptr && authenticated_krb_)
    return authenticated_krb_->entries_if_built(*krb);
  return circuit_pool_entries(request);
}

ComputeOutput Gc2Backend::compute(two_party::Channel& peer, const ComputeTask& task) {
  if (task.key_share.size() != wire::material_bytes(task.key.algorithm))
    throw Error(Component::Server, "key share of the wrong size");
  if (task.input.size() != static_cast<std::size_t>(task.blocks) * 16)
    throw Error(Component::Server, "input of the wrong size");
  agree_on_mode(peer);
  if (authenticated_aes_) {
    if (!task.output_pad) throw Error(Component::Server, "an AES job under security = \"active\" without the client's output pad");
    if (task.share_check.size() != wire::share_check_bytes(task.key.algorithm))
      throw Error(Component::Server, "an AES job under security = \"active\" with a key stored without its share's check");
    try {
      AuthenticatedAes::Padded padded =
          authenticated_aes_->blocks(peer, task.key.algorithm, task.decrypt, task.key_share, task.input,
                                     *task.output_pad, task.share_check, task.pool_epoch, task.pool_start,
                                     kAuthenticatedPoolWait);
      return {std::move(padded.bytes), std::move(padded.reports)};
    } catch (const two_party::PoolEmpty& error) {
      throw BackendBusy(Component::Server, error.what());
    }
  }
#if defined(MPC_FAULT_INJECTION)
  if (party_ == 0)
    if (const auto at = fault::armed("gc2-table-bits")) {
      FlippingChannel flipping(peer, *at);
      const gc2::Labels key = key_labels(flipping, task.key, task.key_share);
      return {aes_blocks(flipping, program(task.key.algorithm, task.decrypt), key.span(), task.input), std::nullopt};
    }
#endif
#if defined(MPC_FAULT_INJECTION)
  // "share-bit": either server takes its share of the last round key with bit 0 flipped, which
  // shifts the result's bit 0 unnoticed under security = "passive".
  if (fault::armed("share-bit")) {
    SecretBytes altered(task.key_share);
    altered[altered.size() - 16] ^= 1;
    const gc2::Labels key = key_labels(peer, task.key, altered.span());
    return {aes_blocks(peer, program(task.key.algorithm, task.decrypt), key.span(), task.input), std::nullopt};
  }
#endif
  const gc2::Labels key = key_labels(peer, task.key, task.key_share);
  SecretBytes share = aes_blocks(peer, program(task.key.algorithm, task.decrypt), key.span(), task.input);
#if defined(MPC_FAULT_INJECTION)
  // "output-shift": either server XORs bit 0 into its share, which shifts the client's result
  // unnoticed under security = "passive".
  if (fault::armed("output-shift")) share[0] ^= 1;
#endif
  return {std::move(share), std::nullopt};
}

Gc2Backend::LabelSet Gc2Backend::garbler_labels(const wire::KeyId& key_id, std::span<const std::uint8_t> share) {
  const auto digest = share_digest(share);
  LabelSet out;
  bool renewed = false;
  {
    std::lock_guard lock(mutex_);
    auto& set = label_sets_[wire::describe(key_id)];
    if (set.id == 0 || set.share_digest != digest || set.labels.size() != share.size() * 8) {
      renewed = set.id != 0;
      wipe(set.labels.data(), set.labels.size() * sizeof(Block));
      do randombytes_buf(&set.id, sizeof set.id);
      while (set.id == 0);
      set.share_digest = digest;
      set.labels = copy_of(gc2::zero_labels(share.size() * 8));
    }
    out = set;
  }
  if (renewed) prepared_->forget_key(key_id, out.id);
  return out;
}

gc2::Labels Gc2Backend::key_labels(two_party::Channel& peer, const wire::KeyId& key_id,
                                   std::span<const std::uint8_t> share,
                                   const std::array<std::uint8_t, 32>* request_digest, PreparedOffer* offer) {
  const std::string key = wire::describe(key_id);
  const std::size_t key_rows = share.size() * 8;
  gc2::Labels out(key_rows);
  if (party_ == 0) {
    if (request_digest != nullptr) {
      peer.send(*request_digest);
      peer.flush();
    }
    const std::uint64_t evaluator_set = receive_u64(peer);
    if (offer != nullptr) {
      offer->id = receive_u64(peer);
      std::uint8_t more = 0;
      peer.receive({&more, 1});
      if (more > 1) throw FormatError(Component::Server, "gc2: malformed prepared-garbling offer");
      offer->holds_more = more == 1;
    }
    LabelSet set = garbler_labels(key_id, share);
    const bool transfer = evaluator_set != set.id;
    if (offer != nullptr) {
      offer->label_set = set.id;
      offer->transferred = transfer;
    }
    send_u64(peer, set.id);
    const std::uint8_t flag = transfer ? 1 : 0;
    peer.send({&flag, 1});
    peer.flush();
    if (transfer) {
      // Server 2 chooses with its share bits s2: m_c = Z ^ (s1 ^ c) * delta.
      const auto own_bits = gc2::bits_of(share);
      const gc2::Labels m0 = gc2::garbler_input_labels(*garbler_, own_bits, set.labels);
      gc2::Labels m1(m0.size());
      for (std::size_t i = 0; i < m0.size(); ++i) m1[i] = m0[i] ^ garbler_->delta();
#if defined(MPC_FAULT_INJECTION)
      // "gc2-selective-key-bit=I": server 1 offers server 2 a wrong label for key-share bit I
      // when that bit is 1, the right one when it is 0: the job comes out wrong exactly when
      // server 2's bit is 1, and server 1, which holds its own bit (logged, for the test that
      // reads what it learns), learns the key's.
      if (const auto bit = fault::armed("gc2-selective-key-bit"); bit && *bit < m1.size()) {
        m1[*bit] ^= Block{1, 1};
        log_.warn("fault: selective key-label offer", {{"key", key}, {"own_bit", std::uint64_t{own_bits[*bit]}}});
      }
#endif
      ot::OtExtensionSender sender(peer);
      sender.chosen(m0.span(), m1.span());
    }
    std::copy(set.labels.begin(), set.labels.end(), out.data());
    wipe(set.labels.data(), set.labels.size() * sizeof(Block));
    return out;
  }
  const auto digest = share_digest(share);
  LabelSet held;
  {
    std::lock_guard lock(mutex_);
    auto it = label_sets_.find(key);
    if (it != label_sets_.end() && it->second.share_digest == digest && it->second.labels.size() == key_rows)
      held = it->second;
  }
  send_u64(peer, held.id);
  if (offer != nullptr) {
    if (offer->make) offer->make(held.id);
    send_u64(peer, offer->id);
    const std::uint8_t more = offer->holds_more ? 1 : 0;
    peer.send({&more, 1});
  }
  peer.flush();
  if (request_digest != nullptr) {
    std::array<std::uint8_t, 32> garblers{};
    peer.receive(garblers);
    if (sodium_memcmp(garblers.data(), request_digest->data(), garblers.size()) != 0)
      throw PeerError(Component::Server, "the servers received different requests under one request id");
  }
  const std::uint64_t garbler_set = receive_u64(peer);
  std::uint8_t transfer = 0;
  peer.receive({&transfer, 1});
  if (transfer > 1) throw FormatError(Component::Server, "gc2: malformed key-transfer flag");
  if (transfer == 0 && (garbler_set != held.id || held.id == 0))
    throw PeerError(Component::Server, "gc2: the garbler skipped the key transfer for labels this server lacks");
  if (offer != nullptr) {
    offer->label_set = garbler_set;
    offer->transferred = transfer == 1;
  }
  if (transfer == 1) {
    const auto choices = gc2::bits_of(share);
    wipe(held.labels.data(), held.labels.size() * sizeof(Block));
    held.labels.assign(key_rows, Block{});
    ot::OtExtensionReceiver receiver(peer);
    receiver.chosen(choices, held.labels);
    held.id = garbler_set;
    held.share_digest = digest;
    std::lock_guard lock(mutex_);
    auto& stored = label_sets_[key];
    wipe(stored.labels.data(), stored.labels.size() * sizeof(Block));
    stored = held;
    ++key_transfers_;
  }
  // Garblings prepared under the key's previous labels can never be used again.
  if (transfer == 1) prepared_->forget_key(key_id, garbler_set);
  std::copy(held.labels.begin(), held.labels.end(), out.data());
  wipe(held.labels.data(), held.labels.size() * sizeof(Block));
  return out;
}

SecretBytes Gc2Backend::aes_blocks(two_party::Channel& peer, const circuits::Program& prog,
                                   std::span<const Block> round_key_labels, std::span<const std::uint8_t> blocks,
                                   gc2::Labels* first_output_labels) {
  const std::size_t total = blocks.size() / 16;
  SecretBytes share(blocks.size());
  for (std::size_t first = 0; first < total; first += kPartBlocks) {
    const std::size_t instances = std::min<std::size_t>(kPartBlocks, total - first);
    gc2::Labels block_labels(128 * instances);
    if (party_ == 0) {
      const gc2::Labels block_zero = gc2::zero_labels(128 * instances);
      // The public blocks' active labels, row-major like the circuit's input rows.
      std::vector<std::uint8_t> block_bits(128 * instances);
      for (std::size_t e = 0; e < instances; ++e)
        for (std::size_t r = 0; r < 128; ++r)
          block_bits[r * instances + e] = (blocks[(first + e) * 16 + r / 8] >> (r % 8)) & 1;
      const gc2::Labels block_active = gc2::garbler_input_labels(*garbler_, block_bits, block_zero);
      peer.send({reinterpret_cast<const std::uint8_t*>(block_active.data()), block_active.size() * sizeof(Block)});
      std::copy_n(block_zero.data(), block_zero.size(), block_labels.data());
    } else {
      peer.receive({reinterpret_cast<std::uint8_t*>(block_labels.data()), block_labels.size() * sizeof(Block)});
    }
    const gc2::Labels inputs = part_inputs(round_key_labels, block_labels.span(), instances);
    gc2::Labels outputs;
    const bool keep = first == 0 && first_output_labels != nullptr;
    std::vector<std::uint8_t> bits;
    std::unique_lock gpu(gpu_mutex_, std::defer_lock);
    if (gpu_ && cuda::gpu_garbling_preferred(prog, instances) && gpu.try_lock()) {
      bits = party_ == 0 ? gpu_->garble(*garbler_, prog, instances, inputs, peer, keep ? &outputs : nullptr)
                         : gpu_->evaluate(prog, instances, inputs, peer, keep ? &outputs : nullptr);
    } else if (party_ == 0) {
      bits = keep ? garbler_->garble(prog, instances, inputs, peer, outputs) : garbler_->garble(prog, instances, inputs, peer);
    } else {
      bits = keep ? gc2::evaluate(prog, instances, inputs, peer, outputs) : gc2::evaluate(prog, instances, inputs, peer);
    }
    if (keep) {
      first_output_labels->assign_zero(128);
      for (std::size_t j = 0; j < 128; ++j) (*first_output_labels)[j] = outputs[j * instances];
    }
    pack_output(bits, instances, share.data() + first * 16);
  }
  if (party_ == 0) peer.flush();
  return share;
}

}  // namespace mpc::two_party_engine
