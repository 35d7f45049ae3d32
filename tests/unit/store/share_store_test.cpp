// tests/unit/store/share_store_test.cpp: the LMDB share store: round trips, ordering,
// persistence, and every way a record on disk can be wrong (wrong storage key, a
// flipped byte, a value moved under another key id, truncation).
#include <gtest/gtest.h>
#include <lmdb.h>
#include <sodium.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "common/error.hpp"
#include "store/share_store.hpp"
#include "support/temp_dir.hpp"
#include "wire/key_id.hpp"

namespace {

namespace fs = std::filesystem;
using mpc::SecretBytes;
using mpc::store::ShareStore;
using mpc::wire::KeyAlgorithm;
using mpc::wire::KeyId;

using mpc::test_support::TempDir;

SecretBytes random_bytes(std::size_t size) {
  EXPECT_GE(sodium_init(), 0);
  SecretBytes out(size);
  randombytes_buf(out.data(), out.size());
  return out;
}

KeyId key_id(std::string name, std::uint32_t version, KeyAlgorithm algorithm = KeyAlgorithm::Aes256) {
  return KeyId{std::move(name), version, algorithm};
}

bool same(const SecretBytes& a, const SecretBytes& b) {
  return a.size() == b.size() && std::equal(a.data(), a.data() + a.size(), b.data());
}

// Raw access to the store's LMDB file, as an attacker with the disk would have.
class RawLmdb {
 public:
  explicit RawLmdb(const fs::path& directory) {
    EXPECT_EQ(mdb_env_create(&env_), 0);
    EXPECT_EQ(mdb_env_set_maxdbs(env_, 4), 0);
    EXPECT_EQ(mdb_env_open(env_, directory.c_str(), 0, 0600), 0);
  }
  ~RawLmdb() { mdb_env_close(env_); }

  // All (key, value) pairs of the "shares" (or another) database, in order.
  std::vector<std::pair<std::vector<std::uint8_t>, std::vector<std::uint8_t>>> records(const char* database = "shares") {
    std::vector<std::pair<std::vector<std::uint8_t>, std::vector<std::uint8_t>>> out;
    MDB_txn* txn = nullptr;
    EXPECT_EQ(mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn), 0);
    MDB_dbi dbi;
    EXPECT_EQ(mdb_dbi_open(txn, database, 0, &dbi), 0);
    MDB_cursor* cursor = nullptr;
    EXPECT_EQ(mdb_cursor_open(txn, dbi, &cursor), 0);
    MDB_val k, v;
    for (int rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
      const auto* kp = static_cast<const std::uint8_t*>(k.mv_data);
      const auto* vp = static_cast<const std::uint8_t*>(v.mv_data);
      out.emplace_back(std::vector<std::uint8_t>(kp, kp + k.mv_size), std::vector<std::uint8_t>(vp, vp + v.mv_size));
    }
    mdb_cursor_close(cursor);
    mdb_txn_abort(txn);
    return out;
  }

  void write(const std::vector<std::uint8_t>& key, const std::vector<std::uint8_t>& value,
             const char* database = "shares") {
    MDB_txn* txn = nullptr;
    ASSERT_EQ(mdb_txn_begin(env_, nullptr, 0, &txn), 0);
    MDB_dbi dbi;
    ASSERT_EQ(mdb_dbi_open(txn, database, 0, &dbi), 0);
    MDB_val k{key.size(), const_cast<std::uint8_t*>(key.data())};
    MDB_val v{value.size(), const_cast<std::uint8_t*>(value.data())};
    ASSERT_EQ(mdb_put(txn, dbi, &k, &v, 0), 0);
    ASSERT_EQ(mdb_txn_commit(txn), 0);
  }

 private:
  MDB_env* env_ = nullptr;
};

