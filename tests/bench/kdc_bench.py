#!/usr/bin/env python3
"""KDC benchmark: what TGT protection costs, measured side by side in one run.

    PYTHONPATH=tests /usr/bin/python3 tests/bench/kdc_bench.py --build-dir build --out docs/benchmarks

Two realms on loopback on this machine, identical but for protection:
  - stock:     krb5kdc over db2, no plugin;
  - protected: krb5kdc over mpc_kdb.so (db2) with mpc_crypto_router.so preloaded and the
               krbtgt key enrolled in a local three-server engine (data links between the servers
               and from the KDC to each server);
  - protected over CurveZMQ: the same, with the KDC's cluster.toml naming no data endpoints, so
               its requests go by CurveZMQ (how every KDC reached the engine before client data
               links): the two protected realms side by side show what the client links gain;
  - protected with local masks: the same as protected, with gcm_masks = local in the router's
               configuration (each server computes its share of a nonce's masks alone, where
               the default masks by AES_K computed between the servers): side by side, what
               local masks would gain.
The client is tests/load/kdc_load (many exchanges per process, keytab login so the client's
own string-to-key does not dominate). Rounds alternate between the realms so that noise
from the shared machine hits both alike. Measured:
  - AS exchange latency (one thread, sequential), p50/p99;
  - TGS exchange latency (one thread, sequential), p50/p99;
  - AS exchanges per second with krb5kdc -w 2 and 8 client threads, and the CPU time per
    exchange of krb5kdc (all its processes) and of the three servers in those runs (from
    /proc/PID/stat): on this machine everything shares two cores, so the KDC's own CPU per
    exchange is what predicts the throughput of a KDC host whose servers run elsewhere;
  - the same AS throughput run with both KDCs tuned as a busy site would tune them
    (disable_last_success and disable_lockout in the database module: no database write per
    exchange), stock and protected only, with krb5kdc -w 2 and again with -w 8: without the
    writes the stock KDC does less, so the engine's share of a protected exchange is larger;
  - AS exchanges per second by krb5kdc -w N (N = 1, 2, 4, 8, 16; one alternating round, 16 client
    threads), for the workers guidance in docs/operations.md: every router call blocks its
    worker, so workers are what keeps the engine busy.
Writes OUT/kdc.json, OUT/kdc.md and OUT/kdc.png (tests/mpctest/kdc_plots.py) and prints the table.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import tempfile
from pathlib import Path

from mpctest import kdc_plots, mpc_cluster
from mpctest.krb5_realm import Realm
from mpctest.protected_kdc import ProtectedRealm, kdc_pids
from mpctest.bench import cpu_total as cpu_of, machine, median
from mpctest.data_link_tools import client_config_with
from mpctest.kdc_load import kdc_load, prepare

REPO = Path(__file__).resolve().parents[2]

ROUNDS = 3
LATENCY_EXCHANGES = 300
THROUGHPUT_EXCHANGES = 1500
THROUGHPUT_THREADS = 8
WORKER_COUNTS = (1, 2, 4, 8, 16)
# A site that tunes its database module also picks its workers: the tuned runs are made with
# krb5kdc -w 2 like the others, and again with this many.
TUNED_WIDE_WORKERS = 8
WORKER_SWEEP_THREADS = 16
# What a busy site sets in its database module: no last-success time and no lockout counters
# written on every AS exchange.
TUNED_DBMODULE = {"disable_last_success": "true", "disable_lockout": "true"}


def measured_as_load(build: Path, realm: Realm, servers: list[int], threads: int) -> dict:
    """kdc_load's AS throughput run, with the CPU per exchange of krb5kdc (all its processes)
    and of the engine servers (empty for the stock realm)."""
    kdc = kdc_pids(realm.kdc_pid())
    before = (cpu_of(kdc), cpu_of(servers))
    result = kdc_load(build, realm, "as", THROUGHPUT_EXCHANGES, threads)
    exchanges = max(1, result["exchanges"])
    result["kdc_cpu_ms_per_exchange"] = (cpu_of(kdc) - before[0]) * 1000 / exchanges
    result["servers_cpu_ms_per_exchange"] = (cpu_of(servers) - before[1]) * 1000 / exchanges
    return result


def measure_tuned(build: Path, realms: tuple[tuple[str, Realm], ...], servers: list[int],
                  samples: dict[str, dict[str, list[dict]]]) -> None:
    """ROUNDS alternating AS throughput runs of each realm with TUNED_DBMODULE, with krb5kdc -w 2
    and -w TUNED_WIDE_WORKERS, into samples[name]["as-throughput-tuned"] and
    ["as-throughput-tuned-wide"]; the realms' configuration is restored after."""
    try:
        for workers, mode in ((2, "as-throughput-tuned"), (TUNED_WIDE_WORKERS, "as-throughput-tuned-wide")):
            for _, realm in realms:
                realm.write_config(TUNED_DBMODULE)
                realm.start_kdc(workers=workers)
                kdc_load(build, realm, "as", 20)
            for _ in range(ROUNDS):
                for name, realm in realms:
                    result = measured_as_load(build, realm, servers if isinstance(realm, ProtectedRealm) else [],
                                              THROUGHPUT_THREADS)
                    samples[name].setdefault(mode, []).append(result)
            for _, realm in realms:
                realm.stop_kdc()
    finally:
        for _, realm in realms:
            realm.stop_kdc()
            realm.write_config()


