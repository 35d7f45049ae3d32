// mpc-bench: load generator for the three-party engine; prints one JSON object.
//
// Cluster mode: N client threads, each with its own ClusterClient (its own connections),
// issue CTR keystream jobs of B blocks from random counters, back to back, for D seconds
// or until K jobs are done in all; reports jobs, blocks, blocks/s and job latency.
//
//   mpc-bench --cluster FILE --name N --kvno V --alg aes128|aes256
//             [--threads 1] [--blocks 1] [--seconds 5 | --jobs K] [--warmup 1]
//
// Local mode: the same AES circuit the servers run on a full batch, evaluated by the
// three parties in this process over the in-memory ring (rss3::evaluate_three_parties),
// no network: the protocol's cost without the transport's.
//
//   mpc-bench --local --alg aes128|aes256 [--sbox and32|depth4] [--blocks 65536] [--repeat 5]
//            [--security passive|active]
//
// AEAD mode: the seal and open rate of XSalsa20-Poly1305, what CurveZMQ does per message.
//
//   mpc-bench --aead [--seconds 1] [--bytes 1048576]
//
// Exit status 0 when every job succeeded, 1 when one failed (the JSON still comes out,
// with the first error), 2 on bad options.
#include <sodium.h>
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "circuits/aes.hpp"
#include "circuits/program.hpp"
#include "client/cluster_client.hpp"
#include "common/batch_memory.hpp"
#include "common/error.hpp"
#include "protocol/rss3/correlated_randomness.hpp"
#include "protocol/rss3/evaluator.hpp"
#include "protocol/rss3/local_three_party.hpp"
#include "bench/tools/aead_floor.hpp"
#include "settings/cluster_settings.hpp"
#include "tools/mpcctl/arguments.hpp"
#include "wire/key_id.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using mpc::tools::Arguments;

constexpr const char* kUsage = R"(usage:
  mpc-bench --cluster FILE --name N --kvno V --alg aes128|aes256
            [--threads 1] [--blocks 1] [--seconds 5 | --jobs K] [--warmup 1]
  mpc-bench --local --alg aes128|aes256 [--sbox and32|depth4] [--blocks 65536] [--repeat 5]
            [--security passive|active]
  mpc-bench --aead [--seconds 1] [--bytes 1048576]
)";

double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

double process_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

// Nearest-rank percentile of sorted values (milliseconds).
double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size(), std::max<std::size_t>(rank, 1)) - 1];
}

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
      out += buffer;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string number(double value) {
  std::ostringstream out;
  out.precision(6);
  out << value;
  return out.str();
}

mpc::circuits::AesKeySize key_size(mpc::wire::KeyAlgorithm algorithm) {
  return algorithm == mpc::wire::KeyAlgorithm::Aes128 ? mpc::circuits::AesKeySize::Aes128
                                                      : mpc::circuits::AesKeySize::Aes256;
}

mpc::wire::KeyAlgorithm parse_algorithm(const Arguments& arguments) {
  const auto algorithm = mpc::wire::parse_algorithm(arguments.required("alg"));
  if (!algorithm) throw mpc::Error(mpc::Component::Tool, "--alg must be aes128 or aes256");
  return *algorithm;
}

// ---------------------------------------------------------------------------------------
// Cluster mode

struct ClusterRun {
  std::mutex mutex;
  std::vector<double> latencies_ms;
  std::string first_error;
  std::atomic<std::uint64_t> jobs_started{0};
  std::atomic<bool> failed{false};
};

