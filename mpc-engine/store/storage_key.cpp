// mpc-engine/store/storage_key.cpp: the per-server storage key and its file
// (64 hex digits and a newline, mode 0600, created exclusively).
#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "common/error.hpp"
#include "common/file_descriptor.hpp"
#include "store/share_store.hpp"

namespace mpc::store {

namespace {

constexpr std::size_t kHexDigits = 2 * kStorageKeyBytes;

std::string errno_text() { return std::strerror(errno); }

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

}  // namespace

SecretBytes generate_storage_key() {
  if (sodium_init() < 0) throw Error(Component::Store, "libsodium initialisation failed");
  SecretBytes key(kStorageKeyBytes);
  crypto_secretbox_keygen(key.data());
  return key;
}

void write_storage_key_file(const std::filesystem::path& path, const SecretBytes& key) {
  const std::string name = path.string();
  if (key.size() != kStorageKeyBytes)
    throw Error(Component::Store, "storage key must be " + std::to_string(kStorageKeyBytes) + " bytes, got " +
                                      std::to_string(key.size()));
  // O_EXCL also refuses an existing symbolic link at `path`.
  FileDescriptor fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (fd.get() < 0) throw Error(Component::Store, "cannot create storage key file " + name + ": " + errno_text());

  static constexpr char kDigits[] = "0123456789abcdef";
  SecretBytes text(kHexDigits + 1);
  for (std::size_t i = 0; i < kStorageKeyBytes; ++i) {
    text[2 * i] = static_cast<std::uint8_t>(kDigits[key[i] >> 4]);
    text[2 * i + 1] = static_cast<std::uint8_t>(kDigits[key[i] & 15]);
  }
  text[kHexDigits] = '\n';

  std::string failure;
  if (::fchmod(fd.get(), 0600) != 0) failure = "set mode 0600: " + errno_text();
  std::size_t written = 0;
  while (failure.empty() && written < text.size()) {
    const ssize_t n = ::write(fd.get(), text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) failure = "write: " + errno_text();
    else written += static_cast<std::size_t>(n);
  }
  if (failure.empty() && ::fsync(fd.get()) != 0) failure = "fsync: " + errno_text();
  if (::close(fd.release()) != 0 && failure.empty()) failure = "close: " + errno_text();
  if (!failure.empty()) {
    ::unlink(path.c_str());  // never leave a partial key behind
    throw Error(Component::Store, "cannot write storage key file " + name + ": " + failure);
  }
}

SecretBytes read_storage_key_file(const std::filesystem::path& path) {
  const std::string name = path.string();
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) throw Error(Component::Store, "cannot open storage key file " + name + ": " + errno_text());
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0)
    throw Error(Component::Store, "cannot stat storage key file " + name + ": " + errno_text());
  if (!S_ISREG(info.st_mode)) throw Error(Component::Store, "storage key file " + name + " is not a regular file");
  if ((info.st_mode & 077) != 0)
    throw Error(Component::Store, "storage key file " + name + " has mode " + octal_mode(info.st_mode) +
                                      ", which lets group or others read or write it; run chmod 600 " + name);

  // Exactly 64 hex digits and an optional newline; read one byte more to detect longer files.
  SecretBytes text(kHexDigits + 2);
  std::size_t length = 0;
  while (length < text.size()) {
    const ssize_t n = ::read(fd.get(), text.data() + length, text.size() - length);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(Component::Store, "cannot read storage key file " + name + ": " + errno_text());
    if (n == 0) break;
    length += static_cast<std::size_t>(n);
  }
  const std::string format = "storage key file " + name + " must hold exactly " + std::to_string(kHexDigits) +
                             " hex digits and a newline (a " + std::to_string(kStorageKeyBytes) + "-byte key)";
  const bool newline_ok = length == kHexDigits || (length == kHexDigits + 1 && text[kHexDigits] == '\n');
  if (!newline_ok) throw Error(Component::Store, format);
  // sodium_hex2bin runs in time independent of the digits' values.
  SecretBytes key(kStorageKeyBytes);
  std::size_t decoded = 0;
  const char* end = nullptr;
  const char* hex = reinterpret_cast<const char*>(text.data());
  if (sodium_hex2bin(key.data(), key.size(), hex, kHexDigits, nullptr, &decoded, &end) != 0 ||
      decoded != kStorageKeyBytes || end != hex + kHexDigits) {
    key.clear();
    throw Error(Component::Store, format + "; it contains a character that is not a hex digit");
  }
  return key;
}

}  // namespace mpc::store
