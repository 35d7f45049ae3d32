// Choices shared by the AES generators and the S-box circuits.
#pragma once

namespace mpc::circuits {

enum class AesKeySize { Aes128, Aes256 };
enum class AesDirection { Encrypt, Decrypt };

// And32: Boyar-Peralta 32 AND gates, AND-depth 6 (fewest ANDs: throughput-bound work).
// Depth4: Boyar-Peralta 34 AND gates, AND-depth 4 (fewest rounds: latency-bound work).
enum class SboxVariant { And32, Depth4 };

// What a sequential job's circuit (the Kerberos enctypes) is built to minimise. FewestLayers
// (three-server rss3: every AND layer is a round of messages): the Depth4 S-box and
// parallel-prefix adders. FewestAnds (garbled circuits: every AND is 32 bytes on the wire and
// rounds cost nothing): the And32 S-box and ripple-carry adders (one AND per bit instead of
// about five).
enum class CircuitCost { FewestLayers, FewestAnds };

inline SboxVariant sbox_for(CircuitCost cost) {
  return cost == CircuitCost::FewestAnds ? SboxVariant::And32 : SboxVariant::Depth4;
}

}  // namespace mpc::circuits
