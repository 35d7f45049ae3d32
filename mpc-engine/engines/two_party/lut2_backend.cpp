#include "engines/two_party/lut2_backend.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "protocol/lut2/dealer.hpp"
#include "protocol/lut2/lut_aes.hpp"
#include "protocol/lut2/ot_preprocessing.hpp"

namespace mpc::two_party_engine {

Lut2Backend::Lut2Backend(int party, const settings::LutSettings& settings, const Logger& log)
    : party_(party), settings_(settings), log_(log) {}

const char* Lut2Backend::name() const {
  return settings_.preprocessing == settings::LutPreprocessing::Dealer
             ? "lut2 (masked lookup tables, dealer preprocessing)"
             : "lut2 (masked lookup tables, OT preprocessing)";
}

std::uint64_t Lut2Backend::pool_entries(const wire::KeyId& key, std::uint32_t blocks) const {
  if (key.algorithm != wire::KeyAlgorithm::Aes128 && key.algorithm != wire::KeyAlgorithm::Aes256) return 0;
  return lut2::entries_for(wire::material_bytes(key.algorithm), blocks);
}

std::uint64_t Lut2Backend::preprocess_batch() const {
  // At most a quarter of the pool per batch, so the pool refills in steps while jobs consume
  // it, and at most 8192 entries: a batch's OT traffic (8 KiB per entry) stays at 64 MiB and
  // the first entries are ready a fraction of a second after start.
  return std::clamp<std::uint64_t>(settings_.pool_sboxes / 4, 1024, 8192);
}

ComputeOutput Lut2Backend::compute(two_party::Channel& peer, const ComputeTask& task) {
  const std::size_t count = pool_entries(task.key, task.blocks);
  std::vector<lut2::Entry> entries;
  try {
    entries = pool_.take(task.pool_epoch, task.pool_start, count, settings_.pool_wait);
  } catch (const lut2::PoolEmpty& error) {
    pool_.abandon(task.pool_epoch, task.pool_start, count);
    throw BackendBusy(Component::Server, error.what());
  }
  SecretBytes share;
  try {
    share = lut2::lut_aes(peer, party_, task.key_share, task.decrypt, task.input, entries);
  } catch (...) {
    wipe(entries.data(), entries.size() * sizeof(lut2::Entry));
    throw;
  }
  wipe(entries.data(), entries.size() * sizeof(lut2::Entry));
  return {std::move(share), std::nullopt};
}

void Lut2Backend::preprocess(two_party::Channel& peer, std::uint64_t epoch, std::uint64_t start, std::uint64_t count) {
  if (settings_.preprocessing != settings::LutPreprocessing::Ot)
    throw Error(Component::Server, "[lut] preprocessing = \"dealer\": entries come from the dealer, not by OT");
  std::vector<lut2::Entry> entries;
  if (party_ == 0) {
    ot::OtExtensionSender sender(peer);
    entries = lut2::ot_preprocess_send(sender, peer, start, count);
  } else {
    ot::OtExtensionReceiver receiver(peer);
    entries = lut2::ot_preprocess_receive(receiver, peer, start, count);
  }
  pool_.store(epoch, start, std::move(entries));
}

void Lut2Backend::store_dealt(std::uint64_t epoch, std::uint64_t start, std::vector<lut2::Entry> entries) {
  if (settings_.preprocessing != settings::LutPreprocessing::Dealer) {
    lut2::wipe_entries(entries);
    throw Error(Component::Server, "dealt entries offered to a server with [lut] preprocessing = \"ot\"");
  }
  pool_.store(epoch, start, std::move(entries));
}

std::string Lut2Backend::describe_state() const {
  return "pool available " + std::to_string(pool_.available()) + ", produced " + std::to_string(pool_.produced()) +
         ", consumed " + std::to_string(pool_.consumed());
}

}  // namespace mpc::two_party_engine
