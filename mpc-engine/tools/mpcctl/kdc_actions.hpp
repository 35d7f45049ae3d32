// The actions of `mpcctl kdc` (kdc_commands.cpp parses the words and picks one). Each takes
// its parsed options and returns the process exit status; errors are thrown as mpc::Error.
#pragma once

#include <string>
#include <vector>

#include "common/error.hpp"
#include "tools/mpcctl/arguments.hpp"

namespace mpc::tools::kdc {

// Exit status of `kdc status` when it finds an inconsistency (1 is a failed command).
inline constexpr int kInconsistentExit = 3;

inline Error tool_error(const std::string& message) { return Error(Component::Tool, message); }

// kdc protect krbtgt/R and kdc rotate krbtgt/R (kdc_krbtgt.cpp).
int protect_krbtgt(const Arguments& arguments);
int rotate_krbtgt(const Arguments& arguments);
// kdc protect --principal P... | --all-users and kdc unprotect P (kdc_users.cpp).
int protect_users(const std::vector<std::string>& requested, bool all_users, const Arguments& arguments);
int unprotect_user(const Arguments& arguments);
// kdc status (kdc_status.cpp).
int report_status(const Arguments& arguments);
// kdc metrics (kdc_metrics.cpp).
int report_metrics(const Arguments& arguments);

}  // namespace mpc::tools::kdc
