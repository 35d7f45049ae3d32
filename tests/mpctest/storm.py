"""Login storms against the stock krb5kdc and the protected KDC, side by side in one run.

    PYTHONPATH=tests /usr/bin/python3 tests/load/storm.py compare --build-dir build --out docs/benchmarks
    PYTHONPATH=tests /usr/bin/python3 tests/load/storm.py soak --build-dir build --out docs/benchmarks
    PYTHONPATH=tests /usr/bin/python3 tests/load/storm.py plot --out docs/benchmarks

Two realms on loopback, identical but for protection, with the same realm name, the same
principals and the same kdc.conf (and so the same keys: one keytab logs in to both):
  - stock:     krb5kdc over db2, no plugin;
  - protected: krb5kdc over mpc_kdb.so (db2) with mpc_crypto_router.so preloaded and the
               krbtgt key enrolled in a local three-server engine (`mpcctl kdc protect`).
Both run `krb5kdc -w WORKERS`. Every comparison runs twice: with MIT's defaults and tuned
for throughput (disable_last_success and disable_lockout in the dbmodules section, which
spare the database a write per login). The client is tests/load/kdc-storm.

compare: per configuration, a closed-loop storm (fixed concurrency) against each KDC in
alternating rounds, then an open-loop sweep (Poisson arrivals) at fractions of the stock
KDC's closed-loop rate. Writes storm.json, storm.md, per-second CSVs of the closed-loop runs
and three plots (throughput over time, latency CDF, latency against offered load); `plot` draws them
again from storm.json.

soak: minutes of open-loop logins against the protected KDC; each engine server of
--parties (all three by default) is killed in turn and started again after --outage
seconds. With the servers' default degraded_service = "two-party" the other two serve
through every outage: the soak asserts that not one login fails and that the servers
switched modes. With --degraded-service off it counts the failures during the outages and
asserts that every second after recovery is free of them. Writes storm-soak.json, .csv and
.png (storm-soak-off.* with off). With --protected-users the storm users' own keys are in
the engine too (every login runs its Kerberos jobs: preauth decrypt and AS-REP encrypt),
and the files are storm-soak-users*.*. With --deviate FAULT each server is restarted at once as
the test server deviating as MPC_FAULT=FAULT says instead of staying down, and restarted honest
and readmitted after --outage seconds: the soak asserts that the other two held it (served
without it, having excluded it or set it aside, or beside an honest server that is not in its
dispute, in an actively secure pair: docs/threat-model.md, "Who serves") and that not one login
failed, and records when they first did (out_of_service_at_s, a dashed line in the plot)
(storm-soak*-deviating.*; `make soak-deviating`). tests/load/deviations.py runs one such soak
per fault hook of the test server (`make soak-deviations`).

Every run checks the generator's count of successful logins against the KDC's own
(AS_REQ ... ISSUE lines in its log), and records CPU per login of the generator, the KDC
processes and the engine servers (utime + stime from /proc/PID/stat).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import tempfile
import time
from pathlib import Path

from mpctest import mpc_cluster
from mpctest.bench import cpu_seconds, median
from mpctest.krb5_realm import Realm
from mpctest.prometheus_server import scrape, serve_metrics, wait_for_pair_stock
from mpctest.protected_kdc import ProtectedRealm, kdc_pids

REPO = Path(__file__).resolve().parents[2]

PASSWORD = "storm-login-pw"
PREFIX = "storm"
SERVICE = "svc/storm.test"
TUNED = {"disable_last_success": "true", "disable_lockout": "true"}
CONFIGS = {"defaults": {}, "tuned": TUNED}


def storm_binary() -> Path:
    return mpc_cluster.build_dir() / "tests" / "load" / "kdc-storm"


# ---- measuring ------------------------------------------------------------------------

def cpu_of(pids: list[int]) -> dict[int, float]:
    return {pid: cpu_seconds(pid) for pid in pids}


def cpu_used(before: dict[int, float], after: dict[int, float]) -> float:
    return sum(after[pid] - before.get(pid, 0.0) for pid in after)


def issued(log_text: str, request: str = "AS_REQ") -> int:
    """Requests the KDC logged as answered with a ticket."""
    return sum(1 for line in log_text.splitlines() if request in line and ": ISSUE:" in line)


# ---- realms -----------------------------------------------------------------------------

def add_principals(realm: Realm, count: int, prefix: str = PREFIX, password: str = PASSWORD) -> None:
    """count principals in one kadmin.local session (one process, not one per principal)."""
    script = "".join(f"addprinc +requires_preauth -pw {password} {prefix}{i}\n" for i in range(count))
    script += f"addprinc -randkey {SERVICE}\n"
    result = subprocess.run(["kadmin.local", "-r", realm.realm], input=script, env=realm.env,
                            cwd=realm.root, capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        raise RuntimeError(f"kadmin.local exited {result.returncode}: {result.stderr[-2000:]}")
    listed = realm.kadmin_local(f"listprincs {prefix}*").stdout.split()
    if len([p for p in listed if p.startswith(prefix)]) != count:
        raise RuntimeError(f"expected {count} principals {prefix}*, kadmin.local lists {len(listed)}")


def make_keytab(realm: Realm, path: Path, count: int, prefix: str = PREFIX,
                password: str = PASSWORD) -> Path:
    path.unlink(missing_ok=True)
    subprocess.run([str(storm_binary()), "keytab", "--out", str(path), "--prefix", prefix,
                    "--count", str(count), "--password", password], env=realm.env, check=True,
                   timeout=600)
    return path


def configure(realm: Realm, config: dict[str, str]) -> None:
    realm.write_config(extra_dbmodule=config)


class Target:
    """One KDC under test and what is measured around each storm against it."""

    def __init__(self, name: str, realm: Realm, cluster: mpc_cluster.Cluster | None = None):
        self.name = name
        self.realm = realm
        self.cluster = cluster

    def kdc_processes(self) -> list[int]:
        return kdc_pids(self.realm.kdc_pid())

    def engine_processes(self) -> list[int]:
        if self.cluster is None:
            return []
        return [pid for pid in (self.cluster.server_pid(p) for p in (1, 2, 3)) if pid]

    def storm(self, keytab: Path, args: list[str], csv: Path | None = None,
              timeout: float = 900) -> dict:
        """Runs kdc-storm against this KDC; the summary plus the KDC's own count and CPU."""
        command = [str(storm_binary()), "run", "--keytab", str(keytab), "--quiet", *args]
        if csv is not None:
            command += ["--csv", str(csv)]
        log_before = len(self.realm.kdc_log())
        kdc_before = cpu_of(self.kdc_processes())
        engine_before = cpu_of(self.engine_processes())
        result = subprocess.run(command, env=self.realm.env, capture_output=True, text=True,
                                timeout=timeout)
        kdc_after = cpu_of(self.kdc_processes())
        engine_after = cpu_of(self.engine_processes())
        if result.returncode not in (0, 1) or not result.stdout.strip():
            raise RuntimeError(f"kdc-storm {' '.join(args)} exited {result.returncode}:\n"
                               f"{result.stderr[-3000:]}")
        summary = json.loads(result.stdout)
        logins = max(summary["ok"] + summary["failed"], 1)
        summary["kdc_issued"] = issued(self.realm.kdc_log()[log_before:])
        summary["kdc_cpu_seconds"] = cpu_used(kdc_before, kdc_after)
        summary["kdc_cpu_us_per_login"] = summary["kdc_cpu_seconds"] * 1e6 / logins
        summary["engine_cpu_seconds"] = cpu_used(engine_before, engine_after)
        summary["engine_cpu_us_per_login"] = summary["engine_cpu_seconds"] * 1e6 / logins
        return summary


