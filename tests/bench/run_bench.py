#!/usr/bin/env python3
"""Engine benchmark: a local three-server cluster on loopback, driven by mpc-bench.

    PYTHONPATH=tests /usr/bin/python3 tests/bench/run_bench.py --build-dir build --out docs/benchmarks

Measures, for AES-128 and AES-256:
  - large-batch throughput (blocks/s; 4 client threads x 65,536-block CTR jobs) and the
    AND gates/s that means for the circuit the servers run on such batches;
  - single-block latency (1 thread, sequential) and 1k/10k/100k-block job latency;
  - AND gates and AND layers per block for both S-box circuits;
  - bits on the wire per AND per party: from the servers' Status counters when they
    report bytes, else the protocol payload (from the evaluator, "derived"), plus what
    loopback carried during the throughput run (all headers included);
  - the transport's share of the cost: the servers' CPU time per block (/proc/PID/stat)
    against the same batch evaluated by the three parties in one process, no network
    (mpc-bench --local).
Writes OUT/engine.json and OUT/engine.md and prints the table. About 2 minutes.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from mpctest import mpc_cluster
from mpctest.bench import (BENCH_TIMEOUT_MS, THROUGHPUT_BLOCKS, THROUGHPUT_THREADS, bench_binary, byte_counter,
                           cpu_seconds, loopback_tx_bytes, machine, mpc_bench, server_counters)

ALGORITHMS = ("aes128", "aes256")
SINGLE_BLOCK_JOBS = 300
BATCH_SIZES = ((1000, 40), (10000, 15), (100000, 6))  # (blocks per job, jobs)
LATENCY_BATCH_BLOCKS = 512        # server default: batches up to this size use the depth-4 S-box


# -- measurements ---------------------------------------------------------------------------

def local_runs(quick: bool) -> dict:
    results = {}
    for alg in ALGORITHMS:
        results[alg] = {
            "and32": mpc_bench("--local", "--alg", alg, "--sbox", "and32", "--blocks", str(THROUGHPUT_BLOCKS),
                               "--repeat", "2" if quick else "4"),
            "depth4": mpc_bench("--local", "--alg", alg, "--sbox", "depth4", "--blocks", "512", "--repeat", "2"),
        }
    return results


def throughput(cluster, config: Path, alg: str, seconds: float) -> dict:
    pids = [cluster.server_pid(party) for party in (1, 2, 3)]
    counters_before = server_counters(cluster)
    cpu_before = [cpu_seconds(pid) for pid in pids]
    lo_before = loopback_tx_bytes()
    result = mpc_bench("--cluster", str(config), "--name", f"bench/{alg}", "--kvno", "1", "--alg", alg,
                       "--threads", str(THROUGHPUT_THREADS), "--blocks", str(THROUGHPUT_BLOCKS),
                       "--seconds", str(max(1, round(seconds))), timeout=seconds + 120)
    lo_after = loopback_tx_bytes()
    cpu_after = [cpu_seconds(pid) for pid in pids]
    counters_after = server_counters(cluster)
    result["server_cpu_seconds"] = [round(after - before, 3) for before, after in zip(cpu_before, cpu_after)]
    result["loopback_bytes"] = None if lo_before is None or lo_after is None else lo_after - lo_before
    result["server_counters_before"] = counters_before
    result["server_counters_after"] = counters_after
    return result


def latency(config: Path, alg: str, blocks: int, jobs: int) -> dict:
    return mpc_bench("--cluster", str(config), "--name", f"bench/{alg}", "--kvno", "1", "--alg", alg,
                     "--threads", "1", "--blocks", str(blocks), "--jobs", str(jobs), "--warmup", "3",
                     timeout=600)


def client_traffic_bytes(jobs: int, blocks_per_job: int, key_name: str) -> int:
    """Bytes of client requests and replies for these jobs (payload, all three servers)."""
    request = 1 + 1 + 16 + 1 + 2 + len(key_name) + 4 + 1 + 4 + 16
    reply = 1 + 1 + 16 + 2 + 2 + 4 + 2 * 16 * blocks_per_job
    return 3 * jobs * (request + reply)


def aead_floor_blocks_per_s(aead: dict, and_gates: int, cores: int) -> float:
    """Blocks/s if the machine did nothing but CurveZMQ's sealing and opening: each party
    sends and_gates / 8 bytes per block, sealed by it and opened by the next party."""
    payload = and_gates / 8
    seconds_per_block = 3 * payload * (1 / aead["seal_bytes_per_s"] + 1 / aead["open_bytes_per_s"])
    return cores / seconds_per_block


def summarise(local: dict, cluster_results: dict, batch_sizes, aead: dict | None = None,
              cores: int = 1) -> dict:
    summary = {}
    for alg in ALGORITHMS:
        and32, depth4 = local[alg]["and32"], local[alg]["depth4"]
        tp = cluster_results[alg]["throughput"]
        blocks = tp["blocks"]
        entry = {
            "throughput_blocks_per_s": tp["blocks_per_s"],
            "and_gates_per_s": tp["blocks_per_s"] * and32["and_gates"],
            "circuit_for_large_batches": "32-AND S-box (AND-depth 6)",
            "and_gates_per_block": {"and32": and32["and_gates"], "depth4": depth4["and_gates"]},
            "and_layers_per_job": {"and32": and32["and_depth"], "depth4": depth4["and_depth"]},
            "single_block_latency_ms": cluster_results[alg]["single_block"]["latency_ms"],
            "batch_latency_ms": {str(size): cluster_results[alg]["batch"][str(size)]["latency_ms"]
                                 for size, _ in batch_sizes},
            "local_blocks_per_s": and32["blocks_per_s"],
        }
        if aead:
            entry["aead_floor_blocks_per_s"] = aead_floor_blocks_per_s(aead, and32["and_gates"], cores)
        # Bits per AND per party.
        before = [byte_counter(c) for c in tp["server_counters_before"]]
        after = [byte_counter(c) for c in tp["server_counters_after"]]
        sent = [b - a for a, b in zip(before, after) if a is not None and b is not None]
        if len(sent) == 3 and blocks:
            entry["bits_per_and_per_party"] = {
                "value": 8 * (sum(sent) / len(sent)) / (blocks * and32["and_gates"]),
                "source": "measured: servers' Status byte counters"}
        else:
            entry["bits_per_and_per_party"] = {
                "value": and32["bits_per_and_per_party"],
                "source": "derived: layer-message payload of the evaluator (servers report no byte counters)"}
        if tp["loopback_bytes"] is not None and blocks:
            peer_bytes = tp["loopback_bytes"] - client_traffic_bytes(tp["jobs"], THROUGHPUT_BLOCKS, f"bench/{alg}")
            entry["loopback_bits_per_and_per_party"] = 8 * peer_bytes / 3 / (blocks * and32["and_gates"])
        # CPU: servers (three processes together) against the same work in one process.
        server_cpu = sum(tp["server_cpu_seconds"])
        if blocks:
            entry["server_cpu_us_per_block"] = 1e6 * server_cpu / blocks
            entry["local_cpu_us_per_block"] = 1e6 * and32["cpu_seconds_per_block"]
            entry["transport_share_of_cpu"] = max(0.0, 1 - and32["cpu_seconds_per_block"] * blocks / server_cpu) \
                if server_cpu > 0 else None
        summary[alg] = entry
    return summary


# -- report -----------------------------------------------------------------------------------

def fmt(value, digits=0) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, (int, float)) and abs(value) >= 1e9:
        return f"{value / 1e9:.2f} G"
    if isinstance(value, (int, float)) and abs(value) >= 1e6:
        return f"{value / 1e6:.2f} M"
    return f"{value:,.{digits}f}"


def markdown(report: dict) -> str:
    m, s = report["machine"], report["summary"]
    a, b = s["aes128"], s["aes256"]

    def row(label, f):
        return f"| {label} | {f(a)} | {f(b)} |"

    def lat(values):
        return f"{values['p50']:.2f} / {values['p99']:.2f}"

    lines = [
        "# Engine benchmark",
        "",
        f"Run {report['date']} on {m.get('cpu', 'unknown CPU')}, {m.get('nproc')} CPUs (nproc), "
        f"{m.get('memory_gib', '?')} GiB, Linux {m.get('kernel')}; SIMD flags {', '.join(m.get('simd_flags', []))}; "
        f"evaluator {report['local']['aes128']['and32']['simd']}; commit {m.get('commit', 'unknown')}; "
        f"load average at start {' '.join(str(x) for x in m.get('loadavg_at_start', [])) or 'unknown'}.",
        "All three servers and the client run on this one machine and talk over loopback with CurveZMQ, "
        "so the numbers measure CPU cost (the three parties share the same cores), not a network.",
        "",
        "| metric | AES-128 | AES-256 |",
        "|---|---:|---:|",
        row(f"throughput, blocks/s ({THROUGHPUT_THREADS} clients x {THROUGHPUT_BLOCKS:,}-block jobs)",
            lambda e: fmt(e["throughput_blocks_per_s"])),
        row("AND gates/s (blocks/s x ANDs of the 32-AND circuit)", lambda e: fmt(e["and_gates_per_s"])),
        row("single-block job latency p50 / p99, ms", lambda e: lat(e["single_block_latency_ms"])),
    ]
    for size, jobs in report["batch_sizes"]:
        lines.append(row(f"{size:,}-block job latency p50 / p99, ms ({jobs} jobs)",
                         lambda e, size=size: lat(e["batch_latency_ms"][str(size)])))
    lines += [
        row("AND gates per block (32-AND / depth-4 S-box)",
            lambda e: f"{e['and_gates_per_block']['and32']:,} / {e['and_gates_per_block']['depth4']:,}"),
        row("AND layers per job (32-AND / depth-4 S-box)",
            lambda e: f"{e['and_layers_per_job']['and32']} / {e['and_layers_per_job']['depth4']}"),
        row("bits on the wire per AND per party (protocol payload)",
            lambda e: f"{e['bits_per_and_per_party']['value']:.3f}"),
        row("bits per AND per party on loopback, all headers (measured)",
            lambda e: fmt(e.get("loopback_bits_per_and_per_party"), 3)),
        row("server CPU per block, three servers together, us", lambda e: fmt(e.get("server_cpu_us_per_block"), 2)),
        row("same batch in one process, no network: CPU per block, us",
            lambda e: fmt(e.get("local_cpu_us_per_block"), 2)),
        row("transport's share of the servers' CPU", lambda e: "n/a" if e.get("transport_share_of_cpu") is None
            else f"{100 * e['transport_share_of_cpu']:.0f} %"),
        row("same batch in one process, no network: blocks/s", lambda e: fmt(e["local_blocks_per_s"])),
        row("ceiling from link encryption alone (XSalsa20-Poly1305 on all cores), blocks/s",
            lambda e: fmt(e.get("aead_floor_blocks_per_s"))),
        "",
        "Notes:",
        f"- Servers pick the depth-4 S-box (34 ANDs) for batches of up to {LATENCY_BATCH_BLOCKS} blocks and the "
        "32-AND one (AND-depth 6) for larger ones (server default `latency_batch_blocks`), so single-block jobs "
        "run the depth-4 circuit (fewer layers, i.e. round trips) and 1k-block jobs and up, and the throughput "
        "runs, the 32-AND circuit. AND gates/s counts the ANDs of the circuit that ran.",
        f"- Bits per AND: {a['bits_per_and_per_party']['source']}. The loopback figure is the bytes loopback carried "
        "during the throughput run minus the client requests and replies, over three parties: it adds TCP/IP, "
        "CurveZMQ and layer-header overhead and batch announcements.",
        "- Transport share: 1 - (CPU of the in-process evaluation of the same 65,536-block batch) / (CPU the three "
        "server processes spent per block during the throughput run, from /proc/PID/stat). It covers everything "
        "outside the evaluator: ZeroMQ and CurveZMQ, framing, batching, input and output handling.",
        f"- Link encryption: XSalsa20-Poly1305 (what CurveZMQ applies to every message) seals "
        f"{report['aead']['seal_bytes_per_s'] / 1e9:.2f} GB/s and opens {report['aead']['open_bytes_per_s'] / 1e9:.2f} "
        "GB/s per core here; the ceiling row is the block rate at which sealing and opening the layer messages "
        "alone would use every core.",
        f"- Latency percentiles are nearest-rank over {report['single_block_jobs']} single-block jobs and the job counts "
        "shown; with few jobs p99 is the maximum.",
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--out", default="docs/benchmarks")
    parser.add_argument("--seconds", type=float, default=10.0, help="duration of each throughput run")
    parser.add_argument("--quick", action="store_true", help="short runs, for a smoke test of the script")
    parser.add_argument("--backend", choices=("cpu", "cuda", "auto"),
                        help="the servers' evaluator back end (default: the configuration's, auto)")
    args = parser.parse_args()

    os.environ["MPC_BUILD_DIR"] = str(Path(args.build_dir).resolve())
    for binary in (mpc_cluster.mpcctl_binary(), mpc_cluster.server_binary(), bench_binary()):
        if not binary.is_file():
            print(f"run_bench: {binary} is not built", file=sys.stderr)
            return 1
    seconds = 3.0 if args.quick else args.seconds
    single_jobs = 50 if args.quick else SINGLE_BLOCK_JOBS
    batch_sizes = ((1000, 5), (10000, 3), (100000, 2)) if args.quick else BATCH_SIZES
    mpc_cluster.become_subreaper()

    report = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
              "machine": machine(), "quick": args.quick, "backend": args.backend or "auto"}
    print("run_bench: in-process evaluations", file=sys.stderr)
    report["local"] = local_runs(args.quick)
    print("run_bench: link encryption rate", file=sys.stderr)
    report["aead"] = mpc_bench("--aead", "--seconds", "1" if args.quick else "2")

    workdir = Path(tempfile.mkdtemp(prefix="mpc-bench-"))
    cluster = mpc_cluster.Cluster(workdir / "cluster")
    results = {}
    try:
        cluster.init()
        if args.backend:
            for party in (1, 2, 3):
                cluster.set_server_setting(party, "backend", args.backend)
        cluster.start()
        config = mpc_cluster.Cluster.copy_client_config(cluster.admin_config, cluster.dir / "bench.toml",
                                                        BENCH_TIMEOUT_MS)
        for alg in ALGORITHMS:
            cluster.import_key(f"bench/{alg}", 1, alg)
        cluster.wait_until_serving(("bench/aes128", 1, "aes128"))
        for alg in ALGORITHMS:
            print(f"run_bench: {alg} throughput ({seconds:g} s)", file=sys.stderr)
            results[alg] = {"throughput": throughput(cluster, config, alg, seconds)}
            print(f"run_bench: {alg} latency", file=sys.stderr)
            results[alg]["single_block"] = latency(config, alg, 1, single_jobs)
            results[alg]["batch"] = {str(size): latency(config, alg, size, jobs) for size, jobs in batch_sizes}
        report["final_server_counters"] = server_counters(cluster)
    finally:
        cluster.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    report["cluster"] = results
    report["batch_sizes"] = [list(pair) for pair in batch_sizes]
    report["single_block_jobs"] = single_jobs
    report["summary"] = summarise(report["local"], results, batch_sizes, report["aead"], os.cpu_count() or 1)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "engine.json").write_text(json.dumps(report, indent=2) + "\n")
    table = markdown(report)
    (out / "engine.md").write_text(table)
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
