// mpc-engine/store/share_store.cpp: the LMDB share store, records sealed with secretbox.
//
// Layout of keys and values: see share_store.hpp. Every LMDB call is checked and
// turned into Error(Store) with mdb_strerror; every record is authenticated and its
// embedded record key compared with the LMDB key before anything is returned.
#include "store/share_store.hpp"

#include <lmdb.h>
#include <sodium.h>
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string_view>
#include <system_error>

#include "common/bytes.hpp"
#include "common/error.hpp"
#include "keys/key_algorithms.h"

namespace mpc::store {

namespace {

namespace fs = std::filesystem;

constexpr const char* kDatabaseName = "shares";
constexpr const char* kTombstoneDatabaseName = "deleted";
constexpr const char* kPairCheckDatabaseName = "pair_checks";
constexpr int kParties = 3;
constexpr std::uint8_t kRecordFormat = 1;
constexpr std::size_t kNonceBytes = crypto_secretbox_NONCEBYTES;
constexpr std::size_t kMacBytes = crypto_secretbox_MACBYTES;
// name (<= 255) | 0x00 | u32 version | u8 algorithm
constexpr std::size_t kMaxRecordKeyBytes = wire::kMaxKeyNameBytes + 1 + 4 + 1;
// u8 format | u16 key length | key | u64 created | share
constexpr std::size_t kPlaintextOverhead = 1 + 2 + 8;

static_assert(crypto_secretbox_KEYBYTES == kStorageKeyBytes);

[[noreturn]] void throw_lmdb(const std::string& what, int rc) {
  throw Error(Component::Store, what + ": " + mdb_strerror(rc));
}

void check(int rc, const std::string& what) {
  if (rc != MDB_SUCCESS) throw_lmdb(what, rc);
}

void ensure_sodium() {
  if (sodium_init() < 0) throw Error(Component::Store, "libsodium initialisation failed");
}

// An algorithm the key algorithm table has a row for.
bool known_algorithm(wire::KeyAlgorithm algorithm) {
  return mpc_key_algorithm_by_id(static_cast<int>(algorithm)) != nullptr;
}

// Validates the key id (throws FormatError) and encodes it as the LMDB key.
std::vector<std::uint8_t> encode_record_key(const wire::KeyId& key) {
  wire::validate_key_name(key.name);
  if (!known_algorithm(key.algorithm))
    throw FormatError(Component::Store,
                      "unknown key algorithm " + std::to_string(static_cast<unsigned>(key.algorithm)));
  std::vector<std::uint8_t> out;
  out.reserve(key.name.size() + 6);
  out.insert(out.end(), key.name.begin(), key.name.end());
  out.push_back(0x00);
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(key.version >> shift));
  out.push_back(static_cast<std::uint8_t>(key.algorithm));
  return out;
}

// Decodes an LMDB key read back from the database; anything unexpected is an Error(Store).
wire::KeyId decode_record_key(std::span<const std::uint8_t> bytes) {
  const auto malformed = [&](const std::string& why) {
    return Error(Component::Store, "malformed record key " + to_hex(bytes) + ": " + why);
  };
  std::size_t terminator = 0;
  while (terminator < bytes.size() && bytes[terminator] != 0x00) ++terminator;
  if (terminator == bytes.size()) throw malformed("no name terminator");
  if (bytes.size() - terminator != 1 + 4 + 1) throw malformed("wrong length");
  wire::KeyId key;
  key.name.assign(reinterpret_cast<const char*>(bytes.data()), terminator);
  try {
    wire::validate_key_name(key.name);
  } catch (const Error& e) {
    throw malformed(e.what());
  }
  std::uint32_t version = 0;
  for (std::size_t i = 0; i < 4; ++i) version = (version << 8) | bytes[terminator + 1 + i];
  key.version = version;
  key.algorithm = static_cast<wire::KeyAlgorithm>(bytes[terminator + 5]);
  if (!known_algorithm(key.algorithm)) throw malformed("unknown algorithm");
  return key;
}

MDB_val as_val(std::span<const std::uint8_t> bytes) {
  MDB_val value;
  value.mv_size = bytes.size();
  value.mv_data = const_cast<std::uint8_t*>(bytes.data());
  return value;
}

std::span<const std::uint8_t> as_span(const MDB_val& value) {
  return {static_cast<const std::uint8_t*>(value.mv_data), value.mv_size};
}

// The LMDB key of the pair checks `dealer` dealt: the share's record key, then the dealer.
std::vector<std::uint8_t> pair_check_key(std::vector<std::uint8_t> record_key, int dealer) {
  record_key.push_back(static_cast<std::uint8_t>(dealer));
  return record_key;
}

std::uint64_t now_unix() {
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  return seconds < 0 ? 0 : static_cast<std::uint64_t>(seconds);
}

// A transaction aborted on every exit path unless committed.
class Transaction {
 public:
  Transaction(MDB_env* env, unsigned flags, const char* purpose) {
    check(mdb_txn_begin(env, nullptr, flags, &txn_), std::string("begin ") + purpose + " transaction");
  }
  ~Transaction() {
    if (txn_ != nullptr) mdb_txn_abort(txn_);
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  MDB_txn* get() const noexcept { return txn_; }
  void commit(const char* purpose) {
    MDB_txn* txn = txn_;
    txn_ = nullptr;  // mdb_txn_commit frees the handle even when it fails
    check(mdb_txn_commit(txn), std::string("commit ") + purpose);
  }

 private:
  MDB_txn* txn_ = nullptr;
};

class Cursor {
 public:
  Cursor(MDB_txn* txn, MDB_dbi dbi) { check(mdb_cursor_open(txn, dbi, &cursor_), "open cursor"); }
  ~Cursor() { mdb_cursor_close(cursor_); }
  Cursor(const Cursor&) = delete;
  Cursor& operator=(const Cursor&) = delete;
  // False at the end; throws on any other failure.
  bool get(MDB_val& key, MDB_val& value, MDB_cursor_op op) {
    const int rc = mdb_cursor_get(cursor_, &key, &value, op);
    if (rc == MDB_NOTFOUND) return false;
    check(rc, "read cursor");
    return true;
  }

