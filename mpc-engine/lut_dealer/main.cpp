// mpc-lut-dealer: deals the masked lookup-table entries of a lut2 cluster whose servers say
// [lut] preprocessing = "dealer" (dealer_service.hpp).
//   mpc-lut-dealer --config /etc/mpc-kdc/dealer.toml [--check]
// --check loads the configuration and the key pair and exits.
#include <systemd/sd-daemon.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <iostream>
#include <string>

#include "common/log.hpp"
#include "lut_dealer/dealer_service.hpp"
#include "lut_dealer/dealer_settings.hpp"
#include "transport/curve_keys.hpp"

namespace {

std::atomic<bool> stop_requested{false};

void request_stop(int) { stop_requested.store(true); }

int usage() {
  std::cerr << "usage: mpc-lut-dealer --config FILE [--check]\n";
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

  mpc::Logger log("mpc-lut-dealer");
  try {
    const auto settings = mpc::lut_dealer::load_dealer_settings(config);
    log.set_threshold(mpc::log_level_named(settings.log_level));
    const auto own = mpc::transport::read_secret_key_file(settings.secret_key_file);
    if (check_only) return 0;
    std::signal(SIGTERM, request_stop);
    std::signal(SIGINT, request_stop);
    std::signal(SIGPIPE, SIG_IGN);
    mpc::lut_dealer::DealerService service(settings, own, log);
    sd_notify(0, "READY=1\nSTATUS=dealing");
    service.run(stop_requested);
    sd_notify(0, "STOPPING=1");
    return 0;
  } catch (const std::exception& error) {
    log.error("refusing to deal", {{"error", error.what()}});
    sd_notifyf(0, "STATUS=failed: %s", error.what());
    return 1;
  }
}
