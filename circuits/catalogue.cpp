#include "circuits/catalogue.hpp"

#include <optional>
#include <string>
#include <utility>

#include "circuits/aes.hpp"
#include "circuits/comparator.hpp"
#include "circuits/equality.hpp"
#include "circuits/kerberos.hpp"
#include "circuits/kerberos_sha2.hpp"
#include "circuits/sha1.hpp"
#include "circuits/sha2.hpp"
#include "common/error.hpp"

namespace mpc::circuits {
namespace {

struct AesChoice {
  const char* name;
  AesKeySize size;
};
struct SboxChoice {
  const char* name;
  SboxVariant variant;
};

constexpr AesChoice kSizes[] = {{"aes128", AesKeySize::Aes128}, {"aes256", AesKeySize::Aes256}};
constexpr SboxChoice kSboxes[] = {{"and32", SboxVariant::And32}, {"depth4", SboxVariant::Depth4}};

// Longest message a named Kerberos circuit may be built for (a 64 KiB message is already a
// circuit of about 250 million gates).
constexpr std::size_t kMaxNamedMessageBytes = 65536;

// The length after `prefix`: decimal digits only, no leading zero, at most kMaxNamedMessageBytes.
std::optional<std::size_t> length_after(std::string_view name, std::string_view prefix) {
  if (name.substr(0, prefix.size()) != prefix) return std::nullopt;
  const std::string_view digits = name.substr(prefix.size());
  if (digits.empty() || digits.size() > 5 || (digits.size() > 1 && digits[0] == '0')) return std::nullopt;
  std::size_t value = 0;
  for (char digit : digits) {
    if (digit < '0' || digit > '9') return std::nullopt;
    value = value * 10 + static_cast<std::size_t>(digit - '0');
  }
  if (value > kMaxNamedMessageBytes) return std::nullopt;
  return value;
}

std::optional<Circuit> build_kerberos_circuit(std::string_view name) {
  if (name == "sha1-compress") return build_sha1_compress_circuit();
  if (const auto length = length_after(name, "krb-checksum-")) return build_krb_checksum_circuit(*length);
  for (const AesChoice& size : kSizes) {
    const std::string prefix = std::string("krb-") + size.name + "-";
    if (const auto length = length_after(name, prefix + "enc-"); length && *length >= kKrbBlockBytes)
      return build_krb_encrypt_circuit(size.size, *length);
    if (const auto length = length_after(name, prefix + "dec-"); length && *length >= kKrbBlockBytes)
      return build_krb_decrypt_circuit(size.size, *length);
  }
  return std::nullopt;
}

// The RFC 8009 families: the enctype names pair the AES size with its hash.
std::optional<Circuit> build_kerberos_sha2_circuit(std::string_view name) {
  if (name == "sha256-compress") return build_sha256_compress_circuit();
  if (name == "sha512-compress") return build_sha512_compress_circuit();
  if (const auto length = length_after(name, "krb-sha256-checksum-"))
    return build_krb_sha2_checksum_circuit(KrbSha2Hash::Sha256, *length);
  if (const auto length = length_after(name, "krb-sha384-checksum-"))
    return build_krb_sha2_checksum_circuit(KrbSha2Hash::Sha384, *length);
  if (const auto length = length_after(name, "krb-sha256-prf-"))
    return build_krb_sha2_prf_circuit(KrbSha2Hash::Sha256, *length);
  if (const auto length = length_after(name, "krb-sha384-prf-"))
    return build_krb_sha2_prf_circuit(KrbSha2Hash::Sha384, *length);
  for (const auto& [prefix, size] : {std::pair{"krb-aes128-sha256-", AesKeySize::Aes128},
                                     std::pair{"krb-aes256-sha384-", AesKeySize::Aes256}}) {
    if (const auto length = length_after(name, std::string(prefix) + "enc-"); length && *length >= kKrbBlockBytes)
      return build_krb_sha2_encrypt_circuit(size, *length);
    if (const auto length = length_after(name, std::string(prefix) + "dec-"); length && *length >= kKrbBlockBytes)
      return build_krb_sha2_decrypt_circuit(size, *length);
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> catalogue_names() {
  std::vector<std::string> names;
  for (const AesChoice& size : kSizes) {
    for (const char* operation : {"enc", "dec", "keyexp"}) {
      for (const SboxChoice& sbox : kSboxes) {
        names.push_back(std::string(size.name) + "-" + operation + "-" + sbox.name);
      }
    }
  }
  for (const SboxChoice& sbox : kSboxes) names.push_back(std::string("aes256-enc-eq-") + sbox.name);
  names.push_back("gt64");
  names.push_back("eq128");
  return names;
}

std::vector<std::string> catalogue_family_examples() {
  return {"sha1-compress", "krb-aes128-enc-300", "krb-aes256-enc-300", "krb-aes128-dec-300", "krb-aes256-dec-300",
          "krb-checksum-300", "sha256-compress", "sha512-compress", "krb-aes128-sha256-enc-300",
          "krb-aes256-sha384-enc-300", "krb-aes128-sha256-dec-300", "krb-aes256-sha384-dec-300",
          "krb-sha256-checksum-300", "krb-sha384-checksum-300", "krb-sha256-prf-16", "krb-sha384-prf-16"};
}

Circuit build_named_circuit(std::string_view name) {
  if (auto circuit = build_kerberos_circuit(name)) return std::move(*circuit);
  if (auto circuit = build_kerberos_sha2_circuit(name)) return std::move(*circuit);
  if (name == "gt64") return build_greater_than_circuit(64);
  if (name == "eq128") return build_equality_circuit(128);
  for (const SboxChoice& sbox : kSboxes) {
    if (name == std::string("aes256-enc-eq-") + sbox.name)
      return build_aes_encrypt_equal_circuit(AesKeySize::Aes256, sbox.variant);
  }
  for (const AesChoice& size : kSizes) {
    for (const SboxChoice& sbox : kSboxes) {
      const std::string prefix = std::string(size.name) + "-";
      const std::string suffix = std::string("-") + sbox.name;
      if (name == prefix + "enc" + suffix) return build_aes_circuit(size.size, AesDirection::Encrypt, sbox.variant);
      if (name == prefix + "dec" + suffix) return build_aes_circuit(size.size, AesDirection::Decrypt, sbox.variant);
      if (name == prefix + "keyexp" + suffix) return build_aes_key_expansion_circuit(size.size, sbox.variant);
    }
  }
  throw FormatError(Component::Circuit, "unknown circuit name '" + std::string(name.substr(0, 64)) + "'");
}

}  // namespace mpc::circuits
