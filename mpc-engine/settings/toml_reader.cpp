// mpc-engine/settings/toml_reader.cpp: strict TOML reading shared by the settings loaders.
#include "settings/toml_reader.hpp"

#include <algorithm>
#include <system_error>

#include "common/error.hpp"

namespace mpc::settings::detail {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxStringBytes = 4096;
constexpr std::size_t kMaxListEntries = 1024;
constexpr std::string_view kZ85Alphabet =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
constexpr std::size_t kZ85PublicKeyChars = 40;

const char* type_name(toml::node_type type) {
  switch (type) {
    case toml::node_type::none: return "nothing";
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
  }
  return "an unknown type";
}

std::string join(std::initializer_list<std::string_view> items, std::string_view separator) {
  std::string out;
  for (auto item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

// Empty if acceptable, else the problem.
std::string string_problem(std::string_view text) {
  if (text.empty()) return "must not be empty";
  if (text.size() > kMaxStringBytes) return "is longer than " + std::to_string(kMaxStringBytes) + " bytes";
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) return "contains a control character";
  }
  return {};
}

}  // namespace

bool looks_like_inline_z85(std::string_view text) {
  return text.size() == kZ85PublicKeyChars &&
         std::all_of(text.begin(), text.end(), [](char c) { return kZ85Alphabet.find(c) != std::string_view::npos; });
}

fs::path resolve_path(const Document& document, const std::string& text) {
  const fs::path path(text);
  if (path.is_absolute()) return path.lexically_normal();
  return (document.directory / path).lexically_normal();
}

Document parse_document(const fs::path& file) {
  Document document;
  document.file = file.string();
  std::error_code ec;
  const auto status = fs::status(file, ec);
  if (ec || !fs::exists(status))
    throw Error(Component::Settings, document.file + ": cannot read: " +
                                         (ec ? ec.message() : std::string("no such file")));
  if (!fs::is_regular_file(status)) throw Error(Component::Settings, document.file + ": not a regular file");
  const auto size = fs::file_size(file, ec);
  if (ec) throw Error(Component::Settings, document.file + ": cannot read: " + ec.message());
  if (size > kMaxSettingsFileBytes)
    throw Error(Component::Settings, document.file + ": larger than " + std::to_string(kMaxSettingsFileBytes) +
                                         " bytes");
  const fs::path absolute = fs::absolute(file, ec);
  if (ec) throw Error(Component::Settings, document.file + ": cannot make the path absolute: " + ec.message());
  document.directory = absolute.lexically_normal().parent_path();
  try {
    document.root = toml::parse_file(document.file);
  } catch (const toml::parse_error& e) {
    const auto line = e.source().begin.line;
    throw Error(Component::Settings, document.file + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " +
                                         std::string(e.description()));
  }
  return document;
}

TableReader::TableReader(const Document& document, const toml::table& table, std::string path,
                         std::initializer_list<std::string_view> allowed_keys)
    : document_(document), table_(table), path_(std::move(path)) {
  // The table iterates in key order; report the unknown key that comes first in the file.
  const toml::node* first_node = nullptr;
  std::string_view first_name;
  for (auto&& [key, node] : table_) {
    const std::string_view name = key.str();
    if (std::find(allowed_keys.begin(), allowed_keys.end(), name) != allowed_keys.end()) continue;
    if (first_node == nullptr || node.source().begin.line < first_node->source().begin.line) {
      first_node = &node;
      first_name = name;
    }
  }
  if (first_node != nullptr)
    fail_at(first_node, first_name, "unknown key (allowed here: " + join(allowed_keys, ", ") + ")");
}

std::string TableReader::key_path(std::string_view key) const {
  if (path_.empty()) return std::string(key);
  if (key.empty()) return path_;
  return path_ + "." + std::string(key);
}

void TableReader::fail_at(const toml::node* node, std::string_view key, const std::string& problem) const {
  std::uint32_t line = 0;
  if (node != nullptr) line = node->source().begin.line;
  else if (!path_.empty()) line = table_.source().begin.line;
  std::string message = document_.file;
  if (line > 0) message += ":" + std::to_string(line);
  message += ": " + key_path(key) + ": " + problem;
  throw Error(Component::Settings, message);
}

void TableReader::fail(std::string_view key, const std::string& problem) const {
  fail_at(table_.get(key), key, problem);
}

const toml::node& TableReader::required(std::string_view key) const {
  const toml::node* node = table_.get(key);
  if (node == nullptr) fail_at(nullptr, key, "required key is missing");
  return *node;
}

std::int64_t TableReader::integer(std::string_view key, std::int64_t min, std::int64_t max) const {
  const toml::node& node = required(key);
  const auto* value = node.as_integer();
  if (value == nullptr) fail_at(&node, key, std::string("must be an integer, not ") + type_name(node.type()));
  const std::int64_t number = value->get();
  if (number < min || number > max)
    fail_at(&node, key, "must be between " + std::to_string(min) + " and " + std::to_string(max) + " (got " +
                            std::to_string(number) + ")");
  return number;
}

std::optional<std::int64_t> TableReader::optional_integer(std::string_view key, std::int64_t min,
                                                          std::int64_t max) const {
  if (!has(key)) return std::nullopt;
  return integer(key, min, max);
}

std::string TableReader::string(std::string_view key) const {
  const toml::node& node = required(key);
  const auto* value = node.as_string();
  if (value == nullptr) fail_at(&node, key, std::string("must be a string, not ") + type_name(node.type()));
  const std::string& text = value->get();
  if (auto problem = string_problem(text); !problem.empty()) fail_at(&node, key, problem);
  return text;
}

