// kdc protect --principal P... | --all-users and kdc unprotect P: users' and services' keys
// into the engine and back out.
//
// The KDB module enrols the Kerberos keys (keys/key_algorithms.h) of an entry marked
// mpc-protected when it is stored; protect sets the mark and stores the entry through the
// module, then checks that only markers were stored. unprotect gives a protected user new
// keys and clears the mark in one write; the module then deletes its engine keys.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "common/secret.hpp"
#include "keys/algorithm_list.hpp"
#include "tools/mpcctl/kdc_actions.hpp"
#include "tools/mpcctl/kdc_records.hpp"

namespace mpc::tools::kdc {
namespace {

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
                       std::to_string(key_data.key_data_kvno) + "): only " +
                       keys::algorithm_list(keys::AlgorithmSet::Kerberos, "and") +
                       " keys can be protected; change its keys first, e.g. kadmin.local cpw -e "
                       "aes256-cts-hmac-sha1-96:normal " + name);
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

}  // namespace

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

int unprotect_user(const Arguments& arguments) {
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

}  // namespace mpc::tools::kdc