def sweep_workers(build: Path, stock: Realm, protected: ProtectedRealm,
                  cluster: mpc_cluster.Cluster) -> list[dict]:
    """AS/s of both realms by krb5kdc -w N, and the CPU per exchange of the protected KDC and
    of the servers."""
    rows = []
    servers = [cluster.server_pid(p) for p in (1, 2, 3)]
    for workers in WORKER_COUNTS:
        row: dict = {"workers": workers}
        for name, realm in (("stock", stock), ("protected", protected)):
            realm.start_kdc(workers=workers)
            try:
                kdc_load(build, realm, "as", 40, WORKER_SWEEP_THREADS)   # every worker's pools and connection
                result = measured_as_load(build, realm, servers if realm is protected else [], WORKER_SWEEP_THREADS)
                row[f"{name}_as_per_second"] = result["per_second"]
                row[f"{name}_as_p50_ms"] = result["p50_ms"]
                if realm is protected:
                    row["protected_kdc_cpu_ms_per_as"] = result["kdc_cpu_ms_per_exchange"]
                    row["servers_cpu_ms_per_as"] = result["servers_cpu_ms_per_exchange"]
            finally:
                realm.stop_kdc()
        row["ratio"] = row["protected_as_per_second"] / row["stock_as_per_second"]
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--out", default="docs/benchmarks")
    args = parser.parse_args()
    build = (REPO / args.build_dir).resolve()
    os.environ["MPC_BUILD_DIR"] = str(build)
    out = (REPO / args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)

    with tempfile.TemporaryDirectory(prefix="kdc-bench-") as tmp:
        tmp = Path(tmp)
        cluster = mpc_cluster.Cluster(tmp / "cluster")
        cluster.init()
        cluster.start()
        stock = Realm(tmp / "stock", backend="db2")
        protected = ProtectedRealm(tmp / "protected", cluster)
        curvezmq_config = client_config_with(cluster, "compute-curvezmq", {party: None for party in cluster.parties})
        # A realm of its own each: one engine never takes a ticket key's id (realm, name, kvno) twice.
        protected_zmq = ProtectedRealm(tmp / "protected-curvezmq", cluster, compute_config=curvezmq_config,
                                       realm="CURVEZMQ.MPC.TEST")
        protected_local = ProtectedRealm(tmp / "protected-local-masks", cluster, realm="LOCAL.MPC.TEST")
        protected_local.router_conf.write_text(protected_local.router_conf.read_text() + "gcm_masks = local\n")
        realms = (("stock", stock), ("protected", protected), ("protected_curvezmq", protected_zmq),
                  ("protected_local_masks", protected_local))
        try:
            prepare(stock)
            for realm in (protected, protected_zmq, protected_local):
                prepare(realm)
                realm.protect()
            samples: dict[str, dict[str, list[dict]]] = {name: {} for name, _ in realms}
            for workers, modes in ((None, ("as", "tgs")), (2, ("as-throughput",))):
                for _, realm in realms:
                    realm.start_kdc(workers=workers)
                    kdc_load(build, realm, "as", 20)          # warm-up: pools, caches, connections
                for _ in range(ROUNDS):
                    for name, realm in realms:
                        for mode in modes:
                            if mode == "as-throughput":
                                servers = ([cluster.server_pid(p) for p in (1, 2, 3)]
                                           if realm is not stock else [])
                                result = measured_as_load(build, realm, servers, THROUGHPUT_THREADS)
                            else:
                                result = kdc_load(build, realm, mode, LATENCY_EXCHANGES)
                            samples[name].setdefault(mode, []).append(result)
                for _, realm in realms:
                    realm.stop_kdc()
            measure_tuned(build, realms[:2], [cluster.server_pid(p) for p in (1, 2, 3)], samples)
            by_workers = sweep_workers(build, stock, protected, cluster)
        finally:
            for _, realm in realms:
                realm.stop()
            cluster.stop()

    def summarise(name: str) -> dict:
        s = samples[name]
        tuned = {}
        if "as-throughput-tuned" in s:
            tuned = {
                "as_per_second_w2_tuned": median([r["per_second"] for r in s["as-throughput-tuned"]]),
                "kdc_cpu_ms_per_as_tuned": median([r["kdc_cpu_ms_per_exchange"] for r in s["as-throughput-tuned"]]),
                "servers_cpu_ms_per_as_tuned": median([r["servers_cpu_ms_per_exchange"]
                                                       for r in s["as-throughput-tuned"]]),
                f"as_per_second_w{TUNED_WIDE_WORKERS}_tuned": median([r["per_second"]
                                                                      for r in s["as-throughput-tuned-wide"]]),
            }
        return {**tuned,
            "as_p50_ms": median([r["p50_ms"] for r in s["as"]]),
            "as_p99_ms": median([r["p99_ms"] for r in s["as"]]),
            "tgs_p50_ms": median([r["p50_ms"] for r in s["tgs"]]),
            "tgs_p99_ms": median([r["p99_ms"] for r in s["tgs"]]),
            "as_per_second_w2": median([r["per_second"] for r in s["as-throughput"]]),
            "kdc_cpu_ms_per_as": median([r["kdc_cpu_ms_per_exchange"] for r in s["as-throughput"]]),
            "servers_cpu_ms_per_as": median([r["servers_cpu_ms_per_exchange"] for r in s["as-throughput"]]),
        }

    stock_s, protected_s, curvezmq_s = summarise("stock"), summarise("protected"), summarise("protected_curvezmq")
    local_masks_s = summarise("protected_local_masks")
    added = {
        "as_p50_ms": protected_s["as_p50_ms"] - stock_s["as_p50_ms"],
        "as_p99_ms": protected_s["as_p99_ms"] - stock_s["as_p99_ms"],
        "tgs_p50_ms": protected_s["tgs_p50_ms"] - stock_s["tgs_p50_ms"],
        "tgs_p99_ms": protected_s["tgs_p99_ms"] - stock_s["tgs_p99_ms"],
    }
    throughput_ratio = protected_s["as_per_second_w2"] / stock_s["as_per_second_w2"]
    tuned_ratio = protected_s["as_per_second_w2_tuned"] / stock_s["as_per_second_w2_tuned"]
    wide_tuned_key = f"as_per_second_w{TUNED_WIDE_WORKERS}_tuned"
    wide_tuned_ratio = protected_s[wide_tuned_key] / stock_s[wide_tuned_key]
    kdc_cpu_ratio = stock_s["kdc_cpu_ms_per_as"] / protected_s["kdc_cpu_ms_per_as"]
    report = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(),
        "method": {"rounds": ROUNDS, "latency_exchanges_per_round": LATENCY_EXCHANGES,
                   "throughput_exchanges_per_round": THROUGHPUT_EXCHANGES,
                   "throughput_client_threads": THROUGHPUT_THREADS, "statistic": "median of rounds"},
        "stock": stock_s, "protected": protected_s, "protected_curvezmq_client": curvezmq_s, "added": added,
        "protected_local_masks": local_masks_s,
        "client_data_links_as_throughput_gain": protected_s["as_per_second_w2"] / curvezmq_s["as_per_second_w2"],
        "local_masks_as_throughput_gain": local_masks_s["as_per_second_w2"] / protected_s["as_per_second_w2"],
        "as_throughput_ratio_w2": throughput_ratio,
        "as_throughput_ratio_w2_tuned": tuned_ratio,
        f"as_throughput_ratio_w{TUNED_WIDE_WORKERS}_tuned": wide_tuned_ratio,
        "tuned_dbmodule": TUNED_DBMODULE,
        "kdc_cpu_ratio_stock_over_protected": kdc_cpu_ratio,
        "goals": {"as_added_p50_under_1ms": added["as_p50_ms"] < 1.0,
                  "as_throughput_at_least_half": throughput_ratio >= 0.5,
                  "as_throughput_tuned_at_least_0_3": max(tuned_ratio, wide_tuned_ratio) >= 0.3,
                  "tgs_added_p50_under_3ms": added["tgs_p50_ms"] < 3.0},
        "by_workers": by_workers,
        "raw": samples,
    }
    (out / "kdc.json").write_text(json.dumps(report, indent=2) + "\n")
    kdc_plots.plot_kdc(report, out / "kdc.png")
    rows = [
        ("AS p50 (ms)", "as_p50_ms"), ("AS p99 (ms)", "as_p99_ms"),
        ("TGS p50 (ms)", "tgs_p50_ms"), ("TGS p99 (ms)", "tgs_p99_ms"),
    ]
    lines = ["| measure | stock krb5kdc | protected krbtgt | added | protected, KDC on CurveZMQ | "
             "protected, local masks |",
             "|---|---|---|---|---|---|"]
    for label, key in rows:
        lines.append(f"| {label} | {stock_s[key]:.3f} | {protected_s[key]:.3f} | {added[key]:+.3f} | "
                     f"{curvezmq_s[key]:.3f} | {local_masks_s[key]:.3f} |")
    lines.append(f"| AS/s, krb5kdc -w 2, {THROUGHPUT_THREADS} client threads | "
                 f"{stock_s['as_per_second_w2']:.0f} | {protected_s['as_per_second_w2']:.0f} | "
                 f"ratio {throughput_ratio:.2f} | {curvezmq_s['as_per_second_w2']:.0f} "
                 f"(ratio {curvezmq_s['as_per_second_w2'] / stock_s['as_per_second_w2']:.2f}) | "
                 f"{local_masks_s['as_per_second_w2']:.0f} "
                 f"(ratio {local_masks_s['as_per_second_w2'] / stock_s['as_per_second_w2']:.2f}) |")
    lines.append(f"| krb5kdc CPU per AS exchange (ms), all its processes | "
                 f"{stock_s['kdc_cpu_ms_per_as']:.3f} | {protected_s['kdc_cpu_ms_per_as']:.3f} | "
                 f"ratio {kdc_cpu_ratio:.2f} | {curvezmq_s['kdc_cpu_ms_per_as']:.3f} | "
                 f"{local_masks_s['kdc_cpu_ms_per_as']:.3f} |")
    lines.append(f"| three servers' CPU per AS exchange (ms) | - | "
                 f"{protected_s['servers_cpu_ms_per_as']:.3f} | | {curvezmq_s['servers_cpu_ms_per_as']:.3f} | "
                 f"{local_masks_s['servers_cpu_ms_per_as']:.3f} |")
    lines.append(f"| AS/s tuned (no last-success, no lockout), krb5kdc -w 2, {THROUGHPUT_THREADS} client threads | "
                 f"{stock_s['as_per_second_w2_tuned']:.0f} | {protected_s['as_per_second_w2_tuned']:.0f} | "
                 f"ratio {tuned_ratio:.2f} | |")
    lines.append(f"| AS/s tuned, krb5kdc -w {TUNED_WIDE_WORKERS}, {THROUGHPUT_THREADS} client threads | "
                 f"{stock_s[wide_tuned_key]:.0f} | {protected_s[wide_tuned_key]:.0f} | "
                 f"ratio {wide_tuned_ratio:.2f} | |")
    lines.append(f"| krb5kdc CPU per AS exchange, tuned (ms) | {stock_s['kdc_cpu_ms_per_as_tuned']:.3f} | "
                 f"{protected_s['kdc_cpu_ms_per_as_tuned']:.3f} | "
                 f"ratio {stock_s['kdc_cpu_ms_per_as_tuned'] / protected_s['kdc_cpu_ms_per_as_tuned']:.2f} | |")
    lines.append(f"| three servers' CPU per AS exchange, tuned (ms) | - | "
                 f"{protected_s['servers_cpu_ms_per_as_tuned']:.3f} | | |")
    table = "\n".join(lines)
    worker_lines = [f"| krb5kdc -w | stock AS/s | protected AS/s | ratio | protected AS p50 under load (ms) | "
                    f"krb5kdc CPU per AS (ms) | three servers' CPU per AS (ms) |",
                    "|---:|---:|---:|---:|---:|---:|---:|"]
    for row in by_workers:
        worker_lines.append(f"| {row['workers']} | {row['stock_as_per_second']:.0f} | "
                            f"{row['protected_as_per_second']:.0f} | {row['ratio']:.2f} | "
                            f"{row['protected_as_p50_ms']:.1f} | {row['protected_kdc_cpu_ms_per_as']:.2f} | "
                            f"{row['servers_cpu_ms_per_as']:.2f} |")
    worker_table = "\n".join(worker_lines)
    (out / "kdc.md").write_text(f"# KDC with a protected krbtgt key vs the stock KDC\n\n"
                                f"{report['date']}, {os.cpu_count()} CPUs; median of {ROUNDS} "
                                f"alternating rounds; client tests/load/kdc_load with a keytab.\n\n"
                                f"{table}\n\n"
                                f"By krb5kdc worker processes (one round each, {WORKER_SWEEP_THREADS} client "
                                f"threads, {THROUGHPUT_EXCHANGES} exchanges):\n\n{worker_table}\n\n"
                                f"![AS/s by workers and CPU per AS exchange](kdc.png)\n")
    print(table)
    print()
    print(worker_table)


if __name__ == "__main__":
    main()