std::optional<std::string> TableReader::optional_string(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return string(key);
}

std::string TableReader::choice(std::string_view key, std::initializer_list<std::string_view> choices) const {
  std::string text = string(key);
  if (std::find(choices.begin(), choices.end(), text) == choices.end())
    fail(key, "must be one of " + join(choices, ", ") + " (got \"" + text + "\")");
  return text;
}

std::optional<std::string> TableReader::optional_choice(std::string_view key,
                                                        std::initializer_list<std::string_view> choices) const {
  if (!has(key)) return std::nullopt;
  return choice(key, choices);
}

std::string TableReader::tcp_endpoint(std::string_view key) const {
  std::string text = endpoint(key);
  if (!text.starts_with("tcp://")) fail(key, "must be a tcp:// endpoint (got \"" + text + "\")");
  return text;
}

std::string TableReader::endpoint(std::string_view key) const {
  std::string text = string(key);
  static constexpr std::string_view kSchemes[] = {"tcp://", "ipc://", "inproc://"};
  std::string_view scheme;
  for (auto candidate : kSchemes)
    if (std::string_view(text).starts_with(candidate)) scheme = candidate;
  if (scheme.empty()) fail(key, "must start with tcp://, ipc:// or inproc:// (got \"" + text + "\")");
  const std::string_view rest = std::string_view(text).substr(scheme.size());
  if (rest.empty()) fail(key, "has nothing after " + std::string(scheme));
  if (rest.find(' ') != std::string_view::npos) fail(key, "must not contain spaces");
  if (scheme == "tcp://") {
    const auto colon = rest.rfind(':');
    if (colon == std::string_view::npos || colon == 0)
      fail(key, "must be tcp://host:port (got \"" + text + "\")");
    const std::string_view port = rest.substr(colon + 1);
    bool valid = port == "*";
    if (!valid && !port.empty() && port.size() <= 5 &&
        std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      const long number = std::stol(std::string(port));
      valid = number >= 1 && number <= 65535;
    }
    if (!valid) fail(key, "port must be 1..65535 or * (got \"" + std::string(port) + "\")");
  }
  return text;
}

fs::path TableReader::path(std::string_view key) const { return resolve_path(document_, string(key)); }

transport::PublicKey TableReader::public_key_from(const toml::node& node, const std::string& label) const {
  const auto* value = node.as_string();
  if (value == nullptr)
    fail_at(&node, label, std::string("must be a string (z85 key or file path), not ") + type_name(node.type()));
  const std::string& text = value->get();
  if (auto problem = string_problem(text); !problem.empty()) fail_at(&node, label, problem);
  try {
    if (looks_like_inline_z85(text)) return transport::parse_public_key_reference(text);
    const fs::path file = resolve_path(document_, text);
    std::error_code ec;
    if (!fs::is_regular_file(file, ec))
      fail_at(&node, label, "is neither a z85 public key (40 characters) nor an existing file (" + file.string() + ")");
    // Read as a file directly: a resolved path can itself be 40 z85-alphabet characters.
    return transport::read_public_key_file(file);
  } catch (const Error& e) {
    if (e.component() == Component::Settings) throw;
    fail_at(&node, label, e.what());
  }
}

transport::PublicKey TableReader::public_key(std::string_view key) const {
  return public_key_from(required(key), std::string(key));
}

std::vector<transport::PublicKey> TableReader::public_key_list(std::string_view key) const {
  const toml::node& node = required(key);
  const auto* array = node.as_array();
  if (array == nullptr) fail_at(&node, key, std::string("must be an array of public keys, not ") + type_name(node.type()));
  if (array->size() > kMaxListEntries)
    fail_at(&node, key, "has more than " + std::to_string(kMaxListEntries) + " entries");
  std::vector<transport::PublicKey> keys;
  for (std::size_t i = 0; i < array->size(); ++i) {
    const std::string label = std::string(key) + "[" + std::to_string(i) + "]";
    auto public_key = public_key_from(*array->get(i), label);
    if (std::find(keys.begin(), keys.end(), public_key) != keys.end())
      fail_at(array->get(i), label, "repeats a key already listed");
    keys.push_back(public_key);
  }
  return keys;
}

const toml::table& TableReader::table(std::string_view key) const {
  const toml::node& node = required(key);
  const auto* table = node.as_table();
  if (table == nullptr) fail_at(&node, key, std::string("must be a table, not ") + type_name(node.type()));
  return *table;
}

const toml::table* TableReader::optional_table(std::string_view key) const {
  if (!has(key)) return nullptr;
  return &table(key);
}

std::vector<const toml::table*> TableReader::table_array(std::string_view key, std::size_t min,
                                                         std::size_t max) const {
  const toml::node& node = required(key);
  const auto* array = node.as_array();
  if (array == nullptr || (!array->empty() && !array->is_array_of_tables()))
    fail_at(&node, key, std::string("must be an array of tables ([[") + std::string(key) + "]]), not " +
                            (array == nullptr ? type_name(node.type()) : "an array of other values"));
  if (array->size() < min || array->size() > max) {
    const std::string wanted = min == max ? "exactly " + std::to_string(min)
                                          : "between " + std::to_string(min) + " and " + std::to_string(max);
    fail_at(&node, key, "must have " + wanted + " entries, got " + std::to_string(array->size()));
  }
  std::vector<const toml::table*> tables;
  for (std::size_t i = 0; i < array->size(); ++i) tables.push_back(array->get(i)->as_table());
  return tables;
}

}  // namespace mpc::settings::detail
