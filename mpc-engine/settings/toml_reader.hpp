// mpc-engine/settings/toml_reader.hpp: strict reading of TOML settings files
// (private to mpc_settings). Every error names the file, the line where known,
// the dotted key and the problem: "<file>:<line>: <key>: <problem>".
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "transport/curve_keys.hpp"

namespace mpc::settings::detail {

// Largest settings file accepted: anything bigger is certainly not a configuration.
inline constexpr std::uintmax_t kMaxSettingsFileBytes = 1u << 20;

struct Document {
  std::string file;                 // as given, for messages
  std::filesystem::path directory;  // absolute directory of the file, for relative paths
  toml::table root;
};

// Reads and parses the file; throws Error(Settings) "<file>:<line>: <what>" on a syntax error.
Document parse_document(const std::filesystem::path& file);

// One table of the document, with the keys it may hold. Unknown keys are rejected
// when the reader is made, so a typo is never silently ignored.
class TableReader {
 public:
  TableReader(const Document& document, const toml::table& table, std::string path,
              std::initializer_list<std::string_view> allowed_keys);

  bool has(std::string_view key) const { return table_.contains(key); }

  std::int64_t integer(std::string_view key, std::int64_t min, std::int64_t max) const;
  std::optional<std::int64_t> optional_integer(std::string_view key, std::int64_t min, std::int64_t max) const;
  // Non-empty, at most 4096 bytes, no control characters.
  std::string string(std::string_view key) const;
  std::optional<std::string> optional_string(std::string_view key) const;
  // One of `choices`.
  std::string choice(std::string_view key, std::initializer_list<std::string_view> choices) const;
  std::optional<std::string> optional_choice(std::string_view key, std::initializer_list<std::string_view> choices) const;
  // A ZeroMQ endpoint: tcp://host:port (port 1..65535 or *), ipc://path or inproc://name.
  std::string endpoint(std::string_view key) const;
  // The same, tcp:// only: a data link (transport/data_link.hpp) is a TCP stream of its own,
  // not a ZeroMQ socket.
  std::string tcp_endpoint(std::string_view key) const;
  // A path, made absolute against the document's directory.
  std::filesystem::path path(std::string_view key) const;
  // Inline z85 or a path to a public key file (relative to the document's directory).
  transport::PublicKey public_key(std::string_view key) const;
  // A list of public keys as above; duplicates are rejected.
  std::vector<transport::PublicKey> public_key_list(std::string_view key) const;
  const toml::table& table(std::string_view key) const;
  const toml::table* optional_table(std::string_view key) const;
  // An array of tables ([[key]]), with between min and max entries.
  std::vector<const toml::table*> table_array(std::string_view key, std::size_t min, std::size_t max) const;

  // "peers[1].party", "limits.sbox", "party"
  std::string key_path(std::string_view key) const;
  [[noreturn]] void fail(std::string_view key, const std::string& problem) const;
  const std::string& path_prefix() const noexcept { return path_; }

 private:
  const toml::node& required(std::string_view key) const;
  [[noreturn]] void fail_at(const toml::node* node, std::string_view key, const std::string& problem) const;
  transport::PublicKey public_key_from(const toml::node& node, const std::string& label) const;

  const Document& document_;
  const toml::table& table_;
  std::string path_;
};

std::filesystem::path resolve_path(const Document& document, const std::string& text);
bool looks_like_inline_z85(std::string_view text);

}  // namespace mpc::settings::detail
