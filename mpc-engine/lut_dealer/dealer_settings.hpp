// The mpc-lut-dealer configuration file (TOML), read with the servers' strict reader
// (settings/toml_reader.hpp). Example, as `mpcctl cluster init --lut-preprocessing dealer`
// writes it:
//
//   endpoint = "tcp://0.0.0.0:7120"   # where the two lut2 servers connect
//   secret_key_file = "dealer.key"    # the dealer's CurveZMQ key pair (0600)
//   log_level = "info"                # debug | info | warning | error
//
//   [[servers]]                       # exactly the two servers of the cluster
//   party = 1
//   public_key = "z85..."             # or a path to a .pub file
//   [[servers]]
//   party = 2
//   public_key = "../server2/server.pub"
//
//   [limits]
//   max_batch_entries = 65536         # the largest batch server 1 may ask for (1..65536)
//
// Validation (load_dealer_settings throws Error(Settings) "<file>:<line>: <key>: <problem>"):
// unknown keys and wrong types are errors; endpoint, secret_key_file and [[servers]] are
// required; parties are 1 and 2, each once, with different keys. Relative paths are relative
// to the file's directory.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>

#include "transport/curve_keys.hpp"

namespace mpc::lut_dealer {

struct DealerSettings {
  std::string endpoint;
  std::filesystem::path secret_key_file;
  std::string log_level = "info";
  std::array<transport::PublicKey, 2> servers{};  // by 0-based party
  std::uint32_t max_batch_entries = 1u << 16;
};

DealerSettings load_dealer_settings(const std::filesystem::path& file);

}  // namespace mpc::lut_dealer
