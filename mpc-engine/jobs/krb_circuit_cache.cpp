#include "jobs/krb_circuit_cache.hpp"

#include <string>

#include "common/error.hpp"
#include "jobs/krb_jobs.hpp"

namespace mpc::jobs {

KrbCircuitCache::KrbCircuitCache(std::size_t budget_ops)
    : KrbCircuitCache(budget_ops, [](const KrbCircuitKey& key) { return build_krb_circuit(key); }) {}

KrbCircuitCache::KrbCircuitCache(std::size_t budget_ops, Builder build)
    : budget_ops_(budget_ops), build_(std::move(build)) {}

std::size_t KrbCircuitCache::ops_of(const circuits::Program& program) {
  std::size_t ops = program.num_slots;
  for (const auto& layer : program.layers) ops += layer.linear.size() + layer.ands.size();
  return ops;
}

std::chrono::milliseconds krb_first_layer_grace(const circuits::Program& program) {
  constexpr std::size_t kOpsPerMillisecond = 500;
  return std::chrono::milliseconds(KrbCircuitCache::ops_of(program) / kOpsPerMillisecond + 1);
}

std::shared_ptr<const circuits::Program> KrbCircuitCache::program(wire::CircuitId id, std::uint32_t data_bytes,
                                                                  std::uint32_t combine) {
  const KrbCircuitKey key{id, data_bytes, combine};
  if (!wire::is_krb_circuit(id))
    throw FormatError(Component::Server,
                      "circuit id " + std::to_string(static_cast<unsigned>(id)) + " is not a Kerberos circuit");
  const auto cached = [&]() -> std::shared_ptr<const circuits::Program> {
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->key == key) {
        entries_.splice(entries_.begin(), entries_, it);
        return entries_.front().program;
      }
    }
    return nullptr;
  };
  {
    std::lock_guard lock(mutex_);
    if (auto hit = cached()) return hit;
  }
  // Compiled without the lock: another worker may use the cache meanwhile. Two workers
  // that miss on the same circuit at once both compile it; the first to finish wins.
  auto program = std::make_shared<const circuits::Program>(circuits::compile(build_(key)));
  const std::size_t ops = ops_of(*program);
  std::lock_guard lock(mutex_);
  ++compiled_;
  if (auto hit = cached()) return hit;
  entries_.push_front(Entry{key, program, ops});
  held_ops_ += ops;
  // The newest program stays even when it alone exceeds the budget: the batch needs it.
  while (held_ops_ > budget_ops_ && entries_.size() > 1) {
    held_ops_ -= entries_.back().ops;
    entries_.pop_back();
  }
  return program;
}

std::size_t KrbCircuitCache::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

std::size_t KrbCircuitCache::held_ops() const {
  std::lock_guard lock(mutex_);
  return held_ops_;
}

std::uint64_t KrbCircuitCache::compiled() const {
  std::lock_guard lock(mutex_);
  return compiled_;
}

}  // namespace mpc::jobs
