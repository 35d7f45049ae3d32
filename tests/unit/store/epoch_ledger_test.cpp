// The epoch ledger: an epoch opens once, in this run and after a restart, and a record cut
// short by a crash neither counts nor spoils the records after it.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <atomic>
#include <thread>
#include <vector>

#include "common/error.hpp"
#include "store/epoch_ledger.hpp"

namespace {

namespace fs = std::filesystem;
using mpc::store::EpochLedger;

class EpochLedgerTest : public ::testing::Test {
 protected:
  EpochLedgerTest() {
    directory_ = fs::temp_directory_path() / ("epoch_ledger_test." + std::to_string(::getpid()) + "." +
                                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(directory_);
    fs::create_directories(directory_);
    path_ = mpc::store::epoch_ledger_path(directory_);
  }
  ~EpochLedgerTest() override { fs::remove_all(directory_); }
  fs::path directory_;
  fs::path path_;
};

TEST_F(EpochLedgerTest, AnEpochOpensOnce) {
  EpochLedger ledger(path_);
  EXPECT_TRUE(ledger.open(0xE1));
  EXPECT_TRUE(ledger.open(0xE2));
  EXPECT_FALSE(ledger.open(0xE1));
  EXPECT_FALSE(ledger.open(0xE2));
  EXPECT_FALSE(ledger.open(0));  // "none", never an epoch
  EXPECT_EQ(ledger.size(), 2u);
}

TEST_F(EpochLedgerTest, EveryEpochStaysOpenedAfterARestart) {
  {
    EpochLedger ledger(path_);
    ASSERT_TRUE(ledger.open(0x0102030405060708));
    ASSERT_TRUE(ledger.open(0xE2));
  }
  EpochLedger ledger(path_);
  EXPECT_FALSE(ledger.open(0x0102030405060708));
  EXPECT_FALSE(ledger.open(0xE2));
  EXPECT_TRUE(ledger.open(0xE3));
  struct stat info {};
  ASSERT_EQ(::stat(path_.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  EXPECT_EQ(info.st_size, 24);
  std::ifstream in(path_, std::ios::binary);
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(std::vector<unsigned char>(bytes.begin(), bytes.begin() + 8),
            (std::vector<unsigned char>{1, 2, 3, 4, 5, 6, 7, 8}));  // big-endian, as documented
}

TEST_F(EpochLedgerTest, ARecordCutShortIsDroppedAndOverwritten) {
  {
    EpochLedger ledger(path_);
    ASSERT_TRUE(ledger.open(0xE1));
  }
  {
    std::ofstream out(path_, std::ios::binary | std::ios::app);
    out.write("\x00\x00\x00", 3);  // a crash in the middle of the next record
  }
  {
    EpochLedger ledger(path_);
    EXPECT_FALSE(ledger.open(0xE1));
    EXPECT_TRUE(ledger.open(0xE2));
  }
  EXPECT_EQ(fs::file_size(path_), 16u);
  EpochLedger ledger(path_);
  EXPECT_FALSE(ledger.open(0xE2));
}

TEST_F(EpochLedgerTest, InMemoryLedgerForgetsAtItsEnd) {
  {
    EpochLedger ledger({});
    ASSERT_TRUE(ledger.open(0xE1));
    EXPECT_FALSE(ledger.open(0xE1));
  }
  EpochLedger ledger({});
  EXPECT_TRUE(ledger.open(0xE1));
}

TEST_F(EpochLedgerTest, ConcurrentOpensOfOneEpochLetExactlyOneThrough) {
  EpochLedger ledger(path_);
  std::atomic<int> opened{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] {
      if (ledger.open(0xE1)) ++opened;
    });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(opened.load(), 1);
}

TEST_F(EpochLedgerTest, AnUnwritablePlaceIsAClearError) {
  EXPECT_THROW(EpochLedger(directory_ / "missing" / "opened-epochs"), mpc::Error);
}

}  // namespace
