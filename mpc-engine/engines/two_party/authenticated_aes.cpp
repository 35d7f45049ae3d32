#include "engines/two_party/authenticated_aes.hpp"

#include <algorithm>
#include <vector>

#include "circuits/aes_shared_key.hpp"
#include "common/error.hpp"
#include "protocol/auth2/and_triples.hpp"
#include "protocol/auth2/authenticated_garbling.hpp"
#if defined(MPC_FAULT_INJECTION)
#include "common/fault_injection.hpp"
#endif

namespace mpc::two_party_engine {
namespace {

std::vector<std::uint8_t> bits_of(std::span<const std::uint8_t> bytes) {
  std::vector<std::uint8_t> bits(8 * bytes.size());
  for (std::size_t i = 0; i < bits.size(); ++i) bits[i] = (bytes[i / 8] >> (i % 8)) & 1;
  return bits;
}

#if defined(MPC_FAULT_INJECTION)
// A deviating server (test server only, common/fault_injection.hpp):
// - "auth2-garbled-rows": server 1 flips a bit of the MAC in all four rows of its first 64 AND
//   gates, so whichever row server 2 opens is wrong;
// - "auth2-opened-mask": server 1 opens its first shared bit with the other value.
void deviate(auth2::Session& session) {
  if (fault::armed("auth2-garbled-rows"))
    session.set_deviation([](auth2::Step step, std::span<std::uint8_t> message) {
      if (step != auth2::Step::GarbledRows) return;
      for (std::size_t gate = 0; gate < 64; ++gate)
        for (std::size_t row = 0; row < 4; ++row)
          if (const std::size_t byte = 16 * (8 * gate + 2 * row) + 5; byte < message.size()) message[byte] ^= 1;
    });
  if (fault::armed("auth2-opened-mask"))
    session.set_deviation([](auth2::Step step, std::span<std::uint8_t> message) {
      if (step == auth2::Step::Opening && !message.empty()) message[0] ^= 1;
    });
}
#endif

}  // namespace

std::shared_ptr<const circuits::Circuit> AuthenticatedAes::circuit(wire::KeyAlgorithm algorithm, bool decrypt,
                                                                  std::uint32_t blocks) {
  std::lock_guard lock(mutex_);
  auto& slot = circuits_[{algorithm, decrypt, blocks}];
  if (!slot)
    slot = std::make_shared<const circuits::Circuit>(circuits::build_shared_key_aes_circuit(
        algorithm == wire::KeyAlgorithm::Aes256 ? circuits::AesKeySize::Aes256 : circuits::AesKeySize::Aes128,
        decrypt ? circuits::AesDirection::Decrypt : circuits::AesDirection::Encrypt, circuits::SboxVariant::And32,
        blocks));
  return slot;
}

SecretBytes AuthenticatedAes::blocks(two_party::Channel& peer, wire::KeyAlgorithm algorithm, bool decrypt,
                                     std::span<const std::uint8_t> key_share, std::span<const std::uint8_t> input) {
  if (algorithm != wire::KeyAlgorithm::Aes128 && algorithm != wire::KeyAlgorithm::Aes256)
    throw Error(Component::Server, "authenticated AES: not an AES key");
  auth2::Session session(peer, party_ == 0 ? auth2::Role::First : auth2::Role::Second);
#if defined(MPC_FAULT_INJECTION)
  if (party_ == 0) deviate(session);
#endif
  const std::vector<std::uint8_t> key_bits = bits_of(key_share);
  const auth2::InputOwners owners{auth2::Owner::First, auth2::Owner::Second, auth2::Owner::Public};
  const std::size_t total = input.size() / 16;
  SecretBytes share(input.size());
  for (std::size_t first = 0; first < total; first += kAuthenticatedPartBlocks) {
    const auto blocks = static_cast<std::uint32_t>(std::min<std::size_t>(kAuthenticatedPartBlocks, total - first));
    const auto part = circuit(algorithm, decrypt, blocks);
    const auto triples = auth2::and_triples(session, auth2::and_gate_count(*part));
    const auth2::CircuitMasks masks = auth2::prepare_masks(session, *part, owners, triples);
    const std::vector<std::uint8_t> public_bits = bits_of(input.subspan(16 * first, 16 * blocks));
    const std::vector<std::uint8_t> out = auth2::evaluate_authenticated(session, *part, owners, masks, key_bits,
                                                                        public_bits, auth2::Outputs::Shares);
    for (std::size_t i = 0; i < out.size(); ++i) share[16 * first + i / 8] |= static_cast<std::uint8_t>(out[i] << (i % 8));
  }
  peer.flush();
  return share;
}

}  // namespace mpc::two_party_engine
