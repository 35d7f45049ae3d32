#include <gtest/gtest.h>

#include <iostream>

#include <algorithm>

#include "circuits/catalogue.hpp"
#include "circuits/stats.hpp"
#include "common/error.hpp"

namespace mpc::circuits {
namespace {

TEST(Catalogue, ListsTheAdvertisedNames) {
  const auto names = catalogue_names();
  for (const char* name : {"aes128-enc-and32", "aes128-enc-depth4", "aes128-dec-and32", "aes128-dec-depth4",
                           "aes256-enc-and32", "aes256-enc-depth4", "aes256-dec-and32", "aes256-dec-depth4",
                           "aes128-keyexp-and32", "aes128-keyexp-depth4", "aes256-keyexp-and32",
                           "aes256-keyexp-depth4", "aes256-enc-eq-and32", "aes256-enc-eq-depth4", "gt64",
                           "eq128"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
  EXPECT_EQ(names.size(), 16U);
}

TEST(Catalogue, BuildsEveryNameAndPrintsStats) {
  for (const std::string& name : catalogue_names()) {
    const CircuitStats stats = compute_stats(build_named_circuit(name));
    EXPECT_GT(stats.and_gates, 0U) << name;
    std::cout << "[ stats    ] " << name << ": gates " << stats.gates << ", and " << stats.and_gates << ", xor "
              << stats.xor_gates << ", inv " << stats.inv_gates << ", other " << stats.other_gates
              << ", and-depth " << stats.and_depth << ", wires " << stats.wires << "\n";
  }
  EXPECT_EQ(compute_stats(build_named_circuit("aes128-enc-and32")).and_gates, 5120U);
}

TEST(Catalogue, RejectsUnknownNames) {
  for (const char* name : {"", "aes128", "aes192-enc-and32", "AES128-ENC-AND32", "aes128-enc-and32 ", "gt32"}) {
    EXPECT_THROW(build_named_circuit(name), FormatError) << name;
  }
}

}  // namespace
}  // namespace mpc::circuits
