// Where a batch's layer and abort frames go once they arrive, from whichever thread receives
// them: the shell's (CurveZMQ) or a data link's reader (data_plane.hpp). A frame of a batch
// that runs on a worker goes to that worker's inbox; one of a batch not started here yet is
// kept (early_messages.hpp) and handed over when the batch starts.
//
// One lock covers both, so no frame slips between a batch's start and its registration.
// Lock order: this class's lock, then a worker's.
#pragma once

#include <mutex>
#include <utility>
#include <vector>

#include "engines/three_party/batch_worker.hpp"
#include "engines/three_party/early_messages.hpp"
#include "engines/three_party/frame_buffers.hpp"
#include "node/peer_links.hpp"

namespace mpc::three_party_engine {

class BatchFrames {
 public:
  // A frame that carries a batch tag (batch_tag_of); anything else is dropped.
  void route(node::PeerEnvelope envelope);
  // Starts `task` on `worker` with the frames its batch already has, and routes the batch's
  // later frames there until the worker starts another.
  void start(BatchWorker& worker, BatchTask task);
  // The frames of `tag` kept so far (for a batch run on the shell's thread).
  std::vector<node::PeerEnvelope> take(const BatchTag& tag);
  // Where frames' buffers go back once their message is used, for the links to read into.
  FrameBuffers& buffers() noexcept { return buffers_; }

 private:
  FrameBuffers buffers_;
  std::mutex mutex_;
  std::vector<std::pair<BatchWorker*, BatchTag>> running_;
  EarlyMessages early_;
};

}  // namespace mpc::three_party_engine
