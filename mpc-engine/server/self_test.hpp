// Known-answer self-tests run before a server serves: AES (FIPS-197 through
// OpenSSL), the correlated-randomness PRF, and the whole three-party evaluator on
// FIPS-197 vectors for every circuit the server runs. A failure throws
// Error(Component::Server) and the server must refuse to start.
#pragma once

#include "common/log.hpp"
#include "protocol/rss3/evaluator.hpp"
#include "server/circuit_set.hpp"

namespace mpc::server {

void run_self_tests(const CircuitSet& circuits, rss3::SimdLevel level, const Logger& log);

}  // namespace mpc::server
