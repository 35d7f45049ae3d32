#include "common/log.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace mpc {

LogLevel log_level_named(std::string_view name) {
  if (name == "debug") return LogLevel::Debug;
  if (name == "warning") return LogLevel::Warning;
  if (name == "error") return LogLevel::Error;
  return LogLevel::Info;
}

std::string json_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  for (unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
          out += buffer;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  return out;
}

void Logger::log(LogLevel level, std::string_view event, std::initializer_list<LogField> fields) const {
  if (level < threshold_) return;
  static constexpr const char* kNames[] = {"debug", "info", "warning", "error"};
  const auto now = std::chrono::system_clock::now();
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(micros / 1000000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[40];
  std::snprintf(stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, static_cast<long long>(micros % 1000000));
  std::string line = "{\"ts\":\"";
  line += stamp;
  line += "\",\"level\":\"";
  line += kNames[static_cast<int>(level)];
  line += "\",\"component\":\"" + json_escape(component_) + "\",\"event\":\"" + json_escape(event) + "\"";
  for (const auto& field : fields) {
    line += ",\"" + json_escape(field.key) + "\":";
    line += field.quoted ? "\"" + json_escape(field.value) + "\"" : field.value;
  }
  line += "}\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace mpc
