// How a Kerberos job (wire::KrbRequest, RFC 3961/3962 or RFC 8009 under a shared key, or
// under KRB-FX-CF2 of a shared key and a caller's key) sits in a batch: which circuit runs
// it, which part of the key's share material forms its secret input rows, and which bytes
// are its public input. One instance per job.
//
// Inputs of every Kerberos circuit (circuits/kerberos.hpp, circuits/kerberos_sha2.hpp) are,
// in order: the secret rows, broadcast over the job's instance (Encrypt/Decrypt: Ke round
// keys then the Ki HMAC state, which lie back to back in the material; Checksum: the Kc HMAC
// state), then the public record (the request's data as it came: message, ciphertext ||
// MAC). A KRB-FX-CF2 circuit (circuits/kerberos_cf2.hpp) takes the stored key's PRF material
// as its secret rows (RFC 3962: the PRF key's round keys; RFC 8009: the protocol key's HMAC
// state) and as its public record the PRF inputs || the caller's mask || the data.
// The secret bytes of the record (krb_masked_range) come masked by R (wire/krb_record_mask.hpp)
// and the circuit a batch runs takes the shares of R as secret rows after the key's and XORs
// them back in (circuits/masked_inputs.hpp): its secret rows are the key's, then R's.
// The output record of an instance (output bits packed, byte b bit k = output b * 8 + k) is
// exactly the job's result (wire::krb_result_bytes bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "circuits/aes_options.hpp"
#include "circuits/circuit.hpp"
#include "common/secret.hpp"
#include "wire/client_messages.hpp"
#include "wire/peer_messages.hpp"

namespace mpc::jobs {

// Most data bytes (jobs x data length) one Kerberos batch carries: bounds the input and
// output matrices of a batch of long jobs. Leaders form no larger batches; followers refuse them.
inline constexpr std::size_t kMaxKrbBatchDataBytes = std::size_t{4} << 20;

// Most jobs of `data_bytes` bytes one Kerberos batch takes (at least 1), before the
// server's max_batch_blocks.
std::uint32_t max_krb_batch_jobs(std::uint32_t data_bytes);

// The Kerberos circuit of a plain job (no KrbCombine) under a key of `algorithm` (a Kerberos
// algorithm). Throws Error(Server) for another algorithm.
wire::CircuitId krb_circuit_id(wire::KrbOperation operation, wire::KeyAlgorithm algorithm);

// What fixes a compiled Kerberos circuit: the id, the data length and, for the KrbCf2 ids,
// the combine shape (wire::pack_krb_combine); 0 otherwise.
struct KrbCircuitKey {
  wire::CircuitId id = wire::CircuitId::KrbChecksum;
  std::uint32_t data_bytes = 0;
  std::uint32_t combine = 0;
  bool operator==(const KrbCircuitKey&) const = default;
};

// Bytes of the secret rows of a Kerberos circuit: round keys + the HMAC state (40, 64 or
// 128 bytes) for Encrypt and Decrypt, the HMAC state alone for Checksum, the stored key's PRF
// material for a KRB-FX-CF2 circuit. Throws Error(Server) for a non-Kerberos id.
std::size_t krb_secret_bytes(wire::CircuitId id, std::uint32_t combine = 0);

// The bytes [offset, offset + bytes) of a job's public record that come masked by R: all of
// an Encrypt's or Checksum's record; nothing of a plain Decrypt's; of a KRB-FX-CF2 job's (PRF
// inputs || mask || data) the mask, and the data but for a Decrypt. bytes is
// wire::krb_secret_record_bytes of the job's request.
struct KrbMaskedRange {
  std::size_t offset = 0;
  std::size_t bytes = 0;
};
KrbMaskedRange krb_masked_range(const KrbCircuitKey& circuit);

// Per instance of a batch of a Kerberos circuit: the secret rows, the public record and the
// output record (the result). Throws FormatError(Wire) for a length the operation cannot
// take or a malformed combine shape, Error(Server) for a non-Kerberos id.
struct KrbBatchLayout {
  std::size_t key_rows = 0;      // 8 * krb_secret_bytes + mask_rows
  std::size_t mask_rows = 0;     // 8 * krb_masked_range().bytes: R's rows, after the key's
  std::size_t public_bytes = 0;  // data_bytes, or PRF inputs + mask + data_bytes under KRB-FX-CF2
  std::size_t output_bytes = 0;  // wire::krb_result_bytes
};
KrbBatchLayout krb_batch_layout(wire::CircuitId id, std::uint32_t data_bytes, std::uint32_t combine = 0);

// Where a job's secret rows lie in the key's material (wire::material_bytes): the bytes
// [offset, offset + bytes). Throws Error(Server) if the usage's keys are not in the material.
struct KrbSecretRange {
  std::size_t offset = 0;
  std::size_t bytes = 0;
};
KrbSecretRange krb_secret_range(wire::KeyAlgorithm algorithm, wire::KrbOperation operation, std::uint32_t usage);

// Everything a server needs to run a request's job: the circuit, the secret rows, the public
// record and the result's length. Throws FormatError(Wire) for a request the wire format
// refuses, Error(Server) for one no circuit serves.
struct KrbJobPlan {
  KrbCircuitKey circuit;
  KrbSecretRange secret;
  std::size_t mask_bytes = 0;  // of R (krb_masked_range)
  std::vector<std::uint8_t> public_record;
  std::size_t result_bytes = 0;
};
KrbJobPlan plan_krb_job(const wire::KrbRequest& request);

// x || a of the secret rows at `range`, cut from this server's share of the key's material
// (x || a, wire::material_bytes each). Throws Error(Server) if the share has the wrong size.
SecretBytes krb_secret_rows(const SecretBytes& share, wire::KeyAlgorithm algorithm, const KrbSecretRange& range);
// x || a of all a job's secret rows: the key's at `range`, then R's (`mask`: x || a of R, as
// wire::replicated_record_mask gives it).
SecretBytes krb_secret_rows(const SecretBytes& share, wire::KeyAlgorithm algorithm, const KrbSecretRange& range,
                            const SecretBytes& mask);
// The same for a plain job's operation and usage.
SecretBytes krb_secret_rows(const SecretBytes& share, wire::KeyAlgorithm algorithm, wire::KrbOperation operation,
                            std::uint32_t usage);

// The circuit a Kerberos batch runs, built for fewest AND layers (rss3) or fewest ANDs
// (garbled circuits), taking R's rows after the key's. Throws FormatError(Wire) for invalid
// lengths or shapes.
circuits::Circuit build_krb_circuit(const KrbCircuitKey& key,
                                    circuits::CircuitCost cost = circuits::CircuitCost::FewestLayers);
// A plain (non-KRB-FX-CF2) circuit of `id` for jobs of `data_bytes`.
circuits::Circuit build_krb_circuit(wire::CircuitId id, std::uint32_t data_bytes,
                                    circuits::CircuitCost cost = circuits::CircuitCost::FewestLayers);

}  // namespace mpc::jobs
