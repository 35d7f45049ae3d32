// mpcctl kdc: the words of the command group, and which action they pick. The actions put a
// realm's krbtgt key (kdc_krbtgt.cpp) and its users' keys (kdc_users.cpp) into the engine,
// and report what the database and the engine hold (kdc_status.cpp).
#include <sys/prctl.h>

#include <iostream>
#include <string>
#include <vector>

#include "tools/mpcctl/arguments.hpp"
#include "tools/mpcctl/commands.hpp"
#include "tools/mpcctl/kdc_actions.hpp"

namespace mpc::tools {
namespace {

using kdc::tool_error;

constexpr const char* kKdcUsage = R"(usage: mpcctl kdc ACTION ...
  kdc protect krbtgt/R --cluster F [--realm R] [--force]
  kdc protect --principal P [--principal Q ...] [--realm R]
  kdc protect --all-users [--realm R]
  kdc unprotect P --randkey | --password [--realm R]
  kdc rotate krbtgt/R --cluster F [--realm R] [--retire-now]
  kdc status [--cluster F] [--realm R]
  kdc metrics --file F [--out PATH]
Run on the KDC host with access to the database and its stash; -r R is --realm R.
Users' keys (the AES enctypes of RFC 3962 and RFC 8009) are enrolled by the KDB module when
the entry is stored, with the cluster configuration of its mpc_cluster_config setting;
--all-users takes every principal but krbtgt/*, K/M, kadmin/*, kiprop/* and those already
protected.
metrics prints the crypto router's counters (router.conf metrics_file F) as Prometheus text,
or writes them whole to PATH (for node_exporter's textfile collector).
unprotect is for emergencies: it gives the user new keys (--password reads one from the
terminal or stdin) and deletes the engine keys. The old key cannot be restored: it never
existed in one place after protection.
)";

}  // namespace

int run_kdc_command(const std::vector<std::string>& words) {
  // protect and rotate hold a krbtgt key or a ticket key in memory: a crash must not write
  // them to a core file (and nothing of this user may ptrace them out meanwhile).
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  if (words.empty() || words[0] == "help" || words[0] == "--help") {
    (words.empty() ? std::cerr : std::cout) << kKdcUsage;
    return words.empty() ? 2 : 0;
  }
  const std::string action = words[0];
  // -r REALM as kdb5_util and kadmin.local spell it.
  std::vector<std::string> rest;
  for (std::size_t i = 1; i < words.size(); ++i) rest.push_back(words[i] == "-r" ? "--realm" : words[i]);
  // --principal may repeat: taken out before the other options are parsed.
  std::vector<std::string> principals;
  std::vector<std::string> others;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == "--principal") {
      if (i + 1 >= rest.size()) throw tool_error("option --principal needs a value");
      principals.push_back(rest[++i]);
    } else {
      others.push_back(rest[i]);
    }
  }
  const Arguments arguments(others, {"force", "retire-now", "all-users", "randkey", "password"});
  if (action == "protect") {
    if (!principals.empty() || arguments.flag("all-users")) {
      arguments.allow_only({"realm", "all-users"});
      return kdc::protect_users(principals, arguments.flag("all-users"), arguments);
    }
    arguments.allow_only({"cluster", "realm", "force"});
    return kdc::protect_krbtgt(arguments);
  }
  if (!principals.empty()) throw tool_error("kdc " + action + ": --principal is an option of kdc protect only");
  if (action == "unprotect") {
    arguments.allow_only({"realm", "randkey", "password"});
    return kdc::unprotect_user(arguments);
  }
  if (action == "rotate") {
    arguments.allow_only({"cluster", "realm", "retire-now"});
    return kdc::rotate_krbtgt(arguments);
  }
  if (action == "status") {
    arguments.allow_only({"cluster", "realm"});
    return kdc::report_status(arguments);
  }
  if (action == "metrics") {
    arguments.allow_only({"file", "out"});
    return kdc::report_metrics(arguments);
  }
  throw tool_error("kdc: unknown action '" + action + "'\n" + kKdcUsage);
}

}  // namespace mpc::tools
