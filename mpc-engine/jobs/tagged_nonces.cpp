#include "jobs/tagged_nonces.hpp"

#include <algorithm>

namespace mpc::jobs {

TaggedNonces::TaggedNonces(std::size_t capacity, std::chrono::seconds ttl)
    : keeps_(capacity != 0), shelf_(std::max<std::size_t>(capacity, 1), ttl) {}

void TaggedNonces::keep(const wire::KeyId& key, const wire::GcmNonce& nonce, NonceShare share, Clock::time_point now) {
  if (!keeps_) return;
  shelf_.erase(nonce);
  shelf_.add(key, nonce, std::move(share), now);
}

}  // namespace mpc::jobs
