// The Kerberos circuits built for fewest ANDs (garbled circuits: And32 S-box, ripple-carry
// adders) compute what the ones built for fewest AND layers compute (which the RFC 3962 and
// RFC 8009 vector tests check), on random inputs of every family, with fewer AND gates.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "circuits/evaluate.hpp"
#include "circuits/kerberos.hpp"
#include "circuits/kerberos_sha2.hpp"
#include "circuits/stats.hpp"

namespace mpc::circuits {
namespace {

struct Family {
  std::string name;
  std::function<Circuit(std::size_t, CircuitCost)> build;
  // For a decryption: the encryption of the same enctype (plaintext bytes -> its input).
  std::function<Circuit(std::size_t)> encrypt = nullptr;
};

std::vector<Family> families() {
  return {
      {"sha1 encrypt aes128", [](std::size_t n, CircuitCost c) { return build_krb_encrypt_circuit(AesKeySize::Aes128, n, c); }},
      {"sha1 decrypt aes256", [](std::size_t n, CircuitCost c) { return build_krb_decrypt_circuit(AesKeySize::Aes256, n, c); },
       [](std::size_t n) { return build_krb_encrypt_circuit(AesKeySize::Aes256, n); }},
      {"sha1 checksum", [](std::size_t n, CircuitCost c) { return build_krb_checksum_circuit(n, c); }},
      {"sha256 encrypt aes128",
       [](std::size_t n, CircuitCost c) { return build_krb_sha2_encrypt_circuit(AesKeySize::Aes128, n, c); }},
      {"sha384 decrypt aes256",
       [](std::size_t n, CircuitCost c) { return build_krb_sha2_decrypt_circuit(AesKeySize::Aes256, n, c); },
       [](std::size_t n) { return build_krb_sha2_encrypt_circuit(AesKeySize::Aes256, n); }},
      {"sha384 checksum",
       [](std::size_t n, CircuitCost c) { return build_krb_sha2_checksum_circuit(KrbSha2Hash::Sha384, n, c); }},
      {"sha256 prf", [](std::size_t n, CircuitCost c) { return build_krb_sha2_prf_circuit(KrbSha2Hash::Sha256, n, c); }},
  };
}

TEST(KerberosCircuitCost, FewestAndsComputesTheSameWithFewerAnds) {
  std::mt19937_64 rng(3962);
  for (const Family& family : families()) {
    for (std::size_t length : {17u, 100u}) {
      SCOPED_TRACE(family.name + ", " + std::to_string(length) + " bytes");
      const Circuit layers = family.build(length, CircuitCost::FewestLayers);
      const Circuit ands = family.build(length, CircuitCost::FewestAnds);
      ASSERT_EQ(layers.total_inputs(), ands.total_inputs());
      ASSERT_EQ(layers.total_outputs(), ands.total_outputs());
      const CircuitStats layer_stats = compute_stats(layers);
      const CircuitStats and_stats = compute_stats(ands);
      EXPECT_LT(and_stats.and_gates, layer_stats.and_gates);
      for (int trial = 0; trial < 2; ++trial) {
        std::vector<std::uint8_t> input(layers.total_inputs());
        for (auto& bit : input) bit = rng() & 1;
        EXPECT_EQ(evaluate(ands, input), evaluate(layers, input)) << "trial " << trial;
      }
      if (!family.encrypt) continue;
      // A decryption's plaintext is released only under a right MAC: feed it what the
      // matching encryption wrote, so the verdict is 1 and the whole plaintext is compared.
      const Circuit encrypt = family.encrypt(length);
      std::vector<std::uint8_t> input(encrypt.total_inputs());
      for (auto& bit : input) bit = rng() & 1;
      const std::vector<std::uint8_t> sealed = evaluate(encrypt, input);
      const std::size_t secret_bits = encrypt.total_inputs() - 8 * length;
      std::vector<std::uint8_t> decrypt_input(input.begin(), input.begin() + static_cast<std::ptrdiff_t>(secret_bits));
      decrypt_input.insert(decrypt_input.end(), sealed.begin(), sealed.end());
      ASSERT_EQ(decrypt_input.size(), ands.total_inputs());
      const std::vector<std::uint8_t> opened = evaluate(ands, decrypt_input);
      EXPECT_EQ(opened.back(), 1) << "the MAC the encryption wrote is refused";
      EXPECT_EQ(opened, evaluate(layers, decrypt_input));
      EXPECT_TRUE(std::equal(opened.begin(), opened.end() - 1, input.begin() + static_cast<std::ptrdiff_t>(secret_bits)));
    }
  }
}

}  // namespace
}  // namespace mpc::circuits
