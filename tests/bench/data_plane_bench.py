#!/usr/bin/env python3
"""The peer data plane side by side: data links (AES-256-GCM over TCP, one lane per batch
worker) against CurveZMQ layer messages, with the three servers pinned (taskset) to 1 core, 2 cores
and, where the machine has more, 4, 8, ... and every core, in one run.

    PYTHONPATH=tests /usr/bin/python3 tests/bench/data_plane_bench.py --build-dir build --out docs/benchmarks

For each transport and core count, on a fresh local cluster (passive security, so the figures
are the data plane's and not the AND check's; tests/bench/active_bench.py compares those):
  - AES-128 throughput (65,536-block CTR jobs from 4 client threads, or one per server core
    where there are more, so that every core has batches to run), blocks/s;
  - single-block job latency p50 / p99;
  - the servers' CPU per block (/proc/PID/stat) against the same batch evaluated by the three
    parties in one process without a network (mpc-bench --local, one core): the transport's
    share of the servers' CPU is what the servers spend beyond that;
  - bits per AND per party from the servers' byte counters (protocol payload).
Also the link ciphers' rates per core (tests/bench/link_bench). The servers are pinned, the
client is not. Every configuration runs --rounds times (2), interleaved, and the best run is
reported (these machines are shared: a slower run measures the neighbours). Scaling is given
from 1 to 2 cores and from 2 to every core. Writes OUT/data-plane.json,
OUT/data-plane.md and OUT/data-plane.png.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from mpctest import mpc_cluster
from mpctest.bench import (CLOCK_TICKS, THROUGHPUT_BLOCKS, THROUGHPUT_THREADS, BENCH_TIMEOUT_MS,
                           byte_counter, cpu_seconds, machine, mpc_bench, server_counters)

TRANSPORTS = ("data links", "curvezmq")
THREAD_KINDS = ("batch worker", "data lane in", "mpc-server", "ZMQbg/IO")
SINGLE_BLOCK_JOBS = 200
ALG = "aes128"
KEY = ("bench/aes128", 1, ALG)
# The servers' default max_batch_blocks: the in-process evaluation the servers are compared
# with runs batches of this size (a 65,536-block batch outgrows a core's caches and scales
# worse on many cores than the servers' own batches do).
SERVER_BATCH_BLOCKS = 8192


def core_sets() -> list[list[int]]:
    """1, 2, 4, ... cores and every core: the scaling curve of a many-core machine."""
    available = sorted(os.sched_getaffinity(0))
    counts = {len(available)}
    count = 1
    while count < len(available):
        counts.add(count)
        count *= 2
    return [available[:count] for count in sorted(counts)]


def client_threads(cores: int) -> int:
    """Enough jobs in flight to keep every server core busy (each job is four server batches)."""
    return max(THROUGHPUT_THREADS, cores)


def local_scaling(build: Path, sets: list[list[int]], batch_blocks: int) -> dict:
    """The evaluator alone on N cores at once: N copies of the in-process evaluation, one pinned to
    each core, run together. Their sum is what the cores themselves give (shared caches, memory,
    hyper-threads, clock), the reference for the servers' scaling beside it."""
    binary = build / "tests" / "bench" / "tools" / "mpc-bench"
    rates = {}
    for cpus in sets:
        copies = [subprocess.Popen(["taskset", "-c", str(cpu), str(binary), "--local", "--alg", ALG, "--sbox",
                                    "and32", "--blocks", str(batch_blocks), "--repeat", str(2**19 // batch_blocks)],
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) for cpu in cpus]
        outputs = [copy.communicate(timeout=300)[0] for copy in copies]
        rates[str(len(cpus))] = sum(json.loads(out.strip().splitlines()[-1])["blocks_per_s"] for out in outputs)
    return rates


def link_rates(build: Path) -> dict:
    binary = build / "tests" / "bench" / "link_bench"
    output = subprocess.run([str(binary), "--message-kib", "1024", "--total-mib", "512"], capture_output=True,
                            text=True, timeout=300, check=True).stdout
    return json.loads(output)


def start_cluster(root: Path, transport: str, cpus: list[int], limits: dict[str, int] | None = None
                  ) -> mpc_cluster.Cluster:
    cluster = mpc_cluster.Cluster(root)
    cluster.mpcctl("cluster", "init", "--dir", str(cluster.dir), "--base-port", str(cluster.base_port),
                   "--security", "passive", "--data-links", "on" if transport == "data links" else "off")
    for name, value in (limits or {}).items():
        for party in (1, 2, 3):
            cluster.set_server_table_setting(party, "limits", name, value)
    # Servers and their threads inherit the affinity of the process that starts them.
    subprocess.run(["taskset", "-c", ",".join(str(cpu) for cpu in cpus), str(mpc_cluster.mpcctl_binary()),
                    "cluster", "start", "--dir", str(cluster.dir), "--server-binary",
                    str(mpc_cluster.server_binary())], check=True, capture_output=True, timeout=60)
    cluster.import_key(*KEY)
    cluster.wait_until_serving(KEY)
    return cluster


def cpu_by_thread(pids: list[int]) -> dict[str, float]:
    """The servers' CPU seconds by thread name (batch worker, data lane in, ZMQbg/IO/0, the shell's
    mpc-server, ...), summed over the three servers; threads that ended in between are lost."""
    totals: dict[str, float] = {}
    for pid in pids:
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                name = (task / "comm").read_text().strip()
                fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            totals[name] = totals.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    return totals


def measure(cluster: mpc_cluster.Cluster, seconds: float, threads: int) -> dict:
    config = cluster.copy_client_config(cluster.admin_config, cluster.dir / "bench.toml", BENCH_TIMEOUT_MS)
    common = ["--cluster", str(config), "--name", KEY[0], "--kvno", "1", "--alg", ALG]
    pids = [cluster.server_pid(party) for party in (1, 2, 3)]
    before = server_counters(cluster)
    cpu_before = [cpu_seconds(pid) for pid in pids]
    threads_before = cpu_by_thread(pids)
    throughput = mpc_bench(*common, "--threads", str(threads), "--blocks", str(THROUGHPUT_BLOCKS),
                           "--seconds", str(max(1, round(seconds))), timeout=seconds + 120)
    cpu = sum(cpu_seconds(pid) for pid in pids) - sum(cpu_before)
    threads_after = cpu_by_thread(pids)
    after = server_counters(cluster)
    single = mpc_bench(*common, "--threads", "1", "--blocks", "1", "--jobs", str(SINGLE_BLOCK_JOBS),
                       "--warmup", "3", timeout=300)
    blocks = throughput["blocks"]
    sent = [byte_counter(b) - byte_counter(a) for a, b in zip(before, after)
            if byte_counter(a) is not None and byte_counter(b) is not None]
    return {
        "blocks_per_s": throughput["blocks_per_s"],
        "client_threads": threads,
        "blocks": blocks,
        "error": throughput.get("error"),
        "server_cpu_us_per_block": 1e6 * cpu / blocks if blocks else None,
        "server_cpu_us_per_block_by_thread": {
            name: 1e6 * (spent - threads_before.get(name, 0.0)) / blocks
            for name, spent in sorted(threads_after.items()) if blocks and spent > threads_before.get(name, 0.0)},
        "single_block_ms": single["latency_ms"],
        "payload_bytes_sent_per_party": sum(sent) / len(sent) if len(sent) == 3 else None,
    }


def run_configuration(workdir: Path, transport: str, cpus: list[int], seconds: float, round_: int,
                      limits: dict[str, int] | None = None) -> dict:
    label = "-".join(f"{name}{value}" for name, value in (limits or {}).items())
    root = workdir / f"{transport.replace(' ', '-')}-{len(cpus)}-{round_}{'-' + label if label else ''}"
    cluster = start_cluster(root, transport, cpus, limits)
    try:
        return measure(cluster, seconds, client_threads(len(cpus)))
    finally:
        cluster.stop()


def summarise(runs: dict, local: dict) -> dict:
    local_us = 1e6 * local["cpu_seconds_per_block"]
    summary = {}
    for key, results in runs.items():
        best = max(results, key=lambda r: r["blocks_per_s"])
        entry = dict(best)
        if best["server_cpu_us_per_block"]:
            entry["transport_share_of_cpu"] = max(0.0, 1 - local_us / best["server_cpu_us_per_block"])
        if best["payload_bytes_sent_per_party"] and best["blocks"]:
            entry["bits_per_and_per_party"] = 8 * best["payload_bytes_sent_per_party"] / (
                best["blocks"] * local["and_gates"])
        entry["all_runs_blocks_per_s"] = [r["blocks_per_s"] for r in results]
        summary[key] = entry
    return summary


def scaling_steps(report: dict) -> list[tuple[int, int, float]]:
    """Data links' throughput from 1 to 2 cores and from 2 to every core (the many-core goal)."""
    counts, s = report["core_counts"], report["summary"]
    pairs = {(counts[0], counts[1])} if len(counts) > 1 else set()
    if len(counts) > 2:
        pairs.add((counts[1], counts[-1]))
    return [(first, last, s[f"data links, {last}"]["blocks_per_s"] / max(1, s[f"data links, {first}"]["blocks_per_s"]))
            for first, last in sorted(pairs)]


def fmt(value, digits=0) -> str:
    return "n/a" if value is None else f"{value:,.{digits}f}"


def markdown(report: dict) -> str:
    m, s, local, links = report["machine"], report["summary"], report["local"], report["link_rates"]
    counts = report["core_counts"]
    lines = [
        "# Peer data plane: data links against CurveZMQ",
        "",
        f"Run {report['date']} on {m.get('cpu', 'unknown CPU')}, {m.get('nproc')} CPUs, Linux {m.get('kernel')}; "
        f"commit {m.get('commit', 'unknown')}. Three servers on one machine over loopback, pinned to the cores "
        f"shown (the client is not), passive security, AES-128"
        + "".join(f", {name} = {value}" for name, value in report.get("limits", {}).items())
        + f"; clients: {THROUGHPUT_THREADS} threads, or one per "
        f"server core where there are more, each with {THROUGHPUT_BLOCKS:,}-block jobs; the best of "
        f"{report.get('rounds', 2)} interleaved runs.",
        "",
        "| servers' cores | transport | blocks/s | single block p50 / p99, ms | servers' CPU per block, us "
        "| transport's share of the servers' CPU | bits per AND per party |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for count in counts:
        for transport in TRANSPORTS:
            e = s[f"{transport}, {count}"]
            share = e.get("transport_share_of_cpu")
            lines.append(
                f"| {count} | {transport} | {fmt(e['blocks_per_s'])} | "
                f"{e['single_block_ms']['p50']:.2f} / {e['single_block_ms']['p99']:.2f} | "
                f"{fmt(e['server_cpu_us_per_block'], 2)} | {'n/a' if share is None else f'{100 * share:.0f} %'} | "
                f"{fmt(e.get('bits_per_and_per_party'), 3)} |")
    standard = {f"{transport}, {count}" for count in counts for transport in TRANSPORTS}
    for key in (key for key in s if key not in standard):  # --limits variants: "data links, N, limits"
        e, share = s[key], s[key].get("transport_share_of_cpu")
        count, transport_and_limits = key.split(", ")[1], "data links, " + key.split(", ", 2)[2]
        lines.append(
            f"| {count} | {transport_and_limits} | {fmt(e['blocks_per_s'])} | "
            f"{e['single_block_ms']['p50']:.2f} / {e['single_block_ms']['p99']:.2f} | "
            f"{fmt(e['server_cpu_us_per_block'], 2)} | {'n/a' if share is None else f'{100 * share:.0f} %'} | "
            f"{fmt(e.get('bits_per_and_per_party'), 3)} |")
    ratios = [f"{count} core{'s' if count > 1 else ''}: "
              f"{s[f'data links, {count}']['blocks_per_s'] / max(1, s[f'curvezmq, {count}']['blocks_per_s']):.2f}"
              for count in counts]
    local_rates = report.get("local_scaling_blocks_per_s", {})
    scaling_lines = []
    for first, last, scaling in scaling_steps(report):
        line = f"- Scaling with data links from {first} to {last} cores: {scaling:.2f}x " \
               f"({100 * scaling / (last / first):.0f} % of linear)"
        if str(first) in local_rates and str(last) in local_rates:
            line += f"; the evaluator alone, one copy per core: {local_rates[str(last)] / local_rates[str(first)]:.2f}x"
        scaling_lines.append(line + ".")
    if not scaling_lines:
        scaling_lines = ["- One core only: no scaling figure."]
    lines += [
        "",
        f"- Throughput, data links / CurveZMQ: {'; '.join(ratios)}.",
        *scaling_lines,
        "- The evaluator alone, one in-process copy pinned to each core, all at once (what the cores give "
        "without servers or links): " + "; ".join(
            f"{count}: {fmt(local_rates.get(str(count)))}" for count in counts) + " blocks/s.",
        f"- The same circuit in {report.get('local_batch_blocks', SERVER_BATCH_BLOCKS):,}-block batches (the "
        "servers' max_batch_blocks), three parties in "
        "one process without a network: "
        f"{fmt(local['blocks_per_s'])} blocks/s on one core, {1e6 * local['cpu_seconds_per_block']:.2f} us of CPU "
        "per block; the transport's share is 1 - that / the servers' CPU per block (everything outside the "
        "evaluator: link ciphers, sockets, threads, batching, inputs, outputs and the client's replies).",
        f"- Link ciphers per core, 1 MiB messages sealed and opened: AES-256-GCM frames "
        f"{links['cipher_gb_per_s_per_core']['aes256gcm_frames']:.2f} GB/s, CurveZMQ's XSalsa20-Poly1305 "
        f"{links['cipher_gb_per_s_per_core']['xsalsa20poly1305']:.2f} GB/s; one way over loopback, a data link "
        f"{links['loopback_gb_per_s']['data_link']:.2f} GB/s against a CurveZMQ pair "
        f"{links['loopback_gb_per_s']['curvezmq']:.2f} GB/s.",
        "- Every link is authenticated and encrypted in both columns; bits per AND count the protocol payload "
        "(the servers' byte counters).",
        "",
        "Servers' CPU per block by thread (us, the three servers together; the shell's thread is mpc-server):",
        "",
        "| servers' cores | transport | " + " | ".join(THREAD_KINDS) + " | other |",
        "|---:|---|" + "---:|" * (len(THREAD_KINDS) + 1),
    ]
    rows = [(count, transport, f"{transport}, {count}") for count in counts for transport in TRANSPORTS]
    rows += [(key.split(", ")[1], "data links, " + key.split(", ", 2)[2], key) for key in s if key not in standard]
    for count, label, key in rows:
        by_thread = s[key].get("server_cpu_us_per_block_by_thread", {})
        kinds = [sum(us for name, us in by_thread.items() if name.startswith(kind)) for kind in THREAD_KINDS]
        other = sum(by_thread.values()) - sum(kinds)
        lines.append(f"| {count} | {label} | " + " | ".join(f"{us:.2f}" for us in kinds) + f" | {other:.2f} |")
    return "\n".join(lines) + "\n"


def plot(report: dict, path: Path) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    counts = report["core_counts"]
    figure, axes = plt.subplots(figsize=(6, 4))
    for transport in TRANSPORTS:
        axes.plot(counts, [report["summary"][f"{transport}, {c}"]["blocks_per_s"] / 1e3 for c in counts],
                  marker="o", label=transport)
    axes.set_xlabel("cores the three servers share")
    axes.set_ylabel("AES-128 blocks/s (thousands)")
    axes.set_xticks(counts)
    axes.set_title("Engine throughput by transport")
    axes.grid(True, alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--out", default="docs/benchmarks")
    parser.add_argument("--seconds", type=float, default=8.0, help="duration of each throughput run")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved runs of each configuration (the best counts)")
    parser.add_argument("--quick", action="store_true", help="short runs, one round, for a smoke test")
    parser.add_argument("--cores", type=lambda text: [int(n) for n in text.split(",")],
                        help="core counts to measure (default 1, 2, 4, ... and every core)")
    parser.add_argument("--limits", action="append", default=[], metavar="NAME=N[,NAME=N]",
                        help="also run data links on the most cores with these [limits] in every server "
                             "(repeatable: one variant each), e.g. workers=5 or max_batch_blocks=4096")
    parser.add_argument("--all-limits", default="", metavar="NAME=N[,NAME=N]",
                        help="[limits] every cluster of the run gets (variants add theirs)")
    args = parser.parse_args()
    base_limits = dict((name, int(value)) for name, value in (item.split("=") for item in
                                                              filter(None, args.all_limits.split(","))))
    variants = [dict((name, int(value)) for name, value in (item.split("=") for item in text.split(",")))
                for text in args.limits]

    build = Path(args.build_dir).resolve()
    os.environ["MPC_BUILD_DIR"] = str(build)
    mpc_cluster.become_subreaper()
    seconds = 3.0 if args.quick else args.seconds
    rounds = 1 if args.quick else max(1, args.rounds)
    sets = core_sets()
    if args.cores:
        sets = [cpus for cpus in sets if len(cpus) in args.cores] or sets
    report = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
              "machine": machine(), "core_counts": [len(cpus) for cpus in sets], "quick": args.quick,
              "rounds": rounds, "limits": base_limits}
    batch_blocks = base_limits.get("max_batch_blocks", SERVER_BATCH_BLOCKS)
    report["local_batch_blocks"] = batch_blocks
    print("data_plane_bench: in-process evaluation and link ciphers", file=sys.stderr)
    report["local"] = json.loads(subprocess.run(
        ["taskset", "-c", str(sets[0][0]), str(build / "tests" / "bench" / "tools" / "mpc-bench"), "--local",
         "--alg", ALG, "--sbox", "and32", "--blocks", str(batch_blocks), "--repeat", str(2**18 // batch_blocks)],
        capture_output=True, text=True, check=True, timeout=300).stdout.strip().splitlines()[-1])
    report["link_rates"] = link_rates(build)
    report["local_scaling_blocks_per_s"] = local_scaling(build, sets, batch_blocks)

    workdir = Path(tempfile.mkdtemp(prefix="mpc-data-plane-"))
    runs: dict[str, list[dict]] = {}
    try:
        for round_ in range(rounds):
            for cpus in sets:
                for transport in TRANSPORTS:
                    print(f"data_plane_bench: {transport}, {len(cpus)} cores, round {round_ + 1}", file=sys.stderr)
                    runs.setdefault(f"{transport}, {len(cpus)}", []).append(
                        run_configuration(workdir, transport, cpus, seconds, round_, base_limits))
            for limits in variants:
                label = ", ".join(f"{name} = {value}" for name, value in limits.items())
                print(f"data_plane_bench: data links, {len(sets[-1])} cores, {label}, round {round_ + 1}",
                      file=sys.stderr)
                runs.setdefault(f"data links, {len(sets[-1])}, {label}", []).append(
                    run_configuration(workdir, "data links", sets[-1], seconds, round_, {**base_limits, **limits}))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    report["runs"] = runs
    report["summary"] = summarise(runs, report["local"])

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "data-plane.json").write_text(json.dumps(report, indent=2) + "\n")
    table = markdown(report)
    (out / "data-plane.md").write_text(table)
    plot(report, out / "data-plane.png")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