class Bench:
    """An engine cluster and the two realms, with principals and one keytab for both."""

    def __init__(self, root: Path, principals: int, workers: int, protect_users: bool = False,
                 degraded_service: str = "two-party"):
        self.root = root
        self.workers = workers
        self.protect_users = protect_users
        self.cluster = mpc_cluster.Cluster(root / "cluster", degraded_service=degraded_service)
        self.stock = Realm(root / "stock", backend="db2")
        self.protected = ProtectedRealm(root / "protected", self.cluster, enrol_users=protect_users)
        self.targets = [Target("stock", self.stock), Target("protected", self.protected, self.cluster)]
        self.principals = principals
        self.keytab = root / "storm.keytab"
        self.metrics: dict[int, str] = {}  # each engine server's metrics endpoint, on loopback

    def __enter__(self) -> "Bench":
        try:
            self.cluster.init()
            self.metrics = serve_metrics(self.cluster)
            self.cluster.start()
            for realm in (self.stock, self.protected):
                realm.create()
                add_principals(realm, self.principals)
            self.protected.protect()
            if self.protect_users:
                # Every storm user's keys go to the engine: logins then run its Kerberos jobs.
                self.protected.mpcctl_kdc("protect", "--all-users")
            make_keytab(self.stock, self.keytab, self.principals)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stock.stop()
        self.protected.stop()
        self.cluster.stop()

    def start(self, config: dict[str, str]) -> None:
        for realm in (self.stock, self.protected):
            if realm.kdc_running():
                realm.stop_kdc()
            configure(realm, config)
            realm.start_kdc(workers=self.workers)


