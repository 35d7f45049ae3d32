// The lookup-table back end (protocol lut2): AES on XOR-shared state, one masked entry per
// S-box (protocol/lut2). Both servers keep a pool of entries filled ahead of time in batches
// the leader announces (preprocessing jobs: OT between the two servers, preprocess(), or
// with [lut] preprocessing = "dealer" the shares of a batch from the dealer, store_dealt(),
// which the server gets through its DealerLink); a client job consumes the range of entries
// the leader assigned to it, waiting at most [lut] pool_wait_ms for entries still being made,
// and otherwise fails with "lookup-table pool empty".
#pragma once

#include "protocol/lut2/entry_pool.hpp"
#include "engines/two_party/backend.hpp"

namespace mpc::two_party_engine {

class Lut2Backend final : public Backend {
 public:
  Lut2Backend(int party, const settings::LutSettings& settings, const Logger& log);

  const char* name() const override;
  std::uint64_t pool_entries(const wire::KeyId& key, std::uint32_t blocks) const override;
  ComputeOutput compute(two_party::Channel& peer, const ComputeTask& task) override;
  void preprocess(two_party::Channel& peer, std::uint64_t epoch, std::uint64_t start, std::uint64_t count) override;
  void reset_pool(std::uint64_t epoch) override { pool_.reset(epoch); }
  std::string describe_state() const override;
  bool wants_preprocessing() const override { return true; }
  std::uint64_t preprocess_batch() const override;
  std::uint64_t pool_capacity() const override { return settings_.pool_sboxes; }
  const char* pool_entry_name() const override { return "lookup-table entries ([lut] pool_sboxes)"; }
  // [lut] preprocessing = "dealer": this server's shares of a dealt batch, for pool entries
  // [start, start + entries.size()) of `epoch` (preprocess() refuses to run in that mode).
  void store_dealt(std::uint64_t epoch, std::uint64_t start, std::vector<lut2::Entry> entries);

 private:
  int party_;
  settings::LutSettings settings_;
  Logger log_;
  lut2::EntryPool pool_;
};

}  // namespace mpc::two_party_engine
