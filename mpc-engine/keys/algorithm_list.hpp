// The names of the key algorithm table's rows as a list for messages ("a, b, c or d"), so that
// no message that offers the algorithms misses one.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "keys/key_algorithms.h"

namespace mpc::keys {

enum class AlgorithmSet { All, Kerberos };

inline std::string algorithm_list(AlgorithmSet set, std::string_view last_word = "or") {
  std::vector<const char*> names;
  for (const auto& row : mpc_key_algorithms)
    if (set == AlgorithmSet::All || mpc_key_is_kerberos(&row)) names.push_back(row.name);
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " " + std::string(last_word) + " " : std::string(", ");
    out += names[i];
  }
  return out;
}

}  // namespace mpc::keys
