// The exclusion and dispute records: what is written is read back after a "restart", removal
// means nobody is excluded (no dispute), and a damaged file is an error rather than "nobody".
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/error.hpp"
#include "store/exclusion_file.hpp"

namespace {

namespace fs = std::filesystem;
using mpc::store::Exclusion;

class ExclusionFileTest : public ::testing::Test {
 protected:
  ExclusionFileTest() {
    directory_ = fs::temp_directory_path() / ("exclusion_file_test." + std::to_string(::getpid()) + "." +
                                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(directory_);
    fs::create_directories(directory_);
    path_ = mpc::store::exclusion_path(directory_);
  }
  ~ExclusionFileTest() override { fs::remove_all(directory_); }
  void write_raw(const std::string& text) { std::ofstream(path_) << text; }
  fs::path directory_;
  fs::path path_;
};

TEST_F(ExclusionFileTest, NoFileMeansNobodyIsExcluded) { EXPECT_FALSE(mpc::store::read_exclusion(path_)); }

TEST_F(ExclusionFileTest, ARecordIsReadBackAndRemoved) {
  const Exclusion exclusion{2, 1795000000123, "operator: suspected host compromise, ticket 4711"};
  mpc::store::write_exclusion(path_, exclusion);
  EXPECT_EQ(mpc::store::read_exclusion(path_), exclusion);
  const Exclusion other{0, 1795000000999, "operator: moved"};
  mpc::store::write_exclusion(path_, other);
  EXPECT_EQ(mpc::store::read_exclusion(path_), other);
  EXPECT_FALSE(fs::exists(path_.string() + ".new"));
  mpc::store::write_exclusion(path_, std::nullopt);
  EXPECT_FALSE(fs::exists(path_));
  EXPECT_FALSE(mpc::store::read_exclusion(path_));
  mpc::store::write_exclusion(path_, std::nullopt);  // removing what is not there is no error
}

TEST_F(ExclusionFileTest, AReasonOfSeveralLinesIsRefusedAndTheOldRecordStays) {
  const Exclusion exclusion{1, 5, "operator: one"};
  mpc::store::write_exclusion(path_, exclusion);
  EXPECT_THROW(mpc::store::write_exclusion(path_, Exclusion{2, 6, "two\nparty 0 since 1 reason forged"}), mpc::Error);
  EXPECT_THROW(mpc::store::write_exclusion(path_, Exclusion{3, 6, "no such party"}), mpc::Error);
  EXPECT_EQ(mpc::store::read_exclusion(path_), exclusion);
}

TEST_F(ExclusionFileTest, ADamagedFileIsAnError) {
  for (const std::string text : {"", "party 3 since 5 reason x\n", "party 1 reason x since 5\n", "party x since 5 reason y\n",
                                 "party 1 since -5 reason y\n", "party 1 since 5 reason y\nparty 2 since 6 reason z\n",
                                 "garbage\n"}) {
    write_raw(text);
    EXPECT_THROW((void)mpc::store::read_exclusion(path_), mpc::Error) << "read '" << text << "'";
  }
  write_raw("party 1 since 5 reason \n");
  const auto empty_reason = mpc::store::read_exclusion(path_);
  ASSERT_TRUE(empty_reason);
  EXPECT_EQ(empty_reason->party, 1);
  EXPECT_EQ(empty_reason->reason, "");
}

TEST_F(ExclusionFileTest, DisputesAreReadBackAndRemoved) {
  const auto path = mpc::store::disputes_path(directory_);
  EXPECT_FALSE(mpc::store::read_disputes(path));
  const mpc::store::Disputes disputes{0b100, true, 0b011, 3, "mac_check failed in job 17 with server 3"};
  mpc::store::write_disputes(path, disputes);
  EXPECT_EQ(mpc::store::read_disputes(path), disputes);
  EXPECT_THROW(mpc::store::write_disputes(path, mpc::store::Disputes{0b1000, false, 0, 0, "x"}), mpc::Error);
  EXPECT_THROW(mpc::store::write_disputes(path, mpc::store::Disputes{1, false, 0b1000, 0, "x"}), mpc::Error);
  EXPECT_THROW(mpc::store::write_disputes(path, mpc::store::Disputes{1, false, 0, 0, "one\ntwo"}), mpc::Error);
  EXPECT_EQ(mpc::store::read_disputes(path), disputes);
  for (const std::string text : {"", "distrusts 8 suspended 0 reason x\n", "distrusts 1 suspended 2 reason x\n",
                                 "distrusts 1 reason x suspended 0\n", "suspended 0 distrusts 1 reason x\n",
                                 "distrusts 1 suspended 0 readmissions reason x\n",
                                 "distrusts 1 suspended 0 readmissions -1 reason x\n",
                                 "distrusts 1 suspended 1 failed_pairs 8 readmissions 0 reason x\n",
                                 "distrusts 1 suspended 1 failed_pairs readmissions 0 reason x\n",
                                 "distrusts 1 suspended 1 readmissions 0 failed_pairs 1 reason x\n"}) {
    std::ofstream(path) << text;
    EXPECT_THROW((void)mpc::store::read_disputes(path), mpc::Error) << "read '" << text << "'";
  }
  // A record written before readmissions were counted counts none.
  std::ofstream(path) << "distrusts 4 suspended 1 reason an older record\n";
  EXPECT_EQ(mpc::store::read_disputes(path), (mpc::store::Disputes{0b100, true, 0, 0, "an older record"}));
  // One written before pairs could fail holds none failed.
  std::ofstream(path) << "distrusts 0 suspended 1 readmissions 2 reason an older record\n";
  EXPECT_EQ(mpc::store::read_disputes(path), (mpc::store::Disputes{0, true, 0, 2, "an older record"}));
  mpc::store::write_disputes(path, std::nullopt);
  EXPECT_FALSE(mpc::store::read_disputes(path));
}

}  // namespace
