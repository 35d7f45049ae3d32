#!/usr/bin/env python3
"""Active and passive security side by side: one local three-server cluster on loopback,
switched between security = "passive" and "active" (every server restarted), measured in
turns within one run so the ratio is not skewed by the machine's load drifting.

    /usr/bin/python3 tests/bench/active_bench.py --build-dir build --out docs/benchmarks

Per mode, for AES-128 keystream jobs: throughput (2 client threads x 512-block jobs),
single-block latency (p50, p99), and bits on the wire per AND per party from the servers'
own counters (payload bytes sent / AND gates evaluated: the AND messages plus, when active,
the check's messages). Writes OUT/active.json and OUT/active.md and prints the table.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "integration"))
sys.path.insert(0, str(REPO / "tests" / "bench"))

import mpc_cluster  # noqa: E402
from run_bench import machine, mpc_bench  # noqa: E402

KEY = ("bench/active", 1, "aes128")
MODES = ("passive", "active")
# Jobs small enough for an actively secure batch to finish within the client timeout.
THROUGHPUT_BLOCKS = 512


def counters(cluster: mpc_cluster.Cluster) -> list[tuple[int, int]]:
    """(payload bytes sent, AND gates) per server."""
    text = cluster.mpcctl("cluster", "status", "--cluster", str(cluster.admin_config)).stdout
    out = []
    for line in text.splitlines():
        sent = re.search(r"payload bytes sent (\d+)", line)
        gates = re.search(r"AND gates (\d+)", line)
        if sent and gates:
            out.append((int(sent.group(1)), int(gates.group(1))))
    return out


def switch(cluster: mpc_cluster.Cluster, mode: str) -> None:
    for party in cluster.parties:
        cluster.set_server_setting(party, "security", f'"{mode}"')
    for party in cluster.parties:
        cluster.kill_server(party)
    for party in cluster.parties:
        cluster.restart_server(party)
    cluster.wait_until_serving(KEY, deadline_s=60)


def measure(cluster: mpc_cluster.Cluster, seconds: float, single_jobs: int) -> dict:
    config = str(cluster.admin_config)
    name, kvno, alg = KEY
    before = counters(cluster)
    throughput = mpc_bench("--cluster", config, "--name", name, "--kvno", str(kvno), "--alg", alg, "--threads", "2",
                           "--blocks", str(THROUGHPUT_BLOCKS), "--seconds", str(max(1, round(seconds))), timeout=seconds + 300)
    after = counters(cluster)
    single = mpc_bench("--cluster", config, "--name", name, "--kvno", str(kvno), "--alg", alg, "--threads", "1",
                       "--blocks", "1", "--jobs", str(single_jobs), "--warmup", "3", timeout=600)
    bits = [8 * (a[0] - b[0]) / (a[1] - b[1]) for a, b in zip(after, before) if a[1] > b[1]]
    return {
        "throughput_blocks_per_s": throughput["blocks_per_s"],
        "single_block_ms": single["latency_ms"],
        "bits_per_and_per_party": sum(bits) / len(bits) if bits else None,
    }


def table(results: dict) -> str:
    p, a = results["modes"]["passive"], results["modes"]["active"]
    rows = [
        "| AES-128 keystream | passive | active | active / passive |",
        "|---|---:|---:|---:|",
        f"| throughput, blocks/s (2 threads x 512-block jobs) | {p['throughput_blocks_per_s']:,.0f} | "
        f"{a['throughput_blocks_per_s']:,.0f} | {results['throughput_ratio']:.3f} |",
        f"| single block p50, ms | {p['single_block_ms']['p50']:.2f} | {a['single_block_ms']['p50']:.2f} | "
        f"+{results['single_block_added_ms']:.2f} ms |",
        f"| single block p99, ms | {p['single_block_ms']['p99']:.2f} | {a['single_block_ms']['p99']:.2f} | |",
        f"| bits on the wire per AND per party (payload) | {p['bits_per_and_per_party']:.3f} | "
        f"{a['bits_per_and_per_party']:.3f} | |",
    ]
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--out", default="docs/benchmarks")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--single-jobs", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2, help="passive/active turns, medians kept")
    args = parser.parse_args()
    os.environ["MPC_BUILD_DIR"] = str(Path(args.build_dir).resolve())

    runs: dict[str, list[dict]] = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory(prefix="mpc-active-bench-") as tmp:
        cluster = mpc_cluster.start_cluster(Path(tmp) / "c")
        try:
            cluster.import_key(*KEY)
            cluster.wait_until_serving(KEY)
            for _ in range(args.rounds):
                for mode in MODES:
                    switch(cluster, mode)
                    runs[mode].append(measure(cluster, args.seconds, args.single_jobs))
        finally:
            cluster.stop()

    def median_run(mode: str) -> dict:
        ordered = sorted(runs[mode], key=lambda r: r["throughput_blocks_per_s"])
        return ordered[len(ordered) // 2]

    modes = {mode: median_run(mode) for mode in MODES}
    results = {
        "machine": machine(),
        "modes": modes,
        "runs": runs,
        "throughput_ratio": modes["active"]["throughput_blocks_per_s"] / modes["passive"]["throughput_blocks_per_s"],
        "single_block_added_ms": modes["active"]["single_block_ms"]["p50"] - modes["passive"]["single_block_ms"]["p50"],
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "active.json").write_text(json.dumps(results, indent=2) + "\n")
    text = table(results)
    (out / "active.md").write_text(
        "# Active security against passive, side by side\n\n"
        f"Machine: {results['machine'].get('cpu')}, {results['machine'].get('nproc')} cores; commit "
        f"{results['machine'].get('commit')}. All three servers on one host, links CurveZMQ as always. "
        "Written by tests/bench/active_bench.py (`make bench`).\n\n" + text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
