// mpc-server: one server of the engine, three-party (protocol rss3) or two-party (gc2, lut2).
//   mpc-server --config /etc/mpc-kdc/server.toml [--check]
//   mpc-server --config NEW.toml --convert-from-rss3 OLD_STORAGE_DIR
// --check loads the configuration, the keys and the store, runs the self-tests and exits.
// --convert-from-rss3 writes a two-server store from a three-server one
// (engines/two_party/convert_store.hpp) and exits.
// The shell (node/node.hpp) runs the engine the configuration's protocol names.
#include <systemd/sd-daemon.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <iostream>
#include <string>

#include "common/error.hpp"
#include "common/log.hpp"
#include "engines/three_party/three_party_engine.hpp"
#include "engines/two_party/convert_store.hpp"
#include "engines/two_party/two_party_engine.hpp"
#include "node/node.hpp"
#include "settings/server_settings.hpp"

namespace {

std::atomic<bool> stop_requested{false};

void request_stop(int) { stop_requested.store(true); }

int usage() {
  std::cerr << "usage: mpc-server --config FILE [--check | --convert-from-rss3 OLD_STORAGE_DIR]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string config;
  std::string convert_from;
  bool check_only = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--config") == 0 && i + 1 < argc) {
      config = argv[++i];
    } else if (std::strcmp(argv[i], "--convert-from-rss3") == 0 && i + 1 < argc) {
      convert_from = argv[++i];
    } else if (std::strcmp(argv[i], "--check") == 0) {
      check_only = true;
    } else {
      return usage();
    }
  }
  if (config.empty()) return usage();

  mpc::Logger log("mpc-server");
  try {
    auto settings = mpc::settings::load_server_settings(config);
    log.set_threshold(mpc::log_level_named(settings.log_level));
    std::signal(SIGTERM, request_stop);
    std::signal(SIGINT, request_stop);
    std::signal(SIGPIPE, SIG_IGN);
    if (!convert_from.empty()) {
      const std::size_t converted = mpc::two_party_engine::convert_from_rss3(settings, convert_from, log);
      std::cout << "converted " << converted << " keys into " << settings.storage_path.string() << "\n";
      return 0;
    }
    const mpc::node::EngineFactory engine = settings.protocol == mpc::settings::Protocol::Rss3
                                                ? mpc::node::EngineFactory(mpc::three_party_engine::make_three_party_engine)
                                                : mpc::node::EngineFactory(mpc::two_party_engine::make_two_party_engine);
    mpc::node::Node server(std::move(settings), log, engine);
    if (check_only) return 0;
    sd_notify(0, "READY=1\nSTATUS=serving");
    server.run(stop_requested);
    sd_notify(0, "STOPPING=1");
    return 0;
  } catch (const std::exception& error) {
    log.error("refusing to serve", {{"error", error.what()}});
    sd_notifyf(0, "STATUS=failed: %s", error.what());
    return 1;
  }
}
