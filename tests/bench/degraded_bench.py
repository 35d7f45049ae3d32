#!/usr/bin/env python3
"""Two-of-three service: what a server going down costs the jobs of a login.

    PYTHONPATH=tests /usr/bin/python3 tests/bench/degraded_bench.py --build-dir build --out docs/benchmarks

Two local three-server clusters (degraded_service = "two-party") on loopback, links encrypted
as always, driven through libmpcclient: one of security = "active" (the default: the pair
serving while a server is down runs authenticated garbling) and one of "passive" (the pair
garbles semi-honestly), one after the other in one run. Measures for each:
  - the jobs of one protected-user login (preauth decryption, usage 1; AS-REP encryption,
    usage 3; a krbtgt ticket seal: GCM nonce with its two-block ticket key, then its tag) one
    after the other: latency p50/p99 and logins/s, with all three servers and with one down;
    the ticket's nonce with AES_K masks and with local masks (docs/ticket-format.md), which
    an actively secure pair refuses;
  - a TGS's open of a TGT sealed while all three served (the nonce with AES_K masks or with
    local masks), with all three and with one down;
  - the switch time: from the kill of a server to the first of those jobs served by the other
    two (the client retries meanwhile), for each server in turn, `--rounds` times; under
    "active" once the pair's AND material made ahead is ready (mpc_pair_entries_ahead at its
    leader, which a deployment reaches within seconds of any idle time), its amount recorded.
Writes OUT/degraded.json and OUT/degraded.md and prints the table.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import secrets
import statistics
import tempfile
import time
from pathlib import Path

from mpctest import mpc_cluster, gcm_client as gcm
from mpctest.krb_client import ENCTYPES, Engine, K5Crypto, wait_until_krb_serving
from mpctest.prometheus_server import scrape, serve_metrics
from mpctest.bench import machine

REPO = Path(__file__).resolve().parents[2]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(q * len(ordered) + 0.5)) - 1))]


class Login:
    """The engine's part of one protected-user login."""

    def __init__(self, cluster: mpc_cluster.Cluster, k5: K5Crypto):
        algorithm, _, self.krb5_enctype, _, size = ENCTYPES["aes256"]
        self.user_key = secrets.token_bytes(size)
        self.key_id = ("bench/user@EXAMPLE.COM", 1, algorithm)
        admin = Engine(cluster.admin_config)
        admin.import_key(*self.key_id, self.user_key)
        admin.close()
        gcm.import_gcm_key(cluster)
        self.krb = Engine(cluster.compute_config, timeout_ms=30000)
        self.gcm = gcm.Engine(cluster.compute_config, timeout_ms=30000)
        self.k5 = k5
        wait_until_krb_serving(self.krb, self.key_id)
        gcm.wait_until_gcm_serving(self.gcm)
        self.timestamp = k5.encrypt(self.krb5_enctype, self.user_key, 1, secrets.token_bytes(26))

    def run(self, local: bool = False) -> None:
        self.krb.decrypt(self.key_id, 1, self.timestamp)
        self.krb.encrypt(self.key_id, 3, secrets.token_bytes(220))
        self.seal(local)

    def seal(self, local: bool) -> tuple[bytes, bytes, bytes]:
        """A TGT seal (docs/ticket-format.md): the ticket is encrypted under the nonce's key
        here, and the tag covers it as associated data with 32 zero bytes of text.
        (nonce, AAD, 32 zero bytes || tag)."""
        [(nonce, ticket_key)] = self.gcm.prefetch(1, 2, local=local)
        aad = secrets.token_bytes(305)
        return nonce, aad, gcm.seal(self.gcm, nonce, ticket_key, ticket_key, aad)

    def open(self, ticket: tuple[bytes, bytes, bytes]) -> None:
        nonce, aad, sealed = ticket
        self.gcm.open(nonce, aad, sealed[:-16], sealed[-16:])

    def close(self) -> None:
        self.krb.close()
        self.gcm.close()


def timed(call, count: int) -> dict:
    latencies = []
    started = time.monotonic()
    for i in range(count):
        t0 = time.monotonic()
        call(i)
        latencies.append((time.monotonic() - t0) * 1000)
    elapsed = time.monotonic() - started
    return {"calls": count, "p50_ms": statistics.median(latencies), "p99_ms": percentile(latencies, 0.99),
            "per_s": count / elapsed}


def measure(login: Login, count: int, tickets: dict, kinds=("aes", "local")) -> dict:
    """Logins with each kind of nonce, then opens of the TGTs sealed with three servers."""
    out = {}
    for masks in kinds:
        out[f"login_{masks}"] = timed(lambda _: login.run(masks == "local"), count)
        kept = tickets[masks]
        out[f"open_{masks}"] = timed(lambda i: login.open(kept[i % len(kept)]), min(count, len(kept)))
    return out


def wait_for_three(cluster: mpc_cluster.Cluster, deadline_s: float = 30) -> None:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        status = cluster.mpcctl("cluster", "status", "--cluster", str(cluster.admin_config), check=False)
        if status.returncode == 0 and status.stdout.count("mode three-party") == 3:
            return
        time.sleep(0.1)
    raise RuntimeError("the cluster did not return to three-party service")