def check_counts(label: str, summary: dict) -> None:
    """The KDC's count of tickets issued against the generator's count of logins. They are
    equal when nothing failed; after timeouts the KDC may have answered requests the
    generator had given up on, never the other way round."""
    if summary["kdc_issued"] != summary["ok"] and (summary["failed"] == 0 or
                                                   summary["kdc_issued"] < summary["ok"]):
        raise AssertionError(f"{label}: kdc-storm counted {summary['ok']} logins, the KDC logged "
                             f"{summary['kdc_issued']} AS_REQ ISSUE lines")


def machine() -> dict:
    try:
        model = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                     if line.startswith("model name"))
    except (OSError, StopIteration):
        model = platform.processor()
    return {"cpus": os.cpu_count(), "cpu_model": model, "platform": platform.platform(),
            "load_average_at_start": os.getloadavg()}


# ---- compare ----------------------------------------------------------------------------

def compare(args: argparse.Namespace) -> None:
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    started = machine()
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="kdc-storm-") as tmp, \
            Bench(Path(tmp), args.principals, args.workers) as bench:
        for config_name, config in CONFIGS.items():
            bench.start(config)
            runs: dict[str, dict] = {t.name: {"closed": [], "open": []} for t in bench.targets}
            for target in bench.targets:   # warm-up: workers, engine connections, caches
                target.storm(bench.keytab, ["--concurrency", "8", "--duration", "1"])
            for round_index in range(args.rounds):
                for target in bench.targets:
                    csv = Path(tmp) / f"{config_name}-{target.name}-{round_index}.csv"
                    summary = target.storm(bench.keytab, ["--concurrency", str(args.concurrency),
                                                          "--duration", str(args.seconds)], csv=csv)
                    check_counts(f"{config_name} {target.name} closed", summary)
                    summary["csv"] = csv.read_text()
                    runs[target.name]["closed"].append(summary)
                    print(f"{config_name:8} {target.name:9} closed c={args.concurrency}: "
                          f"{summary['per_second']:8.1f} logins/s p50 {summary['p50_ms']:.2f} ms "
                          f"p99 {summary['p99_ms']:.2f} ms failed {summary['failed']}", flush=True)
            stock_rate = median([r["per_second"] for r in runs["stock"]["closed"]])
            for fraction in args.loads:
                rate = max(1.0, round(stock_rate * fraction))
                for target in bench.targets:
                    summary = target.storm(bench.keytab, ["--rate", str(rate), "--duration",
                                                          str(args.open_seconds)])
                    check_counts(f"{config_name} {target.name} open {rate}", summary)
                    summary["load_fraction"] = fraction
                    runs[target.name]["open"].append(summary)
                    print(f"{config_name:8} {target.name:9} open {rate:7.0f}/s: "
                          f"{summary['per_second']:8.1f} logins/s p50 {summary['p50_ms']:.2f} ms "
                          f"p99 {summary['p99_ms']:.2f} ms failed {summary['failed']} "
                          f"unstarted {summary['unstarted']}", flush=True)
            results[config_name] = runs

    report = summarise(results, args, started)
    write_outputs(out, report)


def summarise(results: dict, args: argparse.Namespace, started: dict) -> dict:
    variants = {}
    for config_name, runs in results.items():
        for kdc, kinds in runs.items():
            closed = kinds["closed"]
            best = sorted(closed, key=lambda r: r["per_second"])[len(closed) // 2]
            variants[f"{kdc}-{config_name}"] = {
                "kdc": kdc, "config": config_name,
                "logins_per_second": best["per_second"],
                "logins_per_second_rounds": [r["per_second"] for r in closed],
                "p50_ms": best["p50_ms"], "p99_ms": best["p99_ms"],
                "failed": sum(r["failed"] for r in closed),
                "ok": sum(r["ok"] for r in closed + kinds["open"]),
                "kdc_issued": sum(r["kdc_issued"] for r in closed + kinds["open"]),
                "kdc_issued_equals_ok_where_none_failed": all(
                    r["kdc_issued"] == r["ok"] for r in closed + kinds["open"] if r["failed"] == 0),
                "generator_cheaper_than_kdc": all(r["cpu_us_per_login"] < r["kdc_cpu_us_per_login"]
                                                  for r in closed),
                "generator_cpu_us_per_login": best["cpu_us_per_login"],
                "kdc_cpu_us_per_login": best["kdc_cpu_us_per_login"],
                "engine_cpu_us_per_login": best["engine_cpu_us_per_login"],
                "closed": best,
                "open": kinds["open"],
            }
    base = variants["stock-defaults"]["logins_per_second"]
    for name, v in variants.items():
        same = variants[f"stock-{v['config']}"]["logins_per_second"]
        v["ratio_to_stock_same_config"] = v["logins_per_second"] / same
        v["ratio_to_stock_defaults"] = v["logins_per_second"] / base
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": started,
        "load_average_at_end": os.getloadavg(),
        "method": {"workers": args.workers, "principals": args.principals,
                   "closed_concurrency": args.concurrency, "closed_seconds": args.seconds,
                   "rounds": args.rounds, "statistic": "median of alternating rounds",
                   "open_seconds": args.open_seconds,
                   "open_loads_as_fraction_of_stock": args.loads,
                   "preauth": "encrypted timestamp (+requires_preauth), keytab keys",
                   "configs": CONFIGS},
        "variants": variants,
    }


