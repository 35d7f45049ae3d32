// kdc metrics: the crypto router's counters (kdc-plugin/router/router_metrics_layout.h, the
// file every krb5kdc worker adds to) as Prometheus text, on stdout or written whole to a file
// for node_exporter's textfile collector (a timer runs it; a scrape never sees half a file).
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "router_metrics_layout.h"
#include "tools/mpcctl/kdc_actions.hpp"

namespace mpc::tools::kdc {
namespace {

constexpr std::array<const char*, ROUTER_OP_COUNT> kOperations{"gcm_tag", "gcm_tag_chained", "gcm_open", "krb",
                                                                "prefetch"};
constexpr std::array<const char*, ROUTER_RESULT_COUNT> kResults{"ok", "bad_tag", "aborted", "unreachable", "error"};
constexpr std::array<std::uint64_t, ROUTER_LATENCY_BUCKETS> kBoundsUs ROUTER_LATENCY_BOUNDS_US;

// A copy of the page, read word by word with atomic loads (workers add while it is read).
router_metrics_page read_page(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw tool_error("metrics file " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<std::size_t>(st.st_size) < sizeof(router_metrics_page)) {
    ::close(fd);
    throw tool_error("metrics file " + path + " is not a router metrics file");
  }
  void* mapped = ::mmap(nullptr, sizeof(router_metrics_page), PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (mapped == MAP_FAILED) throw tool_error("metrics file " + path + ": " + std::strerror(errno));
  router_metrics_page page{};
  const auto* from = static_cast<const std::uint64_t*>(mapped);
  auto* to = reinterpret_cast<std::uint64_t*>(&page);
  for (std::size_t i = 0; i < sizeof page / sizeof(std::uint64_t); ++i) to[i] = __atomic_load_n(&from[i], __ATOMIC_RELAXED);
  ::munmap(mapped, sizeof(router_metrics_page));
  if (page.magic != ROUTER_METRICS_MAGIC) throw tool_error("metrics file " + path + " holds another layout");
  return page;
}

std::string seconds(std::uint64_t micros) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", static_cast<double>(micros) / 1e6);
  return text;
}

std::string render(const router_metrics_page& page) {
  std::ostringstream out;
  out << "# HELP mpc_kdc_engine_calls_total Engine calls of this KDC host's router, by operation and result.\n"
         "# TYPE mpc_kdc_engine_calls_total counter\n";
  for (int op = 0; op < ROUTER_OP_COUNT; ++op)
    for (int result = 0; result < ROUTER_RESULT_COUNT; ++result)
      out << "mpc_kdc_engine_calls_total{operation=\"" << kOperations[op] << "\",result=\"" << kResults[result]
          << "\"} " << page.calls[op][result] << "\n";
  out << "# HELP mpc_kdc_engine_call_seconds Time of the router's engine calls, by operation.\n"
         "# TYPE mpc_kdc_engine_call_seconds histogram\n";
  for (int op = 0; op < ROUTER_OP_COUNT; ++op) {
    std::uint64_t total = 0, cumulative = 0;
    for (int result = 0; result < ROUTER_RESULT_COUNT; ++result) total += page.calls[op][result];
    const std::string label = std::string("operation=\"") + kOperations[op] + "\"";
    for (int b = 0; b < ROUTER_LATENCY_BUCKETS; ++b) {
      cumulative += page.latency_buckets[op][b];
      out << "mpc_kdc_engine_call_seconds_bucket{" << label << ",le=\"" << seconds(kBoundsUs[b]) << "\"} "
          << cumulative << "\n";
    }
    out << "mpc_kdc_engine_call_seconds_bucket{" << label << ",le=\"+Inf\"} " << total << "\n";
    out << "mpc_kdc_engine_call_seconds_sum{" << label << "} " << seconds(page.latency_sum_us[op]) << "\n";
    out << "mpc_kdc_engine_call_seconds_count{" << label << "} " << total << "\n";
  }
  out << "# HELP mpc_kdc_engine_failed_fast_total Calls refused at once while the engine was marked unreachable.\n"
         "# TYPE mpc_kdc_engine_failed_fast_total counter\n"
         "mpc_kdc_engine_failed_fast_total "
      << page.failed_fast << "\n";
  out << "# HELP mpc_kdc_reseals_total Seals tried again under a fresh nonce (the servers no longer knew the pooled one).\n"
         "# TYPE mpc_kdc_reseals_total counter\n"
         "mpc_kdc_reseals_total "
      << page.reseals << "\n";
  std::array<std::uint64_t, ROUTER_POOL_COUNT> pooled{};
  std::uint64_t workers = 0;
  for (const auto& worker : page.workers) {
    // A slot's process may be gone (a worker replaced): its levels no longer exist.
    if (worker.pid == 0 || (::kill(static_cast<pid_t>(worker.pid), 0) != 0 && errno == ESRCH)) continue;
    ++workers;
    for (int pool = 0; pool < ROUTER_POOL_COUNT; ++pool) pooled[pool] += worker.pooled[pool];
  }
  out << "# HELP mpc_kdc_nonces_pooled Prefetched nonces in the router's pools, summed over the live krb5kdc workers.\n"
         "# TYPE mpc_kdc_nonces_pooled gauge\n"
         "mpc_kdc_nonces_pooled{pool=\"ticket\"} "
      << pooled[ROUTER_POOL_TICKET] << "\nmpc_kdc_nonces_pooled{pool=\"checksum\"} " << pooled[ROUTER_POOL_CHECKSUM]
      << "\n";
  out << "# HELP mpc_kdc_router_workers krb5kdc workers whose router holds nonce pools.\n"
         "# TYPE mpc_kdc_router_workers gauge\n"
         "mpc_kdc_router_workers "
      << workers << "\n";
  out << "# HELP mpc_kdc_engine_unreachable_periods_total Times a call found the engine unreachable after the last call of any worker had reached it.\n"
         "# TYPE mpc_kdc_engine_unreachable_periods_total counter\n"
         "mpc_kdc_engine_unreachable_periods_total "
      << page.unreachable_periods << "\n";
  return out.str();
}

}  // namespace

int report_metrics(const Arguments& arguments) {
  const std::string text = render(read_page(arguments.required("file")));
  const auto out = arguments.optional("out");
  if (!out) {
    std::cout << text;
    return 0;
  }
  const std::filesystem::path target(*out);
  const std::filesystem::path partial = target.string() + ".partial";
  {
    std::ofstream file(partial, std::ios::trunc);
    file << text;
    file.flush();
    if (!file) throw tool_error("cannot write " + partial.string());
  }
  std::filesystem::permissions(partial, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
                                            std::filesystem::perms::group_read | std::filesystem::perms::others_read);
  std::filesystem::rename(partial, target);
  return 0;
}

}  // namespace mpc::tools::kdc
