// The realm's Kerberos database for `mpcctl kdc`: opened through libkdb5, and so through
// the configured KDB module (mpc_kdb over its back end), the way kadmin.local opens it:
// profile from KRB5_CONFIG and KRB5_KDC_PROFILE, the default realm or --realm, ADMIN
// mode, the master key from the stash, and the iprop update log when iprop is enabled (so
// that replicas fed incrementally see enrollment like any other change).
//
// Keys read from the database are returned in wiped buffers; key_data built here are
// encrypted under the active master key like every stored key, so dump/load, kprop and
// master-key rotation carry them.
#pragma once

// kdb.h declares C functions without a C++ linkage block.
extern "C" {
#include <kdb.h>
}

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/secret.hpp"

namespace mpc::tools::kdc {

struct EntryFree {
  krb5_context context = nullptr;
  void operator()(krb5_db_entry* entry) const noexcept;
};
using Entry = std::unique_ptr<krb5_db_entry, EntryFree>;

struct PrincipalFree {
  krb5_context context = nullptr;
  void operator()(krb5_principal principal) const noexcept;
};
using Principal = std::unique_ptr<krb5_principal_data, PrincipalFree>;

// Ticket lifetimes the realm's kdc.conf allows, and the clock skew the KDC tolerates.
struct RealmLimits {
  std::int64_t max_life = 0;            // [realms] max_life, seconds
  std::int64_t max_renewable_life = 0;  // [realms] max_renewable_life, seconds
  std::int64_t clockskew = 0;           // [libdefaults] clockskew, seconds
};

// Owned key_data records, wiped and freed on destruction unless handed to an entry.
class KeyDataList {
 public:
  explicit KeyDataList(krb5_context context) : context_(context) {}
  ~KeyDataList();
  KeyDataList(const KeyDataList&) = delete;
  KeyDataList& operator=(const KeyDataList&) = delete;

  std::vector<krb5_key_data>& records() noexcept { return records_; }
  // Replaces the key_data of entry (the old ones are wiped and freed) by these records, in
  // this order; the list is empty afterwards.
  void install_into(krb5_db_entry& entry);

 private:
  krb5_context context_;
  std::vector<krb5_key_data> records_;
};

class KdbSession {
 public:
  // realm: the realm whose database to open; the profile's default realm when empty.
  explicit KdbSession(const std::optional<std::string>& realm);
  ~KdbSession();
  KdbSession(const KdbSession&) = delete;
  KdbSession& operator=(const KdbSession&) = delete;

  krb5_context context() const noexcept { return context_; }
  const std::string& realm() const noexcept { return realm_; }
  const RealmLimits& limits() const noexcept { return limits_; }

  // name with this realm appended when it names none.
  Principal parse_principal(const std::string& name) const;
  std::string unparse(krb5_const_principal principal) const;
  // True for the master key principal (K/M@REALM or the configured master_key_name).
  bool is_master_key_principal(krb5_const_principal principal) const;

  // The entry, or an empty pointer when the database has no such principal.
  Entry get(krb5_const_principal principal) const;
  // Writes entry, recording the modification time and the administrator as kadmin does.
  void put(krb5_db_entry& entry);
  // visit(entry) for every principal; the entry is valid during the call only.
  void for_each(const std::function<void(krb5_db_entry&)>& visit) const;

  // The value of a string attribute, if the entry has it.
  std::optional<std::string> string_attribute(krb5_db_entry& entry, const char* key) const;
  // value nullptr removes the attribute.
  void set_string_attribute(krb5_db_entry& entry, const char* key, const char* value) const;

  // A relation of the realm's [dbmodules] section (the one [realms] REALM database_module
  // names, the realm's name by default), as the KDB module reads it.
  std::optional<std::string> module_setting(const char* name) const;
  // True when the profile enables SPAKE preauthentication (spake_preauth_groups in
  // [libdefaults], [kdcdefaults] or the realm's section).
  bool spake_configured() const;

  // The key held by key_data, decrypted under whichever master key encrypted it.
  SecretBytes decrypt_key(const krb5_key_data& key_data) const;
  // Appends to list a key_data of enctype `enctype` and kvno `kvno` holding `contents`,
  // encrypted under the active master key; returns that master key's kvno (the entry's
  // mkvno after installing it).
  krb5_kvno append_encrypted(KeyDataList& list, std::int32_t enctype, krb5_kvno kvno,
                             std::span<const std::uint8_t> contents) const;
  void set_mkvno(krb5_db_entry& entry, krb5_kvno mkvno) const;
  // Replaces every key of entry by new keys of the realm's supported enctypes at kvno + 1:
  // random ones, or derived from password when given (and wiped by the caller). Records the
  // master key version and the key change time.
  void change_keys(krb5_db_entry& entry, const char* password) const;
  void set_last_key_change(krb5_db_entry& entry) const;

  // An exclusive database lock for a read-compare-write; a no-op where the back end has no
  // locks (klmdb: every write is its own transaction).
  class WriteLock {
   public:
    explicit WriteLock(KdbSession& session);
    ~WriteLock();
    WriteLock(const WriteLock&) = delete;
    WriteLock& operator=(const WriteLock&) = delete;

   private:
    krb5_context context_;
    bool held_ = false;
  };

  // "what: <krb5 message>" for an error code of this context.
  std::string message(const std::string& what, krb5_error_code code) const;

 private:
  krb5_keyblock* active_master_key(krb5_kvno& kvno) const;

  krb5_context context_ = nullptr;
  void* admin_handle_ = nullptr;  // kadm5 server handle: owns the open database
  std::string realm_;
  RealmLimits limits_;
  krb5_principal master_principal_ = nullptr;
  std::vector<krb5_key_salt_tuple> key_salts_;  // the realm's supported_enctypes
  krb5_principal administrator_ = nullptr;
};

}  // namespace mpc::tools::kdc
