#include "common/log.hpp"

#include <gtest/gtest.h>

namespace mpc {
namespace {

TEST(JsonEscape, EscapesQuotesBackslashesAndControlBytes) {
  EXPECT_EQ(json_escape("a\"b\\c\n\x01"), "a\\\"b\\\\c\\n\\u0001");
  EXPECT_EQ(json_escape("plain"), "plain");
}

TEST(Logger, WritesOneJsonObjectPerLine) {
  testing::internal::CaptureStderr();
  Logger log("test");
  log.info("event \"x\"", {{"party", 2}, {"name", "krbtgt"}});
  log.debug("hidden below threshold");
  const std::string line = testing::internal::GetCapturedStderr();
  EXPECT_NE(line.find("\"level\":\"info\""), std::string::npos);
  EXPECT_NE(line.find("\"event\":\"event \\\"x\\\"\""), std::string::npos);
  EXPECT_NE(line.find("\"party\":2"), std::string::npos);
  EXPECT_NE(line.find("\"name\":\"krbtgt\""), std::string::npos);
  EXPECT_EQ(line.find("hidden"), std::string::npos);
  EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1);
}

}  // namespace
}  // namespace mpc
