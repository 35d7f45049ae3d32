// mpc-server: one party of the three-party engine.
//   mpc-server --config /etc/mpc-kdc/server.toml [--check]
// --check loads the configuration, the keys and the store, runs the self-tests and exits.
#include <systemd/sd-daemon.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <iostream>
#include <string>

#include "common/error.hpp"
#include "common/log.hpp"
#include "server/server.hpp"
#include "settings/server_settings.hpp"

namespace {

std::atomic<bool> stop_requested{false};

void request_stop(int) { stop_requested.store(true); }

mpc::LogLevel parse_level(const std::string& name) {
  if (name == "debug") return mpc::LogLevel::Debug;
  if (name == "warning") return mpc::LogLevel::Warning;
  if (name == "error") return mpc::LogLevel::Error;
  return mpc::LogLevel::Info;
}

int usage() {
  std::cerr << "usage: mpc-server --config FILE [--check]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string config;
  bool check_only = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--config") == 0 && i + 1 < argc) {
      config = argv[++i];
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
    log.set_threshold(parse_level(settings.log_level));
    std::signal(SIGTERM, request_stop);
    std::signal(SIGINT, request_stop);
    std::signal(SIGPIPE, SIG_IGN);
    mpc::server::Server server(std::move(settings), log);
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
