#!/usr/bin/env python3
"""Active and passive security side by side: one local three-server cluster on loopback,
switched between security = "passive" and "active" (every server restarted), measured in
turns within one run so the ratio is not skewed by the machine's load drifting.

    PYTHONPATH=tests /usr/bin/python3 tests/bench/active_bench.py --build-dir build --out docs/benchmarks

Per mode, for AES-128 keystream jobs: throughput (2 client threads x 512-block jobs),
single-block latency (p50, p99), and bits on the wire per AND per party from the servers'
own counters (payload bytes sent / AND gates evaluated: the AND messages plus, when active,
the check's messages); and the same circuit evaluated by the three parties in one process
(mpc-bench --local --security), where the AND check's CPU shows without the transport's. Then protected logins: the stock krb5kdc over the same cluster with
the krbtgt key and the users' keys enrolled (tests/load/kdc_load, keytab logins, one thread):
AS exchanges (the user's key: preauth and reply, Kerberos circuits garbled once or, active,
twice; the TGT sealed with the krbtgt key) and TGS exchanges (the TGT opened: a layered
batch, checked when active), p50 and p99, and the servers' CPU per exchange. Writes
OUT/active.json and OUT/active.md and prints the table. --threads sets the throughput's client
threads (more for a machine with many cores); --no-logins measures the engine alone, for a
machine without MIT krb5's KDC.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

from mpctest import mpc_cluster
from mpctest.bench import cpu_total, machine, measure, mpc_bench, restart_all

KEY = ("bench/active", 1, "aes128")
MODES = ("passive", "active")
# Jobs small enough for an actively secure batch to finish within the client timeout.
THROUGHPUT_BLOCKS = 512
LOGIN_EXCHANGES = 60
IN_PROCESS_BLOCKS = 8192


def switch(cluster: mpc_cluster.Cluster, mode: str) -> None:
    for party in cluster.parties:
        cluster.set_server_setting(party, "security", mode)
    restart_all(cluster, KEY)


def measure_logins(cluster: mpc_cluster.Cluster, realm, build: Path) -> dict:
    """AS and TGS exchanges against the protected KDC, sequential, and the servers' CPU."""
    from mpctest.kdc_load import kdc_load  # the KDC's tools: only where logins are measured
    realm.start_kdc()
    try:
        kdc_load(build, realm, "as", 10)  # warm-up: nonce pools, connections
        servers = [cluster.server_pid(p) for p in cluster.parties]
        result = {}
        for mode in ("as", "tgs"):
            before = cpu_total(servers)
            load = kdc_load(build, realm, mode, LOGIN_EXCHANGES)
            result[mode] = {"p50_ms": load["p50_ms"], "p99_ms": load["p99_ms"],
                            "servers_cpu_ms": (cpu_total(servers) - before) * 1000 / LOGIN_EXCHANGES}
        return result
    finally:
        realm.stop_kdc()


def in_process(rounds: int) -> dict:
    """The three parties in one process without a network (mpc-bench --local), each security
    in turn: what the AND check costs the evaluator's CPU, apart from the transport's."""
    runs: dict[str, list[dict]] = {mode: [] for mode in MODES}
    for _ in range(rounds):
        for mode in MODES:
            runs[mode].append(mpc_bench("--local", "--alg", "aes128", "--blocks", str(IN_PROCESS_BLOCKS),
                                        "--repeat", "5", "--security", mode, timeout=600))
    return {mode: {"blocks_per_s": statistics.median(r["blocks_per_s"] for r in runs[mode]),
                   "cpu_us_per_block": statistics.median(r["cpu_seconds_per_block"] for r in runs[mode]) * 1e6}
            for mode in MODES}


