// cluster init/start/stop/status: a three-server (rss3) or two-server (gc2, lut2) cluster on
// one machine, for development, demos and tests. Production servers run under systemd instead.
//
// Layout of DIR after init:
//   serverN/server.toml, server.key (0600), server.pub, storage.key (0600), data/
//   admin.key, admin.pub, cluster.toml       (admin: import, list, delete)
//   compute.key, compute.pub, compute.toml   (compute only, for the KDC)
//   enrol.key, enrol.pub, enrol.toml         (Kerberos user and service keys only, for kadmind)
//   dealer/dealer.toml, dealer.key (0600), dealer.pub
//                                            (lut2 with --lut-preprocessing dealer: the
//                                             lookup-table dealer, started and stopped with
//                                             the servers)
//
// Ports: clients on base+1.., peers on base+11.., the dealer on base+20.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "client/cluster_client.hpp"
#include "common/error.hpp"
#include "settings/cluster_settings.hpp"
#include "store/share_store.hpp"
#include "tools/mpcctl/arguments.hpp"
#include "tools/mpcctl/commands.hpp"
#include "transport/curve_keys.hpp"

namespace mpc::tools {
namespace {

namespace fs = std::filesystem;

std::string endpoint(const std::string& host, std::uint64_t port) { return "tcp://" + host + ":" + std::to_string(port); }

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  if (!out) throw Error(Component::Tool, "cannot write " + path.string());
  out << text;
}

std::uint64_t dealer_port(std::uint64_t base_port) { return base_port + 20; }
std::uint64_t data_port(std::uint64_t base_port, int party) { return base_port + 20 + static_cast<std::uint64_t>(party); }

std::string cluster_toml(const std::string& protocol, int parties, const std::string& key_file, const std::string& host,
                         std::uint64_t base_port, bool data_links) {
  std::string text = "# Written by mpcctl cluster init.\nprotocol = \"" + protocol +
                     "\"\ntimeout_ms = 2000\nsecret_key_file = \"" + key_file + "\"\n";
  for (int party = 1; party <= parties; ++party)
    text += "\n[[servers]]\nparty = " + std::to_string(party) + "\nendpoint = \"" +
            endpoint(host, base_port + static_cast<std::uint64_t>(party)) + "\"\n" +
            (data_links ? "data_endpoint = \"" + endpoint(host, data_port(base_port, party)) + "\"\n" : std::string()) +
            "public_key = \"server" + std::to_string(party) + "/server.pub\"\n";
  return text;
}

std::string server_toml(const std::string& protocol, int parties, int party, const std::string& host,
                        std::uint64_t base_port, bool dealer, const std::string& security, bool data_links,
                        bool ticket_key_import) {
  std::string text = "# Written by mpcctl cluster init.\nprotocol = \"" + protocol + "\"\nparty = " + std::to_string(party) +
                     "\nclient_endpoint = \"" + endpoint(host, base_port + static_cast<std::uint64_t>(party)) +
                     "\"\npeer_endpoint = \"" + endpoint(host, base_port + 10 + static_cast<std::uint64_t>(party)) +
                     "\"\n" + (data_links ? "data_endpoint = \"" + endpoint(host, data_port(base_port, party)) + "\"\n" : std::string()) +
                     "secret_key_file = \"server.key\"\nstorage_path = \"data\"\n"
                     "storage_key_file = \"storage.key\"\nlog_level = \"info\"\n" +
                     (protocol != "lut2" ? "security = \"" + security + "\"\n" : std::string()) +
                     (protocol == "rss3" && ticket_key_import ? "ticket_key_import = \"allow\"\n" : std::string()) +
                     "\n[limits]\npeer_timeout_ms = " +
                     (protocol == "lut2" ? std::string("3000") : std::string("1000")) + "\n";
  // Preprocessing by OT is far slower than the online phase: on one machine, jobs wait for
  // the pool rather than fail while it fills.
  if (protocol == "lut2") text += "\n[lut]\npool_wait_ms = 2000\n";
  if (dealer)
    text += "preprocessing = \"dealer\"\ndealer_endpoint = \"" + endpoint(host, dealer_port(base_port)) +
            "\"\ndealer_public_key = \"../dealer/dealer.pub\"\n";
  for (int peer = 1; peer <= parties; ++peer) {
    if (peer == party) continue;
    text += "\n[[peers]]\nparty = " + std::to_string(peer) + "\nendpoint = \"" +
            endpoint(host, base_port + 10 + static_cast<std::uint64_t>(peer)) + "\"\n" +
            (data_links ? "data_endpoint = \"" + endpoint(host, data_port(base_port, peer)) + "\"\n" : std::string()) +
            "public_key = \"../server" + std::to_string(peer) + "/server.pub\"\n";
  }
  text += "\n[clients]\ncompute = [\"../compute.pub\"]\nenrol = [\"../enrol.pub\"]\nadmin = [\"../admin.pub\"]\n";
  return text;
}

std::string dealer_toml(const std::string& host, std::uint64_t base_port) {
  std::string text = "# Written by mpcctl cluster init.\nendpoint = \"" + endpoint(host, dealer_port(base_port)) +
                     "\"\nsecret_key_file = \"dealer.key\"\nlog_level = \"info\"\n";
  for (int party = 1; party <= 2; ++party)
    text += "\n[[servers]]\nparty = " + std::to_string(party) + "\npublic_key = \"../server" + std::to_string(party) +
            "/server.pub\"\n";
  return text;
}

void init_cluster(const Arguments& arguments) {
  const fs::path dir = arguments.required("dir");
  const std::string host = arguments.value_or("host", "127.0.0.1");
  const std::uint64_t base_port = arguments.number("base-port", 7100, 65500);
  const std::string protocol = arguments.value_or("protocol", "rss3");
  if (protocol != "rss3" && protocol != "gc2" && protocol != "lut2")
    throw Error(Component::Tool, "--protocol must be rss3, gc2 or lut2");
  const int parties = settings::party_count(settings::parse_protocol(protocol));
  const std::string preprocessing = arguments.value_or("lut-preprocessing", "ot");
  if (preprocessing != "ot" && preprocessing != "dealer")
    throw Error(Component::Tool, "--lut-preprocessing must be ot or dealer");
  if (arguments.optional("lut-preprocessing") && protocol != "lut2")
    throw Error(Component::Tool, "--lut-preprocessing applies only to --protocol lut2");
  const bool dealer = preprocessing == "dealer";
  const std::string security = arguments.value_or("security", "active");
  if (security != "active" && security != "passive") throw Error(Component::Tool, "--security must be active or passive");
  if (arguments.optional("security") && protocol == "lut2")
    throw Error(Component::Tool, "--security applies to --protocol rss3 and gc2 (lut2 is semi-honest)");
  const std::string data_links = arguments.value_or("data-links", protocol == "rss3" ? "on" : "off");
  if (data_links != "on" && data_links != "off") throw Error(Component::Tool, "--data-links must be on or off");
  if (data_links == "on" && protocol != "rss3")
    throw Error(Component::Tool, "--data-links applies only to --protocol rss3");
  const std::string import = arguments.value_or("ticket-key-import", "refuse");
  if (import != "refuse" && import != "allow") throw Error(Component::Tool, "--ticket-key-import must be refuse or allow");
  if (arguments.optional("ticket-key-import") && protocol != "rss3")
    throw Error(Component::Tool, "--ticket-key-import applies only to --protocol rss3 (two servers always import)");
  if (fs::exists(dir / "cluster.toml")) throw Error(Component::Tool, dir.string() + " already holds a cluster");
  fs::create_directories(dir);
  for (const char* client : {"admin", "enrol", "compute"}) {
    const auto pair = transport::generate_curve_key_pair();
    transport::write_secret_key_file(dir / (std::string(client) + ".key"), pair);
    transport::write_public_key_file(dir / (std::string(client) + ".pub"), pair.public_key);
  }
  if (dealer) {
    const fs::path dealer_dir = dir / "dealer";
    fs::create_directories(dealer_dir);
    ::chmod(dealer_dir.c_str(), 0700);
    const auto pair = transport::generate_curve_key_pair();
    transport::write_secret_key_file(dealer_dir / "dealer.key", pair);
    transport::write_public_key_file(dealer_dir / "dealer.pub", pair.public_key);
    write_text(dealer_dir / "dealer.toml", dealer_toml(host, base_port));
  }
  for (int party = 1; party <= parties; ++party) {
    const fs::path server_dir = dir / ("server" + std::to_string(party));
    fs::create_directories(server_dir);
    ::chmod(server_dir.c_str(), 0700);
    const auto pair = transport::generate_curve_key_pair();
    transport::write_secret_key_file(server_dir / "server.key", pair);
    transport::write_public_key_file(server_dir / "server.pub", pair.public_key);
    store::write_storage_key_file(server_dir / "storage.key", store::generate_storage_key());
    write_text(server_dir / "server.toml", server_toml(protocol, parties, party, host, base_port, dealer, security,
                                                             data_links == "on", import == "allow"));
  }
  write_text(dir / "cluster.toml", cluster_toml(protocol, parties, "admin.key", host, base_port, data_links == "on"));
  write_text(dir / "compute.toml", cluster_toml(protocol, parties, "compute.key", host, base_port, data_links == "on"));
  write_text(dir / "enrol.toml", cluster_toml(protocol, parties, "enrol.key", host, base_port, data_links == "on"));
  std::cout << protocol << " cluster written to " << dir.string() << " (clients on ports " << base_port + 1 << "-"
            << base_port + static_cast<std::uint64_t>(parties) << ", peers on " << base_port + 11 << "-"
            << base_port + 10 + static_cast<std::uint64_t>(parties)
            << (dealer ? ", dealer on " + std::to_string(dealer_port(base_port)) : std::string())
            << (data_links == "on" ? ", data links on " + std::to_string(data_port(base_port, 1)) + "-" +
                                         std::to_string(data_port(base_port, parties))
                                   : std::string())
            << ")\n";
}

// Next to mpcctl, in its build-tree folder (`folder`), or else from PATH.
fs::path default_binary(const std::string& name, const std::string& folder) {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  if (!error) {
    for (const fs::path& candidate : {self.parent_path() / name, self.parent_path().parent_path() / folder / name})
      if (fs::exists(candidate)) return candidate;
  }
  return name;
}

pid_t read_pid(const fs::path& file) {
  std::ifstream in(file);
  long pid = 0;
  if (!(in >> pid) || pid <= 1) return 0;
  return static_cast<pid_t>(pid);
}

// A process that has exited but was never reaped (its parent is gone and init does not
// reap) still answers kill(pid, 0): read its state instead.
bool alive(pid_t pid) {
  if (pid <= 0 || ::kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const auto close = line.rfind(')');
  return close == std::string::npos || close + 2 >= line.size() || (line[close + 2] != 'Z' && line[close + 2] != 'X');
}

// Starts `binary --config CONFIG` in its own session, its output appended to `log_file`, and
// writes its pid to `pid_file`.
void launch(const fs::path& binary, const fs::path& config, const fs::path& log_file, const fs::path& pid_file) {
  const pid_t child = ::fork();
  if (child < 0) throw Error(Component::Tool, "fork failed");
  if (child == 0) {
    ::setsid();
    const int log = ::open(log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    const int null = ::open("/dev/null", O_RDONLY);
    if (log >= 0) {
      ::dup2(log, STDOUT_FILENO);
      ::dup2(log, STDERR_FILENO);
    }
    if (null >= 0) ::dup2(null, STDIN_FILENO);
    ::execlp(binary.c_str(), binary.c_str(), "--config", config.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  write_text(pid_file, std::to_string(child) + "\n");
}

void start_cluster(const Arguments& arguments) {
  const fs::path dir = fs::absolute(arguments.required("dir"));
  const fs::path binary =
      arguments.optional("server-binary").value_or(default_binary("mpc-server", "daemon").string());
  const auto cluster_settings = settings::load_cluster_settings(dir / "cluster.toml");
  const int parties = static_cast<int>(cluster_settings.servers.size());
  // The dealer first: the lut2 servers fill their pools from it as soon as they start.
  const fs::path dealer_dir = dir / "dealer";
  const bool dealer = fs::exists(dealer_dir / "dealer.toml");
  if (dealer) {
    if (alive(read_pid(dealer_dir / "dealer.pid"))) throw Error(Component::Tool, "the dealer is already running");
    const fs::path dealer_binary =
        arguments.optional("dealer-binary").value_or(default_binary("mpc-lut-dealer", "lut_dealer").string());
    launch(dealer_binary, dealer_dir / "dealer.toml", dealer_dir / "dealer.log", dealer_dir / "dealer.pid");
  }
  for (int party = 1; party <= parties; ++party) {
    const fs::path server_dir = dir / ("server" + std::to_string(party));
    if (alive(read_pid(server_dir / "server.pid")))
      throw Error(Component::Tool, "server " + std::to_string(party) + " is already running");
    launch(binary, server_dir / "server.toml", server_dir / "server.log", server_dir / "server.pid");
  }
  // Ready when every server answers a status request through the admin configuration.
  client::ClusterClient cluster(cluster_settings);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  std::string last_error;
  while (std::chrono::steady_clock::now() < deadline) {
    if (dealer) {
      const pid_t pid = read_pid(dealer_dir / "dealer.pid");
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid || !alive(pid))
        throw Error(Component::Tool, "the dealer exited during start-up; see " + (dealer_dir / "dealer.log").string());
    }
    for (int party = 1; party <= parties; ++party) {
      const fs::path server_dir = dir / ("server" + std::to_string(party));
      const pid_t pid = read_pid(server_dir / "server.pid");
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid || !alive(pid))
        throw Error(Component::Tool, "server " + std::to_string(party) + " exited during start-up; see " +
                                         (server_dir / "server.log").string());
    }
    try {
      cluster.status();
      std::cout << "cluster running in " << dir.string() << "\n";
      return;
    } catch (const Error& error) {
      last_error = error.what();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  throw Error(Component::Tool, "cluster did not become ready: " + last_error);
}

// SIGTERM, then SIGKILL after 5 s; removes the pid file.
void stop_process(const fs::path& pid_file) {
  const pid_t pid = read_pid(pid_file);
  if (!alive(pid)) return;
  ::kill(pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (alive(pid) && std::chrono::steady_clock::now() < deadline) {
    ::waitpid(pid, nullptr, WNOHANG);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (alive(pid)) ::kill(pid, SIGKILL);
  fs::remove(pid_file);
}

void stop_cluster(const Arguments& arguments) {
  const fs::path dir = arguments.required("dir");
  for (int party = 1; fs::exists(dir / ("server" + std::to_string(party))); ++party)
    stop_process(dir / ("server" + std::to_string(party)) / "server.pid");
  if (fs::exists(dir / "dealer")) stop_process(dir / "dealer" / "dealer.pid");
  std::cout << "cluster stopped\n";
}

std::string describe_mode(const wire::ServerStatus& server) {
  if (server.mode == wire::ClusterMode::Full) return "three-party";
  return "two-party without server " + std::to_string(server.missing_party + 1);
}

std::string describe_exclusion(const wire::ServerStatus& server) {
  if (server.excluded_party == wire::kNoParty) return "excluded none";
  return "excluded server " + std::to_string(server.excluded_party + 1) + " since unix ms " +
         std::to_string(server.excluded_since_unix_ms) + " (" + server.exclusion_reason + ")";
}

std::string describe_disputes(const wire::ServerStatus& server) {
  std::string out = "disputes " + std::to_string(server.disputes) + " (with";
  bool any = false;
  for (int party = 0; party < 3; ++party)
    if ((server.distrusts >> party) & 1u) {
      out += std::string(any ? "," : "") + " server " + std::to_string(party + 1);
      any = true;
    }
  if (!any) out += " none";
  out += server.three_party_suspended ? "; three-party service suspended" : "";
  for (int missing = 0; missing < 3; ++missing)
    if ((server.failed_pairs >> missing) & 1u) out += "; the pair without server " + std::to_string(missing + 1) + " failed";
  if (!server.dispute_reason.empty()) out += "; last: " + server.dispute_reason;
  return out + ")";
}

// The server named on the command line, 1-based there, 0-based on the wire.
std::uint8_t named_server(const std::vector<std::string>& words, const char* action) {
  const std::string usage = std::string("cluster ") + action + ": expected the server's number (1, 2 or 3)";
  if (words.size() < 2 || words[1].size() != 1 || words[1][0] < '1' || words[1][0] > '3') throw Error(Component::Tool, usage);
  return static_cast<std::uint8_t>(words[1][0] - '1');
}

// Excluding takes both other servers (they are to serve as a pair); the excluded one is told
// when it answers. Readmitting takes both others too: the readmitted one follows them when it
// next hears them, if it missed the word.
void set_exclusion(const Arguments& arguments, wire::ExclusionAction action, std::uint8_t party) {
  client::ClusterClient cluster(settings::load_cluster_settings(arguments.required("cluster")));
  wire::ExclusionRequest request;
  request.action = action;
  request.party = party;
  if (action == wire::ExclusionAction::Exclude) request.reason = "operator: " + arguments.required("reason");
  const auto answers = cluster.exclusion_each(request);
  bool others_took_it = true;
  for (std::size_t server = 0; server < answers.size(); ++server) {
    const bool took = answers[server].empty();
    std::cout << "server " << server + 1 << ": " << (took ? "done" : answers[server]) << "\n";
    if (!took && server != party) others_took_it = false;
  }
  const std::string what = action == wire::ExclusionAction::Exclude ? "excluded" : "readmitted";
  if (!others_took_it)
    throw Error(Component::Tool, "server " + std::to_string(party + 1) + " is not " + what +
                                     ": both other servers must take it (run the command again once they answer)");
  std::cout << "server " << party + 1 << " " << what << "\n";
}

// A server that is down is shown as such: the others still answer (and say how they serve).
void show_status(const Arguments& arguments) {
  client::ClusterClient cluster(settings::load_cluster_settings(arguments.required("cluster")));
  const auto each = cluster.status_each();
  bool all_answered = true;
  for (std::size_t party = 0; party < each.size(); ++party) {
    if (!each[party].status) {
      std::cout << "server " << party + 1 << ": not answering (" << each[party].error << ")\n";
      all_answered = false;
      continue;
    }
    const auto& server = *each[party].status;
    std::cout << "server " << server.party + 1 << ": batches " << server.batches << ", jobs " << server.jobs
              << ", stored keys " << server.stored_keys << ", payload bytes sent " << server.payload_bytes_sent
              << ", layer messages " << server.layer_messages_sent << ", AND gates " << server.and_gates_evaluated
              << ", requests with differing copies " << server.request_mismatches
              << ", requests refused for failed verification " << server.verification_failures << ", mode switches "
              << server.mode_switches << ", mode " << describe_mode(server) << " since unix ms "
              << server.mode_since_unix_ms << ", " << describe_exclusion(server) << ", exclusions "
              << server.exclusions << ", " << describe_disputes(server) << "\n";
  }
  if (!all_answered) throw Error(Component::Tool, "not every server answered");
}

}  // namespace

int run_cluster_command(const std::vector<std::string>& words) {
  if (words.empty())
    throw Error(Component::Tool, "cluster: expected init, start, stop, status, exclude or readmit");
  const std::string action = words[0];
  const Arguments arguments(std::vector<std::string>(words.begin() + 1, words.end()), {});
  if (action == "init") {
    arguments.allow_only(
        {"dir", "host", "base-port", "protocol", "lut-preprocessing", "security", "data-links", "ticket-key-import"});
    init_cluster(arguments);
  } else if (action == "start") {
    arguments.allow_only({"dir", "server-binary", "dealer-binary"});
    start_cluster(arguments);
  } else if (action == "stop") {
    arguments.allow_only({"dir"});
    stop_cluster(arguments);
  } else if (action == "status") {
    arguments.allow_only({"cluster"});
    show_status(arguments);
  } else if (action == "exclude" || action == "readmit") {
    const bool exclude = action == "exclude";
    const std::uint8_t party = named_server(words, exclude ? "exclude" : "readmit");
    const Arguments options(std::vector<std::string>(words.begin() + 2, words.end()), {});
    if (exclude) options.allow_only({"cluster", "reason"});
    else options.allow_only({"cluster"});
    set_exclusion(options, exclude ? wire::ExclusionAction::Exclude : wire::ExclusionAction::Readmit, party);
  } else {
    throw Error(Component::Tool, "cluster: unknown action '" + action + "'");
  }
  return 0;
}

}  // namespace mpc::tools
