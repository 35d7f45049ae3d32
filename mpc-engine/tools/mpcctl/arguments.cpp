#include "tools/mpcctl/arguments.hpp"

#include "common/error.hpp"

namespace mpc::tools {

Arguments::Arguments(const std::vector<std::string>& words, const std::set<std::string>& flags) {
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (word.rfind("--", 0) != 0) {
      positional_.push_back(word);
      continue;
    }
    const std::string name = word.substr(2);
    if (flags.count(name) != 0) {
      flags_.insert(name);
      continue;
    }
    if (i + 1 >= words.size()) throw Error(Component::Tool, "option --" + name + " needs a value");
    values_[name] = words[++i];
  }
}

std::string Arguments::required(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw Error(Component::Tool, "missing option --" + name);
  return it->second;
}

std::optional<std::string> Arguments::optional(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string Arguments::value_or(const std::string& name, const std::string& fallback) const {
  return optional(name).value_or(fallback);
}

std::uint64_t Arguments::number(const std::string& name, std::uint64_t fallback, std::uint64_t max) const {
  auto text = optional(name);
  if (!text) return fallback;
  std::uint64_t value = 0;
  if (text->empty()) throw Error(Component::Tool, "--" + name + " must be a number");
  for (char c : *text) {
    if (c < '0' || c > '9') throw Error(Component::Tool, "--" + name + " must be a number, got '" + *text + "'");
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
    if (value > max) throw Error(Component::Tool, "--" + name + " must be at most " + std::to_string(max));
  }
  return value;
}

void Arguments::allow_only(const std::set<std::string>& known) const {
  for (const auto& [name, value] : values_)
    if (known.count(name) == 0) throw Error(Component::Tool, "unknown option --" + name);
  for (const auto& name : flags_)
    if (known.count(name) == 0) throw Error(Component::Tool, "unknown option --" + name);
}

}  // namespace mpc::tools
