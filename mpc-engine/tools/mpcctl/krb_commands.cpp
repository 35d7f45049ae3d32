// krb encrypt / decrypt / checksum: the Kerberos enctype jobs of an aes128-cts-hmac-sha1-96,
// aes256-cts-hmac-sha1-96, aes128-cts-hmac-sha256-128 or aes256-cts-hmac-sha384-192 key,
// results as hex on one line, to compare with libk5crypto (krb5_c_encrypt, krb5_c_decrypt,
// krb5_c_make_checksum). With --combine-alg, --pepper and --mask the job runs under
// KRB-FX-CF2 of the key and another one (wire::KrbCombine), as for krb5_c_fx_cf2_simple.
#include <sodium.h>

#include <array>
#include <optional>
#include <iostream>

#include "client/cluster_client.hpp"
#include "common/bytes.hpp"
#include "common/error.hpp"
#include "settings/cluster_settings.hpp"
#include "tools/mpcctl/arguments.hpp"
#include "tools/mpcctl/commands.hpp"
#include "tools/mpcctl/key_options.hpp"

namespace mpc::tools {
namespace {

// --name/--kvno/--alg of a Kerberos key.
wire::KeyId krb_key_from(const Arguments& arguments) {
  const wire::KeyId key = key_id_from(arguments);
  if (!wire::is_krb_algorithm(key.algorithm))
    throw Error(Component::Tool, "--alg must be " + keys::algorithm_list(keys::AlgorithmSet::Kerberos));
  return key;
}

std::uint32_t usage_from(const Arguments& arguments) {
  const auto usage = static_cast<std::uint32_t>(arguments.number("usage", 0, 0xffffffffu));
  if (!arguments.optional("usage")) throw Error(Component::Tool, "missing option --usage");
  return usage;
}

// --combine-alg, --pepper and --mask (hex): a job under KRB-FX-CF2; all three or none.
std::optional<wire::KrbCombine> combine_from(const Arguments& arguments) {
  const auto algorithm = arguments.optional("combine-alg");
  if (!algorithm && !arguments.optional("pepper") && !arguments.optional("mask")) return std::nullopt;
  if (!algorithm) throw Error(Component::Tool, "--pepper and --mask need --combine-alg");
  wire::KrbCombine combine;
  const auto parsed = wire::parse_algorithm(*algorithm);
  if (!parsed || !wire::is_krb_algorithm(*parsed))
    throw Error(Component::Tool, "--combine-alg must be " + keys::algorithm_list(keys::AlgorithmSet::Kerberos));
  combine.combined = *parsed;
  combine.pepper = arguments.required("pepper");
  combine.mask = from_hex(arguments.required("mask"), Component::Tool);
  if (combine.mask.size() != wire::key_bytes(combine.combined))
    throw Error(Component::Tool, "--mask must be " + std::to_string(wire::key_bytes(combine.combined)) + " bytes");
  return combine;
}

std::vector<std::uint8_t> data_from(const Arguments& arguments, std::size_t max_bytes) {
  auto data = from_hex(arguments.value_or("in", ""), Component::Tool);
  if (data.size() > max_bytes)
    throw Error(Component::Tool, "--in must be at most " + std::to_string(max_bytes) + " bytes");
  return data;
}

// The caller's confounder (--confounder, 32 hex digits) or a fresh random one.
std::array<std::uint8_t, wire::kKrbConfounderBytes> confounder_from(const Arguments& arguments) {
  std::array<std::uint8_t, wire::kKrbConfounderBytes> confounder{};
  if (const auto text = arguments.optional("confounder")) {
    const auto bytes = from_hex(*text, Component::Tool);
    if (bytes.size() != confounder.size()) throw Error(Component::Tool, "--confounder must be 32 hex digits");
    std::copy(bytes.begin(), bytes.end(), confounder.begin());
  } else {
    randombytes_buf(confounder.data(), confounder.size());
  }
  return confounder;
}

// What every Krb job names: the key, the usage and, for a job under KRB-FX-CF2, the combine.
struct KrbJob {
  wire::KeyId key;
  std::uint32_t usage = 0;
  std::optional<wire::KrbCombine> combine;
};

KrbJob krb_job_from(const Arguments& arguments) {
  KrbJob job;
  job.key = krb_key_from(arguments);
  job.usage = usage_from(arguments);
  job.combine = combine_from(arguments);
  return job;
}

}  // namespace

int run_krb_command(const std::vector<std::string>& words) {
  if (words.empty()) throw Error(Component::Tool, "krb: expected encrypt, decrypt or checksum");
  const std::string action = words[0];
  const Arguments arguments(std::vector<std::string>(words.begin() + 1, words.end()), {});
  if (action == "encrypt") {
    arguments.allow_only({"cluster", "name", "kvno", "alg", "usage", "confounder", "in", "combine-alg", "pepper", "mask"});
    const KrbJob job = krb_job_from(arguments);
    const auto confounder = confounder_from(arguments);
    const auto plaintext = data_from(arguments, wire::kKrbMaxDataBytes - wire::kKrbConfounderBytes);
    client::ClusterClient cluster(settings::load_cluster_settings(arguments.required("cluster")));
    std::cout << to_hex(cluster.krb_encrypt(job.key, job.usage, confounder, plaintext, job.combine)) << "\n";
    return 0;
  }
  if (action == "decrypt") {
    arguments.allow_only({"cluster", "name", "kvno", "alg", "usage", "in", "combine-alg", "pepper", "mask"});
    const KrbJob job = krb_job_from(arguments);
    const auto ciphertext = from_hex(arguments.required("in"), Component::Tool);
    const std::size_t overhead =
        wire::kKrbConfounderBytes + wire::krb_mac_bytes(job.combine ? job.combine->combined : job.key.algorithm);
    if (ciphertext.size() < overhead || ciphertext.size() > wire::kKrbMaxDataBytes)
      throw Error(Component::Tool, "--in must be " + std::to_string(overhead) +
                                       ".." + std::to_string(wire::kKrbMaxDataBytes) + " bytes");
    client::ClusterClient cluster(settings::load_cluster_settings(arguments.required("cluster")));
    const auto plaintext = cluster.krb_decrypt(job.key, job.usage, ciphertext, job.combine);
    if (!plaintext) {
      std::cerr << "mpcctl: integrity check failed: wrong key, or data forged or damaged\n";
      return 2;
    }
    std::cout << to_hex(plaintext->span()) << "\n";
    return 0;
  }
  if (action == "checksum") {
    arguments.allow_only({"cluster", "name", "kvno", "alg", "usage", "in", "combine-alg", "pepper", "mask"});
    const KrbJob job = krb_job_from(arguments);
    const auto data = data_from(arguments, wire::kKrbMaxDataBytes);
    client::ClusterClient cluster(settings::load_cluster_settings(arguments.required("cluster")));
    std::cout << to_hex(cluster.krb_checksum(job.key, job.usage, data, job.combine)) << "\n";
    return 0;
  }
  throw Error(Component::Tool, "krb: unknown action '" + action + "'");
}

}  // namespace mpc::tools
