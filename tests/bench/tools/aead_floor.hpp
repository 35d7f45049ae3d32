// The cost floor of the mandated link encryption: CurveZMQ seals and opens every
// message with XSalsa20-Poly1305 (libsodium crypto_box_*_afternm). Each AND gate
// sends one bit per party, so every AND costs 2 bits of seal + open per party.
#pragma once

#include <cstddef>

namespace mpc::tools {

struct AeadRate {
  double seal_bytes_per_second = 0;
  double open_bytes_per_second = 0;
};

// Seals and opens `message_bytes`-sized messages for about `seconds` each, one core.
AeadRate measure_xsalsa20poly1305(double seconds, std::size_t message_bytes);

}  // namespace mpc::tools
