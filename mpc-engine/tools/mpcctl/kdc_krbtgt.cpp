// kdc protect krbtgt/R and kdc rotate krbtgt/R: the realm's krbtgt key into the engine.
//
// A protected krbtgt key lives only in the engine, as an AES-256-GCM ticket key
// (keys/protected_key.h); the database keeps, per kvno, a marker key_data (enctype
// MPC_KEY_GCM_ENCTYPE, MPC_PROTECTED_KEY_MARKER encrypted under the master key) and the
// string attribute mpc-protected = true, from which the KDB module makes key handles for
// krb5kdc.
//
// Ordering: the engine key is stored before the database refers to it and deleted only
// after the database no longer does, so at no moment does the database hold a marker whose
// key is missing, nor lose its last usable key. A failed database write deletes the engine
// key just stored again.
#include <algorithm>
#include <cstring>
#include <ctime>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "common/secret.hpp"
#include "keys/key_algorithms.h"
#include "tools/mpcctl/kdc_actions.hpp"
#include "tools/mpcctl/kdc_engine_keys.hpp"
#include "tools/mpcctl/kdc_records.hpp"

namespace mpc::tools::kdc {
namespace {

// The key a krbtgt key's ticket key is derived from when it is first protected.
constexpr krb5_enctype kSourceEnctype = ENCTYPE_AES256_CTS_HMAC_SHA1_96;

std::int64_t now_unix() { return static_cast<std::int64_t>(std::time(nullptr)); }

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
  if (principal->length == 2 && has_component(principal, 0, "krbtgt")) {
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

}  // namespace

int protect_krbtgt(const Arguments& arguments) {
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

  // Three servers make the ticket key among themselves: it never exists anywhere, and no key
  // that a host held (the realm's old one included) tells anything about it. Two servers cannot
  // generate one: the key is derived from the realm's key, read once here.
  const wire::KeyId key = engine_key(engine_key_name(name), kvno);
  bool imported = false;
  if (cluster->generates_keys()) {
    imported = make_ticket_key(*cluster, key);
  } else {
    SecretBytes ticket_key(kTicketKeyBytes);
    {
      const SecretBytes existing = session.decrypt_key(*source);
      if (existing.size() != kTicketKeyBytes)
        throw tool_error(name + " kvno " + std::to_string(kvno) + ": the stored " + enctype_name(kSourceEnctype) +
                         " key has " + std::to_string(existing.size()) + " bytes, not 32");
      if (mpc_protected_key_ticket_key(existing.data(), existing.size(), ticket_key.data()) != 0)
        throw tool_error("cannot derive the ticket key (OpenSSL HMAC failed)");
    }
    imported = import_ticket_key(*cluster, key, ticket_key);
  }
  if (!imported)
    throw tool_error(wire::describe(key) + " was used by an earlier attempt that failed, and a deleted ticket "
                     "key's id is never imported again; give " + name + " a new kvno first (kadmin.local cpw "
                     "-randkey -keepold -e " + enctype_name(kSourceEnctype) + ":normal " + name +
                     "), then protect it; the database is unchanged");

  try {
    KdbSession::WriteLock lock(session);
    Entry current = reread_unchanged(session, principal.get(), name, before, "protected");
    KeyDataList markers(session.context());
    const krb5_kvno mkvno = session.append_encrypted(markers, MPC_KEY_GCM_ENCTYPE, kvno, ticket_marker());
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

// Kvnos a rotation tries past ones that earlier failed attempts spent.
constexpr int kRotationKvnoTries = 16;

int rotate_krbtgt(const Arguments& arguments) {
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
  krb5_kvno kvno = older.front() + 1;
  const std::string key_name = engine_key_name(name);

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
  // The first kvno above the database's whose engine id was never used: an earlier rotation
  // that failed halfway spent its kvno (a deleted ticket key's id is never imported again).
  {
    // Three servers generate the key (it exists nowhere); two import one made here.
    const SecretBytes ticket_key = cluster->generates_keys() ? SecretBytes() : random_ticket_key();
    for (int tries = 0;; ++tries, ++kvno) {
      if (tries == kRotationKvnoTries || kvno > kMaxKvno)
        throw tool_error("kvnos " + std::to_string(older.front() + 1) + " to " + std::to_string(kvno - 1) + " of " +
                         name + " were all used by earlier attempts that failed; nothing changed");
      if (cluster->generates_keys() ? make_ticket_key(*cluster, engine_key(key_name, kvno))
                                    : import_ticket_key(*cluster, engine_key(key_name, kvno), ticket_key))
        break;
      std::cerr << "mpcctl: " << wire::describe(engine_key(key_name, kvno))
                << " was used by an earlier attempt that failed; trying the next kvno\n";
    }
  }
  const wire::KeyId key = engine_key(key_name, kvno);

  try {
    KdbSession::WriteLock lock(session);
    Entry current = reread_unchanged(session, principal.get(), name, before, "rotated");
    KeyDataList markers(session.context());
    // Newest first, as libkdb5 sorts key_data.
    krb5_kvno mkvno = session.append_encrypted(markers, MPC_KEY_GCM_ENCTYPE, kvno, ticket_marker());
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

}  // namespace mpc::tools::kdc
