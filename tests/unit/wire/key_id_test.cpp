// Key ids (wire/key_id.hpp): names, sizes and the names refused.
#include <gtest/gtest.h>

#include <set>

#include "common/bytes.hpp"
#include "common/error.hpp"
#include "wire/client_messages.hpp"
#include "wire/codec.hpp"
#include "wire/key_id.hpp"
#include "wire/krb_record_mask.hpp"
#include "wire/peer_messages.hpp"
#include "wire_test_support.hpp"

namespace mpc::wire {
namespace {

using namespace test;

TEST(KeyId, NamesAndSizes) {
  EXPECT_STREQ(algorithm_name(KeyAlgorithm::Aes128), "aes128");
  EXPECT_STREQ(algorithm_name(KeyAlgorithm::Aes256), "aes256");
  EXPECT_EQ(parse_algorithm("aes128"), KeyAlgorithm::Aes128);
  EXPECT_EQ(parse_algorithm("aes256"), KeyAlgorithm::Aes256);
  EXPECT_FALSE(parse_algorithm("AES256").has_value());
  EXPECT_FALSE(parse_algorithm("").has_value());
  EXPECT_EQ(material_bytes(KeyAlgorithm::Aes128), 176u);
  EXPECT_EQ(material_bytes(KeyAlgorithm::Aes256), 240u);
  EXPECT_EQ(aes_rounds(KeyAlgorithm::Aes128), 10u);
  EXPECT_EQ(aes_rounds(KeyAlgorithm::Aes256), 14u);
  EXPECT_STREQ(algorithm_name(KeyAlgorithm::Aes256Gcm), "aes256-gcm");
  EXPECT_EQ(parse_algorithm("aes256-gcm"), KeyAlgorithm::Aes256Gcm);
  EXPECT_FALSE(parse_algorithm("aes256gcm").has_value());
  EXPECT_EQ(material_bytes(KeyAlgorithm::Aes256Gcm), 16624u);
  EXPECT_EQ(aes_rounds(KeyAlgorithm::Aes256Gcm), 14u);
  EXPECT_EQ(key_bytes(KeyAlgorithm::Aes128), 16u);
  EXPECT_EQ(key_bytes(KeyAlgorithm::Aes256), 32u);
  EXPECT_EQ(key_bytes(KeyAlgorithm::Aes256Gcm), 32u);
  EXPECT_EQ(kGcmHashPowers, 1024u);
  EXPECT_EQ(describe(KeyId{"k", 1, KeyAlgorithm::Aes256Gcm}), "k kvno 1 aes256-gcm");
  EXPECT_EQ(describe(KeyId{"krbtgt/EXAMPLE.COM", 2, KeyAlgorithm::Aes256}), "krbtgt/EXAMPLE.COM kvno 2 aes256");
}

TEST(KeyId, ValidatesNames) {
  EXPECT_NO_THROW(validate_key_name("krbtgt/EXAMPLE.COM"));
  EXPECT_NO_THROW(validate_key_name("!"));
  EXPECT_NO_THROW(validate_key_name("~"));
  EXPECT_NO_THROW(validate_key_name(std::string(255, 'a')));
  for (const std::string& bad : {std::string(), std::string(256, 'a'), std::string("a b"), std::string("a\tb"),
                                std::string("a\nb"), std::string("a\x01"), std::string("\x7f"), std::string("caf\xc3\xa9"),
                                std::string("a\0b", 3)}) {
    EXPECT_THROW(validate_key_name(bad), FormatError) << bad;
  }
}

// ------------------------------------------------------------------------ requests

}  // namespace
}  // namespace mpc::wire