template <typename F>
void expect_store_error(F&& f, const std::string& fragment) {
  try {
    f();
    ADD_FAILURE() << "no error thrown; expected one containing '" << fragment << "'";
  } catch (const mpc::Error& e) {
    EXPECT_EQ(e.component(), mpc::Component::Store) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

class ShareStoreTest : public ::testing::Test {
 protected:
  TempDir temp{"store_test"};
  fs::path directory = temp.path() / "store";
  SecretBytes storage_key = mpc::store::generate_storage_key();
};

TEST_F(ShareStoreTest, PutGetRoundTrip) {
  ShareStore store(directory, storage_key);
  EXPECT_EQ(store.count(), 0u);
  const KeyId id = key_id("krbtgt/EXAMPLE.COM", 2);
  const SecretBytes share = random_bytes(2 * mpc::wire::material_bytes(id.algorithm));
  const auto before = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  ASSERT_TRUE(store.put(id, share));
  EXPECT_EQ(store.count(), 1u);
  auto got = store.get(id);
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(same(*got, share));
  const auto listed = store.list();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].key, id);
  EXPECT_GE(listed[0].created_unix, before);
  EXPECT_LE(listed[0].created_unix, before + 60);
}

TEST_F(ShareStoreTest, AbsentKeyIsEmpty) {
  ShareStore store(directory, storage_key);
  EXPECT_FALSE(store.get(key_id("nobody", 1)).has_value());
  ASSERT_TRUE(store.put(key_id("somebody", 1), random_bytes(32)));
  EXPECT_FALSE(store.get(key_id("somebody", 2)).has_value());
  EXPECT_FALSE(store.get(key_id("somebody", 1, KeyAlgorithm::Aes128)).has_value());
  EXPECT_FALSE(store.get(key_id("somebod", 1)).has_value());
}

TEST_F(ShareStoreTest, NeverOverwrites) {
  ShareStore store(directory, storage_key);
  const KeyId id = key_id("host/kdc.example.com@EXAMPLE.COM", 7);
  const SecretBytes first = random_bytes(480);
  ASSERT_TRUE(store.put(id, first));
  EXPECT_FALSE(store.put(id, random_bytes(480)));
  EXPECT_EQ(store.count(), 1u);
  EXPECT_TRUE(same(*store.get(id), first));
}

TEST_F(ShareStoreTest, VersionsAndAlgorithmsKeptSideBySide) {
  ShareStore store(directory, storage_key);
  std::vector<std::pair<KeyId, SecretBytes>> records;
  for (std::uint32_t version : {1u, 2u, 3u})
    for (auto algorithm : {KeyAlgorithm::Aes128, KeyAlgorithm::Aes256})
      records.emplace_back(key_id("krbtgt/EXAMPLE.COM", version, algorithm), random_bytes(64 + version));
  for (const auto& [id, share] : records) ASSERT_TRUE(store.put(id, share));
  EXPECT_EQ(store.count(), records.size());
  for (const auto& [id, share] : records) {
    auto got = store.get(id);
    ASSERT_TRUE(got.has_value()) << mpc::wire::describe(id);
    EXPECT_TRUE(same(*got, share)) << mpc::wire::describe(id);
  }
}

TEST_F(ShareStoreTest, KerberosKeysAreStoredBesideTheOthers) {
  std::vector<std::pair<KeyId, SecretBytes>> records;
  for (auto algorithm : {KeyAlgorithm::Aes256, KeyAlgorithm::Aes128CtsHmacSha1, KeyAlgorithm::Aes256CtsHmacSha1})
    records.emplace_back(key_id("alice@EXAMPLE.COM", 3, algorithm),
                         random_bytes(2 * mpc::wire::material_bytes(algorithm)));
  {
    ShareStore store(directory, storage_key);
    for (const auto& [id, share] : records) ASSERT_TRUE(store.put(id, share));
    EXPECT_FALSE(store.put(records[1].first, records[2].second));
    EXPECT_THROW((void)store.put(key_id("x", 1, static_cast<KeyAlgorithm>(8)), random_bytes(16)), mpc::FormatError);
  }
  // Reopened: the record keys of the new algorithms decode.
  ShareStore store(directory, storage_key);
  for (const auto& [id, share] : records) {
    auto got = store.get(id);
    ASSERT_TRUE(got.has_value());
    EXPECT_TRUE(same(*got, share));
  }
  const auto listed = store.list("alice@");
  ASSERT_EQ(listed.size(), 3u);
  EXPECT_EQ(listed[0].key.algorithm, KeyAlgorithm::Aes256);
  EXPECT_EQ(listed[1].key.algorithm, KeyAlgorithm::Aes128CtsHmacSha1);
  EXPECT_EQ(listed[2].key.algorithm, KeyAlgorithm::Aes256CtsHmacSha1);
}

