#include "engines/three_party/prepared_stock.hpp"

#include <algorithm>

namespace mpc::three_party_engine {

void PreparedStock::used(const jobs::KrbCircuitKey& circuit, std::uint64_t table_bytes, Clock::time_point now) {
  std::erase_if(demand_, [&](const Demand& d) { return d.circuit == circuit; });
  demand_.insert(demand_.begin(), Demand{circuit, table_bytes, now});
}

std::optional<jobs::KrbCircuitKey> PreparedStock::next(Clock::time_point now, std::size_t up_to) {
  up_to = std::min(up_to, kReadyPerCircuit);
  drop_old(now);
  if (in_flight_ || now < paused_until_ || budget_ == 0) return std::nullopt;
  std::uint64_t held = ready_bytes();
  for (const Demand& d : demand_) {
    if (now - d.last_used >= kDemandWindow) break;  // the rest were used earlier still
    const auto count = static_cast<std::size_t>(
        std::count_if(ready_.begin(), ready_.end(), [&](const Ready& r) { return r.circuit == d.circuit; }));
    if (count >= up_to || held + d.table_bytes > budget_) continue;  // a smaller one may fit
    return d.circuit;
  }
  return std::nullopt;
}

void PreparedStock::preparing(std::uint32_t sequence, const jobs::KrbCircuitKey& circuit) {
  in_flight_ = sequence;
  in_flight_circuit_ = circuit;
}

void PreparedStock::prepared(std::uint32_t sequence, bool succeeded, Clock::time_point now) {
  if (!in_flight_ || *in_flight_ != sequence) return;  // cleared meanwhile: forgotten
  in_flight_.reset();
  if (succeeded)
    ready_.push_back(Ready{in_flight_circuit_, sequence, table_bytes_of(in_flight_circuit_), now});
  else
    paused_until_ = now + kPauseAfterFailure;
}

std::optional<std::uint32_t> PreparedStock::take(const jobs::KrbCircuitKey& circuit, Clock::time_point now) {
  drop_old(now);
  auto it = std::find_if(ready_.begin(), ready_.end(), [&](const Ready& r) { return r.circuit == circuit; });
  if (it == ready_.end()) return std::nullopt;
  const std::uint32_t sequence = it->sequence;
  ready_.erase(it);
  return sequence;
}

bool PreparedStock::holds(const jobs::KrbCircuitKey& circuit, Clock::time_point now) {
  drop_old(now);
  return std::any_of(ready_.begin(), ready_.end(), [&](const Ready& r) { return r.circuit == circuit; });
}

void PreparedStock::clear() {
  ready_.clear();
  in_flight_.reset();
}

std::size_t PreparedStock::ready_bytes() const {
  std::size_t bytes = 0;
  for (const Ready& r : ready_) bytes += r.table_bytes;
  return bytes;
}

void PreparedStock::drop_old(Clock::time_point now) {
  while (!ready_.empty() && now - ready_.front().made >= kLife) ready_.pop_front();
  while (!demand_.empty() && now - demand_.back().last_used >= kDemandWindow) demand_.pop_back();
}

std::uint64_t PreparedStock::table_bytes_of(const jobs::KrbCircuitKey& circuit) const {
  for (const Demand& d : demand_)
    if (d.circuit == circuit) return d.table_bytes;
  return 0;
}

}  // namespace mpc::three_party_engine