def write_outputs(out: Path, report: dict) -> None:
    variants = report["variants"]
    for name, v in variants.items():
        (out / f"storm-{name}.csv").write_text(v["closed"].pop("csv"))
        for r in v["open"]:
            r.pop("latency_quantiles_ms", None)
    (out / "storm.json").write_text(json.dumps(report, indent=1) + "\n")
    m = report["method"]
    lines = ["| variant | logins/s | ratio to stock (same conf) | ratio to stock defaults | "
             "p50 ms | p99 ms | generator CPU µs/login | KDC CPU µs/login | engine CPU µs/login | "
             "failed logins | KDC ISSUE count = logins (runs without failures) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for name, v in variants.items():
        lines.append(f"| {name} | {v['logins_per_second']:.0f} | {v['ratio_to_stock_same_config']:.2f} | "
                     f"{v['ratio_to_stock_defaults']:.2f} | {v['p50_ms']:.2f} | {v['p99_ms']:.2f} | "
                     f"{v['generator_cpu_us_per_login']:.0f} | {v['kdc_cpu_us_per_login']:.0f} | "
                     f"{v['engine_cpu_us_per_login']:.0f} | {v['failed']} | "
                     f"{'yes' if v['kdc_issued_equals_ok_where_none_failed'] else 'NO'} |")
    lines += ["", "Open loop (Poisson arrivals), offered rate against achieved rate and latency:", "",
              "| variant | offered/s | achieved/s | p50 ms | p99 ms | failed | unstarted |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    for name, v in variants.items():
        for r in v["open"]:
            lines.append(f"| {name} | {r['offered_per_second']:.0f} | {r['per_second']:.0f} | "
                         f"{r['p50_ms']:.2f} | {r['p99_ms']:.2f} | {r['failed']} | {r['unstarted']} |")
    table = "\n".join(lines)
    mach = report["machine"]
    (out / "storm.md").write_text(
        f"# Login storms: stock krb5kdc against the protected KDC\n\n"
        f"{report['date']}, {mach['cpus']} CPUs ({mach['cpu_model']}), load average "
        f"{mach['load_average_at_start'][0]:.2f} at the start; krb5kdc -w {m['workers']}, "
        f"{m['principals']} principals, {m['preauth']}; closed loop {m['closed_concurrency']} "
        f"logins in flight for {m['closed_seconds']} s, {m['statistic']} of {m['rounds']}; "
        f"open loop {m['open_seconds']} s per point. Client tests/load/kdc-storm "
        f"(tests/load/storm.py compare).\n\n{table}\n")
    plot(out, report)
    print(table)
    dearer = [name for name, v in variants.items() if not v["generator_cheaper_than_kdc"]]
    if dearer:
        raise SystemExit(f"kdc-storm spent more CPU per login than the KDC it drove: {dearer}")


def plot(out: Path, report: dict) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    variants = report["variants"]
    styles = {"stock": "-", "protected": "--"}
    colours = {"defaults": "tab:blue", "tuned": "tab:orange"}

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for name, v in variants.items():
        # Whole seconds of arrivals only: the last, partial second holds just the drain.
        full = int(v["closed"]["active_seconds"])
        ax.plot(range(full), v["closed"]["per_second_ok"][:full], styles[v["kdc"]],
                color=colours[v["config"]], label=name, marker=".")
    ax.set_xlabel("second of the run")
    ax.set_ylabel("successful logins per second")
    ax.set_title(f"Closed loop, {report['method']['closed_concurrency']} logins in flight")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "storm-throughput.png", dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for name, v in variants.items():
        q = v["closed"]["latency_quantiles_ms"]
        ax.plot(q, [i / (len(q) - 1) for i in range(len(q))], styles[v["kdc"]],
                color=colours[v["config"]], label=name)
    ax.set_xscale("log")
    ax.set_xlabel("login latency (ms), AS exchange with preauth")
    ax.set_ylabel("fraction of logins")
    ax.set_title("Latency CDF, closed loop")
    ax.grid(alpha=0.3, which="both")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "storm-latency-cdf.png", dpi=110)
    plt.close(fig)

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
    for name, v in variants.items():
        offered = [r["offered_per_second"] for r in v["open"]]
        left.plot(offered, [r["p50_ms"] for r in v["open"]], styles[v["kdc"]],
                  color=colours[v["config"]], marker="o", label=f"{name} p50")
        left.plot(offered, [r["p99_ms"] for r in v["open"]], styles[v["kdc"]],
                  color=colours[v["config"]], marker="x", alpha=0.5, label=f"{name} p99")
        right.plot(offered, [r["per_second"] for r in v["open"]], styles[v["kdc"]],
                   color=colours[v["config"]], marker="o", label=name)
    left.set_yscale("log")
    left.set_xscale("log")
    right.set_xscale("log")
    left.set_xlabel("offered logins/s (Poisson)")
    left.set_ylabel("latency (ms)")
    left.set_title("Latency against offered load")
    left.grid(alpha=0.3, which="both")
    left.legend(fontsize=7)
    right.set_xlabel("offered logins/s (Poisson)")
    right.set_ylabel("achieved logins/s")
    right.set_title("Achieved against offered")
    right.grid(alpha=0.3)
    right.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "storm-latency-load.png", dpi=110)
    plt.close(fig)


