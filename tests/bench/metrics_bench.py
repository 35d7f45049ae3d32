#!/usr/bin/env python3
"""The servers' Prometheus endpoint on and off, side by side: one local three-server cluster
on loopback, every server restarted with metrics_listen set (and each endpoint scraped every
second, fifteen times the example configuration's rate) or without it, in turns within one
run so that the machine's drifting load skews neither side.

    PYTHONPATH=tests /usr/bin/python3 tests/bench/metrics_bench.py --build-dir build --out docs/benchmarks

Per turn, AES-128 keystream jobs: throughput (client threads x 512-block jobs) and single-block
latency (p50, p99). Then the KDC side: a protected krbtgt key on the same cluster, krb5kdc with
two workers restarted per turn with its router's counters file (router.conf metrics_file, read
every second by `mpcctl kdc metrics --out`, as the timer does every 15 s) or without it, and a
login storm (AS and TGS) per turn. Writes OUT/metrics.json and OUT/metrics.md and prints the
table: each side's median turn, the median of the turns' on/off ratios, and every turn's ratio
(noise shows there).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import urllib.request
from pathlib import Path

from mpctest import mpc_cluster
from mpctest.loopback_ports import random_port
from mpctest.bench import machine, measure, restart_all
from mpctest import storm
from mpctest.protected_kdc import ProtectedRealm

KEY = ("bench/active", 1, "aes128")
MODES = ("off", "on")
# Jobs small enough for an actively secure batch to finish within the client timeout.
THROUGHPUT_BLOCKS = 512


class Scraper:
    """Scrapes every endpoint once a second until stopped; counts the scrapes that answered."""

    def __init__(self, endpoints: list[str]):
        self.endpoints = endpoints
        self.scrapes = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        while not self.stopping.wait(1.0):
            for endpoint in self.endpoints:
                try:
                    with urllib.request.urlopen(f"http://{endpoint}/metrics", timeout=2) as response:
                        if response.status == 200 and b"mpc_jobs_total" in response.read():
                            self.scrapes += 1
                except OSError:
                    pass

    def stop(self) -> int:
        self.stopping.set()
        self.thread.join()
        return self.scrapes


def switch(cluster: mpc_cluster.Cluster, endpoints: dict[int, str] | None) -> None:
    for party in cluster.parties:
        config = cluster.server_dir(party) / "server.toml"
        text = re.sub(r'(?m)^metrics_listen\s*=.*\n', "", config.read_text())
        config.write_text((f'metrics_listen = "{endpoints[party]}"\n' if endpoints else "") + text)
    restart_all(cluster, KEY)


class CountersReader:
    """`mpcctl kdc metrics --file F --out OUT` once a second until stopped: the timer's work."""

    def __init__(self, counters: Path, out: Path):
        self.command = [str(mpc_cluster.mpcctl_binary()), "kdc", "metrics", "--file", str(counters),
                        "--out", str(out)]
        self.reads = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        while not self.stopping.wait(1.0):
            self.read()

    def read(self) -> None:
        if subprocess.run(self.command, capture_output=True).returncode == 0:
            self.reads += 1

    def stop(self) -> int:
        """Stops, after one last read (a turn shorter than a second is read at its end)."""
        self.stopping.set()
        self.thread.join()
        self.read()
        return self.reads


def kdc_turns(cluster: mpc_cluster.Cluster, root: Path, rounds: int, logins: int) -> tuple[dict, int]:
    """{mode: [storm summary per turn]} with the router's counters file off and on, and the
    reads of the file made while on."""
    realm = ProtectedRealm(root / "realm", cluster)
    counters = root / "router.metrics"
    plain = realm.router_conf.read_text()
    runs: dict[str, list[dict]] = {mode: [] for mode in MODES}
    reads = 0
    try:
        realm.create()
        storm.add_principals(realm, 20)
        realm.protect()
        keytab = storm.make_keytab(realm, root / "storm.keytab", 20)
        target = storm.Target("protected", realm, cluster)
        for _ in range(rounds):
            for mode in MODES:
                realm.stop_kdc()
                counters.unlink(missing_ok=True)
                realm.router_conf.write_text(plain + (f"metrics_file = {counters}\n" if mode == "on" else ""))
                realm.start_kdc(workers=2)
                reader = CountersReader(counters, root / "mpc-kdc.prom") if mode == "on" else None
                summary = target.storm(keytab, ["--concurrency", "4", "--count", str(logins), "--tgs",
                                                realm.principal(storm.SERVICE)])
                if reader:
                    reads += reader.stop()
                if summary["failed"] != 0:
                    raise SystemExit(f"logins failed in the {mode} turn: {summary['first_errors']}")
                runs[mode].append(summary)
    finally:
        realm.stop()
    return runs, reads


