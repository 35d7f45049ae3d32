// The realm's Kerberos database through libkdb5 and libkadm5srv (see kdb_session.hpp).
#include "tools/mpcctl/kdb_session.hpp"

#include <kadm5/admin.h>
#include <profile.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <exception>

#include "common/error.hpp"

namespace mpc::tools::kdc {
namespace {

// The KDC's default ([libdefaults] clockskew, krb5 DEFAULT_CLOCKSKEW).
constexpr int kDefaultClockskewSeconds = 300;

Error tool_error(const std::string& message) { return Error(Component::Tool, message); }

// The name kadmin.local records as the modifier when it runs without credentials.
std::string administrator_name(const std::string& realm) {
  std::string user = "root";
  std::vector<char> buffer(16384);
  struct passwd entry {};
  struct passwd* found = nullptr;
  if (::getpwuid_r(::getuid(), &entry, buffer.data(), buffer.size(), &found) == 0 && found != nullptr &&
      found->pw_name != nullptr && found->pw_name[0] != '\0')
    user = found->pw_name;
  return user + "/admin@" + realm;
}

struct IterateState {
  const std::function<void(krb5_db_entry&)>* visit;
  std::exception_ptr failure;
};

// krb5_db_iterate's callback: C code above us, so no exception may cross it.
int visit_entry(krb5_pointer argument, krb5_db_entry* entry) {
  auto* state = static_cast<IterateState*>(argument);
  try {
    (*state->visit)(*entry);
    return 0;
  } catch (...) {
    state->failure = std::current_exception();
    return 1;  // stops the iteration
  }
}

}  // namespace

void EntryFree::operator()(krb5_db_entry* entry) const noexcept { krb5_db_free_principal(context, entry); }

void PrincipalFree::operator()(krb5_principal principal) const noexcept { krb5_free_principal(context, principal); }

KeyDataList::~KeyDataList() {
  for (auto& record : records_) krb5_dbe_free_key_data_contents(context_, &record);
}

void KeyDataList::install_into(krb5_db_entry& entry) {
  // libkdb5 frees key_data with free(): allocate it with the matching allocator.
  const std::size_t count = records_.size();
  if (count > 0x7fff) throw tool_error("too many keys for one principal");
  auto* fresh = static_cast<krb5_key_data*>(std::calloc(count == 0 ? 1 : count, sizeof(krb5_key_data)));
  if (fresh == nullptr) throw tool_error("out of memory");
  for (std::size_t i = 0; i < count; ++i) fresh[i] = records_[i];
  records_.clear();
  for (int i = 0; i < entry.n_key_data; ++i) krb5_dbe_free_key_data_contents(context_, &entry.key_data[i]);
  std::free(entry.key_data);
  entry.key_data = fresh;
  entry.n_key_data = static_cast<krb5_int16>(count);
}

KdbSession::KdbSession(const std::optional<std::string>& realm) {
  // Files libkdb5 may create on the way (the iprop log, lock files) hold database
  // contents: nobody but the owner may read them, as kdb5_util and kadmin.local ensure.
  ::umask(077);
  krb5_error_code code = kadm5_init_krb5_context(&context_);
  if (code != 0) {
    context_ = nullptr;
    // Without a context libkrb5 answers with the error table's static text.
    const char* text = krb5_get_error_message(nullptr, code);
    throw tool_error(std::string("cannot initialise Kerberos: ") + (text != nullptr ? text : "unknown error"));
  }
  kadm5_config_params wanted{};
  kadm5_config_params params{};
  bool have_params = false;
  char* default_realm = nullptr;
  try {
    if (realm) {
      code = krb5_set_default_realm(context_, realm->c_str());
      if (code != 0) throw tool_error(message("cannot use realm " + *realm, code));
    }
    code = krb5_get_default_realm(context_, &default_realm);
    if (code != 0) throw tool_error(message("no realm given (--realm) and no default realm", code));
    realm_ = default_realm;
    krb5_free_default_realm(context_, default_realm);
    default_realm = nullptr;

    wanted.realm = realm_.data();
    wanted.mask = KADM5_CONFIG_REALM;
    code = kadm5_get_config_params(context_, 1, &wanted, &params);
    if (code != 0) throw tool_error(message("cannot read the configuration of realm " + realm_, code));
    have_params = true;
    if (params.mask & KADM5_CONFIG_MAX_LIFE) limits_.max_life = params.max_life;
    if (params.mask & KADM5_CONFIG_MAX_RLIFE) limits_.max_renewable_life = params.max_rlife;
    if ((params.mask & KADM5_CONFIG_ENCTYPES) && params.keysalts != nullptr)
      key_salts_.assign(params.keysalts, params.keysalts + params.num_keysalts);
    profile_t profile = nullptr;
    int skew = kDefaultClockskewSeconds;
    if (krb5_get_profile(context_, &profile) == 0) {
      if (profile_get_integer(profile, "libdefaults", "clockskew", nullptr, kDefaultClockskewSeconds, &skew) != 0)
        skew = kDefaultClockskewSeconds;
      profile_release(profile);
    }
    limits_.clockskew = skew > 0 ? skew : 0;

    code = krb5_db_setup_mkey_name(context_, params.mkey_name, realm_.c_str(), nullptr, &master_principal_);
    if (code != 0) throw tool_error(message("cannot name the master key principal", code));
    kadm5_free_config_params(context_, &params);
    have_params = false;

    std::string administrator = administrator_name(realm_);
    code = krb5_parse_name(context_, administrator.c_str(), &administrator_);
    if (code != 0) throw tool_error(message("cannot parse " + administrator, code));

    // The server side of kadm5 opens the database exactly as kadmin.local does: ADMIN
    // mode through libkdb5 and the configured module, master key list from the stash.
    std::string service = KADM5_ADMIN_SERVICE;
    code = kadm5_init_with_password(context_, administrator.data(), nullptr, service.data(), &wanted,
                                    KADM5_STRUCT_VERSION, KADM5_API_VERSION_4, nullptr, &admin_handle_);
    if (code != 0) {
      admin_handle_ = nullptr;
      throw tool_error(message("cannot open the database of realm " + realm_, code));
    }
    code = kadm5_init_iprop(admin_handle_, nullptr);
    if (code != 0) throw tool_error(message("cannot open the iprop update log of realm " + realm_, code));
  } catch (...) {
    if (default_realm != nullptr) krb5_free_default_realm(context_, default_realm);
    if (have_params) kadm5_free_config_params(context_, &params);
    if (admin_handle_ != nullptr) kadm5_destroy(admin_handle_);
    krb5_free_principal(context_, master_principal_);
    krb5_free_principal(context_, administrator_);
    krb5_free_context(context_);
    throw;
  }
}

KdbSession::~KdbSession() {
  if (admin_handle_ != nullptr) kadm5_destroy(admin_handle_);  // closes the database and the log
  krb5_free_principal(context_, master_principal_);
  krb5_free_principal(context_, administrator_);
  krb5_free_context(context_);
}

std::string KdbSession::message(const std::string& what, krb5_error_code code) const {
  const char* text = krb5_get_error_message(context_, code);
  std::string out = what + ": " + (text != nullptr ? text : "unknown error");
  krb5_free_error_message(context_, text);
  return out;
}

Principal KdbSession::parse_principal(const std::string& name) const {
  krb5_principal parsed = nullptr;
  const krb5_error_code code = krb5_parse_name(context_, name.c_str(), &parsed);
  if (code != 0) throw tool_error(message("cannot parse the principal name '" + name + "'", code));
  return Principal(parsed, PrincipalFree{context_});
}

std::string KdbSession::unparse(krb5_const_principal principal) const {
  char* text = nullptr;
  const krb5_error_code code = krb5_unparse_name(context_, principal, &text);
  if (code != 0) throw tool_error(message("cannot unparse a principal name", code));
  std::string out = text;
  krb5_free_unparsed_name(context_, text);
  return out;
}

bool KdbSession::is_master_key_principal(krb5_const_principal principal) const {
  return krb5_principal_compare(context_, principal, master_principal_) != 0;
}

Entry KdbSession::get(krb5_const_principal principal) const {
  krb5_db_entry* entry = nullptr;
  const krb5_error_code code = krb5_db_get_principal(context_, principal, 0, &entry);
  if (code == KRB5_KDB_NOENTRY) return Entry(nullptr, EntryFree{context_});
  if (code != 0) throw tool_error(message("cannot read " + unparse(principal), code));
  return Entry(entry, EntryFree{context_});
}

void KdbSession::put(krb5_db_entry& entry) {
  krb5_timestamp now = 0;
  krb5_error_code code = krb5_timeofday(context_, &now);
  if (code == 0) code = krb5_dbe_update_mod_princ_data(context_, &entry, now, administrator_);
  if (code != 0) throw tool_error(message("cannot record the modification of " + unparse(entry.princ), code));
  // Back ends that write only the changed attributes (LDAP) read the mask.
  entry.mask |= KADM5_KEY_DATA | KADM5_TL_DATA | KADM5_MOD_TIME | KADM5_MOD_NAME | KADM5_MKVNO | KADM5_KVNO;
  code = krb5_db_put_principal(context_, &entry);
  if (code != 0) throw tool_error(message("cannot write " + unparse(entry.princ) + " to the database", code));
}

void KdbSession::for_each(const std::function<void(krb5_db_entry&)>& visit) const {
  IterateState state{&visit, nullptr};
  const krb5_error_code code = krb5_db_iterate(context_, nullptr, visit_entry, &state, 0);
  if (state.failure) std::rethrow_exception(state.failure);
  if (code != 0) throw tool_error(message("cannot list the principals of realm " + realm_, code));
}

std::optional<std::string> KdbSession::string_attribute(krb5_db_entry& entry, const char* key) const {
  char* value = nullptr;
  const krb5_error_code code = krb5_dbe_get_string(context_, &entry, key, &value);
  if (code != 0) throw tool_error(message(std::string("cannot read the attribute ") + key, code));
  if (value == nullptr) return std::nullopt;
  std::string out = value;
  krb5_dbe_free_string(context_, value);
  return out;
}

void KdbSession::set_string_attribute(krb5_db_entry& entry, const char* key, const char* value) const {
  const krb5_error_code code = krb5_dbe_set_string(context_, &entry, key, value);
  if (code != 0) throw tool_error(message(std::string("cannot set the attribute ") + key, code));
}

SecretBytes KdbSession::decrypt_key(const krb5_key_data& key_data) const {
  krb5_keyblock key{};
  // No master key given: libkdb5 tries each master key of the list, as after add_mkey.
  const krb5_error_code code = krb5_dbe_decrypt_key_data(context_, nullptr, &key_data, &key, nullptr);
  if (code != 0) {
    krb5_free_keyblock_contents(context_, &key);
    throw tool_error(message("cannot decrypt kvno " + std::to_string(key_data.key_data_kvno) + " enctype " +
                                 std::to_string(key_data.key_data_type[0]) + " with the master key",
                             code));
  }
  SecretBytes out(std::span<const std::uint8_t>(key.contents, key.length));
  krb5_free_keyblock_contents(context_, &key);  // zeroes the bytes before freeing
  return out;
}

krb5_keyblock* KdbSession::active_master_key(krb5_kvno& kvno) const {
  krb5_actkvno_node* active = nullptr;
  krb5_keyblock* master_key = nullptr;  // points into the context's master key list
  kvno = 0;
  krb5_error_code code = krb5_dbe_fetch_act_key_list(context_, master_principal_, &active);
  if (code == 0) code = krb5_dbe_find_act_mkey(context_, active, &kvno, &master_key);
  krb5_dbe_free_actkvno_list(context_, active);
  if (code != 0) throw tool_error(message("cannot find the active master key", code));
  return master_key;
}

krb5_kvno KdbSession::append_encrypted(KeyDataList& list, std::int32_t enctype, krb5_kvno kvno,
                                       std::span<const std::uint8_t> contents) const {
  krb5_kvno master_kvno = 0;
  krb5_keyblock* master_key = active_master_key(master_kvno);
  krb5_error_code code = 0;

  SecretBytes plain(contents);
  krb5_keyblock block{};
  block.magic = KV5M_KEYBLOCK;
  block.enctype = enctype;
  block.length = static_cast<unsigned int>(plain.size());
  block.contents = plain.data();
  krb5_key_data record{};
  code = krb5_dbe_encrypt_key_data(context_, master_key, &block, nullptr, static_cast<int>(kvno), &record);
  if (code != 0) {
    krb5_dbe_free_key_data_contents(context_, &record);
    throw tool_error(message("cannot encrypt kvno " + std::to_string(kvno) + " under the master key", code));
  }
  list.records().push_back(record);
  return master_kvno;
}

void KdbSession::set_mkvno(krb5_db_entry& entry, krb5_kvno mkvno) const {
  const krb5_error_code code = krb5_dbe_update_mkvno(context_, &entry, mkvno);
  if (code != 0) throw tool_error(message("cannot record the master key version", code));
}

void KdbSession::change_keys(krb5_db_entry& entry, const char* password) const {
  if (key_salts_.empty()) throw tool_error("the realm " + realm_ + " configures no supported_enctypes");
  krb5_kvno master_kvno = 0;
  krb5_keyblock* master_key = active_master_key(master_kvno);
  // libkdb5 takes the tuples as non-const; it does not change them.
  auto salts = key_salts_;
  const int count = static_cast<int>(salts.size());
  const krb5_error_code code =
      password != nullptr
          ? krb5_dbe_cpw(context_, master_key, salts.data(), count, const_cast<char*>(password), 0, FALSE, &entry)
          : krb5_dbe_crk(context_, master_key, salts.data(), count, FALSE, &entry);
  if (code != 0) throw tool_error(message("cannot give " + unparse(entry.princ) + " new keys", code));
  set_mkvno(entry, master_kvno);
  set_last_key_change(entry);
}

std::optional<std::string> KdbSession::module_setting(const char* name) const {
  profile_t profile = nullptr;
  if (krb5_get_profile(context_, &profile) != 0) throw tool_error("cannot read the Kerberos profile");
  char* section = nullptr;
  char* value = nullptr;
  std::optional<std::string> out;
  if (profile_get_string(profile, "realms", realm_.c_str(), "database_module", realm_.c_str(), &section) == 0 &&
      section != nullptr &&
      profile_get_string(profile, "dbmodules", section, name, nullptr, &value) == 0 && value != nullptr)
    out = value;
  profile_release_string(value);
  profile_release_string(section);
  profile_release(profile);
  return out;
}

bool KdbSession::spake_configured() const {
  profile_t profile = nullptr;
  if (krb5_get_profile(context_, &profile) != 0) throw tool_error("cannot read the Kerberos profile");
  bool found = false;
  const char* const places[][3] = {{"libdefaults", "spake_preauth_groups", nullptr},
                                   {"kdcdefaults", "spake_preauth_groups", nullptr},
                                   {"realms", realm_.c_str(), "spake_preauth_groups"}};
  for (const auto& place : places) {
    const char* path[] = {place[0], place[1], place[2], nullptr};
    char** values = nullptr;
    if (profile_get_values(profile, path, &values) == 0 && values != nullptr) {
      for (char** v = values; *v != nullptr; ++v) found = found || (*v)[0] != '\0';
      profile_free_list(values);
    }
  }
  profile_release(profile);
  return found;
}

void KdbSession::set_last_key_change(krb5_db_entry& entry) const {
  krb5_timestamp now = 0;
  krb5_error_code code = krb5_timeofday(context_, &now);
  if (code == 0) code = krb5_dbe_update_last_pwd_change(context_, &entry, now);
  if (code != 0) throw tool_error(message("cannot record the key change", code));
}

KdbSession::WriteLock::WriteLock(KdbSession& session) : context_(session.context_) {
  const krb5_error_code code = krb5_db_lock(context_, KRB5_DB_LOCKMODE_EXCLUSIVE);
  if (code == KRB5_PLUGIN_OP_NOTSUPP) return;
  if (code != 0) throw tool_error(session.message("cannot lock the database", code));
  held_ = true;
}

KdbSession::WriteLock::~WriteLock() {
  if (held_) krb5_db_unlock(context_);
}

}  // namespace mpc::tools::kdc
