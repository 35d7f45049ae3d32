// Choices shared by the AES generators and the S-box circuits.
#pragma once

namespace mpc::circuits {

enum class AesKeySize { Aes128, Aes256 };
enum class AesDirection { Encrypt, Decrypt };

// And32: Boyar-Peralta 32 AND gates, AND-depth 6 (fewest ANDs: throughput-bound work).
// Depth4: Boyar-Peralta 34 AND gates, AND-depth 4 (fewest rounds: latency-bound work).
enum class SboxVariant { And32, Depth4 };

}  // namespace mpc::circuits
