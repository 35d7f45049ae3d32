#include "store/exclusion_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/error.hpp"
#include "common/file_descriptor.hpp"

namespace mpc::store {
namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what) {
  throw Error(Component::Store, "record " + path.string() + ": " + what);
}

[[noreturn]] void fail_errno(const std::filesystem::path& path, const std::string& what) {
  fail(path, what + ": " + std::strerror(errno));
}

template <typename T>
bool parse_number(std::string_view text, T& out) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc() && end == text.data() + text.size();
}

void sync_directory(const std::filesystem::path& path) {
  const auto directory = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  FileDescriptor dir(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0 || ::fsync(dir.get()) != 0) fail_errno(path, "cannot make the directory durable");
}

// Replaces the file with `bytes` (nullopt removes it), durably before it returns.
void replace_durably(const std::filesystem::path& path, const std::optional<std::string>& bytes) {
  if (!bytes) {
    std::error_code error;
    if (!std::filesystem::remove(path, error) && error) fail(path, "cannot be removed: " + error.message());
    sync_directory(path);
    return;
  }
  const std::filesystem::path temporary = path.string() + ".new";
  {
    FileDescriptor file(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    if (file.get() < 0) fail_errno(temporary, "cannot be created");
    std::size_t written = 0;
    while (written < bytes->size()) {
      const ssize_t wrote = ::write(file.get(), bytes->data() + written, bytes->size() - written);
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote <= 0) fail_errno(temporary, "cannot be written");
      written += static_cast<std::size_t>(wrote);
    }
    if (::fsync(file.get()) != 0) fail_errno(temporary, "cannot be made durable");
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) fail_errno(path, "cannot be replaced");
  sync_directory(path);
}

// The one line of a record file; nullopt when there is no file.
std::optional<std::string> read_line(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) {
    if (!std::filesystem::exists(path)) return std::nullopt;
    fail(path, "cannot be read");
  }
  std::string line;
  if (!std::getline(in, line)) fail(path, "is empty");
  std::string rest;
  if (std::getline(in, rest) && !rest.empty()) fail(path, "holds more than one line");
  return line;
}

}  // namespace

std::filesystem::path exclusion_path(const std::filesystem::path& store_directory) {
  return store_directory / "excluded-server";
}

std::optional<Exclusion> read_exclusion(const std::filesystem::path& path) {
  const auto line = read_line(path);
  if (!line) return std::nullopt;
  // party <n> since <ms> reason <text>
  constexpr std::string_view kParty = "party ", kSince = " since ", kReason = " reason ";
  const std::string_view text(*line);
  const auto since_at = text.find(kSince), reason_at = text.find(kReason);
  if (!text.starts_with(kParty) || since_at == std::string_view::npos || reason_at == std::string_view::npos ||
      reason_at < since_at)
    fail(path, "is not a record of the form 'party N since MS reason TEXT'");
  Exclusion exclusion;
  if (!parse_number(text.substr(kParty.size(), since_at - kParty.size()), exclusion.party) || exclusion.party < 0 ||
      exclusion.party > 2)
    fail(path, "names no party 0..2");
  if (!parse_number(text.substr(since_at + kSince.size(), reason_at - since_at - kSince.size()),
                    exclusion.since_unix_ms))
    fail(path, "gives no time");
  exclusion.reason = std::string(text.substr(reason_at + kReason.size()));
  return exclusion;
}

void write_exclusion(const std::filesystem::path& path, const std::optional<Exclusion>& exclusion) {
  if (!exclusion) return replace_durably(path, std::nullopt);
  if (exclusion->party < 0 || exclusion->party > 2) fail(path, "names no party 0..2");
  if (exclusion->reason.find_first_of("\r\n") != std::string::npos) fail(path, "a reason must be one line");
  std::ostringstream line;
  line << "party " << exclusion->party << " since " << exclusion->since_unix_ms << " reason " << exclusion->reason
       << "\n";
  replace_durably(path, line.str());
}

