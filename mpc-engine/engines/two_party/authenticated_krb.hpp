// Kerberos jobs (RFC 3961/3962 and RFC 8009 encrypt, decrypt, checksum, and those under
// KRB-FX-CF2) of a two-server cluster under security = "active": the job's circuit
// (jobs/krb_jobs.hpp, fewest AND gates) run by
// authenticated garbling from the AND material stock, as checked_part.hpp runs a part, so that
// neither server can garble another function, feed another key share or record mask than the
// client dealt it, or shift a result (a ciphertext, a checksum, a plaintext, a verdict).
//
// The circuit takes each server's whole share of the key's material (the share checks cover
// all of it; the job's rows are XORs of the two shares' rows), each server's share of the
// record's mask R (its stream of the seed the client gave it: the client knows it, so the pads'
// check covers it), the public record, each server's blinding, and outputs the result's bits,
// wire::krb_result_bytes of them (zero bits after a decrypt's verdict bit), under both
// servers' pads. A server's pad comes from its record-mask seed (client_checks::pad_of_seed).
// Under KRB-FX-CF2 the secret rows are the stored key's PRF material and the caller's mask is
// part of the record R masks (jobs/krb_jobs.hpp): nothing differs here.
//
// A shape's circuit is built once, then kept: in the background when the shell first counts a
// job's entries (entries_if_built: seconds for the first KRB-FX-CF2 job of an RFC 8009 key,
// which the shell's thread must not wait for), or where a job needs it first.
#pragma once

#include <chrono>
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "circuits/circuit.hpp"
#include "common/secret.hpp"
#include "engines/two_party/and_material_stock.hpp"
#include "engines/two_party/dealer_link.hpp"
#include "jobs/krb_jobs.hpp"
#include "protocol/auth2/authenticated_garbling.hpp"
#include "protocol/client_checks/output_pads.hpp"
#include "protocol/two_party/channel.hpp"
#include "wire/client_messages.hpp"

namespace mpc::two_party_engine {

class AuthenticatedKrb {
 public:
  AuthenticatedKrb(int party, AndMaterialStock& stock);
  ~AuthenticatedKrb();

  // Entries of AND material the request's job takes (its circuit is built and kept, or waited
  // for while it is built).
  std::uint64_t entries(const wire::KrbRequest& request) const;
  // The same when its circuit is built; else nullopt, and the build starts in the background.
  std::optional<std::uint64_t> entries_if_built(const wire::KrbRequest& request) const;

  struct Job {
    const wire::KrbRequest* request = nullptr;
    std::span<const std::uint8_t> key_share;    // the whole material share
    std::span<const std::uint8_t> mask_share;   // this server's share of R (wire::xor_record_mask)
    client_checks::PadSeed pad{};               // this server's pad seed
    std::span<const std::uint8_t> share_check;  // dealt with the key share (wire::share_check_bytes)
  };
  struct Padded {
    SecretBytes bytes;                        // the result XOR both pads: the same on both servers
    client_checks::PartReport report;
  };
  // Runs the job from entries [start, start + entries()) of `epoch`, waiting at most `wait`.
  // Throws two_party::PoolEmpty when they do not come, VerificationError when a check fails.
  Padded run(two_party::Channel& peer, const Job& job, std::uint64_t epoch, std::uint64_t start,
             std::chrono::milliseconds wait);

 private:
  struct Shape;  // a circuit and where its inputs lie
  using ShapeKey = std::tuple<int, std::uint32_t, std::uint32_t, int, std::size_t, std::size_t, std::size_t>;
  static ShapeKey key_of(const jobs::KrbJobPlan& plan, wire::KeyAlgorithm algorithm);
  static std::shared_ptr<const Shape> build(const jobs::KrbJobPlan& plan, wire::KeyAlgorithm algorithm);
  // Built here, or waited for while another thread builds it.
  std::shared_ptr<const Shape> shape(const jobs::KrbJobPlan& plan, wire::KeyAlgorithm algorithm) const;

  int party_;
  AndMaterialStock& stock_;
  mutable std::mutex mutex_;
  // By circuit id, data length, combine shape, algorithm, the secret rows' offset and length,
  // result bytes: built, or being built.
  mutable std::map<ShapeKey, std::shared_future<std::shared_ptr<const Shape>>> shapes_;
  // Where shapes are built for entries_if_built. Last: it stops before the rest goes.
  std::unique_ptr<PreprocessingThread> builder_;
};

}  // namespace mpc::two_party_engine
