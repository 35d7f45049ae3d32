#include "common/error.hpp"

namespace mpc {

const char* component_name(Component component) noexcept {
  switch (component) {
    case Component::Circuit: return "circuit";
    case Component::Protocol: return "protocol";
    case Component::Wire: return "wire";
    case Component::Transport: return "transport";
    case Component::Store: return "store";
    case Component::Settings: return "settings";
    case Component::Server: return "server";
    case Component::Client: return "client";
    case Component::Tool: return "tool";
  }
  return "unknown";
}

Error::Error(Component component, const std::string& message)
    : std::runtime_error(std::string(component_name(component)) + ": " + message), component_(component) {}

}  // namespace mpc
