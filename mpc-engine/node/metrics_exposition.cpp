#include "node/metrics_exposition.hpp"

#include <cstdio>

namespace mpc::node {

void Exposition::metric(std::string_view name, std::string_view type, std::string_view help) {
  text_ += "# HELP ";
  text_ += name;
  text_ += ' ';
  text_ += help;
  text_ += "\n# TYPE ";
  text_ += name;
  text_ += ' ';
  text_ += type;
  text_ += '\n';
}

void Exposition::sample(std::string_view name, std::string_view labels, std::uint64_t value) {
  sample_text(name, labels, std::to_string(value));
}

void Exposition::sample_seconds(std::string_view name, std::string_view labels, double value, int decimals) {
  char text[48];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  sample_text(name, labels, text);
}

void Exposition::one(std::string_view name, std::string_view type, std::string_view help, std::uint64_t value) {
  metric(name, type, help);
  sample(name, "", value);
}

void Exposition::sample_text(std::string_view name, std::string_view labels, std::string_view value) {
  text_ += name;
  if (!labels.empty()) {
    text_ += '{';
    text_ += labels;
    text_ += '}';
  }
  text_ += ' ';
  text_ += value;
  text_ += '\n';
}

}  // namespace mpc::node
