#include "lut_dealer/dealer_settings.hpp"

#include <optional>

#include "settings/toml_reader.hpp"
#include "wire/dealer_messages.hpp"

namespace mpc::lut_dealer {

DealerSettings load_dealer_settings(const std::filesystem::path& file) {
  using settings::detail::TableReader;
  const settings::detail::Document document = settings::detail::parse_document(file);
  const TableReader root(document, document.root, "",
                         {"endpoint", "secret_key_file", "log_level", "servers", "limits"});
  DealerSettings out;
  out.endpoint = root.endpoint("endpoint");
  out.secret_key_file = root.path("secret_key_file");
  if (auto level = root.optional_choice("log_level", {"debug", "info", "warning", "error"})) out.log_level = *level;

  std::array<std::optional<transport::PublicKey>, 2> keys;
  const auto servers = root.table_array("servers", 2, 2);
  for (std::size_t i = 0; i < servers.size(); ++i) {
    const TableReader reader(document, *servers[i], "servers[" + std::to_string(i) + "]", {"party", "public_key"});
    const auto party = static_cast<std::size_t>(reader.integer("party", 1, 2) - 1);
    if (keys[party]) reader.fail("party", "party " + std::to_string(party + 1) + " is listed twice");
    const transport::PublicKey key = reader.public_key("public_key");
    if (keys[1 - party] && *keys[1 - party] == key)
      reader.fail("public_key", "is the other server's key too: each server needs a key pair of its own");
    keys[party] = key;
  }
  for (std::size_t party = 0; party < 2; ++party) out.servers[party] = *keys[party];

  if (const toml::table* limits = root.optional_table("limits")) {
    const TableReader reader(document, *limits, "limits", {"max_batch_entries"});
    if (auto v = reader.optional_integer("max_batch_entries", 1, wire::kMaxDealerBatchEntries))
      out.max_batch_entries = static_cast<std::uint32_t>(*v);
  }
  return out;
}

}  // namespace mpc::lut_dealer
