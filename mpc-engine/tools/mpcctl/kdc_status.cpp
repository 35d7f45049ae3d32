// kdc status: every principal that is marked protected or holds a marker, whether its markers
// are intact and whether the engine holds their keys, and the engine's kdc/ keys no entry of
// this database refers to. Changes nothing; exits kInconsistentExit when it finds a problem.
#include <algorithm>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "common/secret.hpp"
#include "tools/mpcctl/kdc_actions.hpp"
#include "tools/mpcctl/kdc_engine_keys.hpp"
#include "tools/mpcctl/kdc_records.hpp"
#include "tools/mpcctl/utc_time.hpp"

namespace mpc::tools::kdc {
namespace {

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

using EngineId = std::tuple<std::string, std::uint32_t, wire::KeyAlgorithm>;

// The engine's kdc/ keys with their creation times; no keys when they could not be listed.
struct EngineKeys {
  std::optional<std::map<EngineId, std::uint64_t>> keys;
  std::string problem;  // why they could not be listed; empty without --cluster
};

// Adds one key_data of an entry to its state: a user key's marker, a krbtgt key's marker, or
// a real key.
void read_key_data(const KdbSession& session, const krb5_key_data& key_data, PrincipalState& state) {
  const auto user = user_algorithm(key_data.key_data_type[0]);
  if (user) {
    bool user_marker = false;
    try {
      user_marker = is_user_marker(session, key_data);
    } catch (const std::exception& error) {
      state.markers.push_back(MarkerState{key_data.key_data_kvno, *user, error.what()});
      return;
    }
    if (user_marker) {
      state.markers.push_back(MarkerState{key_data.key_data_kvno, *user, ""});
      return;
    }
  }
  if (!is_marker(key_data)) {
    state.real_keys.push_back(enctype_name(key_data.key_data_type[0]) + " kvno " +
                              std::to_string(key_data.key_data_kvno));
    return;
  }
  MarkerState marker{key_data.key_data_kvno, wire::KeyAlgorithm::Aes256Gcm, ""};
  try {
    const SecretBytes contents = session.decrypt_key(key_data);
    if (!equal_constant_time(contents.span(), ticket_marker())) marker.problem = "the marker's contents are not the marker";
  } catch (const std::exception& error) {
    marker.problem = error.what();
  }
  state.markers.push_back(marker);
}

// Every principal that is marked or holds a marker, by name.
std::vector<PrincipalState> read_principals(const KdbSession& session) {
  std::vector<PrincipalState> principals;
  session.for_each([&](krb5_db_entry& entry) {
    PrincipalState state;
    state.attribute = session.string_attribute(entry, kProtectedAttribute);
    for (int i = 0; i < entry.n_key_data; ++i) read_key_data(session, entry.key_data[i], state);
    if (!state.attribute && state.markers.empty()) return;
    state.name = session.unparse(entry.princ);
    std::sort(state.markers.begin(), state.markers.end(),
              [](const MarkerState& a, const MarkerState& b) { return a.kvno > b.kvno; });
    principals.push_back(std::move(state));
  });
  std::sort(principals.begin(), principals.end(),
            [](const PrincipalState& a, const PrincipalState& b) { return a.name < b.name; });
  return principals;
}

EngineKeys read_engine_keys(const std::optional<std::string>& cluster_file) {
  EngineKeys engine;
  if (!cluster_file) return engine;
  try {
    auto cluster = connect(*cluster_file);
    engine.keys.emplace();
    for (const auto& info : cluster->list_keys("kdc/"))
      if (info.key.algorithm == wire::KeyAlgorithm::Aes256Gcm || wire::is_krb_algorithm(info.key.algorithm))
        (*engine.keys)[{info.key.name, info.key.version, info.key.algorithm}] = info.created_unix;
  } catch (const std::exception& error) {
    engine.keys.reset();
    engine.problem = std::string("the engine cannot be asked: ") + error.what();
  }
  return engine;
}

// Prints one principal's state; returns how many problems it has. Adds the engine keys its
// markers refer to to `referenced`.
int report_principal(const PrincipalState& state, const EngineKeys& engine, std::set<EngineId>& referenced) {
  const bool marked = marks_protected(state.attribute);
  const std::string key_name = engine_key_name(state.name);
  std::cout << state.name << ": " << (marked ? "protected" : "not protected") << " (" << kProtectedAttribute
            << " = " << (state.attribute ? *state.attribute : "unset") << "), engine key name " << key_name << "\n";
  std::vector<std::string> issues;
  for (const auto& marker : state.markers) {
    // A user key names its enctype (a principal may have several per kvno); a krbtgt key has
    // one ticket key per kvno, which needs no name.
    std::cout << "  kvno " << marker.kvno
              << (marker.algorithm == wire::KeyAlgorithm::Aes256Gcm ? std::string()
                                                                    : std::string(" ") + wire::algorithm_name(marker.algorithm))
              << ": marker " << (marker.problem.empty() ? "ok" : "DAMAGED");
    if (!marker.problem.empty()) issues.push_back("kvno " + std::to_string(marker.kvno) + ": " + marker.problem);
    const EngineId id{key_name, marker.kvno, marker.algorithm};
    referenced.insert(id);
    if (engine.keys) {
      const auto found = engine.keys->find(id);
      if (found != engine.keys->end()) {
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
  return static_cast<int>(issues.size());
}

}  // namespace

int report_status(const Arguments& arguments) {
  if (!arguments.positional().empty()) throw tool_error("kdc status: takes no principal name");
  KdbSession session(arguments.optional("realm"));
  const std::vector<PrincipalState> principals = read_principals(session);
  const auto cluster_file = arguments.optional("cluster");
  const EngineKeys engine = read_engine_keys(cluster_file);

  int problems = 0;
  int protected_count = 0;
  std::set<EngineId> referenced;
  for (const auto& state : principals) {
    protected_count += marks_protected(state.attribute) ? 1 : 0;
    problems += report_principal(state, engine, referenced);
  }
  if (engine.keys) {
    for (const auto& [id, created] : *engine.keys)
      if (referenced.count(id) == 0)
        std::cout << "note: engine key " << std::get<0>(id) << " kvno " << std::get<1>(id) << " "
                  << wire::algorithm_name(std::get<2>(id))
                  << " is not referenced by this database (another realm's, or left over)\n";
  } else if (!engine.problem.empty()) {
    std::cout << "INCONSISTENT: " << engine.problem << "\n";
    ++problems;
  }
  std::cout << protected_count << " protected principal" << (protected_count == 1 ? "" : "s") << ", " << problems
            << " problem" << (problems == 1 ? "" : "s") << (cluster_file ? "" : " (engine not checked: no --cluster)")
            << "\n";
  return problems == 0 ? 0 : kInconsistentExit;
}

}  // namespace mpc::tools::kdc
