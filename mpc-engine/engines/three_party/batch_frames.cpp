#include "engines/three_party/batch_frames.hpp"

#include <algorithm>

namespace mpc::three_party_engine {

void BatchFrames::route(node::PeerEnvelope envelope) {
  const auto tag = batch_tag_of(envelope.data);
  if (!tag) return;
  std::lock_guard lock(mutex_);
  for (auto& [worker, running] : running_)
    if (running == *tag) {
      worker->deliver(std::move(envelope));
      return;
    }
  early_.keep(std::move(envelope));
}

void BatchFrames::start(BatchWorker& worker, BatchTask task) {
  const BatchTag tag{task.header.epoch, task.header.sequence};
  std::lock_guard lock(mutex_);
  worker.start(std::move(task), early_.take(tag));
  const auto entry = std::find_if(running_.begin(), running_.end(), [&](const auto& e) { return e.first == &worker; });
  if (entry != running_.end())
    entry->second = tag;
  else
    running_.emplace_back(&worker, tag);
}

std::vector<node::PeerEnvelope> BatchFrames::take(const BatchTag& tag) {
  std::lock_guard lock(mutex_);
  return early_.take(tag);
}

}  // namespace mpc::three_party_engine
