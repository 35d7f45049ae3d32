// mpc-engine/transport/curve_keys.cpp: CurveZMQ key pairs (X25519 via libsodium), Z85 text, key files.
#include "transport/curve_keys.hpp"

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "common/error.hpp"

namespace mpc::transport {
namespace {

constexpr std::size_t kZ85KeyChars = 40;
constexpr std::size_t kMaxKeyFileBytes = 4096;
constexpr std::string_view kZ85Alphabet =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

[[noreturn]] void fail_format(const std::string& message) { throw FormatError(Component::Transport, message); }

std::string errno_text(int error) { return std::strerror(error); }

void ensure_sodium() {
  if (sodium_init() < 0) throw Error(Component::Transport, "libsodium initialisation failed");
}

bool is_z85_key_text(std::string_view text) {
  if (text.size() != kZ85KeyChars) return false;
  for (char c : text)
    if (kZ85Alphabet.find(c) == std::string_view::npos) return false;
  return true;
}

// Decodes 40 z85 characters into exactly 32 bytes; rejects non-canonical text (a group
// whose value exceeds 2^32 - 1 would otherwise alias another key).
void z85_decode_into(std::string_view text, std::span<std::uint8_t, 32> out, const char* what) {
  if (!is_z85_key_text(text)) fail_format(std::string(what) + " is not 40 characters of Z85");
  char zero_terminated[kZ85KeyChars + 1];
  std::memcpy(zero_terminated, text.data(), kZ85KeyChars);
  zero_terminated[kZ85KeyChars] = '\0';
  std::uint8_t decoded[32];
  const bool ok = zmq_z85_decode(decoded, zero_terminated) != nullptr;
  char reencoded[kZ85KeyChars + 1];
  const bool canonical = ok && zmq_z85_encode(reencoded, decoded, 32) != nullptr &&
                         std::memcmp(reencoded, zero_terminated, kZ85KeyChars) == 0;
  if (canonical) std::memcpy(out.data(), decoded, 32);
  sodium_memzero(zero_terminated, sizeof zero_terminated);
  sodium_memzero(decoded, sizeof decoded);
  sodium_memzero(reencoded, sizeof reencoded);
  if (!canonical) fail_format(std::string(what) + " is not a canonical Z85 key");
}

std::string z85_of(std::span<const std::uint8_t> key) {
  char text[kZ85KeyChars + 1];
  if (zmq_z85_encode(text, key.data(), key.size()) == nullptr)
    throw Error(Component::Transport, "z85 encoding failed");
  std::string out(text, kZ85KeyChars);
  sodium_memzero(text, sizeof text);
  return out;
}

// Writes `content` to a fresh temporary file created 0600 next to `path` (mkostemp:
// O_CREAT|O_EXCL), fixes its mode with fchmod, syncs it and renames it over `path`, so
// nobody ever sees a partial file and a secret is never readable by others, not even briefly.
void write_file_atomically(const std::filesystem::path& path, std::span<const std::uint8_t> content, mode_t mode) {
  std::string pattern = path.string() + ".tmpXXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) throw Error(Component::Transport, "cannot create " + pattern + ": " + errno_text(errno));
  const std::string temporary(name.data());
  auto fail = [&](const std::string& what) {
    const int error = errno;
    ::close(fd);
    ::unlink(temporary.c_str());
    throw Error(Component::Transport, what + " " + path.string() + ": " + errno_text(error));
  };
  if (::fchmod(fd, mode) != 0) fail("cannot set the mode of");
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t written = ::write(fd, content.data() + done, content.size() - done);
    if (written < 0) {
      if (errno == EINTR) continue;
      fail("cannot write");
    }
    done += static_cast<std::size_t>(written);
  }
  if (::fsync(fd) != 0) fail("cannot sync");
  if (::close(fd) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    throw Error(Component::Transport, "cannot write " + path.string() + ": " + errno_text(error));
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    throw Error(Component::Transport, "cannot rename into " + path.string() + ": " + errno_text(error));
  }
}

// Reads a small regular file. With `secret`, refuses a file that group or others may access.
SecretBytes read_key_file(const std::filesystem::path& path, bool secret) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw Error(Component::Transport, "cannot open key file " + path.string() + ": " + errno_text(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int error = errno;
    ::close(fd);
    throw Error(Component::Transport, "cannot stat key file " + path.string() + ": " + errno_text(error));
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    throw Error(Component::Transport, "key file " + path.string() + " is not a regular file");
  }
  if (secret && (info.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    ::close(fd);
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(info.st_mode & 07777));
    throw Error(Component::Transport, "secret key file " + path.string() + " has mode " + mode +
                                          ": group or others may access it (chmod 600)");
  }
  if (info.st_size < 0 || static_cast<std::uint64_t>(info.st_size) > kMaxKeyFileBytes) {
    ::close(fd);
    throw Error(Component::Transport, "key file " + path.string() + " is larger than " +
                                          std::to_string(kMaxKeyFileBytes) + " bytes");
  }
  SecretBytes buffer(kMaxKeyFileBytes + 1);
  std::size_t size = 0;
  while (size < buffer.size()) {
    const ssize_t got = ::read(fd, buffer.data() + size, buffer.size() - size);
    if (got < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      ::close(fd);
      throw Error(Component::Transport, "cannot read key file " + path.string() + ": " + errno_text(error));
    }
    if (got == 0) break;
    size += static_cast<std::size_t>(got);
  }
  ::close(fd);
  if (size > kMaxKeyFileBytes)
    throw Error(Component::Transport, "key file " + path.string() + " is larger than " +
                                          std::to_string(kMaxKeyFileBytes) + " bytes");
  buffer.resize(size);
  return buffer;
}

struct KeyLines {
  std::optional<std::string_view> secret_key;
  std::optional<std::string_view> public_key;
};

// Lines "secret-key <z85>" / "public-key <z85>"; blank lines and '#' comments are ignored.
// The views point into `text`.
KeyLines parse_key_lines(std::string_view text, const std::filesystem::path& path) {
  KeyLines lines;
  std::size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    if (line.empty() || line.front() == '#') continue;
    const std::size_t space = line.find_first_of(" \t");
    const std::string where = path.string() + " line " + std::to_string(line_number);
    if (space == std::string_view::npos) fail_format(where + ": expected '<label> <z85 key>'");
    const std::string_view label = line.substr(0, space);
    std::string_view value = line.substr(space + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    std::optional<std::string_view>* slot = nullptr;
    if (label == "secret-key") slot = &lines.secret_key;
    else if (label == "public-key") slot = &lines.public_key;
    else fail_format(where + ": unknown label (expected secret-key or public-key)");
    if (slot->has_value()) fail_format(where + ": duplicate " + std::string(label));
    *slot = value;
  }
  return lines;
}

std::string_view as_text(const SecretBytes& bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

}  // namespace

CurveKeyPair generate_curve_key_pair() {
  ensure_sodium();
  CurveKeyPair pair;
  if (crypto_box_keypair(pair.public_key.data(), pair.secret_key.data()) != 0)
    throw Error(Component::Transport, "X25519 key generation failed");
  return pair;
}

std::string z85_encode(std::span<const std::uint8_t, 32> key) { return z85_of(key); }

PublicKey z85_decode_public(std::string_view text) {
  PublicKey key{};
  z85_decode_into(text, key, "public key");
  return key;
}

void write_secret_key_file(const std::filesystem::path& path, const CurveKeyPair& pair) {
  if (pair.secret_key.size() != 32) throw Error(Component::Transport, "secret key is not 32 bytes");
  // Built in place in a wiped buffer: no std::string temporaries holding the secret.
  static constexpr std::string_view kSecretLabel = "secret-key ";
  static constexpr std::string_view kPublicLabel = "\npublic-key ";
  SecretBytes content(kSecretLabel.size() + kZ85KeyChars + kPublicLabel.size() + kZ85KeyChars + 2);
  auto* out = reinterpret_cast<char*>(content.data());
  std::memcpy(out, kSecretLabel.data(), kSecretLabel.size());
  out += kSecretLabel.size();
  if (zmq_z85_encode(out, pair.secret_key.data(), 32) == nullptr)
    throw Error(Component::Transport, "z85 encoding failed");
  out += kZ85KeyChars;
  std::memcpy(out, kPublicLabel.data(), kPublicLabel.size());
  out += kPublicLabel.size();
  if (zmq_z85_encode(out, pair.public_key.data(), 32) == nullptr)
    throw Error(Component::Transport, "z85 encoding failed");
  out += kZ85KeyChars;
  *out = '\n';  // overwrites the encoder's terminating NUL; the spare last byte is dropped below
  content.resize(content.size() - 1);
  write_file_atomically(path, content.span(), 0600);
}

void write_public_key_file(const std::filesystem::path& path, const PublicKey& key) {
  const std::string content = "public-key " + z85_of(key) + "\n";
  write_file_atomically(path, std::span(reinterpret_cast<const std::uint8_t*>(content.data()), content.size()), 0644);
}

CurveKeyPair read_secret_key_file(const std::filesystem::path& path) {
  const SecretBytes content = read_key_file(path, true);
  const KeyLines lines = parse_key_lines(as_text(content), path);
  if (!lines.secret_key) fail_format(path.string() + ": no secret-key line");
  if (!lines.public_key) fail_format(path.string() + ": no public-key line");
  CurveKeyPair pair;
  z85_decode_into(*lines.secret_key, std::span<std::uint8_t, 32>(pair.secret_key.data(), 32), "secret key");
  pair.public_key = z85_decode_public(*lines.public_key);
  ensure_sodium();
  PublicKey derived{};
  if (crypto_scalarmult_base(derived.data(), pair.secret_key.data()) != 0 || derived != pair.public_key)
    fail_format(path.string() + ": the public key does not belong to the secret key");
  return pair;
}

PublicKey read_public_key_file(const std::filesystem::path& path) {
  const SecretBytes content = read_key_file(path, false);
  const KeyLines lines = parse_key_lines(as_text(content), path);
  if (lines.secret_key) fail_format(path.string() + ": a public key file must not hold a secret key");
  if (!lines.public_key) fail_format(path.string() + ": no public-key line");
  return z85_decode_public(*lines.public_key);
}

PublicKey parse_public_key_reference(std::string_view z85_or_path) {
  if (z85_or_path.empty()) fail_format("empty public key reference");
  if (is_z85_key_text(z85_or_path)) return z85_decode_public(z85_or_path);
  return read_public_key_file(std::filesystem::path(std::string(z85_or_path)));
}

}  // namespace mpc::transport
