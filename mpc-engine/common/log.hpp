// Structured logs: one JSON object per line on stderr (journald keeps them as is).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace mpc {

enum class LogLevel { Debug, Info, Warning, Error };

// A settings file's log_level: "debug", "info", "warning" or "error" (anything else: Info;
// the settings readers check the name).
LogLevel log_level_named(std::string_view name);

struct LogField {
  LogField(std::string_view k, std::string_view v) : key(k), value(v), quoted(true) {}
  LogField(std::string_view k, const char* v) : key(k), value(v), quoted(true) {}
  LogField(std::string_view k, const std::string& v) : key(k), value(v), quoted(true) {}
  LogField(std::string_view k, std::int64_t v) : key(k), value(std::to_string(v)), quoted(false) {}
  LogField(std::string_view k, std::uint64_t v) : key(k), value(std::to_string(v)), quoted(false) {}
  LogField(std::string_view k, int v) : key(k), value(std::to_string(v)), quoted(false) {}
  LogField(std::string_view k, unsigned v) : key(k), value(std::to_string(v)), quoted(false) {}
  LogField(std::string_view k, double v) : key(k), value(std::to_string(v)), quoted(false) {}
  std::string key;
  std::string value;
  bool quoted;
};

class Logger {
 public:
  explicit Logger(std::string component, LogLevel threshold = LogLevel::Info)
      : component_(std::move(component)), threshold_(threshold) {}
  void log(LogLevel level, std::string_view event, std::initializer_list<LogField> fields = {}) const;
  void debug(std::string_view event, std::initializer_list<LogField> fields = {}) const { log(LogLevel::Debug, event, fields); }
  void info(std::string_view event, std::initializer_list<LogField> fields = {}) const { log(LogLevel::Info, event, fields); }
  void warn(std::string_view event, std::initializer_list<LogField> fields = {}) const { log(LogLevel::Warning, event, fields); }
  void error(std::string_view event, std::initializer_list<LogField> fields = {}) const { log(LogLevel::Error, event, fields); }
  void set_threshold(LogLevel level) { threshold_ = level; }

 private:
  std::string component_;
  LogLevel threshold_;
};

std::string json_escape(std::string_view text);

}  // namespace mpc
