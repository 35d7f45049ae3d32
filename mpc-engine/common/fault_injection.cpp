#include "common/fault_injection.hpp"

#include <charconv>
#include <cstdlib>
#include <string>

namespace mpc::fault {

std::optional<std::uint64_t> armed(std::string_view name) {
  const char* setting = std::getenv("MPC_FAULT");
  if (setting == nullptr) return std::nullopt;
  std::string_view rest(setting);
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view text = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const std::string_view named = text.substr(0, text.find('='));
    if (named != name) continue;
    if (named.size() == text.size()) return 0;
    std::uint64_t value = 0;
    const std::string_view digits = text.substr(named.size() + 1);
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (error != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
    return value;
  }
  return std::nullopt;
}

}  // namespace mpc::fault
