// kdc protect / rotate / status / unprotect: enrollment of a realm's krbtgt key and of users'
// keys into the engine.
//
// Users (kdc protect --principal P | --all-users): the KDB module enrols the Kerberos keys
// (keys/key_algorithms.h) of an entry marked mpc-protected when it is stored; this command
// sets the mark and stores the entry through the module, then checks that only markers were
// stored. unprotect gives a protected user
// new keys and clears the mark in one write; the module then deletes its engine keys.
//
// A protected principal's key lives only in the engine, as an AES-256-GCM ticket key
// (keys/protected_key.h); the database keeps, per kvno, a marker key_data (enctype
// MPC_KEY_GCM_ENCTYPE, MPC_PROTECTED_KEY_MARKER encrypted under the master key) and
// the string attribute mpc-protected = true, from which the KDB module makes key handles
// for krb5kdc.
//
// Ordering: the engine key is stored before the database refers to it and deleted only
// after the database no longer does, so at no moment does the database hold a marker whose
// key is missing, nor lose its last usable key. A failed database write deletes the engine
// key just stored again.
#include <sys/prctl.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <tuple>

#include "client/cluster_client.hpp"
#include "common/error.hpp"
#include "common/secret.hpp"
#include "keys/key_algorithms.h"
#include "keys/protected_key.h"
#include "settings/cluster_settings.hpp"
#include "tools/mpcctl/arguments.hpp"
#include "tools/mpcctl/commands.hpp"
#include "tools/mpcctl/kdb_session.hpp"
#include "tools/mpcctl/utc_time.hpp"
#include "wire/key_id.hpp"

