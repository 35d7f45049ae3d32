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

#include "common/batch_memory.hpp"
#include "common/error.hpp"
#include "common/log.hpp"
#include "engines/three_party/three_party_engine.hpp"
#include "engines/two_party/convert_store.hpp"
#include "engines/two_party/two_party_engine.hpp"
#include "jobs/krb_circuit_cache.hpp"
#include "jobs/krb_jobs.hpp"
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
  if (!mpc::keep_freed_batch_memory()) log.warn("the C library refused the allocator policy for batches; running with its defaults");
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
    // One cache of garbled Kerberos circuits for every engine of this server: the two-party
    // engine a three-server cluster serves with while one server is down starts with the
    // circuits the three-party engine already compiled.
    mpc::jobs::KrbCircuitCache garbled_circuits(mpc::jobs::KrbCircuitCache::kDefaultBudgetOps,
                                                [](const mpc::jobs::KrbCircuitKey& key) {
                                                  return mpc::jobs::build_krb_circuit(
                                                      key, mpc::circuits::CircuitCost::FewestAnds);
                                                });
    const auto sharing = [&garbled_circuits](mpc::node::EngineFactory make) {
      return mpc::node::EngineFactory([&garbled_circuits, make](const mpc::node::EngineResources& resources) {
        mpc::node::EngineResources shared = resources;
        shared.garbled_krb_circuits = &garbled_circuits;
        return make(shared);
      });
    };
    const bool three_servers = settings.protocol == mpc::settings::Protocol::Rss3;
    const mpc::node::EngineFactory engine = sharing(three_servers ? mpc::three_party_engine::make_three_party_engine
                                                                  : mpc::two_party_engine::make_two_party_engine);
    // A three-server cluster serves with two-party engines while one server is down.
    const mpc::node::EngineFactory pair_engine =
        three_servers ? sharing(mpc::two_party_engine::make_two_party_engine) : mpc::node::EngineFactory();
    mpc::node::Node server(std::move(settings), log, engine, pair_engine);
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