# ---- soak -------------------------------------------------------------------------------

def soak(args: argparse.Namespace) -> None:
    report, rows, ok, failed = run_soak(args)
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    degraded = args.degraded_service == "two-party"
    name = (("storm-soak-users" if args.protected_users else "storm-soak") + ("" if degraded else "-off") +
            ("-deviating" if args.deviate else ""))
    (out / f"{name}.json").write_text(json.dumps(report, indent=1) + "\n")
    (out / f"{name}.csv").write_text(rows)
    plot_soak(out / f"{name}.png", report, ok, failed)
    print(json.dumps({k: report[k] for k in ("killed_at_s", "restarted_at_s", "failures_during_outage",
                                             "errors", "kdc_errors", "first_failed_second",
                                             "last_failed_second", "failures_end_after_restart_s",
                                             "checks")}, indent=1))
    checks = report["checks"]
    if not all(checks.values()):
        raise SystemExit(f"soak: failed checks: {[k for k, v in checks.items() if not v]}")


def run_soak(args: argparse.Namespace) -> tuple[dict, str, list[int], list[int]]:
    """One soak: its report, its per-second CSV, and the successful and failed logins per second."""
    started = machine()
    parties = args.parties
    degraded = args.degraded_service == "two-party"
    # Even gaps before, between and after the outages.
    gap = (args.seconds - len(parties) * args.outage) / (len(parties) + 1)
    if gap <= 2:
        raise SystemExit("soak: --seconds too short for the outages asked for")
    with tempfile.TemporaryDirectory(prefix="kdc-soak-") as tmp, \
            Bench(Path(tmp), args.principals, args.workers, args.protected_users, args.degraded_service) as bench:
        bench.start(CONFIGS[args.config])
        target = bench.targets[1]
        target.storm(bench.keytab, ["--concurrency", "8", "--duration", "1"])
        kdc_pid = bench.protected.kdc_pid()
        csv = Path(tmp) / "soak.csv"
        # Over TCP, as operators are told to: a pair's logins take over the second after which a
        # UDP request is resent, and the KDC's other workers would serve each copy again.
        command = [str(storm_binary()), "run", "--keytab", str(bench.keytab), "--quiet",
                   "--rate", str(args.rate), "--duration", str(args.seconds), "--csv", str(csv),
                   "--transport", "tcp", "--timeout", str(args.login_timeout), "--seed", "1"]
        log_before = len(bench.protected.kdc_log())
        storm = subprocess.Popen(command, env=bench.protected.env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        t0 = time.monotonic()
        outages = []
        switches = {}
        # --deviate: how the others held each deviating server at the end (`held`), or "not
        # reached" when no job reached its deviation.
        exclusions = []
        try:
            for party in parties:
                kill_at = (outages[-1][2] if outages else 0.0) + gap  # a gap after the last restart
                time.sleep(max(0.0, t0 + kill_at - time.monotonic()))
                if degraded:
                    # The pair that is to serve has made its AND material ahead, as it has in a
                    # deployment between outages; after a restart that takes a while on 2 cores.
                    latest = t0 + args.seconds - args.outage - 2.0
                    wait_for_pair_stock(bench.metrics, party, args.pair_stock, latest)
                others = [p for p in (1, 2, 3) if p != party]
                aborts_before = aborts_counted(bench.metrics, others)
                bench.cluster.kill_server(party)
                if args.deviate:
                    # Restarted at once, deviating as the fault says: the others must find it out.
                    bench.cluster.restart_server(party, fault=args.deviate)
                killed = time.monotonic() - t0
                print(f"soak: engine server {party} {'deviating' if args.deviate else 'killed'} from {killed:.1f} s",
                      flush=True)
                # --deviate: when the others first hold it (`held`: they serve without it, or
                # beside an honest server that is not in its dispute), looked at twice a second.
                out_of_service = None
                outage_ends = time.monotonic() + args.outage
                while time.monotonic() < outage_ends:
                    if args.deviate and out_of_service is None and (how := held(bench.cluster, party)):
                        out_of_service = time.monotonic() - t0
                        print(f"soak: engine server {party} held ({how}) at {out_of_service:.1f} s", flush=True)
                    time.sleep(max(0.0, min(0.5, outage_ends - time.monotonic())))
                switches.update(bench.cluster.mode_switches())
                aborts_after = aborts_counted(bench.metrics, others)
                aborted = {p: aborts_after[p] - aborts_before[p] for p in others
                           if p in aborts_before and p in aborts_after}
                if args.deviate:
                    # A deviation no job reached (a hook of a job kind this soak's logins do not
                    # run) is recorded as such, not as held.
                    how = held(bench.cluster, party)
                    exercised = how is not None or any(n > 0 for n in aborted.values())
                    exclusions.append(how if exercised else "not reached")
                    bench.cluster.kill_server(party)
                bench.cluster.restart_server(party)
                if args.deviate:
                    bench.cluster.mpcctl("cluster", "readmit", str(party), "--cluster",
                                         str(bench.cluster.admin_config))
                restarted = time.monotonic() - t0
                print(f"soak: engine server {party} started again at {restarted:.1f} s", flush=True)
                outages.append((party, killed, restarted, out_of_service, aborted))
            stdout, stderr = storm.communicate(timeout=args.seconds + 120)
            for party, count in bench.cluster.mode_switches().items():
                switches[party] = max(switches.get(party, 0), count)
        finally:
            if storm.poll() is None:
                storm.kill()
                storm.wait()
        summary = json.loads(stdout)
        summary["kdc_issued"] = issued(bench.protected.kdc_log()[log_before:])
        kdc_same = bench.protected.kdc_running() and bench.protected.kdc_pid() == kdc_pid
        rows = csv.read_text()
        # What the crypto router said (refusals, dropped pools): the why of any failure.
        router_lines = [line for line in (bench.protected.root / "krb5kdc.stderr").read_text(errors="replace")
                        .splitlines() if "mpc_crypto_router" in line]

    seconds = [dict(zip(rows.splitlines()[0].split(","), line.split(",")))
               for line in rows.splitlines()[1:]]
    failed = [int(s["failed"]) for s in seconds]
    ok = [int(s["ok"]) for s in seconds]
    offered = [int(s["offered"]) for s in seconds]
    killed = outages[0][1]
    restarted = outages[-1][2]
    # A login that arrived during an outage fails up to --login-timeout seconds later.
    recovered_by = restarted + args.login_timeout + args.recovery
    outside = [i for i, f in enumerate(failed) if f and not (killed - 1 <= i <= recovered_by)]
    after = [i for i in range(len(seconds)) if recovered_by < i < args.seconds - 1]
    last_failed = max((i for i, f in enumerate(failed) if f), default=None)
    checks = {
        # Requests queued in the KDC during the outage may be answered after kdc-storm gave
        # up on them: the KDC then issued a ticket nobody counted, never the other way round.
        "kdc_issued_every_counted_login": summary["kdc_issued"] >= summary["ok"],
        "every_login_accounted": summary["ok"] + summary["failed"] + summary["unstarted"] == summary["offered"],
        "kdc_process_unchanged": kdc_same,
    }
    if degraded:
        # The other two serve through each outage: not one login fails, and every server that
        # saw another go and come back switched modes (twice per outage it lived through).
        checks["no_failed_login"] = summary["failed"] == 0 and summary["unstarted"] == 0
        if not args.deviate:
            checks["mode_switches_seen"] = bool(switches) and all(count >= 2 for count in switches.values())
        else:
            checks["deviating_server_held"] = bool(exclusions) and all(exclusions)
    else:
        checks["logins_after_recovery"] = sum(ok[i] for i in after) >= 0.9 * sum(offered[i] for i in after) > 0
        checks["failures_only_during_outage"] = not outside
        checks["no_failure_after_recovery"] = all(failed[i] == 0 for i in after)
        checks["outage_was_seen"] = summary["failed"] > 0
    report = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": started,
        "method": {"rate": args.rate, "seconds": args.seconds, "parties": parties,
                   "degraded_service": args.degraded_service, "deviate": args.deviate,
                   "protected_users": args.protected_users,
                   "outage_seconds": args.outage, "recovery_allowance_seconds": args.recovery,
                   "login_timeout_seconds": args.login_timeout,
                   "workers": args.workers, "principals": args.principals, "config": args.config},
        "killed_at_s": killed, "restarted_at_s": restarted,
        "outages": [{"party": p, "killed_at_s": k, "restarted_at_s": r,
                     # Jobs each other server counted aborted (mpc_aborts_total) during the outage.
                     "jobs_aborted_by_server": {str(q): int(n) for q, n in a.items()}} |
                    ({"out_of_service_at_s": o,
                      "out_of_service_after_s": None if o is None else o - k,
                      "held": exclusions[i] if i < len(exclusions) else None} if args.deviate else {})
                    for i, (p, k, r, o, a) in enumerate(outages)],
        "latency_by_phase": latency_by_phase(seconds, outages, args.login_timeout),
        "mode_switches": switches,
        "failures_during_outage": sum(failed), "errors": summary["errors"],
        "kdc_errors": summary["kdc_errors"], "first_errors": summary["first_errors"],
        "first_failed_second": next((i for i, f in enumerate(failed) if f), None),
        "last_failed_second": last_failed,
        "failures_end_after_restart_s": (last_failed + 1 - restarted) if last_failed is not None else None,
        "checks": checks, "summary": {k: v for k, v in summary.items() if k != "latency_quantiles_ms"},
        "router_log": router_lines[-40:],
    }
    return report, rows, ok, failed


