// CurveZMQ key pairs, Z85 text and key files (modes, contents, refusals).
#include <gtest/gtest.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <random>

#include "common/error.hpp"
#include "support/temp_dir.hpp"
#include "transport/curve_keys.hpp"

namespace mpc::transport {
namespace {

namespace fs = std::filesystem;

// The CurveZMQ test key pair published in the libzmq documentation (zmq_curve).
constexpr const char* kDocPublic = "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID";
constexpr const char* kDocSecret = "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs";

using mpc::test_support::TempDir;

mode_t mode_of(const fs::path& path) {
  struct stat info {};
  EXPECT_EQ(::stat(path.c_str(), &info), 0);
  return info.st_mode & 07777;
}

void write_text(const fs::path& path, const std::string& text, mode_t mode) {
  std::ofstream(path) << text;
  ASSERT_EQ(::chmod(path.c_str(), mode), 0);
}

TEST(Z85, RoundTripsRandomKeys) {
  std::mt19937 random(7);
  for (int round = 0; round < 200; ++round) {
    PublicKey key{};
    for (auto& byte : key) byte = static_cast<std::uint8_t>(random());
    const std::string text = z85_encode(key);
    EXPECT_EQ(text.size(), 40u);
    EXPECT_EQ(z85_decode_public(text), key);
  }
}

TEST(Z85, DocumentedKeyPairMatches) {
  const PublicKey public_key = z85_decode_public(kDocPublic);
  const PublicKey secret_key = z85_decode_public(kDocSecret);
  PublicKey derived{};
  ASSERT_EQ(crypto_scalarmult_base(derived.data(), secret_key.data()), 0);
  EXPECT_EQ(derived, public_key);
  EXPECT_EQ(z85_encode(public_key), kDocPublic);
}

TEST(Z85, RejectsMalformedText) {
  const std::string good = kDocPublic;
  for (const std::string& bad : {std::string(), good.substr(1), good + "0", good.substr(0, 39) + " ",
                                good.substr(0, 39) + "\"", good.substr(0, 39) + "~", good.substr(0, 39) + ",",
                                std::string("#####") + good.substr(5), good.substr(0, 39) + std::string(1, '\0')}) {
    EXPECT_THROW(z85_decode_public(bad), FormatError) << bad;
  }
  try {
    z85_decode_public("short");
  } catch (const FormatError& error) {
    EXPECT_EQ(error.component(), Component::Transport);
  }
}

TEST(CurveKeys, GeneratedPairsAreConsistentAndDistinct) {
  const CurveKeyPair a = generate_curve_key_pair();
  const CurveKeyPair b = generate_curve_key_pair();
  ASSERT_EQ(a.secret_key.size(), 32u);
  PublicKey derived{};
  ASSERT_EQ(crypto_scalarmult_base(derived.data(), a.secret_key.data()), 0);
  EXPECT_EQ(derived, a.public_key);
  EXPECT_NE(a.public_key, b.public_key);
}

TEST(KeyFiles, SecretFileRoundTripWithMode0600) {
  TempDir dir{"curve-keys"};
  const fs::path path = dir.path() / "server.key";
  const CurveKeyPair pair = generate_curve_key_pair();
  const mode_t old_umask = ::umask(0);  // even with a permissive umask the file is 0600
  write_secret_key_file(path, pair);
  ::umask(old_umask);
  EXPECT_EQ(mode_of(path), 0600u);
  const CurveKeyPair read = read_secret_key_file(path);
  EXPECT_EQ(read.public_key, pair.public_key);
  EXPECT_TRUE(equal_constant_time(read.secret_key.span(), pair.secret_key.span()));
  std::ifstream in(path);
  std::string line1, line2, rest;
  std::getline(in, line1);
  std::getline(in, line2);
  std::getline(in, rest);
  EXPECT_EQ(line1, "secret-key " + z85_encode(std::span<const std::uint8_t, 32>(pair.secret_key.data(), 32)));
  EXPECT_EQ(line2, "public-key " + z85_encode(pair.public_key));
  EXPECT_TRUE(rest.empty() && in.eof());
  // No temporary file is left behind.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

TEST(KeyFiles, OverwritingAReadableFileLeavesItPrivate) {
  TempDir dir{"curve-keys"};
  const fs::path path = dir.path() / "server.key";
  write_text(path, "old\n", 0644);
  write_secret_key_file(path, generate_curve_key_pair());
  EXPECT_EQ(mode_of(path), 0600u);
}

TEST(KeyFiles, RefusesSecretFilesOthersCanAccess) {
  TempDir dir{"curve-keys"};
  const fs::path path = dir.path() / "server.key";
  write_secret_key_file(path, generate_curve_key_pair());
  for (mode_t mode : {0640, 0604, 0660, 0602, 0620, 0610, 0601}) {
    ASSERT_EQ(::chmod(path.c_str(), mode), 0);
    try {
      read_secret_key_file(path);
      ADD_FAILURE() << "accepted mode " << std::oct << mode;
    } catch (const Error& error) {
      EXPECT_EQ(error.component(), Component::Transport);
      EXPECT_NE(std::string(error.what()).find("chmod 600"), std::string::npos) << error.what();
    }
  }
  for (mode_t mode : {0400, 0600, 0700}) {
    ASSERT_EQ(::chmod(path.c_str(), mode), 0);
    EXPECT_NO_THROW(read_secret_key_file(path));
  }
}

TEST(KeyFiles, RefusesMalformedSecretFiles) {
  TempDir dir{"curve-keys"};
  const fs::path path = dir.path() / "bad.key";
  const CurveKeyPair pair = generate_curve_key_pair();
  const CurveKeyPair other = generate_curve_key_pair();
  const std::string secret = z85_encode(std::span<const std::uint8_t, 32>(pair.secret_key.data(), 32));
  const std::string pub = z85_encode(pair.public_key);
  for (const std::string& text :
       {std::string(), "secret-key " + secret + "\n", "public-key " + pub + "\n",
        "secret-key " + secret + "\npublic-key " + z85_encode(other.public_key) + "\n",
        "secret-key " + secret + "\npublic-key " + pub + "\nsecret-key " + secret + "\n",
        "secret-key " + secret.substr(1) + "\npublic-key " + pub + "\n",
        "secret-key " + secret + "\npublic-key " + pub + "\nextra stuff\n", "secret-key\npublic-key " + pub + "\n",
        std::string(5000, 'a')}) {
    write_text(path, text, 0600);
    EXPECT_THROW(read_secret_key_file(path), Error) << text;
  }
  // Comments, blank lines and CRLF are tolerated.
  write_text(path, "# server key\r\n\r\nsecret-key " + secret + "\r\npublic-key " + pub + "\r\n", 0600);
  EXPECT_EQ(read_secret_key_file(path).public_key, pair.public_key);
  EXPECT_THROW(read_secret_key_file(dir.path() / "missing.key"), Error);
  EXPECT_THROW(read_secret_key_file(dir.path()), Error);  // a directory
}

TEST(KeyFiles, PublicFileRoundTripAndReferences) {
  TempDir dir{"curve-keys"};
  const fs::path path = dir.path() / "client.pub";
  const CurveKeyPair pair = generate_curve_key_pair();
  write_public_key_file(path, pair.public_key);
  EXPECT_EQ(read_public_key_file(path), pair.public_key);
  EXPECT_EQ(parse_public_key_reference(path.string()), pair.public_key);
  EXPECT_EQ(parse_public_key_reference(z85_encode(pair.public_key)), pair.public_key);
  EXPECT_THROW(parse_public_key_reference(""), Error);
  EXPECT_THROW(parse_public_key_reference((dir.path() / "nope.pub").string()), Error);
  // A secret key file is not a public key file.
  const fs::path secret = dir.path() / "client.key";
  write_secret_key_file(secret, pair);
  EXPECT_THROW(read_public_key_file(secret), FormatError);
  write_text(path, "public-key short\n", 0644);
  EXPECT_THROW(read_public_key_file(path), FormatError);
}

}  // namespace
}  // namespace mpc::transport
