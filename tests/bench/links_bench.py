#!/usr/bin/env python3
"""The engine on links of a given rate and latency: every link between two hosts goes through
mpc-link-emulator, which gives each direction R Mbit/s and a one-way delay of RTT / 2. The
hosts: the three servers (peer links and data lanes between them) and a fourth, the KDC's,
whose client links (the KDC router's, and the benchmark client's in its place) reach each
server over a link of its own.

For loopback and each shaped link (1 and 10 Gbit/s; 0.2 and 2 ms round trip):
- AES-128 with passive and active security in turn: throughput (client threads x
  65,536-block jobs), single-block latency, the servers' payload bytes per block. A layered
  evaluation sends about 1 bit per AND per party and waits one round trip per AND layer, so a
  slow link caps throughput at rate / (bits per block) and a long one adds layers x RTT to
  every job.
- Protected logins (a protected krbtgt and a protected user: stock krb5kdc, the KDB module and
  the crypto router, kdc_load as the client), active security, Kerberos batches garbled and
  layered in turn: AS and TGS exchanges one at a time (p50 / p99), AS exchanges with
  LOGIN_THREADS in flight (logins/s), and the servers' payload bytes per AS exchange. A garbled
  login moves megabytes in a few round trips, a layered one kilobytes in thousands.
Writes OUT/links.json and OUT/links.md (`make bench-links`).

The emulator is a userspace relay because this kernel has no netem qdisc; one of its threads
relays a shaped link at full rate, so the relays' CPU is reported beside the servers'.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from mpctest import mpc_cluster, toml_files
from mpctest.bench import (BENCH_TIMEOUT_MS, THROUGHPUT_BLOCKS, THROUGHPUT_THREADS, byte_counter,
                           cpu_seconds, machine, mpc_bench, server_counters)

REPO = Path(__file__).resolve().parents[2]

ALG = "aes128"
KEY = ("bench/aes128", 1, ALG)
AND_GATES_PER_BLOCK = 5120  # the 32-AND S-box circuit the throughput runs use
# (name, rate in Mbit/s, round trip in ms); None: loopback, no emulator.
LINKS = (("loopback", None, None), ("10 Gbit/s / 0.2 ms", 10000, 0.2), ("1 Gbit/s / 0.2 ms", 1000, 0.2),
         ("10 Gbit/s / 2 ms", 10000, 2.0), ("1 Gbit/s / 2 ms", 1000, 2.0))
MODES = ("passive", "active")
KRB_EVALUATIONS = ("garbled", "layered")
LOGIN_THREADS = 4
# Sequential exchanges per measure and AS exchanges in the throughput run, by round trip: a
# layered login waits thousands of round trips (seconds on a 2 ms link).
def login_counts(rtt_ms: float | None) -> tuple[int, int]:
    return (12, 24) if rtt_ms is None or rtt_ms < 1 else (4, 8)


def emulator_binary() -> Path:
    return mpc_cluster.build_dir() / "tests" / "bench" / "tools" / "mpc-link-emulator"


def free_ports(count: int) -> int:
    """The first of `count` consecutive loopback ports free right now, for the relays."""
    for _ in range(500):
        first = random.randrange(20000, mpc_cluster.MAX_BASE_PORT - count)
        if all(mpc_cluster.port_is_free(first + offset) for offset in range(count)):
            return first
    raise RuntimeError("no free port range for the relays")


def route_through(cluster: mpc_cluster.Cluster, first_port: int) -> list[str]:
    """Points every server at its peers' relays instead of their ports, and every client
    configuration at relays to the servers: the routes, LINK names "i>j" for connections from
    server i to server j (both directions of one pair of servers share that pair's link in the
    emulator) and "k>i" from the KDC's host to server i."""
    routes = []
    port = first_port
    for party in (1, 2, 3):
        with toml_files.editing(cluster.server_dir(party) / "server.toml") as settings:
            for peer in settings["peers"]:
                for field in ("endpoint", "data_endpoint"):
                    target = int(peer[field].rsplit(":", 1)[1])
                    routes.append(f"{party}>{peer['party']}:{port}:{target}")
                    peer[field] = f"tcp://127.0.0.1:{port}"
                    port += 1
    to_servers = {}  # a server's port -> the relay on the KDC host's link to it
    for config in (cluster.compute_config, cluster.enrol_config, cluster.admin_config):
        with toml_files.editing(config) as settings:
            for server in settings["servers"]:
                for field in ("endpoint", "data_endpoint"):
                    target = int(server[field].rsplit(":", 1)[1])
                    if target not in to_servers:
                        to_servers[target] = port
                        routes.append(f"k>{server['party']}:{port}:{target}")
                        port += 1
                    server[field] = f"tcp://127.0.0.1:{to_servers[target]}"
    return routes