def aborts_counted(endpoints: dict[int, str], parties: list[int]) -> dict[int, float]:
    """Each listed server's mpc_aborts_total, all checks together; a server not answering is left out."""
    counted = {}
    for party in parties:
        try:
            samples = scrape(endpoints[party])[0]
        except OSError:
            continue
        counted[party] = sum(v for k, v in samples.items() if k.startswith("mpc_aborts_total"))
    return counted


def latency_by_phase(seconds: list[dict], outages: list, login_timeout: float) -> dict:
    """p50 and p99 of the logins that succeeded before the first outage, during the outages
    (each from its start to its end) and after the last one (from login_timeout past its end),
    from kdc-storm's per-second p50: at the soak's rate of about one login a second, a second's
    p50 is its login's latency. Seconds with two logins or more count their p50 once."""
    def quantiles(values: list[float]) -> dict:
        if not values:
            return {"logins": 0}
        values = sorted(values)
        pick = lambda q: values[min(len(values) - 1, int(q * len(values)))]
        return {"logins": len(values), "p50_ms": pick(0.5), "p99_ms": pick(0.99)}

    first, last = outages[0][1], outages[-1][2]
    during = lambda i: any(k <= i < r for _, k, r, *_ in outages)
    phases = {"before": [], "during": [], "after": []}
    for i, second in enumerate(seconds):
        if int(second["ok"]) == 0:
            continue
        if i < first:
            phases["before"].append(float(second["p50_ms"]))
        elif during(i):
            phases["during"].append(float(second["p50_ms"]))
        elif i >= last + login_timeout:
            phases["after"].append(float(second["p50_ms"]))
    return {phase: quantiles(values) for phase, values in phases.items()}