int run_cluster(const Arguments& arguments) {
  arguments.allow_only({"cluster", "name", "kvno", "alg", "threads", "blocks", "seconds", "jobs", "warmup"});
  const auto settings = mpc::settings::load_cluster_settings(arguments.required("cluster"));
  mpc::wire::KeyId key;
  key.name = arguments.required("name");
  mpc::wire::validate_key_name(key.name);
  key.version = static_cast<std::uint32_t>(arguments.number("kvno", 1, 0xffffffffu));
  key.algorithm = parse_algorithm(arguments);
  const auto threads = static_cast<unsigned>(arguments.number("threads", 1, 256));
  const auto blocks = static_cast<std::uint32_t>(arguments.number("blocks", 1, mpc::wire::kMaxRequestBlocks));
  const auto seconds = static_cast<double>(arguments.number("seconds", 5, 3600));
  const std::uint64_t job_limit = arguments.number("jobs", 0, 1ull << 40);  // 0: run for --seconds
  const auto warmup = arguments.number("warmup", 1, 1000);
  if (threads == 0 || blocks == 0) throw mpc::Error(mpc::Component::Tool, "--threads and --blocks must be positive");

  ClusterRun run;
  std::vector<std::unique_ptr<mpc::client::ClusterClient>> clients;
  for (unsigned t = 0; t < threads; ++t) clients.push_back(std::make_unique<mpc::client::ClusterClient>(settings));

  auto random_counter = [] {
    std::array<std::uint8_t, 16> counter{};
    randombytes_buf(counter.data(), counter.size());
    return counter;
  };
  auto fail = [&run](const std::exception& error) {
    std::lock_guard lock(run.mutex);
    if (run.first_error.empty()) run.first_error = error.what();
    run.failed.store(true);
  };

  // Warm-up: connections up, first batches out of the way; not measured.
  {
    std::vector<std::thread> warm;
    for (unsigned t = 0; t < threads; ++t)
      warm.emplace_back([&, t] {
        try {
          for (std::uint64_t i = 0; i < warmup; ++i) clients[t]->keystream(key, random_counter(), std::min(blocks, 64u));
        } catch (const std::exception& error) {
          fail(error);
        }
      });
    for (auto& thread : warm) thread.join();
  }

  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  const double cpu_start = process_cpu_seconds();
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads && !run.failed.load(); ++t) {
    workers.emplace_back([&, t] {
      std::vector<double> mine;
      try {
        for (;;) {
          if (run.failed.load()) break;
          if (job_limit != 0) {
            if (run.jobs_started.fetch_add(1) >= job_limit) break;
          } else if (Clock::now() >= deadline) {
            break;
          }
          const auto began = Clock::now();
          const auto stream = clients[t]->keystream(key, random_counter(), blocks);
          const auto ended = Clock::now();
          if (stream.size() != static_cast<std::size_t>(blocks) * 16)
            throw mpc::Error(mpc::Component::Tool, "keystream of the wrong length");
          mine.push_back(seconds_between(began, ended) * 1e3);
        }
      } catch (const std::exception& error) {
        fail(error);
      }
      std::lock_guard lock(run.mutex);
      run.latencies_ms.insert(run.latencies_ms.end(), mine.begin(), mine.end());
    });
  }
  for (auto& thread : workers) thread.join();
  const double elapsed = seconds_between(start, Clock::now());
  const double client_cpu = process_cpu_seconds() - cpu_start;

  std::sort(run.latencies_ms.begin(), run.latencies_ms.end());
  const std::uint64_t jobs = run.latencies_ms.size();
  const double total_blocks = static_cast<double>(jobs) * blocks;
  double mean = 0;
  for (double value : run.latencies_ms) mean += value;
  if (jobs != 0) mean /= static_cast<double>(jobs);

  std::cout << "{\"mode\": \"cluster\", \"alg\": " << json_string(mpc::wire::algorithm_name(key.algorithm))
            << ", \"threads\": " << threads << ", \"blocks_per_job\": " << blocks << ", \"jobs\": " << jobs
            << ", \"blocks\": " << static_cast<std::uint64_t>(total_blocks) << ", \"seconds\": " << number(elapsed)
            << ", \"blocks_per_s\": " << number(elapsed > 0 ? total_blocks / elapsed : 0)
            << ", \"jobs_per_s\": " << number(elapsed > 0 ? static_cast<double>(jobs) / elapsed : 0)
            << ", \"latency_ms\": {\"p50\": " << number(percentile(run.latencies_ms, 50))
            << ", \"p99\": " << number(percentile(run.latencies_ms, 99))
            << ", \"max\": " << number(run.latencies_ms.empty() ? 0 : run.latencies_ms.back())
            << ", \"mean\": " << number(mean) << "}, \"client_cpu_seconds\": " << number(client_cpu)
            << ", \"error\": " << (run.first_error.empty() ? "null" : json_string(run.first_error)) << "}\n";
  if (run.failed.load()) {
    std::cerr << "mpc-bench: " << run.first_error << "\n";
    return 1;
  }
  return 0;
}

// ---------------------------------------------------------------------------------------
// Local mode