namespace mpc::tools {
namespace {

using kdc::Entry;
using kdc::KdbSession;
using kdc::KeyDataList;

// The string attribute the KDB module reads and the value enrollment writes.
constexpr const char* kProtectedAttribute = MPC_PROTECTED_KEY_ATTRIBUTE;
constexpr const char* kProtectedValue = "true";
constexpr krb5_enctype kSourceEnctype = ENCTYPE_AES256_CTS_HMAC_SHA1_96;
constexpr std::size_t kTicketKeyBytes = MPC_PROTECTED_KEY_TICKET_KEY_LEN;
// key_data_kvno is 16 bits wide in the database.
constexpr krb5_kvno kMaxKvno = 0xffff;
// Exit status of `kdc status` when it finds an inconsistency (1 is a failed command).
constexpr int kInconsistentExit = 3;

constexpr const char* kKdcUsage = R"(usage: mpcctl kdc ACTION ...
  kdc protect krbtgt/R --cluster F [--realm R] [--force]
  kdc protect --principal P [--principal Q ...] [--realm R]
  kdc protect --all-users [--realm R]
  kdc unprotect P --randkey | --password [--realm R]
  kdc rotate krbtgt/R --cluster F [--realm R] [--retire-now]
  kdc status [--cluster F] [--realm R]
Run on the KDC host with access to the database and its stash; -r R is --realm R.
Users' keys (aes128/aes256-cts-hmac-sha1-96) are enrolled by the KDB module when the entry is
stored, with the cluster configuration of its mpc_cluster_config setting; --all-users takes
every principal but krbtgt/*, K/M, kadmin/*, kiprop/* and those already protected.
unprotect is for emergencies: it gives the user new keys (--password reads one from the
terminal or stdin) and deletes the engine keys. The old key cannot be restored: it never
existed in one place after protection.
)";

Error tool_error(const std::string& message) { return Error(Component::Tool, message); }

// The rule of the KDB module (protected_key.h).
bool marks_protected(const std::optional<std::string>& value) {
  return mpc_protected_key_is_marked(value ? value->c_str() : nullptr) != 0;
}

bool is_marker(const krb5_key_data& key_data) { return key_data.key_data_type[0] == MPC_KEY_GCM_ENCTYPE; }

// The engine algorithm of a user key of this enctype (a Kerberos row of the table), if it
// has one.
std::optional<wire::KeyAlgorithm> user_algorithm(krb5_enctype enctype) {
  const mpc_key_algorithm_info* row = mpc_key_algorithm_by_enctype(enctype);
  if (!mpc_key_is_kerberos(row)) return std::nullopt;
  return static_cast<wire::KeyAlgorithm>(row->id);
}

// A key_data of a user enctype holding the user marker (decrypted with the master key).
bool is_user_marker(const KdbSession& session, const krb5_key_data& key_data) {
  if (!user_algorithm(key_data.key_data_type[0])) return false;
  const SecretBytes contents = session.decrypt_key(key_data);
  const auto expected =
      std::span(reinterpret_cast<const std::uint8_t*>(MPC_PROTECTED_KEY_USER_MARKER), MPC_PROTECTED_KEY_USER_MARKER_LEN);
  return contents.size() == expected.size() && equal_constant_time(contents.span(), expected);
}

bool has_component(krb5_const_principal principal, int index, const char* text) {
  const std::size_t length = std::strlen(text);
  return principal->length > index && principal->data[index].length == length &&
         std::memcmp(principal->data[index].data, text, length) == 0;
}

std::string enctype_name(krb5_enctype enctype) {
  if (enctype == MPC_KEY_GCM_ENCTYPE) return MPC_PROTECTED_KEY_ENCTYPE_NAME;
  char name[128] = {};
  if (krb5_enctype_to_name(enctype, FALSE, name, sizeof(name)) == 0) return name;
  return "enctype " + std::to_string(enctype);
}

std::int64_t now_unix() { return static_cast<std::int64_t>(std::time(nullptr)); }

// The engine key name of a principal (protected_key.h: the name hash of its canonical name).
std::string engine_key_name(const std::string& principal) {
  std::uint8_t hash[MPC_PROTECTED_KEY_NAME_HASH_LEN];
  if (mpc_protected_key_name_hash(principal.data(), principal.size(), hash) != 0)
    throw tool_error("cannot hash the principal name " + principal);
  char name[MPC_PROTECTED_KEY_ENGINE_NAME_LEN];
  mpc_protected_key_engine_name(hash, name);
  return name;
}

wire::KeyId engine_key(const std::string& name, krb5_kvno kvno) {
  return wire::KeyId{name, static_cast<std::uint32_t>(kvno), wire::KeyAlgorithm::Aes256Gcm};
}

std::string delete_command(const std::string& cluster_file, const wire::KeyId& key) {
  return "mpcctl key delete --cluster " + cluster_file + " --name " + key.name + " --kvno " +
         std::to_string(key.version) + " --alg " + wire::algorithm_name(key.algorithm);
}

// ---- which principals may be protected ------------------------------------------------

// Refuses what must never be protected. Only the local realm's TGS key is accepted without
// --force: the private ticket format is read by this KDC alone, and of the keys in the
// database only krbtgt/REALM@REALM encrypts tickets nobody else reads.
void check_principal(const KdbSession& session, krb5_const_principal principal, bool force) {
  const std::string name = session.unparse(principal);
  const std::string realm(principal->realm.data, principal->realm.length);
  if (realm != session.realm())
    throw tool_error(name + " is not in realm " + session.realm() + ", whose database is open (use --realm)");
  if (session.is_master_key_principal(principal))
    throw tool_error(name + " is the master key principal: the KDC needs the master key itself to read every "
                            "other key, so it cannot be protected");
  const bool tgs = principal->length == 2 && principal->data[0].length == 6 &&
                   std::memcmp(principal->data[0].data, "krbtgt", 6) == 0;
  if (tgs) {
    const std::string other(principal->data[1].data, principal->data[1].length);
    if (other != realm)
      throw tool_error(name + " is a cross-realm key: tickets under it are made or read by the KDC of realm " +
                       other + ", which cannot read this KDC's private ticket format nor ask this engine; only krbtgt/" +
                       realm + "@" + realm + " can be protected");
    return;
  }
  if (!force)
    throw tool_error(name + " is not the realm's ticket-granting service: tickets under its key are read by the "
                            "service itself, which cannot read this KDC's private ticket format (--force "
                            "protects it anyway)");
}

// Everything about an entry's keys and marking that a concurrent change would alter: read
// before the engine call and compared again, under the database lock, before writing.
std::vector<std::uint8_t> key_state(const KdbSession& session, krb5_db_entry& entry) {
  std::vector<std::uint8_t> out;
  auto put = [&out](const void* data, std::size_t size) {
    const auto* bytes = static_cast<const std::uint8_t*>(data);
    out.insert(out.end(), bytes, bytes + size);
  };
  for (int i = 0; i < entry.n_key_data; ++i) {
    const krb5_key_data& key_data = entry.key_data[i];
    put(&key_data.key_data_ver, sizeof(key_data.key_data_ver));
    put(&key_data.key_data_kvno, sizeof(key_data.key_data_kvno));
    for (int j = 0; j < key_data.key_data_ver && j < 2; ++j) {
      put(&key_data.key_data_type[j], sizeof(key_data.key_data_type[j]));
      put(&key_data.key_data_length[j], sizeof(key_data.key_data_length[j]));
      if (key_data.key_data_contents[j] != nullptr) put(key_data.key_data_contents[j], key_data.key_data_length[j]);
    }
  }
  const auto attribute = session.string_attribute(entry, kProtectedAttribute);
  out.push_back(attribute ? 1 : 0);
  if (attribute) put(attribute->data(), attribute->size());
  return out;
}

krb5_kvno newest_kvno(const krb5_db_entry& entry) {
  krb5_kvno newest = 0;
  for (int i = 0; i < entry.n_key_data; ++i)
    newest = std::max<krb5_kvno>(newest, entry.key_data[i].key_data_kvno);
  return newest;
}

// Marker kvnos of a protected entry, newest first; throws unless every key is a marker.
std::vector<krb5_kvno> marker_kvnos(const KdbSession& session, krb5_db_entry& entry, const std::string& name) {
  if (!marks_protected(session.string_attribute(entry, kProtectedAttribute)))
    throw tool_error(name + " is not protected; run `mpcctl kdc protect " + name + "` first");
  std::vector<krb5_kvno> kvnos;
  std::string real;
  for (int i = 0; i < entry.n_key_data; ++i) {
    const krb5_key_data& key_data = entry.key_data[i];
    if (is_marker(key_data)) {
      kvnos.push_back(key_data.key_data_kvno);
    } else {
      real += (real.empty() ? "" : ", ") + enctype_name(key_data.key_data_type[0]) + " kvno " +
              std::to_string(key_data.key_data_kvno);
    }
  }
  if (!real.empty())
    throw tool_error(name + " is marked " + kProtectedAttribute + " but holds real keys (" + real +
                     "): inconsistent, nothing changed; see `mpcctl kdc status`");
  if (kvnos.empty()) throw tool_error(name + " is marked " + kProtectedAttribute + " but has no marker key");
  std::sort(kvnos.begin(), kvnos.end(), std::greater<>());
  kvnos.erase(std::unique(kvnos.begin(), kvnos.end()), kvnos.end());
  return kvnos;
}

std::unique_ptr<client::ClusterClient> connect(const std::string& cluster_file) {
  return std::make_unique<client::ClusterClient>(settings::load_cluster_settings(cluster_file));
}

// Withdraws an engine key stored by this command after the database write failed.
std::string withdraw(client::ClusterClient& cluster, const std::string& cluster_file, const wire::KeyId& key) {
  try {
    cluster.delete_key(key);
    return "the engine key " + wire::describe(key) + " was deleted again; nothing changed";
  } catch (const std::exception& error) {
    return "deleting the engine key " + wire::describe(key) + " again failed too (" + error.what() +
           "); the database is unchanged; remove the key with `" + delete_command(cluster_file, key) + "`";
  }
}

void import_ticket_key(client::ClusterClient& cluster, const wire::KeyId& key, const SecretBytes& ticket_key) {
  // An engine key under this id while the database has no marker for it can only be left
  // from an earlier attempt that failed halfway (a server that timed out may have stored its
  // share after the others were withdrawn). Nothing can use it, and it would make this import
  // fail on that server with key_exists, so remove whatever part of it exists.
  try {
    cluster.delete_key(key);
  } catch (const std::exception&) {
    // Absent everywhere or on some servers: both are what this wants. An unreachable server
    // makes the import below fail with its own message.
  }
  try {
    cluster.import_key(key, ticket_key);
  } catch (const std::exception& error) {
    throw tool_error(std::string("cannot store the ticket key in the engine: ") + error.what() +
                     "; the database is unchanged");
  }
}

SecretBytes random_ticket_key() {
  SecretBytes key(kTicketKeyBytes);
  std::size_t filled = 0;
  while (filled < key.size()) {
    const ssize_t got = ::getrandom(key.data() + filled, key.size() - filled, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) throw tool_error(std::string("getrandom failed: ") + std::strerror(errno));
    filled += static_cast<std::size_t>(got);
  }
  return key;
}

// The longest a ticket under a krbtgt key may stay in use after the key stops being the
// newest: the largest lifetime or renewable lifetime the principal or the realm allows,
// plus the clock skew the KDC accepts.
std::int64_t longest_ticket_seconds(const KdbSession& session, const krb5_db_entry& entry) {
  const auto& limits = session.limits();
  const std::int64_t longest = std::max({static_cast<std::int64_t>(entry.max_life),
                                         static_cast<std::int64_t>(entry.max_renewable_life), limits.max_life,
                                         limits.max_renewable_life});
  return longest + limits.clockskew;
}

// ---- protect -------------------------------------------------------------------------

int protect(const Arguments& arguments) {
  if (arguments.positional().size() != 1) throw tool_error("kdc protect: expected one principal name");
  const std::string cluster_file = arguments.required("cluster");
  auto cluster = connect(cluster_file);  // a bad configuration fails before the database is read
  KdbSession session(arguments.optional("realm"));
  const auto principal = session.parse_principal(arguments.positional()[0]);
  check_principal(session, principal.get(), arguments.flag("force"));
  const std::string requested = session.unparse(principal.get());

  Entry entry = session.get(principal.get());
  if (!entry) throw tool_error("principal " + requested + " is not in the database of realm " + session.realm());
  const std::string name = session.unparse(entry->princ);  // canonical, as the KDB module names it
  const auto before = key_state(session, *entry);
  bool has_marker = false;
  for (int i = 0; i < entry->n_key_data; ++i) has_marker = has_marker || is_marker(entry->key_data[i]);
  if (marks_protected(session.string_attribute(*entry, kProtectedAttribute)) || has_marker)
    throw tool_error(name + " is already protected; `mpcctl kdc rotate " + name + "` makes a new key");

  const krb5_kvno kvno = newest_kvno(*entry);
  const krb5_key_data* source = nullptr;
  std::string present;
  for (int i = 0; i < entry->n_key_data; ++i) {
    const krb5_key_data& key_data = entry->key_data[i];
    if (key_data.key_data_kvno != kvno) continue;
    present += (present.empty() ? "" : ", ") + enctype_name(key_data.key_data_type[0]);
    if (key_data.key_data_type[0] == kSourceEnctype && source == nullptr) source = &key_data;
  }
  if (source == nullptr)
    throw tool_error(name + " has no " + enctype_name(kSourceEnctype) + " key at its newest kvno " +
                     std::to_string(kvno) + " (it has: " + (present.empty() ? "no keys" : present) +
                     "); give it one first, e.g. kadmin.local cpw -randkey -keepold -e " +
                     enctype_name(kSourceEnctype) + ":normal " + name);

  SecretBytes ticket_key(kTicketKeyBytes);
  {
    const SecretBytes existing = session.decrypt_key(*source);
    if (existing.size() != kTicketKeyBytes)
      throw tool_error(name + " kvno " + std::to_string(kvno) + ": the stored " + enctype_name(kSourceEnctype) +
                       " key has " + std::to_string(existing.size()) + " bytes, not 32");
    if (mpc_protected_key_ticket_key(existing.data(), existing.size(), ticket_key.data()) != 0)
      throw tool_error("cannot derive the ticket key (OpenSSL HMAC failed)");
  }

  const wire::KeyId key = engine_key(engine_key_name(name), kvno);
  import_ticket_key(*cluster, key, ticket_key);
  ticket_key.clear();

  try {
    KdbSession::WriteLock lock(session);
    Entry current = session.get(principal.get());
    if (!current || session.unparse(current->princ) != name || key_state(session, *current) != before)
      throw tool_error(name + " changed in the database while it was being protected; run the command again");
    KeyDataList markers(session.context());
    const krb5_kvno mkvno =
        session.append_encrypted(markers, MPC_KEY_GCM_ENCTYPE, kvno,
                                 std::span(reinterpret_cast<const std::uint8_t*>(MPC_PROTECTED_KEY_MARKER),
                                           MPC_PROTECTED_KEY_MARKER_LEN));
    markers.install_into(*current);
    session.set_mkvno(*current, mkvno);
    session.set_string_attribute(*current, kProtectedAttribute, kProtectedValue);
    session.put(*current);
  } catch (const std::exception& error) {
    throw tool_error(std::string(error.what()) + "; " + withdraw(*cluster, cluster_file, key));
  }
  std::cout << "protected " << name << ": kvno " << kvno << " is engine key " << wire::describe(key)
            << "; the database holds only its marker\n";
  return 0;
}

// ---- users ---------------------------------------------------------------------------

// Why a principal may not be protected as a user ("" when it may).
std::string user_refusal(const KdbSession& session, krb5_const_principal principal) {
  const std::string name = session.unparse(principal);
  if (principal->length == 2 && has_component(principal, 0, "krbtgt"))
    return name + " is a ticket-granting key: protect it with `mpcctl kdc protect " + name + " --cluster F`";
  if (session.is_master_key_principal(principal))
    return name + " is the master key principal: the KDC needs the master key itself";
  if (has_component(principal, 0, "kadmin") || has_component(principal, 0, "kiprop"))
    return name + " is used by kadmind or kpropd, which read its keys from the database themselves";
  return "";
}

// The realm must let the module enrol, and SPAKE must be off: its derived secret
// (prfplus of the user's key) would come back to the KDC in clear.
void check_user_protection_possible(const KdbSession& session) {
  if (!session.module_setting("mpc_cluster_config"))
    throw tool_error("the [dbmodules] section of realm " + session.realm() +
                     " sets no mpc_cluster_config: the KDB module enrols users' keys in the engine when "
                     "they are stored and needs the cluster configuration (with an admin client key)");
  if (session.spake_configured())
    throw tool_error("the profile configures spake_preauth_groups: SPAKE would derive a secret from a "
                     "protected user's key and hand it to the KDC in clear; disable SPAKE first");
}

enum class UserOutcome { Protected, AlreadyProtected, NoKeys };

UserOutcome protect_user(KdbSession& session, krb5_const_principal principal) {
  const std::string requested = session.unparse(principal);
  KdbSession::WriteLock lock(session);
  Entry entry = session.get(principal);
  if (!entry) throw tool_error("principal " + requested + " is not in the database of realm " + session.realm());
  const std::string name = session.unparse(entry->princ);
  if (marks_protected(session.string_attribute(*entry, kProtectedAttribute))) return UserOutcome::AlreadyProtected;
  if (entry->n_key_data == 0) return UserOutcome::NoKeys;
  for (int i = 0; i < entry->n_key_data; ++i) {
    const krb5_key_data& key_data = entry->key_data[i];
    if (!user_algorithm(key_data.key_data_type[0]))
      throw tool_error(name + " has a key of " + enctype_name(key_data.key_data_type[0]) + " (kvno " +
                       std::to_string(key_data.key_data_kvno) +
                       "): only aes256-cts-hmac-sha1-96, aes128-cts-hmac-sha1-96, aes128-cts-hmac-sha256-128 "
                       "and aes256-cts-hmac-sha384-192 keys can be protected; "
                       "change its keys first, e.g. kadmin.local cpw -e aes256-cts-hmac-sha1-96:normal " + name);
  }
  session.set_string_attribute(*entry, kProtectedAttribute, kProtectedValue);
  session.put(*entry);  // the KDB module enrols the keys and stores markers

  Entry stored = session.get(principal);
  for (int i = 0; stored && i < stored->n_key_data; ++i)
    if (!is_user_marker(session, stored->key_data[i]))
      throw tool_error(name + " was marked but its keys were stored as they were: the KDB module did not enrol "
                              "them (is mpc_kdb this realm's db_library?); `mpcctl kdc unprotect " + name +
                       " --randkey` or kadmin delstr undoes the mark");
  return UserOutcome::Protected;
}

// Every principal --all-users takes, in database order.
std::vector<std::string> all_user_names(const KdbSession& session) {
  std::vector<std::string> names;
  session.for_each([&](krb5_db_entry& entry) {
    if (!user_refusal(session, entry.princ).empty()) return;
    if (marks_protected(session.string_attribute(entry, kProtectedAttribute))) return;
    names.push_back(session.unparse(entry.princ));
  });
  return names;
}

void show_progress(std::size_t done, std::size_t total) {
  constexpr std::size_t kWidth = 40;
  const std::size_t filled = total == 0 ? kWidth : done * kWidth / total;
  std::cerr << "\r[" << std::string(filled, '#') << std::string(kWidth - filled, '.') << "] " << done << "/"
            << total << std::flush;
  if (done == total) std::cerr << "\n";
}

int protect_users(const std::vector<std::string>& requested, bool all_users, const Arguments& arguments) {
  if (!arguments.positional().empty())
    throw tool_error("kdc protect: give users with --principal P (or --all-users), not as words");
  if (all_users == !requested.empty())
    throw tool_error("kdc protect: give either --principal P (repeatable) or --all-users");
  KdbSession session(arguments.optional("realm"));
  check_user_protection_possible(session);
  std::vector<std::string> names;
  if (all_users) {
    names = all_user_names(session);
  } else {
    for (const auto& name : requested) {
      const auto principal = session.parse_principal(name);
      const std::string refusal = user_refusal(session, principal.get());
      if (!refusal.empty()) throw tool_error(refusal + "; nothing changed");
      names.push_back(session.unparse(principal.get()));
    }
  }
  const bool progress = all_users && ::isatty(STDERR_FILENO) == 1;
  std::size_t protected_count = 0, already = 0, keyless = 0, failed = 0;
  for (std::size_t i = 0; i < names.size(); ++i) {
    try {
      const auto principal = session.parse_principal(names[i]);
      switch (protect_user(session, principal.get())) {
        case UserOutcome::Protected:
          ++protected_count;
          if (!all_users) std::cout << "protected " << names[i] << ": its keys are in the engine, the database holds markers\n";
          break;
        case UserOutcome::AlreadyProtected:
          ++already;
          if (!all_users) std::cout << names[i] << " is already protected\n";
          break;
        case UserOutcome::NoKeys:
          ++keyless;
          std::cout << names[i] << " has no keys: skipped\n";
          break;
      }
    } catch (const std::exception& error) {
      ++failed;
      if (progress) std::cerr << "\n";
      std::cerr << "mpcctl: " << names[i] << ": " << error.what() << "\n";
    }
    if (progress) show_progress(i + 1, names.size());
  }
  std::cout << protected_count << " user" << (protected_count == 1 ? "" : "s") << " protected";
  if (already > 0) std::cout << ", " << already << " already protected";
  if (keyless > 0) std::cout << ", " << keyless << " without keys";
  if (failed > 0) std::cout << ", " << failed << " failed";
  std::cout << "\n";
  return failed == 0 ? 0 : 1;
}

// The new password, NUL-terminated: from the terminal (asked twice), or the first line of stdin.
SecretBytes read_new_password(const KdbSession& session, const std::string& name) {
  SecretBytes buffer(1024);
  if (::isatty(STDIN_FILENO) == 1) {
    unsigned int size = static_cast<unsigned int>(buffer.size());
    const std::string prompt = "New password for " + name;
    const krb5_error_code code = krb5_read_password(session.context(), prompt.c_str(), "Enter it again",
                                                    reinterpret_cast<char*>(buffer.data()), &size);
    if (code != 0) throw tool_error(session.message("cannot read the new password", code));
    if (size == 0) throw tool_error("the new password is empty");
    if (size >= buffer.size()) throw tool_error("the new password is too long");
    buffer.data()[size] = 0;
    return SecretBytes(std::span<const std::uint8_t>(buffer.data(), size + 1));
  }
  std::size_t length = 0;
  int c = 0;
  while ((c = std::getchar()) != EOF && c != '\n') {
    if (length + 1 >= buffer.size()) throw tool_error("the new password is too long");
    buffer.data()[length++] = static_cast<std::uint8_t>(c);
  }
  if (length == 0) throw tool_error("no new password on stdin");
  buffer.data()[length] = 0;
  return SecretBytes(std::span<const std::uint8_t>(buffer.data(), length + 1));
}

int unprotect(const Arguments& arguments) {
  if (arguments.positional().size() != 1) throw tool_error("kdc unprotect: expected one principal name");
  const bool randkey = arguments.flag("randkey");
  if (randkey == arguments.flag("password"))
    throw tool_error("kdc unprotect: give --randkey or --password: the old key cannot be restored, it never "
                     "existed in one place after protection");
  KdbSession session(arguments.optional("realm"));
  const auto principal = session.parse_principal(arguments.positional()[0]);
  const std::string refusal = user_refusal(session, principal.get());
  if (!refusal.empty()) throw tool_error(refusal);
  const bool engine_configured = session.module_setting("mpc_cluster_config").has_value();
  SecretBytes password;
  if (!randkey) password = read_new_password(session, session.unparse(principal.get()));

  KdbSession::WriteLock lock(session);
  Entry entry = session.get(principal.get());
  if (!entry) throw tool_error("principal " + session.unparse(principal.get()) + " is not in the database");
  const std::string name = session.unparse(entry->princ);
  bool has_markers = false;
  for (int i = 0; i < entry->n_key_data; ++i) has_markers = has_markers || is_user_marker(session, entry->key_data[i]);
  if (!marks_protected(session.string_attribute(*entry, kProtectedAttribute)) && !has_markers)
    throw tool_error(name + " is not protected");
  session.change_keys(*entry, randkey ? nullptr : reinterpret_cast<const char*>(password.data()));
  password.clear();
  session.set_string_attribute(*entry, kProtectedAttribute, nullptr);
  session.put(*entry);  // the KDB module deletes the engine keys of the kvnos that are gone
  std::cout << "unprotected " << name << ": new " << (randkey ? "random keys" : "keys from the new password")
            << " at kvno " << newest_kvno(*entry) << " are in the database"
            << (engine_configured ? "; its engine keys were deleted (failures are logged above)"
                                  : "; no mpc_cluster_config: delete its engine keys with `mpcctl key delete`")
            << "\n";
  return 0;
}

// ---- rotate --------------------------------------------------------------------------

struct Retirement {
  std::vector<krb5_kvno> kept;     // older kvnos still in use, newest first
  std::vector<krb5_kvno> retired;  // older kvnos no valid ticket can use any more
};

// older: the existing marker kvnos, newest first; the new kvno succeeds older[0]. A kvno
// is retired once its successor has been in the engine for longer than `longest`, or at
// once with retire_now. created: engine creation times by kvno.
Retirement plan_retirement(const std::vector<krb5_kvno>& older, std::int64_t now,
                           const std::map<krb5_kvno, std::uint64_t>& created, std::int64_t longest,
                           bool retire_now) {
  Retirement plan;
  for (std::size_t i = 0; i < older.size(); ++i) {
    bool retire = retire_now;
    if (!retire && i > 0) {
      const auto successor = created.find(older[i - 1]);
      retire = successor != created.end() && now - static_cast<std::int64_t>(successor->second) > longest;
    }
    (retire ? plan.retired : plan.kept).push_back(older[i]);
  }
  return plan;
}

std::string kvno_list(const std::vector<krb5_kvno>& kvnos) {
  std::string out;
  for (const auto kvno : kvnos) out += (out.empty() ? "" : " ") + std::to_string(kvno);
  return out.empty() ? "none" : out;
}

int rotate(const Arguments& arguments) {
  if (arguments.positional().size() != 1) throw tool_error("kdc rotate: expected one principal name");
  const std::string cluster_file = arguments.required("cluster");
  auto cluster = connect(cluster_file);
  KdbSession session(arguments.optional("realm"));
  const auto principal = session.parse_principal(arguments.positional()[0]);
  check_principal(session, principal.get(), true);  // protected before: --force was given then
  const std::string requested = session.unparse(principal.get());

  Entry entry = session.get(principal.get());
  if (!entry) throw tool_error("principal " + requested + " is not in the database of realm " + session.realm());
  const std::string name = session.unparse(entry->princ);
  const auto before = key_state(session, *entry);
  const std::vector<krb5_kvno> older = marker_kvnos(session, *entry, name);
  if (older.front() >= kMaxKvno)
    throw tool_error(name + " is at kvno " + std::to_string(older.front()) + ", the largest the database stores");
  const krb5_kvno kvno = older.front() + 1;
  const std::string key_name = engine_key_name(name);
  const wire::KeyId key = engine_key(key_name, kvno);

  std::map<krb5_kvno, std::uint64_t> created;
  try {
    for (const auto& info : cluster->list_keys(key_name))
      if (info.key.name == key_name && info.key.algorithm == wire::KeyAlgorithm::Aes256Gcm)
        created[info.key.version] = info.created_unix;
  } catch (const std::exception& error) {
    throw tool_error(std::string("cannot list the engine's keys: ") + error.what() + "; nothing changed");
  }
  for (const auto old : older)
    if (created.count(old) == 0)
      std::cerr << "mpcctl: warning: " << wire::describe(engine_key(key_name, old))
                << " is missing from the engine; tickets under kvno " << old << " cannot be read\n";

  const Retirement plan = plan_retirement(older, now_unix(), created, longest_ticket_seconds(session, *entry),
                                          arguments.flag("retire-now"));
  {
    const SecretBytes ticket_key = random_ticket_key();
    import_ticket_key(*cluster, key, ticket_key);
  }

  try {
    KdbSession::WriteLock lock(session);
    Entry current = session.get(principal.get());
    if (!current || session.unparse(current->princ) != name || key_state(session, *current) != before)
      throw tool_error(name + " changed in the database while it was being rotated; run the command again");
    const auto marker =
        std::span(reinterpret_cast<const std::uint8_t*>(MPC_PROTECTED_KEY_MARKER), MPC_PROTECTED_KEY_MARKER_LEN);
    KeyDataList markers(session.context());
    // Newest first, as libkdb5 sorts key_data.
    krb5_kvno mkvno = session.append_encrypted(markers, MPC_KEY_GCM_ENCTYPE, kvno, marker);
    for (const auto old : plan.kept) {
      for (int i = 0; i < current->n_key_data; ++i) {
        krb5_key_data& kept = current->key_data[i];
        if (kept.key_data_kvno != old) continue;
        // Moved over as stored: its master key version may differ from the new marker's,
        // which libkdb5 handles per key (decrypt tries each master key).
        markers.records().push_back(kept);
        std::memset(&kept, 0, sizeof(kept));  // now owned by `markers`
      }
    }
    markers.install_into(*current);
    session.set_mkvno(*current, mkvno);
    session.set_last_key_change(*current);
    session.put(*current);
  } catch (const std::exception& error) {
    throw tool_error(std::string(error.what()) + "; " + withdraw(*cluster, cluster_file, key));
  }

  int status = 0;
  for (const auto old : plan.retired) {
    const wire::KeyId retired = engine_key(key_name, old);
    try {
      cluster->delete_key(retired);
    } catch (const client::ServerError& error) {
      // A server that never had this kvno (one replaced without a backup, which is why the
      // kvno is being retired) answers unknown_key; the others have deleted their shares.
      if (error.status() == wire::Status::UnknownKey) continue;
      std::cerr << "mpcctl: kvno " << old << " was removed from the database but deleting "
                << wire::describe(retired) << " failed (" << error.what() << "); remove it with `"
                << delete_command(cluster_file, retired) << "`\n";
      status = 1;
    } catch (const std::exception& error) {
      std::cerr << "mpcctl: kvno " << old << " was removed from the database but deleting "
                << wire::describe(retired) << " failed (" << error.what() << "); remove it with `"
                << delete_command(cluster_file, retired) << "`\n";
      status = 1;
    }
  }
  std::cout << "rotated " << name << ": kvno " << kvno << " is engine key " << wire::describe(key)
            << "; kept kvnos: " << kvno_list(plan.kept) << "; retired kvnos: " << kvno_list(plan.retired) << "\n";
  return status;
}

// ---- status --------------------------------------------------------------------------

struct MarkerState {
  krb5_kvno kvno = 0;
  wire::KeyAlgorithm algorithm = wire::KeyAlgorithm::Aes256Gcm;  // the engine key's
  std::string problem;  // empty when the marker decrypts to its marker bytes
};

struct PrincipalState {
  std::string name;
  std::optional<std::string> attribute;
  std::vector<MarkerState> markers;  // newest first
  std::vector<std::string> real_keys;
};

int status(const Arguments& arguments) {
  if (!arguments.positional().empty()) throw tool_error("kdc status: takes no principal name");
  KdbSession session(arguments.optional("realm"));
  std::vector<PrincipalState> principals;
  session.for_each([&](krb5_db_entry& entry) {
    PrincipalState state;
    state.attribute = session.string_attribute(entry, kProtectedAttribute);
    for (int i = 0; i < entry.n_key_data; ++i) {
      const krb5_key_data& key_data = entry.key_data[i];
      const auto user = user_algorithm(key_data.key_data_type[0]);
      bool user_marker = false;
      if (user) {
        try {
          user_marker = is_user_marker(session, key_data);
        } catch (const std::exception& error) {
          state.markers.push_back(MarkerState{key_data.key_data_kvno, *user, error.what()});
          continue;
        }
      }
      if (user_marker) {
        state.markers.push_back(MarkerState{key_data.key_data_kvno, *user, ""});
        continue;
      }
      if (!is_marker(key_data)) {
        state.real_keys.push_back(enctype_name(key_data.key_data_type[0]) + " kvno " +
                                  std::to_string(key_data.key_data_kvno));
        continue;
      }
      MarkerState marker{key_data.key_data_kvno, wire::KeyAlgorithm::Aes256Gcm, ""};
      try {
        const SecretBytes contents = session.decrypt_key(key_data);
        const auto expected =
            std::span(reinterpret_cast<const std::uint8_t*>(MPC_PROTECTED_KEY_MARKER), MPC_PROTECTED_KEY_MARKER_LEN);
        if (!equal_constant_time(contents.span(), expected)) marker.problem = "the marker's contents are not the marker";
      } catch (const std::exception& error) {
        marker.problem = error.what();
      }
      state.markers.push_back(marker);
    }
    if (!state.attribute && state.markers.empty()) return;
    state.name = session.unparse(entry.princ);
    std::sort(state.markers.begin(), state.markers.end(),
              [](const MarkerState& a, const MarkerState& b) { return a.kvno > b.kvno; });
    principals.push_back(std::move(state));
  });
  std::sort(principals.begin(), principals.end(),
            [](const PrincipalState& a, const PrincipalState& b) { return a.name < b.name; });

  using EngineId = std::tuple<std::string, std::uint32_t, wire::KeyAlgorithm>;
  std::optional<std::map<EngineId, std::uint64_t>> engine;
  std::string engine_problem;
  const auto cluster_file = arguments.optional("cluster");
  if (cluster_file) {
    try {
      auto cluster = connect(*cluster_file);
      engine.emplace();
      for (const auto& info : cluster->list_keys("kdc/"))
        if (info.key.algorithm == wire::KeyAlgorithm::Aes256Gcm || wire::is_krb_algorithm(info.key.algorithm))
          (*engine)[{info.key.name, info.key.version, info.key.algorithm}] = info.created_unix;
    } catch (const std::exception& error) {
      engine.reset();
      engine_problem = std::string("the engine cannot be asked: ") + error.what();
    }
  }

  int problems = 0;
  int protected_count = 0;
  std::set<EngineId> referenced;
  for (const auto& state : principals) {
    const bool marked = marks_protected(state.attribute);
    const std::string key_name = engine_key_name(state.name);
    protected_count += marked ? 1 : 0;
    std::cout << state.name << ": " << (marked ? "protected" : "not protected") << " (" << kProtectedAttribute
              << " = " << (state.attribute ? *state.attribute : "unset") << "), engine key name " << key_name << "\n";
    std::vector<std::string> issues;
    for (const auto& marker : state.markers) {
      // A user key names its enctype (a principal may have several per kvno); the krbtgt's
      // single ticket key is listed as before.
      std::cout << "  kvno " << marker.kvno
                << (marker.algorithm == wire::KeyAlgorithm::Aes256Gcm ? std::string()
                                                                      : std::string(" ") + wire::algorithm_name(marker.algorithm))
                << ": marker " << (marker.problem.empty() ? "ok" : "DAMAGED");
      if (!marker.problem.empty()) issues.push_back("kvno " + std::to_string(marker.kvno) + ": " + marker.problem);
      const EngineId id{key_name, marker.kvno, marker.algorithm};
      referenced.insert(id);
      if (engine) {
        const auto found = engine->find(id);
        if (found != engine->end()) {
          std::cout << ", engine key on all three servers (created " << format_utc(found->second) << ")\n";
        } else {
          std::cout << ", engine key MISSING\n";
          issues.push_back("kvno " + std::to_string(marker.kvno) + ": no engine key " +
                           wire::describe(wire::KeyId{key_name, marker.kvno, marker.algorithm}) +
                           " on all three servers");
        }
      } else {
        std::cout << ", engine key not checked\n";
      }
    }
    if (marked && !state.real_keys.empty()) {
      std::string keys;
      for (const auto& key : state.real_keys) keys += (keys.empty() ? "" : ", ") + key;
      issues.push_back("marked " + std::string(kProtectedAttribute) + " but holds real keys: " + keys);
    }
    if (marked && state.markers.empty()) issues.push_back("marked " + std::string(kProtectedAttribute) +
                                                          " but has no marker key");
    if (!marked && !state.markers.empty())
      issues.push_back("has marker keys but is not marked " + std::string(kProtectedAttribute) +
                       ": krb5kdc would take the markers for keys");
    for (const auto& issue : issues) std::cout << "  INCONSISTENT: " << issue << "\n";
    problems += static_cast<int>(issues.size());
  }
  if (engine) {
    for (const auto& [id, created] : *engine)
      if (referenced.count(id) == 0)
        std::cout << "note: engine key " << std::get<0>(id) << " kvno " << std::get<1>(id) << " "
                  << wire::algorithm_name(std::get<2>(id))
                  << " is not referenced by this database (another realm's, or left over)\n";
  } else if (!engine_problem.empty()) {
    std::cout << "INCONSISTENT: " << engine_problem << "\n";
    ++problems;
  }
  std::cout << protected_count << " protected principal" << (protected_count == 1 ? "" : "s") << ", " << problems
            << " problem" << (problems == 1 ? "" : "s") << (cluster_file ? "" : " (engine not checked: no --cluster)")
            << "\n";
  return problems == 0 ? 0 : kInconsistentExit;
}

}  // namespace

int run_kdc_command(const std::vector<std::string>& words) {
  // protect and rotate hold a krbtgt key or a ticket key in memory: a crash must not write
  // them to a core file (and nothing of this user may ptrace them out meanwhile).
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  if (words.empty() || words[0] == "help" || words[0] == "--help") {
    (words.empty() ? std::cerr : std::cout) << kKdcUsage;
    return words.empty() ? 2 : 0;
  }
  const std::string action = words[0];
  // -r REALM as kdb5_util and kadmin.local spell it.
  std::vector<std::string> rest;
  for (std::size_t i = 1; i < words.size(); ++i) rest.push_back(words[i] == "-r" ? "--realm" : words[i]);
  // --principal may repeat: taken out before the other options are parsed.
  std::vector<std::string> principals;
  std::vector<std::string> others;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == "--principal") {
      if (i + 1 >= rest.size()) throw tool_error("option --principal needs a value");
      principals.push_back(rest[++i]);
    } else {
      others.push_back(rest[i]);
    }
  }
  const Arguments arguments(others, {"force", "retire-now", "all-users", "randkey", "password"});
  if (action == "protect") {
    if (!principals.empty() || arguments.flag("all-users")) {
      arguments.allow_only({"realm", "all-users"});
      return protect_users(principals, arguments.flag("all-users"), arguments);
    }
    arguments.allow_only({"cluster", "realm", "force"});
    return protect(arguments);
  }
  if (!principals.empty()) throw tool_error("kdc " + action + ": --principal is an option of kdc protect only");
  if (action == "unprotect") {
    arguments.allow_only({"realm", "randkey", "password"});
    return unprotect(arguments);
  }
  if (action == "rotate") {
    arguments.allow_only({"cluster", "realm", "retire-now"});
    return rotate(arguments);
  }
  if (action == "status") {
    arguments.allow_only({"cluster", "realm"});
    return status(arguments);
  }
  throw tool_error("kdc: unknown action '" + action + "'\n" + kKdcUsage);
}

}  // namespace mpc::tools
