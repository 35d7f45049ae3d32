// The compiled AES programs a server can run, one per wire::CircuitId up to
// Aes256EncryptEqDepth4, built and compiled once at start-up (every party compiles the same
// circuits the same way). The Kerberos ids are compiled per data length instead
// (krb_circuit_cache.hpp); program() and key_rows() throw Error(Server) for them.
#pragma once

#include <array>
#include <cstdint>

#include "circuits/program.hpp"
#include "settings/server_settings.hpp"
#include "wire/client_messages.hpp"
#include "wire/peer_messages.hpp"

namespace mpc::three_party_engine {

class CircuitSet {
 public:
  CircuitSet();
  const circuits::Program& program(wire::CircuitId id) const;
  // Which circuit runs a batch of `blocks` instances of this key algorithm and direction.
  static wire::CircuitId choose(wire::KeyAlgorithm algorithm, bool decrypt, std::uint32_t blocks,
                                const settings::ServerLimits& limits);
  static std::size_t key_rows(wire::CircuitId id);  // expanded round-key bits, the first input rows

 private:
  // Indexed by CircuitId - 1, for every AES id (1..10).
  std::array<circuits::Program, 10> programs_;
};

}  // namespace mpc::three_party_engine