TEST_F(ShareStoreTest, ListIsSortedAndFiltersByPrefix) {
  ShareStore store(directory, storage_key);
  // Versions 2, 10, 256 and 0x01000000 check that versions sort numerically, not by bytes
  // of a little-endian or decimal encoding; "a" < "a/x" < "ab" checks the name terminator.
  std::vector<KeyId> ids = {
      key_id("b", 1),          key_id("ab", 1),         key_id("a", 256),       key_id("a", 10),
      key_id("a", 2),          key_id("a/x", 1),        key_id("a", 0x01000000), key_id("a", 2, KeyAlgorithm::Aes128),
      key_id("krbtgt/B.ORG", 1), key_id("krbtgt/A.ORG", 4), key_id("~", 0)};
  std::mt19937 shuffle_rng(12345);
  std::shuffle(ids.begin(), ids.end(), shuffle_rng);
  for (const auto& id : ids) ASSERT_TRUE(store.put(id, random_bytes(16)));

  auto expected = ids;
  std::sort(expected.begin(), expected.end(), [](const KeyId& x, const KeyId& y) {
    return std::tuple(x.name, x.version, static_cast<int>(x.algorithm)) <
           std::tuple(y.name, y.version, static_cast<int>(y.algorithm));
  });
  std::vector<KeyId> listed;
  for (const auto& entry : store.list()) listed.push_back(entry.key);
  EXPECT_EQ(listed, expected);

  const auto names_for = [&](const std::string& prefix) {
    std::vector<std::string> out;
    for (const auto& entry : store.list(prefix)) out.push_back(entry.key.name + "#" + std::to_string(entry.key.version));
    return out;
  };
  EXPECT_EQ(names_for("a"), (std::vector<std::string>{"a#2", "a#2", "a#10", "a#256", "a#16777216", "a/x#1", "ab#1"}));
  EXPECT_EQ(names_for("a/"), (std::vector<std::string>{"a/x#1"}));
  EXPECT_EQ(names_for("krbtgt/"), (std::vector<std::string>{"krbtgt/A.ORG#4", "krbtgt/B.ORG#1"}));
  EXPECT_EQ(names_for("~"), (std::vector<std::string>{"~#0"}));
  EXPECT_TRUE(names_for("c").empty());
  EXPECT_TRUE(names_for("abc").empty());
  EXPECT_TRUE(names_for(std::string("a\0", 2)).empty());
  EXPECT_TRUE(names_for(std::string(300, 'a')).empty());
  EXPECT_EQ(store.list("").size(), ids.size());
}

TEST_F(ShareStoreTest, RemoveDeletesOnlyThatRecord) {
  ShareStore store(directory, storage_key);
  const KeyId v1 = key_id("user@EXAMPLE.COM", 1);
  const KeyId v2 = key_id("user@EXAMPLE.COM", 2);
  ASSERT_TRUE(store.put(v1, random_bytes(32)));
  ASSERT_TRUE(store.put(v2, random_bytes(32)));
  EXPECT_TRUE(store.remove(v1));
  EXPECT_FALSE(store.remove(v1));
  EXPECT_FALSE(store.remove(key_id("nobody", 1)));
  EXPECT_FALSE(store.get(v1).has_value());
  EXPECT_TRUE(store.get(v2).has_value());
  EXPECT_EQ(store.count(), 1u);
  // A removed id may be stored again.
  const SecretBytes again = random_bytes(40);
  EXPECT_TRUE(store.put(v1, again));
  EXPECT_TRUE(same(*store.get(v1), again));
}

