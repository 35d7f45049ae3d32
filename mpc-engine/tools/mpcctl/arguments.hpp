// Command-line options for mpcctl: "--name value" pairs, "--flag" switches and
// positional words, with errors that say which option is wrong.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace mpc::tools {

class Arguments {
 public:
  // `flags` lists the options that take no value.
  Arguments(const std::vector<std::string>& words, const std::set<std::string>& flags);
  std::string required(const std::string& name) const;
  std::optional<std::string> optional(const std::string& name) const;
  std::string value_or(const std::string& name, const std::string& fallback) const;
  std::uint64_t number(const std::string& name, std::uint64_t fallback, std::uint64_t max) const;
  bool flag(const std::string& name) const { return flags_.count(name) != 0; }
  const std::vector<std::string>& positional() const { return positional_; }
  // Throws if any option was given that is not in `known` (typos must not pass silently).
  void allow_only(const std::set<std::string>& known) const;

 private:
  std::map<std::string, std::string> values_;
  std::set<std::string> flags_;
  std::vector<std::string> positional_;
};

}  // namespace mpc::tools
