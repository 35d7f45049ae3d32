// What a Kerberos garbling prepared ahead of time fits (prepared_circuits.hpp): the job's
// compiled circuit under one key's current labels. Two jobs of one shape run the same program
// on the same key-label rows and differ only in their public record, so a garbling made for
// the shape serves either.
#pragma once

#include <cstdint>
#include <string>

#include "jobs/krb_jobs.hpp"
#include "wire/key_id.hpp"

namespace mpc::two_party_engine {

struct PreparedShape {
  wire::KeyId key;
  std::uint64_t label_set = 0;     // the id of the key's label set (gc2_backend.hpp) the garbling uses
  jobs::KrbCircuitKey circuit;   // what fixes the compiled program (jobs::KrbCircuitCache)
  jobs::KrbSecretRange secret;   // the key's secret rows: these bytes of its material
  std::uint32_t public_bytes = 0;  // the public record's length: the rows after the secret ones
  bool operator==(const PreparedShape& other) const;
};

bool operator<(const PreparedShape& a, const PreparedShape& b);

// "<key> circuit <id> data <n> bytes", for logs (the label set's id is not printed).
std::string describe(const PreparedShape& shape);

}  // namespace mpc::two_party_engine