 private:
  MDB_cursor* cursor_ = nullptr;
};

void create_private_directory(const fs::path& directory) {
  std::error_code ec;
  const auto status = fs::status(directory, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    throw Error(Component::Store, "cannot inspect " + directory.string() + ": " + ec.message());
  if (!fs::exists(status)) {
    const fs::path parent = directory.parent_path();
    if (!parent.empty()) {
      fs::create_directories(parent, ec);
      if (ec) throw Error(Component::Store, "cannot create " + parent.string() + ": " + ec.message());
    }
    if (::mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST)
      throw Error(Component::Store, "cannot create " + directory.string() + ": " + std::strerror(errno));
    // The umask may only have removed bits; make the mode exactly 0700.
    if (::chmod(directory.c_str(), 0700) != 0)
      throw Error(Component::Store, "cannot set mode 0700 on " + directory.string() + ": " + std::strerror(errno));
  }
  if (!fs::is_directory(directory, ec))
    throw Error(Component::Store, directory.string() + " is not a directory");
}

}  // namespace

struct ShareStore::Impl {
  MDB_env* env = nullptr;
  MDB_dbi dbi = 0;
  MDB_dbi tombstones = 0;
  MDB_dbi pair_checks = 0;
  SecretBytes storage_key;
  fs::path directory;

