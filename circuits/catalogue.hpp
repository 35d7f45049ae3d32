// Named circuits for tools (circuit statistics, Bristol export, benchmarks).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "circuits/circuit.hpp"

namespace mpc::circuits {

// "aes{128,256}-{enc,dec}-{and32,depth4}", "aes{128,256}-keyexp-{and32,depth4}",
// "aes256-enc-eq-{and32,depth4}" (AES-256 encryption plus an equality test of its output
// with a secret block), "gt64", "eq128".
std::vector<std::string> catalogue_names();

// Families with a length parameter, accepted by build_named_circuit but not listed above:
// "sha1-compress" (circuits/sha1.hpp), and the RFC 3962 circuits of circuits/kerberos.hpp with
// the message length in bytes as a decimal number without leading zeros:
// "krb-aes{128,256}-enc-<bytes>" and "krb-aes{128,256}-dec-<bytes>" (16 <= bytes <= 65536),
// "krb-checksum-<bytes>" (0 <= bytes <= 65536); "sha256-compress" and "sha512-compress"
// (circuits/sha2.hpp) and the RFC 8009 circuits of circuits/kerberos_sha2.hpp, lengths as above:
// "krb-aes128-sha256-{enc,dec}-<bytes>", "krb-aes256-sha384-{enc,dec}-<bytes>",
// "krb-sha256-checksum-<bytes>", "krb-sha384-checksum-<bytes>". One example name per family.
std::vector<std::string> catalogue_family_examples();

// Builds the named circuit; throws FormatError(Component::Circuit) for an unknown name.
Circuit build_named_circuit(std::string_view name);

}  // namespace mpc::circuits
