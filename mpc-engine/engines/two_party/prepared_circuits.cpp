#include "engines/two_party/prepared_circuits.hpp"

#include <algorithm>

#include "engines/two_party/preparation_header.hpp"

namespace mpc::two_party_engine {
namespace {

constexpr std::chrono::milliseconds kFirstBackoff{250};
constexpr std::chrono::milliseconds kLongestBackoff{30000};

bool same_key(const PreparedShape& shape, const wire::KeyId& key) { return shape.key == key; }

}  // namespace

void PreparationPlanner::used(const PreparedShape& shape, std::size_t bytes) {
  std::lock_guard lock(mutex_);
  auto it = std::find_if(recent_.begin(), recent_.end(), [&](const Use& use) { return use.shape == shape; });
  if (it != recent_.end()) recent_.erase(it);
  recent_.push_front(Use{shape, bytes, false});
  if (recent_.size() > kMaxShapes) recent_.pop_back();
}

std::optional<PreparedShape> PreparationPlanner::next(const std::function<std::size_t(const PreparedShape&)>& held,
                                                      std::size_t budget, Clock::time_point now) const {
  std::lock_guard lock(mutex_);
  if (now < paused_until_) return std::nullopt;
  // Walks the shapes in order of use, reserving room for each one's garblings: a shape whose
  // garblings would only fit by dropping a more recently used one's is not prepared, so a
  // budget smaller than the working set never churns.
  std::size_t room = budget;
  for (const auto& use : recent_) {
    const std::size_t want = PreparationPlanner::kReadyPerShape * use.bytes;
    if (use.bytes == 0 || want > room) continue;
    room -= want;
    if (!use.waiting && held(use.shape) < kReadyPerShape) return use.shape;
  }
  return std::nullopt;
}

void PreparationPlanner::failed(const PreparedShape& shape, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  for (auto& use : recent_)
    if (use.shape == shape) use.waiting = true;
  backoff_ = std::clamp(backoff_ * 2, kFirstBackoff, kLongestBackoff);
  paused_until_ = now + backoff_;
}

void PreparationPlanner::succeeded() {
  std::lock_guard lock(mutex_);
  backoff_ = std::chrono::milliseconds(0);
}

void PreparationPlanner::forget_if(const std::function<bool(const PreparedShape&)>& forget) {
  std::lock_guard lock(mutex_);
  recent_.remove_if([&](const Use& use) { return forget(use.shape); });
}

std::size_t PreparationPlanner::shapes() const {
  std::lock_guard lock(mutex_);
  return recent_.size();
}

PreparedCircuits::PreparedCircuits(std::size_t budget_bytes)
    : garblings(budget_bytes), tables(budget_bytes), budget_(budget_bytes) {}

void PreparedCircuits::set_budget(std::size_t budget_bytes) {
  budget_ = budget_bytes;
  garblings.set_budget(budget_bytes);
  tables.set_budget(budget_bytes);
}

void PreparedCircuits::note_dropped(const std::vector<PreparedShape>& shapes) {
  std::lock_guard lock(mutex_);
  dropped_.insert(dropped_.end(), shapes.begin(), shapes.end());
  if (dropped_.size() > kMaxDroppedPerHeader)
    dropped_.erase(dropped_.begin(), dropped_.end() - static_cast<std::ptrdiff_t>(kMaxDroppedPerHeader));
}

std::vector<PreparedShape> PreparedCircuits::take_dropped() {
  std::lock_guard lock(mutex_);
  std::vector<PreparedShape> out;
  out.swap(dropped_);
  return out;
}

void PreparedCircuits::restore_dropped(std::vector<PreparedShape> shapes) {
  std::lock_guard lock(mutex_);
  shapes.insert(shapes.end(), dropped_.begin(), dropped_.end());
  dropped_ = std::move(shapes);
  if (dropped_.size() > kMaxDroppedPerHeader)
    dropped_.erase(dropped_.begin(), dropped_.end() - static_cast<std::ptrdiff_t>(kMaxDroppedPerHeader));
}

void PreparedCircuits::begin_use(const PreparedShape& shape) {
  std::lock_guard lock(mutex_);
  ++in_use_[shape];
}

void PreparedCircuits::end_use(const PreparedShape& shape) {
  std::lock_guard lock(mutex_);
  auto it = in_use_.find(shape);
  if (it != in_use_.end() && --it->second == 0) in_use_.erase(it);
}

bool PreparedCircuits::in_use(const PreparedShape& shape) const {
  std::lock_guard lock(mutex_);
  return in_use_.count(shape) != 0;
}

std::size_t PreparedCircuits::garbler_seen(std::uint64_t instance) {
  {
    std::lock_guard lock(mutex_);
    if (instance == garbler_) return 0;
    garbler_ = instance;
  }
  return tables.drop_if([&](const PreparedShape&, const PreparedTables& entry) { return entry.garbler != instance; });
}

void PreparedCircuits::forget_key(const wire::KeyId& key, std::uint64_t keep) {
  const auto stale = [&](const PreparedShape& shape) {
    return same_key(shape, key) && (keep == 0 || shape.label_set != keep);
  };
  garblings.drop_if([&](const PreparedShape& shape, const PreparedGarbling&) { return stale(shape); });
  tables.drop_if([&](const PreparedShape& shape, const PreparedTables&) { return stale(shape); });
  planner.forget_if(stale);
}

void PreparedCircuits::forget_older_versions(const wire::KeyId& key) {
  const auto older = [&](const PreparedShape& shape) {
    return shape.key.name == key.name && shape.key.version < key.version;
  };
  garblings.drop_if([&](const PreparedShape& shape, const PreparedGarbling&) { return older(shape); });
  tables.drop_if([&](const PreparedShape& shape, const PreparedTables&) { return older(shape); });
  planner.forget_if(older);
}

std::string PreparedCircuits::describe() const {
  const std::size_t held = garblings.entries() + tables.entries();
  const std::size_t bytes = garblings.bytes() + tables.bytes();
  return "prepared garblings " + std::to_string(held) + " (" + std::to_string(bytes >> 20) + " of " +
         std::to_string(budget() >> 20) + " MiB), made " + std::to_string(made.load()) + ", used " +
         std::to_string(used.load()) + ", online " + std::to_string(online.load()) + ", refused " +
         std::to_string(refused.load());
}

}  // namespace mpc::two_party_engine
