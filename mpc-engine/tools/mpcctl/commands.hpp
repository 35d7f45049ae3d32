// mpcctl's command groups. Each takes the words after its group name and returns
// the process exit status; errors are thrown as mpc::Error and printed by main.
#pragma once

#include <string>
#include <vector>

namespace mpc::tools {

int run_keygen_command(const std::vector<std::string>& words);
int run_storage_keygen_command(const std::vector<std::string>& words);
int run_key_command(const std::vector<std::string>& words);
int run_aes_command(const std::vector<std::string>& words);
int run_cluster_command(const std::vector<std::string>& words);
int run_circuit_command(const std::vector<std::string>& words);
// krb encrypt|decrypt|checksum|prf: the Kerberos enctype jobs (krb_commands.cpp).
int run_krb_command(const std::vector<std::string>& words);
// kdc protect|rotate|status: the realm's krbtgt key into the engine (kdc_commands.cpp).
int run_kdc_command(const std::vector<std::string>& words);

}  // namespace mpc::tools
