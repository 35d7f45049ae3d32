// Known-answer self-tests run before a server serves: AES (FIPS-197 through
// OpenSSL), the correlated-randomness PRF, the whole three-party evaluator on
// FIPS-197 vectors for every AES circuit the server runs, and the GCM open (GHASH on
// shares of the hash key powers, then the AES-and-compare circuits) on the GCM
// specification's AES-256 test case, and the AND check of active security (an honest evaluation
// passes, one with a flipped AND share is refused). A failure throws
// Error(Component::Server) and the server must refuse to start.
#pragma once

#include <functional>
#include <memory>

#include "common/log.hpp"
#include "protocol/rss3/evaluator.hpp"
#include "engines/three_party/circuit_set.hpp"

namespace mpc::three_party_engine {

// `make_evaluator` builds evaluators of the kind the server will run (CPU or GPU):
// the three-party known answers go through exactly that kind.
void run_self_tests(const CircuitSet& circuits, const std::function<std::unique_ptr<rss3::Evaluator>()>& make_evaluator,
                    const Logger& log);

}  // namespace mpc::three_party_engine
