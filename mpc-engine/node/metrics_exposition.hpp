// The Prometheus text exposition format 0.0.4, written line by line: a metric's HELP and TYPE,
// then its samples. The callers choose names and labels (node/metrics_text.hpp says which).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace mpc::node {

class Exposition {
 public:
  void metric(std::string_view name, std::string_view type, std::string_view help);
  void sample(std::string_view name, std::string_view labels, std::uint64_t value);
  // A value in seconds with `decimals` digits after the point.
  void sample_seconds(std::string_view name, std::string_view labels, double value, int decimals = 3);
  // A metric of one unlabelled sample.
  void one(std::string_view name, std::string_view type, std::string_view help, std::uint64_t value);
  std::string take() { return std::move(text_); }

 private:
  void sample_text(std::string_view name, std::string_view labels, std::string_view value);

  std::string text_;
};

}  // namespace mpc::node