TEST_F(ShareStoreTest, AFinalRemovalKeepsTheIdFromEverBeingStoredAgain) {
  const KeyId ticket = key_id("kdc/0123", 4, KeyAlgorithm::Aes256Gcm);
  const KeyId other = key_id("kdc/0123", 5, KeyAlgorithm::Aes256Gcm);
  {
    ShareStore store(directory, storage_key);
    ASSERT_TRUE(store.put(ticket, random_bytes(64)));
    ASSERT_TRUE(store.put(other, random_bytes(64)));
    EXPECT_FALSE(store.deleted_for_good(ticket));
    EXPECT_TRUE(store.remove(ticket, ShareStore::Removal::Final));
    EXPECT_TRUE(store.deleted_for_good(ticket));
    EXPECT_FALSE(store.put(ticket, random_bytes(64)));
    EXPECT_FALSE(store.get(ticket).has_value());
    EXPECT_EQ(store.count(), 1u);
    ASSERT_EQ(store.list().size(), 1u);
    EXPECT_EQ(store.list()[0].key, other);
    EXPECT_FALSE(store.remove(ticket, ShareStore::Removal::Final));  // nothing left to remove
  }
  ShareStore store(directory, storage_key);
  EXPECT_TRUE(store.deleted_for_good(ticket));
  EXPECT_FALSE(store.put(ticket, random_bytes(64)));
  EXPECT_FALSE(store.deleted_for_good(other));
  EXPECT_TRUE(store.remove(other));  // reusable
  EXPECT_FALSE(store.deleted_for_good(other));
  EXPECT_TRUE(store.put(other, random_bytes(64)));
}

TEST_F(ShareStoreTest, ATombstoneMovedOrAlteredOnDiskIsRejected) {
  const KeyId ticket = key_id("kdc/0123", 4, KeyAlgorithm::Aes256Gcm);
  const KeyId other = key_id("kdc/0123", 5, KeyAlgorithm::Aes256Gcm);
  {
    ShareStore store(directory, storage_key);
    ASSERT_TRUE(store.put(ticket, random_bytes(64)));
    ASSERT_TRUE(store.put(other, random_bytes(64)));
    ASSERT_TRUE(store.remove(ticket, ShareStore::Removal::Final));
  }
  {
    RawLmdb raw(directory);
    auto tombstones = raw.records("deleted");
    ASSERT_EQ(tombstones.size(), 1u);
    auto other_key = tombstones[0].first;
    other_key[other_key.size() - 2] = 5;  // u32 version's last byte: kvno 5's LMDB key
    raw.write(other_key, tombstones[0].second, "deleted");
    auto flipped = tombstones[0].second;
    flipped.back() ^= 1;
    raw.write(tombstones[0].first, flipped, "deleted");
  }
  ShareStore store(directory, storage_key);
  expect_store_error([&] { (void)store.deleted_for_good(other); }, "another key id");
  expect_store_error([&] { (void)store.deleted_for_good(ticket); }, "failed authentication");
}

TEST_F(ShareStoreTest, PairChecksAreKeptPerDealerReplacedAndRemovedWithTheKey) {
  const KeyId id = key_id("krbtgt/EXAMPLE.COM", 2, KeyAlgorithm::Aes256CtsHmacSha1);
  const SecretBytes first = random_bytes(104), second = random_bytes(104), later = random_bytes(104);
  {
    ShareStore store(directory, storage_key);
    ASSERT_TRUE(store.put(id, random_bytes(64)));
    EXPECT_FALSE(store.pair_check(id, 1).has_value());
    store.put_pair_check(id, 1, first);
    store.put_pair_check(id, 2, second);
    ASSERT_TRUE(same(*store.pair_check(id, 1), first));
    store.put_pair_check(id, 1, later);  // dealt again: the later deal stands
    EXPECT_THROW(store.put_pair_check(id, 3, first), mpc::FormatError);
  }
  {
    // Sealed under its dealer's number: moved under another dealer's, it does not open.
    RawLmdb raw(directory);
    const auto checks = raw.records("pair_checks");
    ASSERT_EQ(checks.size(), 2u);
    auto moved = checks[0].first;
    moved.back() = 0;
    raw.write(moved, checks[0].second, "pair_checks");
  }
  ShareStore store(directory, storage_key);
  ASSERT_TRUE(same(*store.pair_check(id, 1), later));
  ASSERT_TRUE(same(*store.pair_check(id, 2), second));
  expect_store_error([&] { (void)store.pair_check(id, 0); }, "another key id");
  ASSERT_TRUE(store.remove(id));
  for (int dealer = 0; dealer < 3; ++dealer) EXPECT_FALSE(store.pair_check(id, dealer).has_value()) << dealer;
}

