// circuit list / stats / write.
#include <fstream>
#include <iostream>

#include "circuits/bristol.hpp"
#include "circuits/catalogue.hpp"
#include "circuits/stats.hpp"
#include "common/error.hpp"
#include "tools/mpcctl/arguments.hpp"
#include "tools/mpcctl/commands.hpp"

namespace mpc::tools {

int run_circuit_command(const std::vector<std::string>& words) {
  if (words.empty()) throw Error(Component::Tool, "circuit: expected list, stats or write");
  const std::string action = words[0];
  const Arguments arguments(std::vector<std::string>(words.begin() + 1, words.end()), {});
  if (action == "list") {
    arguments.allow_only({});
    for (const auto& name : circuits::catalogue_names()) std::cout << name << "\n";
    return 0;
  }
  if (action == "stats") {
    arguments.allow_only({"bristol"});
    circuits::Circuit circuit;
    if (auto file = arguments.optional("bristol")) {
      circuit = circuits::read_bristol_file(*file);
    } else {
      if (arguments.positional().size() != 1) throw Error(Component::Tool, "circuit stats: give a NAME or --bristol FILE");
      circuit = circuits::build_named_circuit(arguments.positional()[0]);
    }
    std::cout << circuits::format_stats(circuits::compute_stats(circuit));
    return 0;
  }
  if (action == "write") {
    arguments.allow_only({"out"});
    if (arguments.positional().size() != 1) throw Error(Component::Tool, "circuit write: give a NAME");
    const auto circuit = circuits::build_named_circuit(arguments.positional()[0]);
    std::ofstream out(arguments.required("out"));
    if (!out) throw Error(Component::Tool, "cannot write " + arguments.required("out"));
    circuits::write_bristol(circuit, out);
    return 0;
  }
  throw Error(Component::Tool, "circuit: unknown action '" + action + "'");
}

}  // namespace mpc::tools
