#include "store/epoch_ledger.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <vector>

#include "common/error.hpp"

namespace mpc::store {

namespace {

constexpr std::size_t kRecordBytes = 8;

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what) {
  throw Error(Component::Store, "epoch ledger " + path.string() + ": " + what + ": " + std::strerror(errno));
}

}  // namespace

std::filesystem::path epoch_ledger_path(const std::filesystem::path& store_directory) {
  return store_directory / "opened-epochs";
}

EpochLedger::EpochLedger(const std::filesystem::path& path) : path_(path) {
  if (path_.empty()) return;
  FileDescriptor file(::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (file.get() < 0) fail(path_, "cannot open");
  struct stat info {};
  if (::fstat(file.get(), &info) != 0) fail(path_, "cannot stat");
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(info.st_size));
  std::size_t read_so_far = 0;
  while (read_so_far < bytes.size()) {
    const ssize_t got = ::pread(file.get(), bytes.data() + read_so_far, bytes.size() - read_so_far,
                                static_cast<off_t>(read_so_far));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) fail(path_, "cannot read");
    read_so_far += static_cast<std::size_t>(got);
  }
  const std::size_t whole = bytes.size() / kRecordBytes * kRecordBytes;
  for (std::size_t at = 0; at < whole; at += kRecordBytes) {
    std::uint64_t epoch = 0;
    for (std::size_t i = 0; i < kRecordBytes; ++i) epoch = (epoch << 8) | bytes[at + i];
    opened_.insert(epoch);
  }
  // Appends must start on a record boundary.
  if (whole != bytes.size() && ::ftruncate(file.get(), static_cast<off_t>(whole)) != 0)
    fail(path_, "cannot drop a record cut short");
  end_ = whole;
  file_.reset(file.release());
}

bool EpochLedger::open(std::uint64_t epoch) {
  if (epoch == 0) return false;
  std::lock_guard lock(mutex_);
  if (opened_.count(epoch) != 0) return false;
  if (file_.get() >= 0) {
    std::array<std::uint8_t, kRecordBytes> record{};
    for (std::size_t i = 0; i < kRecordBytes; ++i) record[i] = static_cast<std::uint8_t>(epoch >> (56 - 8 * i));
    std::size_t written = 0;
    while (written < record.size()) {
      // At the end of the last whole record: a write that failed halfway is overwritten.
      const ssize_t put = ::pwrite(file_.get(), record.data() + written, record.size() - written,
                                   static_cast<off_t>(end_ + written));
      if (put < 0 && errno == EINTR) continue;
      if (put <= 0) fail(path_, "cannot append");
      written += static_cast<std::size_t>(put);
    }
    if (::fdatasync(file_.get()) != 0) fail(path_, "cannot make an epoch durable");
    end_ += kRecordBytes;
  }
  opened_.insert(epoch);
  return true;
}

std::size_t EpochLedger::size() const {
  std::lock_guard lock(mutex_);
  return opened_.size();
}

}  // namespace mpc::store
