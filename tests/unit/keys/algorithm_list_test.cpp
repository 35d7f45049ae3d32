// The algorithm lists that messages offer (keys/algorithm_list.hpp), in the table's order.
#include <gtest/gtest.h>

#include "keys/algorithm_list.hpp"

namespace {

using mpc::keys::algorithm_list;
using mpc::keys::AlgorithmSet;

TEST(AlgorithmList, EveryAlgorithm) {
  EXPECT_EQ(algorithm_list(AlgorithmSet::All),
            "aes128, aes256, aes256-gcm, aes128-cts-hmac-sha1-96, aes256-cts-hmac-sha1-96, "
            "aes128-cts-hmac-sha256-128 or aes256-cts-hmac-sha384-192");
}

TEST(AlgorithmList, KerberosAlgorithmsWithAnotherLastWord) {
  EXPECT_EQ(algorithm_list(AlgorithmSet::Kerberos, "and"),
            "aes128-cts-hmac-sha1-96, aes256-cts-hmac-sha1-96, aes128-cts-hmac-sha256-128 and "
            "aes256-cts-hmac-sha384-192");
}

}  // namespace
