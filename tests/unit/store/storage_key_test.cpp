// tests/unit/store/storage_key_test.cpp: the storage key file (64 hex digits and a
// newline, created 0600 exclusively, refused when group or others may access it).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "common/error.hpp"
#include "store/share_store.hpp"
#include "support/temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using mpc::SecretBytes;
using namespace mpc::store;

class StorageKeyFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    file = dir / "storage.key";
  }
  void write_raw(const std::string& content, mode_t mode = 0600) {
    fs::remove(file);
    std::ofstream(file, std::ios::binary) << content;
    ASSERT_EQ(::chmod(file.c_str(), mode), 0);
  }
  std::string read_raw() {
    std::ifstream in(file, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  void expect_read_error(const std::string& fragment) {
    try {
      (void)read_storage_key_file(file);
      ADD_FAILURE() << "no error; expected one containing '" << fragment << "'";
    } catch (const mpc::Error& e) {
      EXPECT_EQ(e.component(), mpc::Component::Store);
      const std::string message = e.what();
      EXPECT_NE(message.find(fragment), std::string::npos) << message;
      EXPECT_NE(message.find(file.string()), std::string::npos) << message;
    }
  }

  mpc::test_support::TempDir temp{"storage_key_test"};
  const fs::path dir = temp.path();
  fs::path file;
  const std::string valid_hex = std::string("00112233445566778899aabbccddeeff") + "ffeeddccbbaa99887766554433221100";
};

bool same(const SecretBytes& a, const SecretBytes& b) {
  return a.size() == b.size() && std::equal(a.data(), a.data() + a.size(), b.data());
}

TEST_F(StorageKeyFileTest, GeneratedKeysAreFreshAndSized) {
  const SecretBytes a = generate_storage_key();
  const SecretBytes b = generate_storage_key();
  EXPECT_EQ(a.size(), kStorageKeyBytes);
  EXPECT_FALSE(same(a, b));
}

TEST_F(StorageKeyFileTest, WriteThenReadRoundTrips) {
  const mode_t old_umask = ::umask(0);  // the file must still come out 0600
  const SecretBytes key = generate_storage_key();
  write_storage_key_file(file, key);
  ::umask(old_umask);
  struct stat info {};
  ASSERT_EQ(::stat(file.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0600u);
  const std::string content = read_raw();
  ASSERT_EQ(content.size(), 65u);
  EXPECT_EQ(content.back(), '\n');
  EXPECT_EQ(content.find_first_not_of("0123456789abcdef"), 64u);
  EXPECT_TRUE(same(read_storage_key_file(file), key));
}

TEST_F(StorageKeyFileTest, WriteNeverReplacesAFile) {
  write_raw("precious\n");
  EXPECT_THROW(write_storage_key_file(file, generate_storage_key()), mpc::Error);
  EXPECT_EQ(read_raw(), "precious\n");
  // Nor follows a symbolic link planted at the path.
  const fs::path link = dir / "link.key";
  fs::create_symlink(dir / "target", link);
  EXPECT_THROW(write_storage_key_file(link, generate_storage_key()), mpc::Error);
  EXPECT_FALSE(fs::exists(dir / "target"));
}

TEST_F(StorageKeyFileTest, WriteRejectsWrongKeySize) {
  EXPECT_THROW(write_storage_key_file(file, SecretBytes(31)), mpc::Error);
  EXPECT_THROW(write_storage_key_file(file, SecretBytes(33)), mpc::Error);
  EXPECT_FALSE(fs::exists(file));
}

TEST_F(StorageKeyFileTest, ReadsKnownValue) {
  write_raw(valid_hex + "\n");
  const SecretBytes key = read_storage_key_file(file);
  ASSERT_EQ(key.size(), 32u);
  EXPECT_EQ(key[0], 0x00);
  EXPECT_EQ(key[1], 0x11);
  EXPECT_EQ(key[15], 0xff);
  EXPECT_EQ(key[31], 0x00);
  // Upper case, and no final newline, are accepted.
  std::string upper = valid_hex;
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  write_raw(upper);
  EXPECT_TRUE(same(read_storage_key_file(file), key));
}

TEST_F(StorageKeyFileTest, ReadRefusesGroupOrOtherAccess) {
  for (mode_t mode : {0640, 0604, 0660, 0606, 0620, 0602, 0610, 0601, 0644, 0666}) {
    write_raw(valid_hex + "\n", mode);
    expect_read_error("chmod 600");
  }
  write_raw(valid_hex + "\n", 0400);
  EXPECT_NO_THROW((void)read_storage_key_file(file));
}

TEST_F(StorageKeyFileTest, ReadRefusesMalformedContent) {
  const char* kMalformed[] = {
      "",                                    // empty
      "\n",                                  // only a newline
  };
  for (const char* content : kMalformed) {
    write_raw(content);
    expect_read_error("64 hex digits");
  }
  write_raw(valid_hex.substr(0, 63) + "\n");  // 63 digits
  expect_read_error("64 hex digits");
  write_raw(valid_hex + "0\n");  // 65 digits
  expect_read_error("64 hex digits");
  write_raw(valid_hex + "\n\n");  // two newlines
  expect_read_error("64 hex digits");
  write_raw(valid_hex + "\r\n");  // CRLF
  expect_read_error("64 hex digits");
  write_raw(valid_hex + " \n");  // trailing space
  expect_read_error("64 hex digits");
  write_raw(" " + valid_hex.substr(1) + "\n");  // leading space
  expect_read_error("not a hex digit");
  write_raw(valid_hex.substr(0, 10) + "g" + valid_hex.substr(11) + "\n");
  expect_read_error("not a hex digit");
  write_raw(valid_hex + "\n" + valid_hex + "\n");  // a second key
  expect_read_error("64 hex digits");
}

TEST_F(StorageKeyFileTest, ReadRefusesMissingFileAndNonFiles) {
  expect_read_error("cannot open");
  fs::create_directory(file);
  expect_read_error("not a regular file");
}

}  // namespace