def start(root: Path, security: str, rate_mbit: float | None, rtt_ms: float | None,
          krb_evaluation: str | None = None):
    cluster = mpc_cluster.Cluster(root)
    cluster.mpcctl("cluster", "init", "--dir", str(cluster.dir), "--base-port", str(cluster.base_port),
                   "--security", security, "--data-links", "on")
    if krb_evaluation:
        for party in (1, 2, 3):
            cluster.set_server_setting(party, "krb_evaluation", krb_evaluation)
    # Every job may wait many round trips: the KDC's and the bench's calls get room for them.
    for config in (cluster.compute_config, cluster.enrol_config, cluster.admin_config):
        cluster.set_client_timeout(config, BENCH_TIMEOUT_MS)
    emulator = None
    if rate_mbit is not None:
        routes = route_through(cluster, free_ports(18))
        emulator = subprocess.Popen([str(emulator_binary()), "--delay-us", str(round(rtt_ms * 500)),
                                     "--rate-mbit", str(rate_mbit),
                                     *[arg for route in routes for arg in ("--route", route)]],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        emulator.stdout.readline()
    try:
        cluster.start()
        cluster.import_key(*KEY)
        cluster.wait_until_serving(KEY, deadline_s=60)
    except Exception:
        stop(cluster, emulator)
        raise
    return cluster, emulator


def on_cluster(root: Path, security: str, rate_mbit: float | None, rtt_ms: float | None,
               krb_evaluation: str | None, measure_with) -> dict:
    """measure_with(cluster, emulator, root) on a cluster started for it and stopped after; a
    configuration that fails is reported as such, and the others still run."""
    cluster, emulator = start(root, security, rate_mbit, rtt_ms, krb_evaluation)
    try:
        return measure_with(cluster, emulator, root)
    except (SystemExit, RuntimeError, subprocess.SubprocessError) as failure:
        return {"error": str(failure)[:2000]}
    finally:
        stop(cluster, emulator)


def stop(cluster: mpc_cluster.Cluster, emulator) -> None:
    cluster.stop()
    if emulator:
        emulator.terminate()
        emulator.wait(timeout=10)


def measure(cluster: mpc_cluster.Cluster, emulator, seconds: float, single_jobs: int) -> dict:
    common = ["--cluster", str(cluster.admin_config), "--name", KEY[0], "--kvno", "1", "--alg", ALG]
    pids = [cluster.server_pid(party) for party in (1, 2, 3)]
    before = server_counters(cluster)
    cpu_before = sum(cpu_seconds(pid) for pid in pids)
    relay_before = cpu_seconds(emulator.pid) if emulator else 0.0
    throughput = mpc_bench(*common, "--threads", str(THROUGHPUT_THREADS), "--blocks", str(THROUGHPUT_BLOCKS),
                           "--seconds", str(max(1, round(seconds))), timeout=seconds + 300)
    cpu = sum(cpu_seconds(pid) for pid in pids) - cpu_before
    relay_cpu = (cpu_seconds(emulator.pid) - relay_before) if emulator else 0.0
    after = server_counters(cluster)
    single = mpc_bench(*common, "--threads", "1", "--blocks", "1", "--jobs", str(single_jobs), "--warmup", "3",
                       timeout=600)
    blocks = throughput["blocks"]
    sent = [byte_counter(b) - byte_counter(a) for a, b in zip(before, after)
            if byte_counter(a) is not None and byte_counter(b) is not None]
    per_party = sum(sent) / len(sent) if len(sent) == 3 else None
    return {
        "blocks_per_s": throughput["blocks_per_s"],
        "blocks": blocks,
        "error": throughput.get("error"),
        "single_block_ms": single["latency_ms"],
        "server_cpu_us_per_block": 1e6 * cpu / blocks if blocks else None,
        "relay_cpu_us_per_block": 1e6 * relay_cpu / blocks if blocks else None,
        "payload_bytes_per_block_per_party": per_party / blocks if per_party and blocks else None,
    }


def measure_logins(cluster: mpc_cluster.Cluster, root: Path, build: Path, rtt_ms: float | None) -> dict:
    """Protected AS (a protected user) and TGS exchanges against a protected KDC on this cluster,
    over TCP (a login slower than the client's UDP retry would be sent again)."""
    from mpctest.kdc_load import kdc_load, prepare  # the KDC's tools: only where logins are measured
    from kdc_user_bench import prefer_tcp
    from mpctest.protected_kdc import ProtectedRealm
    sequential, throughput = login_counts(rtt_ms)
    realm = ProtectedRealm(root / "realm", cluster, enrol_users=True)
    prepare(realm)
    prefer_tcp(realm)
    realm.protect()
    realm.mpcctl_kdc("protect", "--all-users")
    realm.start_kdc()
    try:
        # Warm-up: nonce pools, connections, each circuit's first compilation and the garblings
        # prepared ahead of each shape (a first TGS exchange takes about a second more).
        for mode in ("as", "tgs"):
            kdc_load(build, realm, mode, 3)
        result = {"sequential": sequential, "in_flight_run": throughput}
        for mode in ("as", "tgs"):
            load = kdc_load(build, realm, mode, sequential)
            result[mode] = {"p50_ms": load["p50_ms"], "p99_ms": load["p99_ms"]}
        before = server_counters(cluster)
        load = kdc_load(build, realm, "as", throughput, threads=LOGIN_THREADS)
        after = server_counters(cluster)
        sent = [byte_counter(b) - byte_counter(a) for a, b in zip(before, after)
                if byte_counter(a) is not None and byte_counter(b) is not None]
        exchanges = max(1, load["exchanges"])
        result["as_per_s"] = load.get("per_second")
        result["bytes_per_as_by_server"] = [count / exchanges for count in sent] if len(sent) == 3 else None
        return result
    finally:
        realm.stop()


def ceiling(rate_mbit: float | None, bytes_per_block: float | None) -> float | None:
    """The blocks/s a link of this rate carries at this many payload bytes per block and party
    (each server sends its messages on one link and receives on another)."""
    if rate_mbit is None or not bytes_per_block:
        return None
    return rate_mbit * 1e6 / 8 / bytes_per_block


def ratio(value: float, base: float | None) -> str:
    return "" if not base else f"{value / base:.2f}"


def table(report: dict) -> str:
    lines = ["| link (each direction; round trip) | security | blocks/s | of loopback | link's ceiling, blocks/s | "
             "single block p50 / p99, ms | servers' CPU per block, us | relays' CPU per block, us |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    base = {run["security"]: run["blocks_per_s"] for run in report["runs"]
            if run["link"] == "loopback" and "blocks_per_s" in run}
    for run in report["runs"]:
        if "error" in run and "blocks_per_s" not in run:
            lines.append(f"| {run['link']} | {run['security']} | failed: {run['error'].splitlines()[0][:120]} | | | | | |")
            continue
        single = run["single_block_ms"]
        limit = ceiling(run["rate_mbit"], run["payload_bytes_per_block_per_party"])
        lines.append(
            f"| {run['link']} | {run['security']} | {run['blocks_per_s']:,.0f} | "
            f"{ratio(run['blocks_per_s'], base.get(run['security']))} | {'' if limit is None else f'{limit:,.0f}'} | "
            f"{single['p50']:.2f} / {single['p99']:.2f} | {run['server_cpu_us_per_block']:.2f} | "
            f"{run['relay_cpu_us_per_block']:.2f} |")
    return "\n".join(lines) + "\n"


def login_table(report: dict) -> str:
    lines = ["| link (each direction; round trip) | Kerberos batches | AS p50 / p99, ms | TGS p50 / p99, ms | "
             f"AS exchanges/s ({LOGIN_THREADS} at a time) | payload bytes per AS, servers 1 / 2 / 3 |",
             "|---|---|---:|---:|---:|---:|"]
    for run in report["logins"]:
        if "error" in run:
            lines.append(f"| {run['link']} | {run['krb_evaluation']} | failed: {run['error'].splitlines()[0][:120]} | | | |")
            continue
        sent = run.get("bytes_per_as_by_server")
        rate = "" if run.get("as_per_s") is None else f"{run['as_per_s']:.1f}"
        moved = "" if not sent else " / ".join(f"{count:,.0f}" for count in sent)
        lines.append(f"| {run['link']} | {run['krb_evaluation']} | {run['as']['p50_ms']:.1f} / {run['as']['p99_ms']:.1f} | "
                     f"{run['tgs']['p50_ms']:.1f} / {run['tgs']['p99_ms']:.1f} | {rate} | {moved} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=str(REPO / "build"))
    parser.add_argument("--out", default=str(REPO / "docs" / "benchmarks"))
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--single-jobs", type=int, default=60)
    parser.add_argument("--links", default=",".join(name for name, _, _ in LINKS),
                        help="which of the links to run, by name, comma-separated")
    parser.add_argument("--no-logins", action="store_true", help="AES alone, for a machine without MIT krb5's KDC")
    parser.add_argument("--krb-evaluations", default=",".join(KRB_EVALUATIONS),
                        help="how Kerberos batches run in the login runs: garbled, layered or both")
    parser.add_argument("--no-aes", action="store_true", help="the logins alone")
    args = parser.parse_args()
    os.environ["MPC_BUILD_DIR"] = str(Path(args.build_dir).resolve())
    mpc_cluster.become_subreaper()
    wanted = [name.strip() for name in args.links.split(",")]
    report = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "machine": machine(), "client_threads": THROUGHPUT_THREADS, "job_blocks": THROUGHPUT_BLOCKS,
              "runs": [], "logins": []}
    build = Path(args.build_dir).resolve()
    with tempfile.TemporaryDirectory(prefix="mpc-links-") as workdir:
        for name, rate, rtt in LINKS:
            if name not in wanted:
                continue
            slug = re.sub(r"[^0-9a-z]+", "-", name.lower())
            link = {"link": name, "rate_mbit": rate, "rtt_ms": rtt}
            for security in ([] if args.no_aes else MODES):
                run = on_cluster(Path(workdir) / f"{slug}-{security}", security, rate, rtt, None,
                                 lambda cluster, emulator, root: measure(cluster, emulator, args.seconds,
                                                                         args.single_jobs))
                report["runs"].append({**run, **link, "security": security})
                print(json.dumps(report["runs"][-1]), flush=True)
            for evaluation in ([] if args.no_logins else args.krb_evaluations.split(",")):
                run = on_cluster(Path(workdir) / f"{slug}-logins-{evaluation}", "active", rate, rtt, evaluation,
                                 lambda cluster, emulator, root: measure_logins(cluster, root, build, rtt))
                report["logins"].append({**run, **link, "krb_evaluation": evaluation})
                print(json.dumps(report["logins"][-1]), flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "links.json").write_text(json.dumps(report, indent=2) + "\n")
    info = report["machine"]
    (out / "links.md").write_text(
        "# The engine on shaped links\n\n"
        f"Run {report['date']} on {info.get('cpu')}, {info.get('nproc')} cores, {info.get('simd_path')} path; "
        f"commit {info.get('commit')}. Three servers on one host; every link between two servers through "
        "mpc-link-emulator, as is the link from the KDC's host (the KDC, and the benchmark client in its place) to "
        "each server: each direction of a link carries the rate, the delay is half the round trip. Data links "
        "(AES-256-GCM) between servers and from the client, CurveZMQ for requests. "
        f"Throughput: {THROUGHPUT_THREADS} client threads x {THROUGHPUT_BLOCKS:,}-block jobs, AES-128 (32-AND "
        "S-box); the ceiling is the link's rate over the payload bytes each server sends per block. Written by "
        "tests/bench/links_bench.py (`make bench-links`).\n\n" + table(report) +
        ("\nProtected logins, active security (AS: a protected user's login with a protected krbtgt; TGS: "
         "a service ticket from that TGT):\n\n" + login_table(report) if report["logins"] else ""))
    print(table(report))
    if report["logins"]:
        print(login_table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
