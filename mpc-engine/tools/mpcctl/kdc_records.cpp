#include "tools/mpcctl/kdc_records.hpp"

#include <algorithm>
#include <cstring>
#include <functional>

#include "common/secret.hpp"
#include "keys/key_algorithms.h"
#include "tools/mpcctl/kdc_actions.hpp"

namespace mpc::tools::kdc {

std::span<const std::uint8_t> ticket_marker() {
  return {reinterpret_cast<const std::uint8_t*>(MPC_PROTECTED_KEY_MARKER), MPC_PROTECTED_KEY_MARKER_LEN};
}

std::span<const std::uint8_t> user_marker() {
  return {reinterpret_cast<const std::uint8_t*>(MPC_PROTECTED_KEY_USER_MARKER), MPC_PROTECTED_KEY_USER_MARKER_LEN};
}

bool marks_protected(const std::optional<std::string>& value) {
  return mpc_protected_key_is_marked(value ? value->c_str() : nullptr) != 0;
}

bool is_marker(const krb5_key_data& key_data) { return key_data.key_data_type[0] == MPC_KEY_GCM_ENCTYPE; }

std::optional<wire::KeyAlgorithm> user_algorithm(krb5_enctype enctype) {
  const mpc_key_algorithm_info* row = mpc_key_algorithm_by_enctype(enctype);
  if (!mpc_key_is_kerberos(row)) return std::nullopt;
  return static_cast<wire::KeyAlgorithm>(row->id);
}

bool is_user_marker(const KdbSession& session, const krb5_key_data& key_data) {
  if (!user_algorithm(key_data.key_data_type[0])) return false;
  const SecretBytes contents = session.decrypt_key(key_data);
  const auto expected = user_marker();
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

Entry reread_unchanged(const KdbSession& session, krb5_const_principal principal, const std::string& name,
                       const std::vector<std::uint8_t>& before, const char* doing) {
  Entry current = session.get(principal);
  if (!current || session.unparse(current->princ) != name || key_state(session, *current) != before)
    throw tool_error(name + " changed in the database while it was being " + doing + "; run the command again");
  return current;
}

krb5_kvno newest_kvno(const krb5_db_entry& entry) {
  krb5_kvno newest = 0;
  for (int i = 0; i < entry.n_key_data; ++i)
    newest = std::max<krb5_kvno>(newest, entry.key_data[i].key_data_kvno);
  return newest;
}

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

}  // namespace mpc::tools::kdc