int run_local(const Arguments& arguments) {
  arguments.allow_only({"local", "alg", "sbox", "blocks", "repeat", "security"});
  const auto algorithm = parse_algorithm(arguments);
  const std::string sbox_name = arguments.value_or("sbox", "and32");
  if (sbox_name != "and32" && sbox_name != "depth4")
    throw mpc::Error(mpc::Component::Tool, "--sbox must be and32 or depth4");
  const auto sbox = sbox_name == "and32" ? mpc::circuits::SboxVariant::And32 : mpc::circuits::SboxVariant::Depth4;
  const std::size_t instances = arguments.number("blocks", 65536, 1u << 20);
  const std::size_t repeat = arguments.number("repeat", 5, 1000);
  if (instances == 0 || repeat == 0) throw mpc::Error(mpc::Component::Tool, "--blocks and --repeat must be positive");
  const std::string security = arguments.value_or("security", "passive");
  if (security != "passive" && security != "active")
    throw mpc::Error(mpc::Component::Tool, "--security must be passive or active");

  const mpc::circuits::Program program = mpc::circuits::compile(
      mpc::circuits::build_aes_circuit(key_size(algorithm), mpc::circuits::AesDirection::Encrypt, sbox));
  const auto level = mpc::rss3::best_simd_level();

  // Random inputs (the cost does not depend on the values), shared by the dealer.
  std::vector<std::uint64_t> cleartext(program.num_inputs * mpc::rss3::words_for(instances));
  randombytes_buf(cleartext.data(), cleartext.size() * sizeof(std::uint64_t));
  const auto inputs = mpc::rss3::share_matrix(cleartext, program.num_inputs, instances);

  std::array<mpc::rss3::PrfKey, 3> keys{};
  for (auto& key : keys) randombytes_buf(key.data(), key.size());
  std::array<mpc::rss3::EvaluationStats, 3> stats{};
  mpc::rss3::ThreePartyOptions options;
  options.stats = &stats;
  options.check_ands = security == "active";

  std::vector<double> wall;
  double cpu = 0;
  // One untimed evaluation first: page faults of fresh buffers, evaluator set-up.
  for (auto& m : mpc::rss3::evaluate_three_parties(program, inputs, level, {1, 0x7fffffffu}, keys)) m.wipe();
  for (std::size_t r = 0; r < repeat; ++r) {
    mpc::rss3::BatchNonce nonce{1, static_cast<std::uint32_t>(r + 1)};
    const double cpu_before = process_cpu_seconds();
    const auto began = Clock::now();
    auto outputs = mpc::rss3::evaluate_three_parties(program, inputs, level, nonce, keys, options);
    wall.push_back(seconds_between(began, Clock::now()));
    cpu += process_cpu_seconds() - cpu_before;
    for (auto& m : outputs) m.wipe();
  }
  std::sort(wall.begin(), wall.end());
  const double median = wall[wall.size() / 2];
  const double blocks_total = static_cast<double>(instances * repeat);

  std::cout << "{\"mode\": \"local\", \"alg\": " << json_string(mpc::wire::algorithm_name(algorithm))
            << ", \"sbox\": " << json_string(sbox_name) << ", \"security\": " << json_string(security)
            << ", \"simd\": " << json_string(mpc::rss3::simd_level_name(level))
            << ", \"prf\": " << json_string(mpc::rss3::prf_path_name())
            << ", \"blocks_per_evaluation\": " << instances << ", \"evaluations\": " << repeat
            << ", \"and_gates\": " << program.and_gates << ", \"and_depth\": " << program.and_depth
            << ", \"layers_exchanged\": " << stats[0].layers_exchanged
            << ", \"bytes_sent_per_party\": [" << stats[0].bytes_sent << ", " << stats[1].bytes_sent << ", "
            << stats[2].bytes_sent << "]"
            << ", \"bits_per_and_per_party\": "
            << number(static_cast<double>(stats[0].bytes_sent) * 8 /
                      (static_cast<double>(program.and_gates) * static_cast<double>(instances)))
            << ", \"seconds_median\": " << number(median)
            << ", \"blocks_per_s\": " << number(static_cast<double>(instances) / median)
            << ", \"cpu_seconds\": " << number(cpu)
            << ", \"cpu_seconds_per_block\": " << number(cpu / blocks_total) << "}\n";
  return 0;
}

}  // namespace

int run_aead(const Arguments& arguments) {
  arguments.allow_only({"aead", "seconds", "bytes"});
  const double seconds = static_cast<double>(arguments.number("seconds", 1, 60));
  const std::size_t bytes = arguments.number("bytes", 1 << 20, 1 << 28);
  const auto rate = mpc::tools::measure_xsalsa20poly1305(seconds, bytes);
  std::cout << "{\"mode\": \"aead\", \"cipher\": \"xsalsa20poly1305\", \"message_bytes\": " << bytes
            << ", \"seal_bytes_per_s\": " << rate.seal_bytes_per_second
            << ", \"open_bytes_per_s\": " << rate.open_bytes_per_second << "}\n";
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return 2;
  }
  mpc::keep_freed_batch_memory();  // as mpc-server does, so that local runs measure what it would
  try {
    if (sodium_init() < 0) throw mpc::Error(mpc::Component::Tool, "libsodium initialisation failed");
    const Arguments arguments(std::vector<std::string>(argv + 1, argv + argc), {"local", "aead"});
    if (arguments.flag("aead")) return run_aead(arguments);
    if (!arguments.positional().empty()) throw mpc::Error(mpc::Component::Tool, "unexpected argument " + arguments.positional()[0]);
    return arguments.flag("local") ? run_local(arguments) : run_cluster(arguments);
  } catch (const mpc::Error& error) {
    std::cerr << "mpc-bench: " << error.what() << "\n" << kUsage;
    return error.component() == mpc::Component::Tool ? 2 : 1;
  } catch (const std::exception& error) {
    std::cerr << "mpc-bench: " << error.what() << "\n";
    return 1;
  }
}
