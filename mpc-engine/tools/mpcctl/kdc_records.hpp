// What a protected principal looks like in the realm's database (keys/protected_key.h): the
// mark, the marker key_data of a krbtgt key and of users' keys, and the checks every kdc
// action makes on an entry before it changes it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "keys/protected_key.h"
#include "tools/mpcctl/kdb_session.hpp"
#include "wire/key_id.hpp"

namespace mpc::tools::kdc {

// The string attribute the KDB module reads and the value enrollment writes.
inline constexpr const char* kProtectedAttribute = MPC_PROTECTED_KEY_ATTRIBUTE;
inline constexpr const char* kProtectedValue = "true";
// key_data_kvno is 16 bits wide in the database.
inline constexpr krb5_kvno kMaxKvno = 0xffff;

// The bytes a krbtgt key's marker and a user key's marker hold, before master-key encryption.
std::span<const std::uint8_t> ticket_marker();
std::span<const std::uint8_t> user_marker();

// The rule of the KDB module (protected_key.h).
bool marks_protected(const std::optional<std::string>& value);
// A key_data of the private enctype: a krbtgt key's marker.
bool is_marker(const krb5_key_data& key_data);
// The engine algorithm of a user key of this enctype (a Kerberos row of the table), if it
// has one.
std::optional<wire::KeyAlgorithm> user_algorithm(krb5_enctype enctype);
// A key_data of a user enctype holding the user marker (decrypted with the master key).
bool is_user_marker(const KdbSession& session, const krb5_key_data& key_data);

bool has_component(krb5_const_principal principal, int index, const char* text);
std::string enctype_name(krb5_enctype enctype);

// Everything about an entry's keys and marking that a concurrent change would alter: read
// before the engine call and compared again, under the database lock, before writing.
std::vector<std::uint8_t> key_state(const KdbSession& session, krb5_db_entry& entry);
// The entry again (the caller holds the write lock): throws unless it is still `name` with
// the key state read before the engine call; `doing` ("protected") words the message.
Entry reread_unchanged(const KdbSession& session, krb5_const_principal principal, const std::string& name,
                       const std::vector<std::uint8_t>& before, const char* doing);
krb5_kvno newest_kvno(const krb5_db_entry& entry);
// Marker kvnos of a protected entry, newest first; throws unless every key is a marker.
std::vector<krb5_kvno> marker_kvnos(const KdbSession& session, krb5_db_entry& entry, const std::string& name);

}  // namespace mpc::tools::kdc
