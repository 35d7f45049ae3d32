// tests/fuzz/fuzz_settings.cpp: libFuzzer target for the settings loaders. The input is
// written to a temporary file and loaded as both a server and a cluster configuration;
// mpc::Error is the only acceptable failure (anything else, a crash or a sanitizer
// report is a bug). Relative paths in the input resolve inside a private temporary
// directory, which holds one valid public key file ("k.pub") to reach deeper code.
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>

#include "common/error.hpp"
#include "settings/cluster_settings.hpp"
#include "settings/server_settings.hpp"

namespace {

struct Workspace {
  std::filesystem::path directory;
  std::filesystem::path file;
  Workspace() {
    std::string pattern = (std::filesystem::temp_directory_path() / "fuzz_settings.XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    directory = pattern;
    file = directory / "settings.toml";
    // "public-key <40 z85 characters>" (an all-zero key).
    if (FILE* pub = std::fopen((directory / "k.pub").c_str(), "w")) {
      std::fputs("public-key 0000000000000000000000000000000000000000\n", pub);
      std::fclose(pub);
    }
  }
  ~Workspace() {
    std::error_code ec;
    std::filesystem::remove_all(directory, ec);
  }
};

Workspace& workspace() {
  static Workspace instance;
  return instance;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const Workspace& ws = workspace();
  FILE* out = std::fopen(ws.file.c_str(), "wb");
  if (out == nullptr) std::abort();
  if (size != 0 && std::fwrite(data, 1, size, out) != size) std::abort();
  std::fclose(out);
  try {
    (void)mpc::settings::load_server_settings(ws.file);
  } catch (const mpc::Error&) {
  }
  try {
    (void)mpc::settings::load_cluster_settings(ws.file);
  } catch (const mpc::Error&) {
  }
  return 0;
}