TEST_F(ShareStoreTest, PersistsAcrossReopen) {
  const KeyId id = key_id("krbtgt/EXAMPLE.COM", 3, KeyAlgorithm::Aes128);
  const SecretBytes share = random_bytes(352);
  std::uint64_t created = 0;
  {
    ShareStore store(directory, storage_key);
    ASSERT_TRUE(store.put(id, share));
    created = store.list()[0].created_unix;
  }
  ShareStore store(directory, storage_key);
  EXPECT_EQ(store.count(), 1u);
  auto got = store.get(id);
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(same(*got, share));
  EXPECT_EQ(store.list()[0].created_unix, created);
}

TEST_F(ShareStoreTest, DirectoryIsCreatedPrivate) {
  const fs::path nested = temp.path() / "a" / "b" / "store";
  ShareStore store(nested, storage_key);
  struct stat info {};
  ASSERT_EQ(::stat(nested.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0700u);
  EXPECT_TRUE(fs::exists(nested / "data.mdb"));
  ASSERT_EQ(::stat((nested / "data.mdb").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 077, 0u);
}

TEST_F(ShareStoreTest, OpenFailuresAreStoreErrors) {
  expect_store_error([&] { ShareStore store(directory, SecretBytes(31)); }, "storage key must be 32 bytes");
  expect_store_error([&] { ShareStore store(directory, SecretBytes(33)); }, "storage key must be 32 bytes");
  const fs::path file = temp.path() / "plain-file";
  std::ofstream(file) << "not a directory";
  expect_store_error([&] { ShareStore store(file, storage_key); }, "not a directory");
  // A map too small for even the first page: LMDB's own error is passed on.
  expect_store_error(
      [&] {
        ShareStore store(temp.path() / "tiny", storage_key, 65536);
        for (std::uint32_t v = 0; v < 100; ++v) (void)store.put(key_id("big", v), random_bytes(60000));
      },
      "MDB_MAP_FULL");
}

TEST_F(ShareStoreTest, RejectsInvalidInput) {
  ShareStore store(directory, storage_key);
  EXPECT_THROW((void)store.put(key_id("", 1), random_bytes(16)), mpc::FormatError);
  EXPECT_THROW((void)store.put(key_id("has space", 1), random_bytes(16)), mpc::FormatError);
  EXPECT_THROW((void)store.put(key_id(std::string("nul\0inside", 10), 1), random_bytes(16)), mpc::FormatError);
  EXPECT_THROW((void)store.put(key_id(std::string(256, 'x'), 1), random_bytes(16)), mpc::FormatError);
  EXPECT_THROW((void)store.put(key_id("x", 1, static_cast<KeyAlgorithm>(9)), random_bytes(16)), mpc::FormatError);
  EXPECT_THROW((void)store.put(key_id("x", 1), SecretBytes()), mpc::FormatError);
  EXPECT_THROW((void)store.put(key_id("x", 1), SecretBytes(mpc::store::kMaxShareBytes + 1)), mpc::FormatError);
  EXPECT_THROW((void)store.get(key_id("", 1)), mpc::FormatError);
  EXPECT_THROW((void)store.remove(key_id("bad name", 1)), mpc::FormatError);
  EXPECT_EQ(store.count(), 0u);
  // The largest allowed names and shares work.
  const KeyId longest = key_id(std::string(255, '~'), 0xffffffffu);
  const SecretBytes biggest = random_bytes(mpc::store::kMaxShareBytes);
  ASSERT_TRUE(store.put(longest, biggest));
  EXPECT_TRUE(same(*store.get(longest), biggest));
}

TEST_F(ShareStoreTest, WrongStorageKeyCannotOpenRecords) {
  const KeyId id = key_id("krbtgt/EXAMPLE.COM", 1);
  {
    ShareStore store(directory, storage_key);
    ASSERT_TRUE(store.put(id, random_bytes(480)));
  }
  SecretBytes other = storage_key;
  other[0] ^= 1;  // off by one bit
  ShareStore store(directory, other);
  EXPECT_EQ(store.count(), 1u);
  expect_store_error([&] { (void)store.get(id); }, "failed authentication");
  expect_store_error([&] { (void)store.list(); }, "failed authentication");
}

class TamperTest : public ShareStoreTest, public ::testing::WithParamInterface<std::ptrdiff_t> {};

// Offsets into the value: in the nonce, in the MAC, in the sealed record key, at the end.
INSTANTIATE_TEST_SUITE_P(Offsets, TamperTest, ::testing::Values(0, 23, 24, 39, 40, 43, -1));

TEST_P(TamperTest, FlippedByteOnDiskIsRejected) {
  const KeyId id = key_id("krbtgt/EXAMPLE.COM", 1);
  {
    ShareStore store(directory, storage_key);
    ASSERT_TRUE(store.put(id, random_bytes(480)));
  }
  {
    RawLmdb raw(directory);
    auto records = raw.records();
    ASSERT_EQ(records.size(), 1u);
    auto& value = records[0].second;
    const std::ptrdiff_t offset = GetParam() < 0 ? static_cast<std::ptrdiff_t>(value.size()) + GetParam() : GetParam();
    value[static_cast<std::size_t>(offset)] ^= 0x01;
    raw.write(records[0].first, value);
  }
  ShareStore store(directory, storage_key);
  expect_store_error([&] { (void)store.get(id); }, "failed authentication");
  expect_store_error([&] { (void)store.list(); }, "failed authentication");
}

TEST_F(ShareStoreTest, TruncatedOrPaddedValueIsRejected) {
  const KeyId id = key_id("k", 1);
  {
    ShareStore store(directory, storage_key);
    ASSERT_TRUE(store.put(id, random_bytes(32)));
  }
  std::vector<std::uint8_t> original;
  std::vector<std::uint8_t> record_key;
  {
    RawLmdb raw(directory);
    auto records = raw.records();
    ASSERT_EQ(records.size(), 1u);
    record_key = records[0].first;
    original = records[0].second;
  }
  for (std::size_t length : {std::size_t{0}, std::size_t{1}, std::size_t{24}, std::size_t{40}, original.size() - 1}) {
    {
      RawLmdb raw(directory);
      raw.write(record_key, std::vector<std::uint8_t>(original.begin(), original.begin() + static_cast<std::ptrdiff_t>(length)));
    }
    ShareStore store(directory, storage_key);
    EXPECT_THROW((void)store.get(id), mpc::Error) << "length " << length;
  }
  {
    RawLmdb raw(directory);
    auto padded = original;
    padded.push_back(0);
    raw.write(record_key, padded);
  }
  ShareStore store(directory, storage_key);
  EXPECT_THROW((void)store.get(id), mpc::Error);
}

TEST_F(ShareStoreTest, ValueCopiedUnderAnotherKeyIdIsRejected) {
  // The attack: make the server use user A's key material when asked for B (or the
  // krbtgt key when asked for an old kvno) by copying a value between records.
  const KeyId a = key_id("alice@EXAMPLE.COM", 1);
  const KeyId b = key_id("bob@EXAMPLE.COM", 1);
  const KeyId a2 = key_id("alice@EXAMPLE.COM", 2);
  const SecretBytes share_a = random_bytes(480);
  {
    ShareStore store(directory, storage_key);
    ASSERT_TRUE(store.put(a, share_a));
    ASSERT_TRUE(store.put(b, random_bytes(480)));
    ASSERT_TRUE(store.put(a2, random_bytes(480)));
  }
  {
    RawLmdb raw(directory);
    auto records = raw.records();  // sorted: alice 1, alice 2, bob 1
    ASSERT_EQ(records.size(), 3u);
    raw.write(records[2].first, records[0].second);  // alice's value under bob
    raw.write(records[1].first, records[0].second);  // kvno 1's value under kvno 2
  }
  ShareStore store(directory, storage_key);
  expect_store_error([&] { (void)store.get(b); }, "another key id");
  expect_store_error([&] { (void)store.get(a2); }, "another key id");
  expect_store_error([&] { (void)store.list(); }, "another key id");
  EXPECT_TRUE(same(*store.get(a), share_a));
}

TEST_F(ShareStoreTest, MalformedRecordKeyIsRejectedByList) {
  {
    ShareStore store(directory, storage_key);
    ASSERT_TRUE(store.put(key_id("k", 1), random_bytes(32)));
  }
  {
    RawLmdb raw(directory);
    auto records = raw.records();
    auto bad_key = records[0].first;
    bad_key.push_back(0);  // one byte too long after the terminator
    raw.write(bad_key, records[0].second);
  }
  ShareStore store(directory, storage_key);
  expect_store_error([&] { (void)store.list(); }, "malformed record key");
}

TEST_F(ShareStoreTest, DiskHoldsNoPlaintext) {
  std::vector<SecretBytes> shares;
  {
    ShareStore store(directory, storage_key);
    for (std::uint32_t v = 0; v < 8; ++v) {
      shares.push_back(random_bytes(480));
      ASSERT_TRUE(store.put(key_id("krbtgt/EXAMPLE.COM", v), shares.back()));
    }
    // A low-entropy share that a careless encoding would leave visible.
    SecretBytes pattern(480);
    for (std::size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<std::uint8_t>("SECRET-SHARE"[i % 12]);
    shares.push_back(pattern);
    ASSERT_TRUE(store.put(key_id("pattern", 1), pattern));
  }
  std::ifstream in(directory / "data.mdb", std::ios::binary);
  const std::vector<std::uint8_t> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(file.size(), 0u);
  const auto contains = [&](const std::uint8_t* needle, std::size_t size) {
    return std::search(file.begin(), file.end(), needle, needle + size) != file.end();
  };
  // No 8-byte window of any share, and not the storage key.
  for (const auto& share : shares)
    for (std::size_t offset = 0; offset + 8 <= share.size(); ++offset)
      ASSERT_FALSE(contains(share.data() + offset, 8)) << "share bytes at offset " << offset << " found on disk";
  EXPECT_FALSE(contains(storage_key.data(), 8));
  // The key ids themselves are not secret and are stored in the clear.
  const std::string name = "krbtgt/EXAMPLE.COM";
  EXPECT_TRUE(contains(reinterpret_cast<const std::uint8_t*>(name.data()), name.size()));
}

TEST_F(ShareStoreTest, ConcurrentReadersAndAWriter) {
  ShareStore store(directory, storage_key);
  std::vector<std::pair<KeyId, SecretBytes>> records;
  for (std::uint32_t v = 0; v < 40; ++v) {
    records.emplace_back(key_id("principal" + std::to_string(v % 5), v), random_bytes(64));
    ASSERT_TRUE(store.put(records.back().first, records.back().second));
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 100; ++round) {
        const auto& [id, share] = records[static_cast<std::size_t>(round * 7 + t) % records.size()];
        auto got = store.get(id);
        if (!got || !same(*got, share)) ++failures;
        if (round % 10 == 0 && store.list("principal").size() < records.size()) ++failures;
      }
    });
  }
  threads.emplace_back([&] {
    for (std::uint32_t v = 0; v < 50; ++v)
      if (!store.put(key_id("writer", v), random_bytes(64))) ++failures;
  });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(store.count(), records.size() + 50);
}

}  // namespace