def table(results: dict) -> str:
    p, a = results["modes"]["passive"], results["modes"]["active"]
    threads = results.get("client_threads", 2)
    lp, la = results["in_process"]["passive"], results["in_process"]["active"]
    rows = [
        "| AES-128 keystream | passive | active | active / passive |",
        "|---|---:|---:|---:|",
        f"| throughput, blocks/s ({threads} threads x 512-block jobs) | {p['throughput_blocks_per_s']:,.0f} | "
        f"{a['throughput_blocks_per_s']:,.0f} | {results['throughput_ratio']:.3f} |",
        f"| single block p50, ms | {p['single_block_ms']['p50']:.2f} | {a['single_block_ms']['p50']:.2f} | "
        f"+{results['single_block_added_ms']:.2f} ms |",
        f"| single block p99, ms | {p['single_block_ms']['p99']:.2f} | {a['single_block_ms']['p99']:.2f} | |",
        f"| bits on the wire per AND per party (payload) | {p['bits_per_and_per_party']:.3f} | "
        f"{a['bits_per_and_per_party']:.3f} | |",
        f"| in one process, no network: blocks/s ({IN_PROCESS_BLOCKS:,}-block batches) | {lp['blocks_per_s']:,.0f} | "
        f"{la['blocks_per_s']:,.0f} | {la['blocks_per_s'] / lp['blocks_per_s']:.3f} |",
        f"| in one process: three parties' CPU per block, us | {lp['cpu_us_per_block']:.2f} | "
        f"{la['cpu_us_per_block']:.2f} | {la['cpu_us_per_block'] / lp['cpu_us_per_block']:.1f} |",
    ]
    if not results["logins"]:
        return "\n".join(rows)
    rows += [
        "",
        "| protected login (krbtgt and user keys in the engine) | passive | active | active / passive |",
        "|---|---:|---:|---:|",
    ]
    for mode, label in (("as", "AS exchange"), ("tgs", "TGS exchange")):
        pl, al = results["logins"]["passive"][mode], results["logins"]["active"][mode]
        rows += [
            f"| {label} p50, ms | {pl['p50_ms']:.1f} | {al['p50_ms']:.1f} | {al['p50_ms'] / pl['p50_ms']:.2f} |",
            f"| {label} p99, ms | {pl['p99_ms']:.1f} | {al['p99_ms']:.1f} | |",
            f"| {label}: three servers' CPU, ms | {pl['servers_cpu_ms']:.1f} | {al['servers_cpu_ms']:.1f} | "
            f"{al['servers_cpu_ms'] / pl['servers_cpu_ms']:.2f} |",
        ]
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--out", default="docs/benchmarks")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--single-jobs", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2, help="passive/active turns, medians kept")
    parser.add_argument("--threads", type=int, default=2, help="client threads of the throughput measurement")
    parser.add_argument("--limits", default="", metavar="NAME=N[,NAME=N]",
                        help="[limits] every server runs with in both modes, e.g. max_batch_blocks=4096")
    parser.add_argument("--no-logins", action="store_true",
                        help="the engine alone, for a machine without MIT krb5's KDC")
    args = parser.parse_args()
    build = Path(args.build_dir).resolve()
    os.environ["MPC_BUILD_DIR"] = str(build)

    runs: dict[str, list[dict]] = {mode: [] for mode in MODES}
    login_runs: dict[str, list[dict]] = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory(prefix="mpc-active-bench-") as tmp:
        cluster = mpc_cluster.start_cluster(Path(tmp) / "c")
        realm = None
        if not args.no_logins:
            # Here, not at the top: a machine without the KDC's Python packages runs --no-logins.
            from mpctest.kdc_load import prepare
            from mpctest.protected_kdc import ProtectedRealm
            realm = ProtectedRealm(Path(tmp) / "realm", cluster, enrol_users=True)
        try:
            cluster.import_key(*KEY)
            cluster.wait_until_serving(KEY)
            for item in filter(None, args.limits.split(",")):
                name, value = item.split("=")
                for party in cluster.parties:  # read at the restart of the first switch
                    cluster.set_server_table_setting(party, "limits", name, int(value))
            if realm:
                prepare(realm)
                realm.protect()
                realm.mpcctl_kdc("protect", "--all-users")
            for _ in range(args.rounds):
                for mode in MODES:
                    switch(cluster, mode)
                    runs[mode].append(measure(cluster, KEY, args.seconds, args.single_jobs, args.threads, THROUGHPUT_BLOCKS))
                    if realm:
                        login_runs[mode].append(measure_logins(cluster, realm, build))
        finally:
            if realm:
                realm.stop()
            cluster.stop()

    def median_run(mode: str) -> dict:
        ordered = sorted(runs[mode], key=lambda r: r["throughput_blocks_per_s"])
        return ordered[len(ordered) // 2]

    def median_logins(mode: str) -> dict:
        return {kind: {measure: statistics.median(run[kind][measure] for run in login_runs[mode])
                       for measure in ("p50_ms", "p99_ms", "servers_cpu_ms")}
                for kind in ("as", "tgs")}

    modes = {mode: median_run(mode) for mode in MODES}
    results = {
        "machine": machine(),
        "modes": modes,
        "in_process": in_process(args.rounds),
        "runs": runs,
        "client_threads": args.threads,
        "logins": {mode: median_logins(mode) for mode in MODES} if login_runs["active"] else {},
        "login_runs": login_runs,
        "throughput_ratio": modes["active"]["throughput_blocks_per_s"] / modes["passive"]["throughput_blocks_per_s"],
        "single_block_added_ms": modes["active"]["single_block_ms"]["p50"] - modes["passive"]["single_block_ms"]["p50"],
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "active.json").write_text(json.dumps(results, indent=2) + "\n")
    write_markdown(results, out / "active.md")
    print(table(results))
    return 0


def write_markdown(results: dict, path: Path) -> None:
    """The tables of `results` with their machine and commit, as docs/benchmarks.md takes them."""
    path.write_text(
        "# Active security against passive, side by side\n\n"
        f"Machine: {results['machine'].get('cpu')}, {results['machine'].get('nproc')} cores; commit "
        f"{results['machine'].get('commit')}. All three servers on one host; layer messages and garbled tables on data links (AES-256-GCM), client and control links on CurveZMQ. "
        "Written by tests/bench/active_bench.py (`make bench`).\n\n" + table(results) + "\n")


if __name__ == "__main__":
    sys.exit(main())
