#include "circuits/catalogue.hpp"

#include <string>

#include "circuits/aes.hpp"
#include "circuits/comparator.hpp"
#include "circuits/equality.hpp"
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

Circuit build_named_circuit(std::string_view name) {
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