# The AND material a pair standing by makes ahead before a switch is timed: a login's worth.
READY_ENTRIES = 400_000


def wait_for_stock(endpoints: dict, missing: int, deadline_s: float = 120) -> int:
    """The AND material the leader of the pair without server `missing` made ahead, once it
    holds READY_ENTRIES (the client pauses meanwhile, as a deployment's idle moments let it)."""
    name = f'mpc_pair_entries_ahead{{without="{missing}"}}'
    leader = missing % 3 + 1
    deadline = time.monotonic() + deadline_s
    while True:
        ahead = int(scrape(endpoints[leader])[0].get(name, 0))
        if ahead >= READY_ENTRIES or time.monotonic() > deadline:
            return ahead
        time.sleep(0.2)


def run_cluster(root: Path, security: str, args, k5: K5Crypto) -> dict:
    """Three-party service, each server down in turn, and the switch times, for one cluster."""
    cluster = mpc_cluster.Cluster(root, protocol="rss3", degraded_service="two-party")
    cluster.init()
    for party in cluster.parties:
        cluster.set_server_setting(party, "security", security)
    endpoints = serve_metrics(cluster)
    cluster.start()
    # An actively secure pair refuses nonces with local masks.
    pair_kinds = ("aes",) if security == "active" else ("aes", "local")
    login = None
    try:
        login = Login(cluster, k5)
        tickets = {masks: [login.seal(masks == "local") for _ in range(args.logins)] for masks in ("aes", "local")}
        measure(login, 5, tickets)  # warm: circuits compiled, connections up
        full = measure(login, args.logins, tickets)
        switches = []
        degraded = {}
        for round_ in range(args.rounds):
            for party in (1, 2, 3):
                stock = wait_for_stock(endpoints, party) if security == "active" else 0
                cluster.kill_server(party)
                killed = time.monotonic()
                login.run(False)
                switches.append({"party": party, "round": round_ + 1, "entries_ahead": stock,
                                 "first_login_ms": (time.monotonic() - killed) * 1000})
                if round_ == 0:
                    measure(login, 3, tickets, pair_kinds)
                    degraded[party] = measure(login, args.logins, tickets, pair_kinds)
                cluster.restart_server(party)
                wait_for_three(cluster)
                measure(login, 3, tickets)
    finally:
        if login is not None:
            login.close()
        cluster.stop()
    switch_ms = [s["first_login_ms"] for s in switches]
    return {"three_party": full, "degraded": {f"without server {p}": m for p, m in degraded.items()},
            "switch": {"runs": switches, "p50_ms": statistics.median(switch_ms), "max_ms": max(switch_ms)}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=os.environ.get("MPC_BUILD_DIR", "build"))
    parser.add_argument("--out", default="docs/benchmarks")
    parser.add_argument("--logins", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    build = Path(args.build_dir)
    os.environ["MPC_BUILD_DIR"] = str(build if build.is_absolute() else (REPO / build).resolve())
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    k5 = K5Crypto()
    with tempfile.TemporaryDirectory(prefix="degraded-bench-") as tmp:
        results = {security: run_cluster(Path(tmp) / security, security, args, k5) for security in ("active", "passive")}
    k5.close()
    report = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(),
        "method": {"logins": args.logins, "rounds": args.rounds, "link_encryption": "CurveZMQ (always on)"},
        **results,
    }
    (out / "degraded.json").write_text(json.dumps(report, indent=1) + "\n")
    lines = ["| security | service | TGT nonce masks | login p50 (ms) | login p99 (ms) | logins/s (one client) | "
             "TGT open p50 (ms) | TGT opens/s |",
             "|---|---|---|---:|---:|---:|---:|---:|"]
    for security, result in results.items():
        services = [("three servers", result["three_party"])] + list(result["degraded"].items())
        for service, m in services:
            service = service.replace("without server", "two, without server")
            for masks in ("aes", "local"):
                label = "AES_K" if masks == "aes" else "local"
                if f"login_{masks}" not in m:
                    lines.append(f"| {security} | {service} | {label} | refused | | | refused | |")
                    continue
                login_m, open_m = m[f"login_{masks}"], m[f"open_{masks}"]
                lines.append(f"| {security} | {service} | {label} | {login_m['p50_ms']:.1f} | "
                             f"{login_m['p99_ms']:.1f} | {login_m['per_s']:.1f} | {open_m['p50_ms']:.2f} | "
                             f"{open_m['per_s']:.0f} |")
    lines.append("")
    for security, result in results.items():
        switch = result["switch"]
        ready = (f", each pair with at least {min(r['entries_ahead'] for r in switch['runs']):,} entries of AND "
                 f"material made ahead" if security == "active" else "")
        lines.append(f"Switch, {security} (kill → first login's jobs served by the other two{ready}), "
                     f"{len(switch['runs'])} runs: median {switch['p50_ms']:.0f} ms, longest {switch['max_ms']:.0f} ms.")
    (out / "degraded.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
