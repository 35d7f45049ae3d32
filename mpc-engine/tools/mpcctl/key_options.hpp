// --name/--kvno/--alg into a KeyId, shared by the commands that name a key.
#pragma once

#include "common/error.hpp"
#include "keys/algorithm_list.hpp"
#include "tools/mpcctl/arguments.hpp"
#include "wire/key_id.hpp"

namespace mpc::tools {

inline wire::KeyId key_id_from(const Arguments& arguments) {
  wire::KeyId key;
  key.name = arguments.required("name");
  wire::validate_key_name(key.name);
  key.version = static_cast<std::uint32_t>(arguments.number("kvno", 1, 0xffffffffu));
  const auto algorithm = wire::parse_algorithm(arguments.required("alg"));
  if (!algorithm) throw Error(Component::Tool, "--alg must be " + keys::algorithm_list(keys::AlgorithmSet::All));
  key.algorithm = *algorithm;
  return key;
}

}  // namespace mpc::tools