def disputed_with(line: str) -> set[int]:
    """The servers a status line holds disputes with ("disputes D (with server 1, server 3; ...")."""
    found = re.search(r"\(with ([^;)]*)", line)
    return {int(n) for n in re.findall(r"server (\d)", found[1])} if found else set()


def without(cluster, party: int) -> bool:
    """Both servers other than `party` serve as a pair without it for what it did: they excluded
    it, hold a dispute with it, or suspended three-party service (`mpcctl cluster status`). Not
    for being down a moment, as at its restart."""
    lines = cluster.status_lines()
    return all(f"two-party without server {party}" in lines.get(other, "") and
               (f"excluded server {party}" in lines[other] or party in disputed_with(lines[other]) or
                "three-party service suspended" in lines[other])
               for other in (1, 2, 3) if other != party)


def held(cluster, party: int) -> str | None:
    """How the others hold `party` for what it did (docs/threat-model.md, "Who serves"):
    - "without": they serve as a pair without it (`without`);
    - "beside": one of them holds it in a dispute, and the cluster serves as the pair of `party`
      and the third server, which both in that dispute asked for and which took the
      lower-numbered: an actively secure pair, where it cannot change a result and its next
      deviation is its second dispute;
    - "suspended": both others suspended three-party service for a check that names nobody (a
      client's report), and the cluster serves as an actively secure pair;
    None otherwise."""
    if without(cluster, party):
        return "without"
    lines = cluster.status_lines()
    others = [p for p in (1, 2, 3) if p != party]
    for accuser in others:
        if party not in disputed_with(lines.get(accuser, "")):
            continue
        if all(f"two-party without server {accuser}" in lines.get(p, "") for p in (1, 2, 3) if p != accuser):
            return "beside"
    if all("three-party service suspended" in lines.get(p, "") for p in others) and \
            any(f"two-party without server {p}" in lines.get(party, "") for p in others):
        return "suspended"
    return None


