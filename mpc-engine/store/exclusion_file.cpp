#include "store/exclusion_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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
  throw Error(Component::Store, "exclusion record " + path.string() + ": " + what);
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

}  // namespace

std::filesystem::path exclusion_path(const std::filesystem::path& store_directory) {
  return store_directory / "excluded-server";
}

std::optional<Exclusion> read_exclusion(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) {
    if (!std::filesystem::exists(path)) return std::nullopt;
    fail(path, "cannot be read");
  }
  std::string line;
  if (!std::getline(in, line)) fail(path, "is empty");
  std::string rest;
  if (std::getline(in, rest) && !rest.empty()) fail(path, "holds more than one line");
  // party <n> since <ms> reason <text>
  constexpr std::string_view kParty = "party ", kSince = " since ", kReason = " reason ";
  const std::string_view text(line);
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
  if (!exclusion) {
    std::error_code error;
    if (!std::filesystem::remove(path, error) && error) fail(path, "cannot be removed: " + error.message());
    sync_directory(path);
    return;
  }
  if (exclusion->party < 0 || exclusion->party > 2) fail(path, "names no party 0..2");
  if (exclusion->reason.find_first_of("\r\n") != std::string::npos) fail(path, "a reason must be one line");
  std::ostringstream line;
  line << "party " << exclusion->party << " since " << exclusion->since_unix_ms << " reason " << exclusion->reason
       << "\n";
  const std::string bytes = line.str();
  const std::filesystem::path temporary = path.string() + ".new";
  {
    FileDescriptor file(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    if (file.get() < 0) fail_errno(temporary, "cannot be created");
    std::size_t written = 0;
    while (written < bytes.size()) {
      const ssize_t wrote = ::write(file.get(), bytes.data() + written, bytes.size() - written);
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote <= 0) fail_errno(temporary, "cannot be written");
      written += static_cast<std::size_t>(wrote);
    }
    if (::fsync(file.get()) != 0) fail_errno(temporary, "cannot be made durable");
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) fail_errno(path, "cannot be replaced");
  sync_directory(path);
}

}  // namespace mpc::store