  Impl() = default;
  ~Impl() {
    if (env != nullptr) mdb_env_close(env);
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  std::vector<std::uint8_t> seal(std::span<const std::uint8_t> record_key, std::uint64_t created,
                                 const SecretBytes& share) const {
    SecretBytes plaintext(kPlaintextOverhead + record_key.size() + share.size());
    std::size_t at = 0;
    plaintext[at++] = kRecordFormat;
    plaintext[at++] = static_cast<std::uint8_t>(record_key.size());
    plaintext[at++] = static_cast<std::uint8_t>(record_key.size() >> 8);
    std::memcpy(plaintext.data() + at, record_key.data(), record_key.size());
    at += record_key.size();
    for (int i = 0; i < 8; ++i) plaintext[at++] = static_cast<std::uint8_t>(created >> (8 * i));
    std::memcpy(plaintext.data() + at, share.data(), share.size());

    std::vector<std::uint8_t> value(kNonceBytes + kMacBytes + plaintext.size());
    randombytes_buf(value.data(), kNonceBytes);
    if (crypto_secretbox_easy(value.data() + kNonceBytes, plaintext.data(), plaintext.size(), value.data(),
                              storage_key.data()) != 0)
      throw Error(Component::Store, "secretbox failed");
    return value;
  }

  // Opens a record value read under `record_key`. The share is returned only if the
  // box authenticates and the key sealed inside it is `record_key`.
  SecretBytes open(std::span<const std::uint8_t> record_key, std::span<const std::uint8_t> value,
                   const std::string& label, std::uint64_t& created) const {
    const std::size_t minimum = kNonceBytes + kMacBytes + kPlaintextOverhead + record_key.size() + 1;
    const std::size_t maximum = kNonceBytes + kMacBytes + kPlaintextOverhead + record_key.size() + kMaxShareBytes;
    if (value.size() < minimum || value.size() > maximum)
      throw Error(Component::Store, "record " + label + " has an invalid length of " + std::to_string(value.size()) +
                                        " bytes");
    SecretBytes plaintext(value.size() - kNonceBytes - kMacBytes);
    if (crypto_secretbox_open_easy(plaintext.data(), value.data() + kNonceBytes, value.size() - kNonceBytes,
                                   value.data(), storage_key.data()) != 0)
      throw Error(Component::Store,
                  "record " + label + " failed authentication (wrong storage key or modified data)");
    std::size_t at = 0;
    if (plaintext[at++] != kRecordFormat)
      throw Error(Component::Store, "record " + label + " has unknown format " + std::to_string(plaintext[0]));
    const std::size_t sealed_key_size = static_cast<std::size_t>(plaintext[at]) | (static_cast<std::size_t>(plaintext[at + 1]) << 8);
    at += 2;
    if (sealed_key_size != record_key.size() ||
        !equal_constant_time(plaintext.span().subspan(at, sealed_key_size), record_key))
      throw Error(Component::Store, "record " + label + " belongs to another key id (value moved or copied)");
    at += sealed_key_size;
    created = 0;
    for (int i = 0; i < 8; ++i) created |= static_cast<std::uint64_t>(plaintext[at++]) << (8 * i);
    return SecretBytes(plaintext.span().subspan(at));
  }
};

ShareStore::ShareStore(const std::filesystem::path& directory, const SecretBytes& storage_key,
                       std::size_t map_size_bytes)
    : impl_(std::make_unique<Impl>()) {
  ensure_sodium();
  if (storage_key.size() != kStorageKeyBytes)
    throw Error(Component::Store, "storage key must be " + std::to_string(kStorageKeyBytes) + " bytes, got " +
                                      std::to_string(storage_key.size()));
  if (map_size_bytes == 0) throw Error(Component::Store, "LMDB map size must be positive");
  impl_->storage_key = storage_key;
  impl_->directory = directory;
  create_private_directory(directory);

  const std::string where = " (" + directory.string() + ")";
  check(mdb_env_create(&impl_->env), "create LMDB environment" + where);
  check(mdb_env_set_mapsize(impl_->env, map_size_bytes), "set LMDB map size" + where);
  check(mdb_env_set_maxdbs(impl_->env, 4), "set LMDB database count" + where);
  check(mdb_env_open(impl_->env, directory.c_str(), MDB_NOTLS, 0600), "open LMDB environment" + where);
  int dead_readers = 0;
  check(mdb_reader_check(impl_->env, &dead_readers), "clear stale LMDB readers" + where);

  Transaction txn(impl_->env, 0, "open-database");
  check(mdb_dbi_open(txn.get(), kDatabaseName, MDB_CREATE, &impl_->dbi), "open LMDB database" + where);
  check(mdb_dbi_open(txn.get(), kTombstoneDatabaseName, MDB_CREATE, &impl_->tombstones),
        "open LMDB tombstone database" + where);
  check(mdb_dbi_open(txn.get(), kPairCheckDatabaseName, MDB_CREATE, &impl_->pair_checks),
        "open LMDB pair check database" + where);
  txn.commit("open-database");
}

ShareStore::~ShareStore() = default;

bool ShareStore::put(const wire::KeyId& key, const SecretBytes& share) {
  const auto record_key = encode_record_key(key);
  if (share.empty()) throw FormatError(Component::Store, "empty share for " + wire::describe(key));
  if (share.size() > kMaxShareBytes)
    throw FormatError(Component::Store, "share for " + wire::describe(key) + " is " + std::to_string(share.size()) +
                                            " bytes, more than " + std::to_string(kMaxShareBytes));
  auto value = impl_->seal(record_key, now_unix(), share);

  Transaction txn(impl_->env, 0, "put");
  MDB_val k = as_val(record_key);
  MDB_val tombstone{};
  const int buried = mdb_get(txn.get(), impl_->tombstones, &k, &tombstone);
  if (buried == MDB_SUCCESS) return false;
  if (buried != MDB_NOTFOUND) check(buried, "look for a tombstone of " + wire::describe(key));
  MDB_val v = as_val(value);
  const int rc = mdb_put(txn.get(), impl_->dbi, &k, &v, MDB_NOOVERWRITE);
  if (rc == MDB_KEYEXIST) return false;  // txn aborted by its destructor
  check(rc, "put " + wire::describe(key));
  txn.commit("put");
  return true;
}

std::optional<SecretBytes> ShareStore::get(const wire::KeyId& key) const {
  const auto record_key = encode_record_key(key);
  Transaction txn(impl_->env, MDB_RDONLY, "get");
  MDB_val k = as_val(record_key);
  MDB_val v{};
  const int rc = mdb_get(txn.get(), impl_->dbi, &k, &v);
  if (rc == MDB_NOTFOUND) return std::nullopt;
  check(rc, "get " + wire::describe(key));
  std::uint64_t created = 0;
  // Opened while the transaction still maps the value.
  return impl_->open(record_key, as_span(v), wire::describe(key), created);
}

bool ShareStore::remove(const wire::KeyId& key, Removal how) {
  const auto record_key = encode_record_key(key);
  Transaction txn(impl_->env, 0, "remove");
  MDB_val k = as_val(record_key);
  const int rc = mdb_del(txn.get(), impl_->dbi, &k, nullptr);
  if (rc == MDB_NOTFOUND) return false;
  check(rc, "remove " + wire::describe(key));
  for (int dealer = 0; dealer < kParties; ++dealer) {
    const auto checks_key = pair_check_key(record_key, dealer);
    MDB_val ck = as_val(checks_key);
    const int removed = mdb_del(txn.get(), impl_->pair_checks, &ck, nullptr);
    if (removed != MDB_NOTFOUND) check(removed, "remove the pair checks of " + wire::describe(key));
  }
  if (how == Removal::Final) {
    SecretBytes marker(1);
    marker[0] = 1;
    auto value = impl_->seal(record_key, now_unix(), marker);
    MDB_val v = as_val(value);
    check(mdb_put(txn.get(), impl_->tombstones, &k, &v, 0), "keep a tombstone of " + wire::describe(key));
  }
  txn.commit("remove");
  return true;
}

void ShareStore::put_pair_check(const wire::KeyId& key, int dealer, const SecretBytes& check_bytes) {
  if (dealer < 0 || dealer >= kParties)
    throw FormatError(Component::Store, "pair checks dealt by server " + std::to_string(dealer + 1));
  if (check_bytes.empty() || check_bytes.size() > kMaxShareBytes)
    throw FormatError(Component::Store, "pair checks of " + std::to_string(check_bytes.size()) + " bytes");
  const auto checks_key = pair_check_key(encode_record_key(key), dealer);
  auto value = impl_->seal(checks_key, now_unix(), check_bytes);
  Transaction txn(impl_->env, 0, "put pair checks");
  MDB_val k = as_val(checks_key);
  MDB_val v = as_val(value);
  check(mdb_put(txn.get(), impl_->pair_checks, &k, &v, 0), "put the pair checks of " + wire::describe(key));
  txn.commit("put pair checks");
}

std::optional<SecretBytes> ShareStore::pair_check(const wire::KeyId& key, int dealer) const {
  if (dealer < 0 || dealer >= kParties)
    throw FormatError(Component::Store, "pair checks dealt by server " + std::to_string(dealer + 1));
  const auto checks_key = pair_check_key(encode_record_key(key), dealer);
  Transaction txn(impl_->env, MDB_RDONLY, "get pair checks");
  MDB_val k = as_val(checks_key);
  MDB_val v{};
  const int rc = mdb_get(txn.get(), impl_->pair_checks, &k, &v);
  if (rc == MDB_NOTFOUND) return std::nullopt;
  check(rc, "get the pair checks of " + wire::describe(key));
  std::uint64_t dealt = 0;
  return impl_->open(checks_key, as_span(v), "pair checks of " + wire::describe(key), dealt);
}

bool ShareStore::deleted_for_good(const wire::KeyId& key) const {
  const auto record_key = encode_record_key(key);
  Transaction txn(impl_->env, MDB_RDONLY, "tombstone");
  MDB_val k = as_val(record_key);
  MDB_val v{};
  const int rc = mdb_get(txn.get(), impl_->tombstones, &k, &v);
  if (rc == MDB_NOTFOUND) return false;
  check(rc, "look for a tombstone of " + wire::describe(key));
  std::uint64_t deleted = 0;
  SecretBytes marker = impl_->open(record_key, as_span(v), "tombstone of " + wire::describe(key), deleted);
  if (marker.size() != 1 || marker[0] != 1)
    throw Error(Component::Store, "tombstone of " + wire::describe(key) + " is malformed");
  return true;
}

std::vector<StoredKey> ShareStore::list(const std::string& name_prefix) const {
  std::vector<StoredKey> out;
  // Names are at most kMaxKeyNameBytes: a longer prefix matches nothing.
  if (name_prefix.size() > wire::kMaxKeyNameBytes) return out;
  Transaction txn(impl_->env, MDB_RDONLY, "list");
  Cursor cursor(txn.get(), impl_->dbi);
  MDB_val k{};
  MDB_val v{};
  bool more;
  if (name_prefix.empty()) {
    more = cursor.get(k, v, MDB_FIRST);
  } else {
    k.mv_size = name_prefix.size();
    k.mv_data = const_cast<char*>(name_prefix.data());
    more = cursor.get(k, v, MDB_SET_RANGE);
  }
  // Records are in name order, so those whose name starts with the prefix are one run.
  for (; more; more = cursor.get(k, v, MDB_NEXT)) {
    const auto record_key = as_span(k);
    if (record_key.size() > kMaxRecordKeyBytes)
      throw Error(Component::Store, "malformed record key of " + std::to_string(record_key.size()) + " bytes");
    StoredKey entry;
    entry.key = decode_record_key(record_key);
    if (!std::string_view(entry.key.name).starts_with(name_prefix)) break;
    SecretBytes share = impl_->open(record_key, as_span(v), wire::describe(entry.key), entry.created_unix);
    share.clear();
    out.push_back(std::move(entry));
  }
  return out;
}

std::size_t ShareStore::count() const {
  Transaction txn(impl_->env, MDB_RDONLY, "count");
  MDB_stat stat{};
  check(mdb_stat(txn.get(), impl_->dbi, &stat), "read LMDB statistics");
  return stat.ms_entries;
}

}  // namespace mpc::store
