// How a Kerberos job (wire::KrbRequest, RFC 3961/3962 or RFC 8009 under a shared key) sits in a batch:
// which circuit runs it, which part of the key's share material forms its secret input rows,
// and which bytes are its public input. One instance per job.
//
// Inputs of every Kerberos circuit (circuits/kerberos.hpp, circuits/kerberos_sha2.hpp) are,
// in order: the secret rows, broadcast over the job's instance (Encrypt/Decrypt: Ke round
// keys then the Ki HMAC state, which lie back to back in the material; Checksum: the Kc HMAC
// state; an RFC 8009 PRF: the protocol key's HMAC state), then the public record (the
// request's data as it came: message, ciphertext || MAC, or PRF input). An RFC 3962 PRF job
// runs an AES encryption circuit of wire::CircuitId: the PRF key's round keys, then the
// 16-byte block.
// The output record of an instance (output bits packed, byte b bit k = output b * 8 + k) is
// exactly the job's result (wire::krb_result_bytes bytes).
#pragma once

#include <cstddef>
#include <cstdint>

#include "circuits/aes_options.hpp"
#include "circuits/circuit.hpp"
#include "common/secret.hpp"
#include "wire/client_messages.hpp"
#include "wire/peer_messages.hpp"

namespace mpc::server {

// Most data bytes (jobs x data length) one Kerberos batch carries: bounds the input and
// output matrices of a batch of long jobs. Leaders form no larger batches; followers refuse them.
inline constexpr std::size_t kMaxKrbBatchDataBytes = std::size_t{4} << 20;

// Most jobs of `data_bytes` bytes one Kerberos batch takes (at least 1), before the
// server's max_batch_blocks.
std::uint32_t max_krb_batch_jobs(std::uint32_t data_bytes);

// Whether a PRF job under a key of `algorithm` runs a plain AES encryption circuit (RFC 3962)
// rather than a Kerberos circuit (RFC 8009's HMAC).
bool krb_prf_runs_aes(wire::KeyAlgorithm algorithm);

// The Kerberos circuit of a job under a key of `algorithm` (a Kerberos algorithm): Encrypt,
// Decrypt or Checksum, and Prf under an RFC 8009 key. Throws Error(Server) for an RFC 3962
// PRF (it runs an AES circuit) or another algorithm.
wire::CircuitId krb_circuit_id(wire::KrbOperation operation, wire::KeyAlgorithm algorithm);

// The plain AES key size of a Kerberos algorithm's round keys (Aes128 or Aes256): PRF jobs
// run the AES encryption circuits of that size.
wire::KeyAlgorithm krb_aes_algorithm(wire::KeyAlgorithm algorithm);

// Bytes of the secret rows of a Kerberos circuit id: round keys + the HMAC state (40, 64 or
// 128 bytes) for Encrypt and Decrypt, the HMAC state alone for Checksum and Prf.
std::size_t krb_secret_bytes(wire::CircuitId id);

// Per instance of a batch of Kerberos circuit `id` with jobs of `data_bytes` bytes: the
// secret rows, the public record (the data) and the output record (the result). Throws
// FormatError(Wire) for a length the operation cannot take, Error(Server) for a non-Kerberos id.
struct KrbBatchLayout {
  std::size_t key_rows = 0;      // 8 * krb_secret_bytes(id)
  std::size_t public_bytes = 0;  // data_bytes
  std::size_t output_bytes = 0;  // wire::krb_result_bytes
};
KrbBatchLayout krb_batch_layout(wire::CircuitId id, std::uint32_t data_bytes);

// Where a job's secret rows lie in the key's material (wire::material_bytes): the bytes
// [offset, offset + bytes). Throws Error(Server) if the usage's keys are not in the material.
struct KrbSecretRange {
  std::size_t offset = 0;
  std::size_t bytes = 0;
};
KrbSecretRange krb_secret_range(wire::KeyAlgorithm algorithm, wire::KrbOperation operation, std::uint32_t usage);

// x || a of the secret rows of a job, cut from this server's share of the key's material
// (x || a, wire::material_bytes each). Throws Error(Server) if the share has the wrong size
// or the usage's keys are not in the material.
SecretBytes krb_secret_rows(const SecretBytes& share, wire::KeyAlgorithm algorithm, wire::KrbOperation operation,
                            std::uint32_t usage);

// The circuit a Kerberos batch of `id` runs for jobs of `data_bytes` bytes of data (valid for
// wire::krb_result_bytes), built for fewest AND layers (rss3) or fewest ANDs (garbled
// circuits). Throws FormatError(Wire) for invalid lengths.
circuits::Circuit build_krb_circuit(wire::CircuitId id, std::uint32_t data_bytes,
                                    circuits::CircuitCost cost = circuits::CircuitCost::FewestLayers);

}  // namespace mpc::server