def table(results: dict) -> str:
    off, on = results["modes"]["off"], results["modes"]["on"]
    rows = ["| AES-128 keystream | endpoint off | endpoint on, scraped every second | on / off |",
            "|---|---:|---:|---:|",
            f"| throughput, blocks/s ({results['client_threads']} threads x {THROUGHPUT_BLOCKS}-block jobs) | "
            f"{off['throughput_blocks_per_s']:,.0f} | {on['throughput_blocks_per_s']:,.0f} | "
            f"{statistics.median(results['turn_ratios']):.3f} (median of the turns) |",
            f"| single block p50 / p99, ms | {off['single_block_ms']['p50']:.2f} / {off['single_block_ms']['p99']:.2f} | "
            f"{on['single_block_ms']['p50']:.2f} / {on['single_block_ms']['p99']:.2f} | |"]
    kdc_off, kdc_on = results["kdc"]["modes"]["off"], results["kdc"]["modes"]["on"]
    rows += [f"| KDC logins/s (AS + TGS, 4 at a time, krb5kdc -w 2, protected krbtgt) | "
             f"{kdc_off['per_second']:,.0f} | "
             f"{kdc_on['per_second']:,.0f} (counters file, read every second) | "
             f"{statistics.median(results['kdc']['turn_ratios']):.3f} (median of the turns) |",
             f"| KDC login p50 / p99, ms | {kdc_off['p50_ms']:.2f} / {kdc_off['p99_ms']:.2f} | "
             f"{kdc_on['p50_ms']:.2f} / {kdc_on['p99_ms']:.2f} | |"]
    ratios = ", ".join(f"{r:.3f}" for r in results["turn_ratios"])
    kdc_ratios = ", ".join(f"{r:.3f}" for r in results["kdc"]["turn_ratios"])
    return "\n".join(rows) + (f"\n\nOn/off throughput per turn: {ratios}; "
                              f"{results['scrapes']} scrapes answered while on. KDC on/off logins/s per turn: "
                              f"{kdc_ratios}; the counters file read {results['kdc']['reads']} times while on.")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--out", default="docs/benchmarks")
    parser.add_argument("--seconds", type=float, default=8)
    parser.add_argument("--single-jobs", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3, help="off/on turns, medians kept")
    parser.add_argument("--threads", type=int, default=2, help="client threads of the throughput measurement")
    parser.add_argument("--logins", type=int, default=2000, help="logins per KDC turn")
    args = parser.parse_args()
    os.environ["MPC_BUILD_DIR"] = str(Path(args.build_dir).resolve())

    runs: dict[str, list[dict]] = {mode: [] for mode in MODES}
    scrapes = 0
    with tempfile.TemporaryDirectory(prefix="mpc-metrics-bench-") as tmp:
        cluster = mpc_cluster.start_cluster(Path(tmp) / "c")
        endpoints = {party: f"127.0.0.1:{random_port()}" for party in cluster.parties}
        try:
            cluster.import_key(*KEY)
            cluster.wait_until_serving(KEY)
            for _ in range(args.rounds):
                for mode in MODES:
                    switch(cluster, endpoints if mode == "on" else None)
                    scraper = Scraper(list(endpoints.values())) if mode == "on" else None
                    runs[mode].append(measure(cluster, KEY, args.seconds, args.single_jobs, args.threads, THROUGHPUT_BLOCKS))
                    if scraper:
                        scrapes += scraper.stop()
            switch(cluster, None)
            kdc_runs, kdc_reads = kdc_turns(cluster, Path(tmp), args.rounds, args.logins)
        finally:
            cluster.stop()
    if scrapes == 0:
        raise SystemExit("no scrape answered: the endpoint was not measured")
    if kdc_reads == 0:
        raise SystemExit("the router's counters file was never read: the KDC side was not measured")

    def median_run(mode: str) -> dict:
        ordered = sorted(runs[mode], key=lambda r: r["throughput_blocks_per_s"])
        return ordered[len(ordered) // 2]

    results = {
        "machine": machine(),
        "modes": {mode: median_run(mode) for mode in MODES},
        "runs": runs,
        "turn_ratios": [on["throughput_blocks_per_s"] / off["throughput_blocks_per_s"]
                        for off, on in zip(runs["off"], runs["on"])],
        "scrapes": scrapes,
        "client_threads": args.threads,
        "kdc": {
            "logins_per_turn": args.logins,
            "modes": {mode: sorted(kdc_runs[mode], key=lambda r: r["per_second"])[len(kdc_runs[mode]) // 2]
                      for mode in MODES},
            "runs": kdc_runs,
            "turn_ratios": [on["per_second"] / off["per_second"]
                            for off, on in zip(kdc_runs["off"], kdc_runs["on"])],
            "reads": kdc_reads,
        },
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "metrics.json").write_text(json.dumps(results, indent=2) + "\n")
    text = table(results)
    (out / "metrics.md").write_text(
        "# The Prometheus endpoint on and off, side by side\n\n"
        f"Machine: {results['machine'].get('cpu')}, {results['machine'].get('nproc')} cores; commit "
        f"{results['machine'].get('commit')}. Three servers on one host, every link authenticated and "
        "encrypted. Written by tests/bench/metrics_bench.py (`make bench`).\n\n" + text + "\n")
    print(text)
    print(f"median of the turns: {statistics.median(results['turn_ratios']):.3f}; KDC: "
          f"{statistics.median(results['kdc']['turn_ratios']):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
