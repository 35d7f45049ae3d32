// mpcctl: administration and checks for the mpc-kdc engine.
#include <iostream>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "tools/mpcctl/commands.hpp"

namespace {

constexpr const char* kUsage = R"(usage: mpcctl COMMAND ...

Keys for links and storage:
  keygen --out PREFIX                      CurveZMQ key pair: PREFIX.key (0600) and PREFIX.pub
  storage-keygen --out FILE                per-server storage key (0600)

Keys in the engine (--cluster FILE: a cluster configuration with an admin key):
  key import --cluster F --name N --kvno V --alg aes128|aes256 [--key-file F]
                                           AES key as hex from the file or stdin; never written to disk
  key list --cluster F [--prefix P]
  key delete --cluster F --name N --kvno V --alg A

Computations (print hex, to compare with `openssl enc`):
  aes keystream --cluster F --name N --kvno V --alg A --counter HEX32 --blocks N
  aes ecb-encrypt|ecb-decrypt --cluster F --name N --kvno V --alg A --in HEX

A local three-server cluster for development:
  cluster init --dir D [--host 127.0.0.1] [--base-port 7100]
  cluster start --dir D [--server-binary PATH]
  cluster stop --dir D
  cluster status --cluster F

Circuits:
  circuit list
  circuit stats NAME | --bristol FILE       gates, AND gates, AND-depth
  circuit write NAME --out FILE             Bristol Fashion export
)";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string command = argv[1];
  const std::vector<std::string> words(argv + 2, argv + argc);
  try {
    if (command == "keygen") return mpc::tools::run_keygen_command(words);
    if (command == "storage-keygen") return mpc::tools::run_storage_keygen_command(words);
    if (command == "key") return mpc::tools::run_key_command(words);
    if (command == "aes") return mpc::tools::run_aes_command(words);
    if (command == "cluster") return mpc::tools::run_cluster_command(words);
    if (command == "circuit") return mpc::tools::run_circuit_command(words);
    if (command == "help" || command == "--help" || command == "-h") {
      std::cout << kUsage;
      return 0;
    }
    std::cerr << "mpcctl: unknown command '" << command << "'\n" << kUsage;
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "mpcctl: " << error.what() << "\n";
    return 1;
  }
}