std::filesystem::path disputes_path(const std::filesystem::path& store_directory) {
  return store_directory / "disputes";
}

std::optional<Disputes> read_disputes(const std::filesystem::path& path) {
  const auto line = read_line(path);
  if (!line) return std::nullopt;
  // distrusts <n> suspended <0|1> [failed_pairs <n>] [readmissions <n>] reason <text>
  constexpr std::string_view kDistrusts = "distrusts ", kSuspended = " suspended ", kFailedPairs = " failed_pairs ",
                             kReadmissions = " readmissions ", kReason = " reason ";
  const std::string_view text(*line);
  const auto suspended_at = text.find(kSuspended), reason_at = text.find(kReason);
  if (!text.starts_with(kDistrusts) || suspended_at == std::string_view::npos ||
      reason_at == std::string_view::npos || reason_at < suspended_at)
    fail(path, "is not a record of the form 'distrusts N suspended 0|1 failed_pairs N readmissions N reason TEXT'");
  const std::string_view fields = text.substr(0, reason_at);
  const auto failed_pairs_at = fields.find(kFailedPairs), readmissions_at = fields.find(kReadmissions);
  if (failed_pairs_at != std::string_view::npos && readmissions_at != std::string_view::npos &&
      readmissions_at < failed_pairs_at)
    fail(path, "gives its fields out of order");
  // Each field's value runs to the next field present, or to the reason.
  const auto end_of = [&](std::size_t at) {
    std::size_t end = reason_at;
    for (const auto next : {failed_pairs_at, readmissions_at})
      if (next != std::string_view::npos && next > at) end = std::min(end, next);
    return end;
  };
  const auto value_at = [&](std::size_t at, std::string_view name) {
    return text.substr(at + name.size(), end_of(at) - at - name.size());
  };
  Disputes disputes;
  unsigned distrusts = 0, suspended = 0, failed_pairs = 0;
  if (!parse_number(text.substr(kDistrusts.size(), suspended_at - kDistrusts.size()), distrusts) || distrusts > 7)
    fail(path, "names parties beyond 0..2");
  if (!parse_number(value_at(suspended_at, kSuspended), suspended) || suspended > 1)
    fail(path, "says neither 0 nor 1 of the suspension");
  if (failed_pairs_at != std::string_view::npos &&
      (!parse_number(value_at(failed_pairs_at, kFailedPairs), failed_pairs) || failed_pairs > 7))
    fail(path, "names failed pairs beyond 0..2");
  if (readmissions_at != std::string_view::npos &&
      !parse_number(value_at(readmissions_at, kReadmissions), disputes.readmissions))
    fail(path, "gives no count of readmissions");
  disputes.distrusts = static_cast<std::uint8_t>(distrusts);
  disputes.three_party_suspended = suspended == 1;
  disputes.failed_pairs = static_cast<std::uint8_t>(failed_pairs);
  disputes.reason = std::string(text.substr(reason_at + kReason.size()));
  return disputes;
}

void write_disputes(const std::filesystem::path& path, const std::optional<Disputes>& disputes) {
  if (!disputes) return replace_durably(path, std::nullopt);
  if (disputes->distrusts > 7) fail(path, "names parties beyond 0..2");
  if (disputes->failed_pairs > 7) fail(path, "names failed pairs beyond 0..2");
  if (disputes->reason.find_first_of("\r\n") != std::string::npos) fail(path, "a reason must be one line");
  std::ostringstream line;
  line << "distrusts " << static_cast<unsigned>(disputes->distrusts) << " suspended "
       << (disputes->three_party_suspended ? 1 : 0) << " failed_pairs " << static_cast<unsigned>(disputes->failed_pairs)
       << " readmissions " << disputes->readmissions << " reason "
       << disputes->reason << "\n";
  replace_durably(path, line.str());
}

}  // namespace mpc::store