def plot_soak(path: Path, report: dict, ok: list[int], failed: list[int]) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4))
    full = int(report["method"]["seconds"])
    xs = list(range(min(full, len(ok))))
    ax.plot(xs, ok[:len(xs)], label="successful logins/s")
    ax.plot(xs, failed[:len(xs)], label="failed logins/s", color="tab:red")
    for index, outage in enumerate(report["outages"]):
        deviating = report["method"].get("deviate")
        ax.axvspan(outage["killed_at_s"], outage["restarted_at_s"], color="grey", alpha=0.1 + 0.1 * index,
                   label=f"engine server {outage['party']} {'deviating' if deviating else 'down'}")
        if outage.get("out_of_service_at_s") is not None:
            ax.axvline(outage["out_of_service_at_s"], color="black", linestyle="--", linewidth=1,
                       label="the others hold it" if index == 0 else None)
    ax.set_xlabel("second of the run")
    ax.set_ylabel("logins per second")
    whose = "krbtgt and users' keys" if report["method"].get("protected_users") else "krbtgt key"
    ax.set_title(f"Soak, protected KDC ({whose} in the engine), {report['method']['rate']} logins/s offered (Poisson)")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--build-dir", default=os.environ.get("MPC_BUILD_DIR", "build"))
    common.add_argument("--out", default="docs/benchmarks")
    common.add_argument("--principals", type=int, default=1000)
    common.add_argument("--workers", type=int, default=2, help="krb5kdc -w, the same for both")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("compare", parents=[common])
    c.add_argument("--concurrency", type=int, default=64)
    c.add_argument("--seconds", type=float, default=8)
    c.add_argument("--rounds", type=int, default=3)
    c.add_argument("--open-seconds", type=float, default=5)
    c.add_argument("--loads", type=float, nargs="+", default=[0.05, 0.1, 0.2, 0.5, 1.0],
                   help="open-loop rates, as fractions of the stock KDC's closed-loop rate")
    sub.add_parser("plot", parents=[common],
                   help="draws the compare plots again from OUT/storm.json")
    s = sub.add_parser("soak", parents=[common])
    s.add_argument("--seconds", type=float, default=180)
    s.add_argument("--rate", type=float, default=1,
                   help="offered logins/s: keep it within what two servers serve alone on the "
                        "machine. An actively secure pair (the default) on 2 cores shared with "
                        "the KDC and the generator serves about 1.3 krbtgt-only logins/s, and "
                        "about 0.5 with --protected-users")
    s.add_argument("--pair-stock", type=float, default=400_000,
                   help="entries of AND material the pair that is to serve must hold made ahead "
                        "before each kill (mpc_pair_entries_ahead)")
    s.add_argument("--outage", type=float, default=20)
    s.add_argument("--recovery", type=float, default=5,
                   help="seconds after the restart, beyond --login-timeout, within which "
                        "logins must work again")
    s.add_argument("--login-timeout", type=float, default=5,
                   help="kdc-storm --timeout: how long one login may take")
    s.add_argument("--parties", type=int, nargs="+", default=[1, 2, 3], choices=(1, 2, 3),
                   help="the engine servers killed and restarted, one after the other")
    s.add_argument("--degraded-service", choices=("two-party", "off"), default="two-party",
                   help="the servers' degraded_service: two-party (no login may fail) or off "
                        "(logins fail during each outage and only then)")
    s.add_argument("--deviate", metavar="FAULT",
                   help="instead of killing each server, restart it as the test server deviating "
                        "as MPC_FAULT=FAULT says (e.g. and-share-bit=2,auth2-step=0): the others "
                        "must serve without it and no login may fail; it is then restarted honest "
                        "and readmitted")
    s.add_argument("--config", choices=sorted(CONFIGS), default="tuned")
    s.add_argument("--protected-users", action="store_true",
                   help="enrol the storm users' keys in the engine too (use fewer --principals)")
    return parser


def prepare(args: argparse.Namespace) -> None:
    """The build the run uses, its binaries checked; this process reaps the servers' children."""
    build = Path(args.build_dir)
    os.environ["MPC_BUILD_DIR"] = str(build if build.is_absolute() else (REPO / build).resolve())
    for binary in (storm_binary(), mpc_cluster.mpcctl_binary(), mpc_cluster.server_binary()):
        if not binary.is_file():
            raise SystemExit(f"{binary} not built (make build BUILD_DIR=...)")
    mpc_cluster.become_subreaper()


def main() -> None:
    args = build_parser().parse_args()
    prepare(args)
    if args.command == "compare":
        compare(args)
    elif args.command == "plot":
        plot(Path(args.out).resolve(), json.loads((Path(args.out) / "storm.json").read_text()))
    else:
        soak(args)


if __name__ == "__main__":
    main()
