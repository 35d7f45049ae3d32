#!/usr/bin/env python3
"""Protected users' benchmark: an AS exchange whose client key exists only as shares.

    PYTHONPATH=tests /usr/bin/python3 tests/bench/kdc_user_bench.py --build-dir build --out docs/benchmarks

Two realms on loopback on this machine, measured side by side in one run:
  - stock:     krb5kdc over db2, no plugin;
  - protected: krb5kdc over mpc_kdb.so with mpc_crypto_router.so preloaded, the krbtgt key
               and the client's key (aes256-cts-hmac-sha1-96) enrolled in a local
               three-server engine (data links between the servers and from the KDC), which
               runs Kerberos jobs as garbled circuits (krb_evaluation = "garbled", the
               default), garbled by servers 1 and 3 alike and checked by server 2
               (security = "active", the default);
  - protected, passive: the same with security = "passive" (garbled once), so that the
               price of active security is measured side by side;
  - protected, layered: the same over a three-server engine with krb_evaluation = "layered"
               (the rss3 protocol layer by layer: a round per AND layer);
  - protected on two servers (gc2): the same realm over a local two-server cluster of
               security = "passive" (half-gates), which runs every job as a garbled circuit
               (constant rounds per job).
The client is tests/load/kdc_load (keytab login with PA-ENC-TIMESTAMP, over TCP so that a
slow answer is not retransmitted). In the protected realm every AS exchange runs three
Kerberos jobs on the user's key: the preauth decryption (usage 1), the PA-REQ-ENC-PA-REP
checksum of the request (usage 56) and the AS-REP encryption (usage 3), plus the TGT's GCM
jobs. Measured:
  - AS exchange latency (one thread, sequential), p50/p99, rounds alternating between realms:
    back to back, and paced (PAUSE_MS between exchanges: users arriving at a steady pace, the
    servers idle between logins, so garblings are prepared ahead);
  - AS exchanges per second with krb5kdc -w 8 and 16 client threads (one principal: its
    jobs have equal lengths, so the servers batch them together), and with krb5kdc -w 32 and 64
    client threads for the stock KDC and the garbled engines;
  - in those throughput runs, per login: the engine servers' CPU time (all of them, from
    /proc/PID/stat) and the payload bytes they sent one another (their Status counters:
    garbled tables, layer messages and checks of the Kerberos jobs and of the TGT's nonce
    prefetches; link framing and the client links not counted);
  - per Kerberos job the three servers ran (from the leaders' debug logs), each way: data
    length, AND gates, AND depth and the time the batch took at the leader, so the round
    budget is visible.
Writes OUT/kdc-users.json, OUT/kdc-users.md and OUT/kdc-users.png (tests/mpctest/kdc_plots.py) and prints
the table.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import tempfile
from pathlib import Path

from mpctest import kdc_plots, mpc_cluster
from mpctest.bench import byte_counter, cpu_total as cpu_of, machine, median, server_counters
from mpctest.kdc_load import kdc_load, prepare
from mpctest.krb5_realm import Realm
from mpctest.protected_kdc import ProtectedRealm

REPO = Path(__file__).resolve().parents[2]

ROUNDS = 2
LATENCY_EXCHANGES = {"stock": 200, "protected": 60, "protected-passive": 60, "protected-layered": 12,
                     "protected-gc2": 60}
# Users arriving one at a time, PAUSE_MS apart: the latency of a KDC that is not saturated, where
# the back-to-back run above keeps the servers busy with one login after the other (on two
# cores that is a throughput measure) and leaves no idle time to prepare garblings in.
PAUSE_MS = 100
PACED_EXCHANGES = {"stock": 40, "protected": 40, "protected-passive": 40, "protected-layered": 8,
                   "protected-gc2": 40}
THROUGHPUT = {"stock": (3000, 16), "protected": (160, 16), "protected-passive": (160, 16),
              "protected-layered": (48, 16), "protected-gc2": (160, 16)}  # exchanges, client threads
# The two-server realm's router: small ticket pools (a garbled AES-256 block is about 230 KB
# between the servers, docs/two-server.md) and an engine timeout that allows for a refill.
TWO_SERVER_ROUTER = "pool_low = 8\npool_high = 32\n"
TWO_SERVER_ENGINE_TIMEOUT_MS = 20000
WORKERS = 8
# More krb5kdc workers keep more logins in flight: the leader then batches several users' jobs of
# one circuit into one garbling, which costs the servers less per login (docs/operations.md).
WIDE_WORKERS = 32
WIDE_THROUGHPUT = {"stock": (3000, 64), "protected": (480, 64), "protected-passive": (480, 64)}
# Circuit ids of the Kerberos batches (mpc-engine/wire/peer_messages.hpp).
KRB_CIRCUITS = {11: "encrypt aes128", 12: "encrypt aes256", 13: "decrypt aes128", 14: "decrypt aes256",
                15: "checksum"}


def prefer_tcp(realm: Realm) -> None:
    text = realm.krb5_conf.read_text()
    realm.krb5_conf.write_text(text.replace("[libdefaults]\n", "[libdefaults]\n    udp_preference_limit = 1\n", 1))


def debug_logging(cluster: mpc_cluster.Cluster, krb_evaluation: str, security: str = "active") -> None:
    """Debug logs (the leader's "batch done" lines), server 1's way of running Kerberos jobs and
    every server's security setting."""
    for party in (1, 2, 3):
        cluster.set_server_setting(party, "log_level", "debug")
        cluster.set_server_setting(party, "security", security)
        if party == 1:
            cluster.set_server_setting(party, "krb_evaluation", krb_evaluation)
        else:
            cluster.unset_server_setting(party, "krb_evaluation")


def krb_batches(cluster: mpc_cluster.Cluster) -> list[dict]:
    batches = []
    for line in (cluster.server_dir(1) / "server.log").read_text(errors="replace").splitlines():
        if '"batch done"' not in line:
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        fields = record.get("fields", record)
        if int(fields.get("circuit", 0)) in KRB_CIRCUITS:
            batches.append(fields)
    return batches


def engine_use(cluster: mpc_cluster.Cluster) -> tuple[float, int | None]:
    """(CPU seconds, payload bytes sent) of the cluster's servers so far; bytes None where the
    servers do not report them."""
    cpu = cpu_of([cluster.server_pid(party) for party in cluster.parties])
    if cluster.protocol != "rss3":
        return cpu, None   # the two-server engine's Status counts no payload bytes
    sent = [byte_counter(counters) for counters in server_counters(cluster)]
    return cpu, (sum(sent) if sent and None not in sent else None)


def job_table(batches: list[dict]) -> list[dict]:
    groups: dict[tuple[str, int, int], list[dict]] = {}
    for batch in batches:
        groups.setdefault((batch["evaluation"], int(batch["circuit"]), int(batch["data_bytes"])), []).append(batch)
    rows = []
    for (evaluation, circuit, data_bytes), group in sorted(groups.items()):
        rows.append({
            "evaluation": evaluation, "job": KRB_CIRCUITS[circuit], "data_bytes": data_bytes,
            "and_gates": int(group[0]["and_gates"]), "and_depth": int(group[0]["and_depth"]),
            "rounds": 3 if evaluation.startswith("garbled") else int(group[0]["and_depth"]),
            "bytes_sent_by_leader": int(group[0]["bytes_sent"]),
            "batches": len(group),
            "instances_per_batch": statistics.mean(int(b["instances"]) for b in group),
            "batch_ms_p50": median([int(b["micros"]) / 1000 for b in group]),
        })
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

    samples: dict[str, dict[str, list[dict]]] = {name: {} for name in LATENCY_EXCHANGES}
    with tempfile.TemporaryDirectory(prefix="kdc-user-bench-") as tmp:
        tmp = Path(tmp)
        cluster = mpc_cluster.Cluster(tmp / "cluster")
        cluster.init()
        debug_logging(cluster, "garbled")
        cluster.start()
        passive = mpc_cluster.Cluster(tmp / "cluster-passive")
        passive.init()
        debug_logging(passive, "garbled", "passive")
        passive.start()
        layered = mpc_cluster.Cluster(tmp / "cluster-layered")
        layered.init()
        debug_logging(layered, "layered")
        layered.start()
        two_server = mpc_cluster.Cluster(tmp / "cluster-gc2", protocol="gc2", security="passive")
        two_server.init()
        two_server.start()
        stock = Realm(tmp / "stock", backend="db2")
        protected = ProtectedRealm(tmp / "protected", cluster, enrol_users=True)
        protected_passive = ProtectedRealm(tmp / "protected-passive", passive, enrol_users=True)
        protected_layered = ProtectedRealm(tmp / "protected-layered", layered, enrol_users=True)
        protected_gc2 = ProtectedRealm(tmp / "protected-gc2", two_server, enrol_users=True)
        patient = two_server.dir / "compute-patient.toml"
        two_server.copy_client_config(two_server.compute_config, patient, TWO_SERVER_ENGINE_TIMEOUT_MS)
        protected_gc2.router_conf.write_text(f"handle_key_file = {protected_gc2.handle_key_path}\n"
                                             f"engine_config = {patient}\n{TWO_SERVER_ROUTER}")
        realms = {"stock": stock, "protected": protected, "protected-passive": protected_passive,
                  "protected-layered": protected_layered, "protected-gc2": protected_gc2}
        engines = {"protected": cluster, "protected-passive": passive, "protected-layered": layered,
                   "protected-gc2": two_server}
        try:
            for realm in realms.values():
                prepare(realm)
                prefer_tcp(realm)
            for realm in (protected, protected_passive, protected_layered, protected_gc2):
                realm.protect()
                realm.setstr("bench", "mpc-protected", "true").check()
            for workers, mode in ((None, "as"), (None, "as-paced"), (WORKERS, "as-throughput"),
                                  (WIDE_WORKERS, "as-throughput-wide")):
                measured = {name: realm for name, realm in realms.items()
                            if mode != "as-throughput-wide" or name in WIDE_THROUGHPUT}
                for realm in measured.values():
                    realm.start_kdc(workers=workers)
                    kdc_load(build, realm, "as", 4)           # warm-up: circuits, pools, connections
                for _ in range(ROUNDS):
                    for name, realm in measured.items():
                        if mode == "as":
                            result = kdc_load(build, realm, "as", LATENCY_EXCHANGES[name])
                        elif mode == "as-paced":
                            result = kdc_load(build, realm, "as", PACED_EXCHANGES[name], 1, PAUSE_MS)
                        else:
                            count, threads = (WIDE_THROUGHPUT if mode == "as-throughput-wide" else THROUGHPUT)[name]
                            engine = engines.get(name)
                            before = engine_use(engine) if engine else None
                            result = kdc_load(build, realm, "as", count, threads)
                            if engine:
                                after = engine_use(engine)
                                logins = max(1, result["exchanges"])
                                result["servers_cpu_ms_per_login"] = (after[0] - before[0]) * 1000 / logins
                                if before[1] is not None and after[1] is not None:
                                    result["payload_bytes_per_login"] = (after[1] - before[1]) / logins
                        samples[name].setdefault(mode, []).append(result)
                for realm in measured.values():
                    realm.stop_kdc()
            jobs = job_table(krb_batches(cluster) + krb_batches(passive) + krb_batches(layered))
        finally:
            stock.stop()
            protected.stop()
            protected_passive.stop()
            protected_layered.stop()
            protected_gc2.stop()
            cluster.stop()
            passive.stop()
            layered.stop()
            two_server.stop()

    def summarise(name: str) -> dict:
        s = samples[name]
        return {
            "as_p50_ms": median([r["p50_ms"] for r in s["as"]]),
            "as_p99_ms": median([r["p99_ms"] for r in s["as"]]),
            "as_paced_p50_ms": median([r["p50_ms"] for r in s["as-paced"]]),
            "as_paced_p99_ms": median([r["p99_ms"] for r in s["as-paced"]]),
            f"as_per_second_w{WORKERS}": median([r["per_second"] for r in s["as-throughput"]]),
            **{key: median(values) for key in ("servers_cpu_ms_per_login", "payload_bytes_per_login")
               if (values := [r[key] for r in s["as-throughput"] if key in r])},
            **({f"as_per_second_w{WIDE_WORKERS}": median([r["per_second"] for r in s["as-throughput-wide"]])}
               if "as-throughput-wide" in s else {}),
            **{f"{key}_w{WIDE_WORKERS}": median(values) for key in ("servers_cpu_ms_per_login",)
               if (values := [r[key] for r in s.get("as-throughput-wide", []) if key in r])},
        }

    stock_s, protected_s, gc2_s = summarise("stock"), summarise("protected"), summarise("protected-gc2")
    layered_s, passive_s = summarise("protected-layered"), summarise("protected-passive")
    rate_key = f"as_per_second_w{WORKERS}"
    ratio = protected_s[rate_key] / stock_s[rate_key]
    wide_key = f"as_per_second_w{WIDE_WORKERS}"
    wide_ratio = protected_s[wide_key] / stock_s[wide_key]
    report = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(),
        "method": {"rounds": ROUNDS, "latency_exchanges_per_round": LATENCY_EXCHANGES,
                   "paced_exchanges_per_round": PACED_EXCHANGES, "pause_ms": PAUSE_MS,
                   "throughput_exchanges_and_threads": THROUGHPUT, "krb5kdc_workers": WORKERS,
                   "wide_throughput_exchanges_and_threads": WIDE_THROUGHPUT, "wide_krb5kdc_workers": WIDE_WORKERS,
                   "transport": "TCP", "statistic": "median of rounds"},
        "stock": stock_s, "protected": protected_s, "protected_passive": passive_s,
        "protected_layered": layered_s, "protected_gc2": gc2_s,
        "throughput_ratio": ratio,
        "throughput_ratio_wide": wide_ratio,
        "active_over_passive": {"as_p50": protected_s["as_p50_ms"] / passive_s["as_p50_ms"],
                                "as_per_second": protected_s[rate_key] / passive_s[rate_key]},
        "goals": {"as_p50_under_20ms": protected_s["as_p50_ms"] < 20.0,
                  "as_paced_p50_under_20ms": protected_s["as_paced_p50_ms"] < 20.0,
                  "logins_per_s_at_least_0_1_stock": max(ratio, wide_ratio) >= 0.1,
                  "as_p50_under_50ms": protected_s["as_p50_ms"] < 50.0,
                  "as_p50_under_50ms_two_servers_gc2": gc2_s["as_p50_ms"] < 50.0,
                  "active_login_at_most_1_5x_passive": protected_s["as_p50_ms"] <= 1.5 * passive_s["as_p50_ms"]},
        "jobs": jobs, "raw": samples,
    }
    (out / "kdc-users.json").write_text(json.dumps(report, indent=2) + "\n")
    kdc_plots.plot_kdc_users(report, out / "kdc-users.png")
    lines = ["| measure | stock krb5kdc | protected user + krbtgt, three servers (rss3, garbled Kerberos jobs, "
             "active security) | the same, passive (garbled once) | the same, Kerberos jobs layer by layer | "
             "the same, two servers (gc2, passive) |", "|---|---|---|---|---|---|",
             f"| AS p50 (ms) | {stock_s['as_p50_ms']:.2f} | {protected_s['as_p50_ms']:.1f} | "
             f"{passive_s['as_p50_ms']:.1f} | {layered_s['as_p50_ms']:.1f} | {gc2_s['as_p50_ms']:.1f} |",
             f"| AS p99 (ms) | {stock_s['as_p99_ms']:.2f} | {protected_s['as_p99_ms']:.1f} | "
             f"{passive_s['as_p99_ms']:.1f} | {layered_s['as_p99_ms']:.1f} | {gc2_s['as_p99_ms']:.1f} |",
             f"| AS p50 (ms), one user every {PAUSE_MS} ms | {stock_s['as_paced_p50_ms']:.2f} | "
             f"{protected_s['as_paced_p50_ms']:.1f} | {passive_s['as_paced_p50_ms']:.1f} | "
             f"{layered_s['as_paced_p50_ms']:.1f} | {gc2_s['as_paced_p50_ms']:.1f} |",
             f"| AS p99 (ms), one user every {PAUSE_MS} ms | {stock_s['as_paced_p99_ms']:.2f} | "
             f"{protected_s['as_paced_p99_ms']:.1f} | {passive_s['as_paced_p99_ms']:.1f} | "
             f"{layered_s['as_paced_p99_ms']:.1f} | {gc2_s['as_paced_p99_ms']:.1f} |",
             f"| AS/s, krb5kdc -w {WORKERS}, 16 client threads | {stock_s[rate_key]:.0f} | "
             f"{protected_s[rate_key]:.1f} (ratio {ratio:.4f}) | {passive_s[rate_key]:.1f} | "
             f"{layered_s[rate_key]:.1f} | {gc2_s[rate_key]:.1f} |",
             f"| AS/s, krb5kdc -w {WIDE_WORKERS}, {WIDE_THROUGHPUT['stock'][1]} client threads | "
             f"{stock_s[wide_key]:.0f} | {protected_s[wide_key]:.1f} (ratio {wide_ratio:.4f}) | "
             f"{passive_s[wide_key]:.1f} | - | - |"]
    engine_rows = (("engine servers' CPU per login (ms), in the AS/s runs", "servers_cpu_ms_per_login", 1, 1),
                   ("payload bytes the servers sent per login (MB), in the AS/s runs", "payload_bytes_per_login",
                    1e-6, 2))
    engine_rows += ((f"engine servers' CPU per login (ms), krb5kdc -w {WIDE_WORKERS}",
                     f"servers_cpu_ms_per_login_w{WIDE_WORKERS}", 1, 1),)
    for label, key, scale, digits in engine_rows:
        cells = [f"{r[key] * scale:.{digits}f}" if key in r else "-"
                 for r in (protected_s, passive_s, layered_s, gc2_s)]
        lines.append(f"| {label} | - | " + " | ".join(cells) + " |")
    job_lines = ["| evaluation | job | data bytes | AND gates | AND depth | rounds | bytes sent by server 1 | "
                 "batches | jobs per batch | batch p50 at server 1 (ms) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for row in jobs:
        job_lines.append(f"| {row['evaluation']} | {row['job']} | {row['data_bytes']} | {row['and_gates']:,} | "
                         f"{row['and_depth']:,} | {row['rounds']:,} | {row['bytes_sent_by_leader']:,} | "
                         f"{row['batches']} | {row['instances_per_batch']:.1f} | {row['batch_ms_p50']:.1f} |")
    table = "\n".join(lines)
    jobs_table = "\n".join(job_lines)
    (out / "kdc-users.md").write_text(
        f"# AS exchange of a protected user vs the stock KDC\n\n"
        f"{report['date']}, {os.cpu_count()} CPUs; median of {ROUNDS} alternating rounds; client "
        f"tests/load/kdc_load with a keytab over TCP; three engines of three servers (rss3; Kerberos jobs "
        f"garbled twice with active security, garbled once, and layer by layer) and one of two servers "
        f"(gc2, security = \"passive\"), all on the same machine.\n\n"
        f"{table}\n\nThe first two rows run logins back to back from one client, which on this machine keeps "
        f"every core busy; the next two leave {PAUSE_MS} ms between logins, and the three-server active "
        f"engine then evaluates garblings prepared ahead (\"garbled twice, prepared\" below; \"garbled twice "
        f"ahead\" are the preparations).\n\n"
        f"Kerberos jobs the three servers ran (server 1's log; the AES-GCM jobs of the TGT are not "
        f"listed). A garbled batch takes three messages whatever its depth; a layered one a round per AND "
        f"layer:\n\n"
        f"{jobs_table}\n\n![AS p50 and logins/s of each variant](kdc-users.png)\n")
    print(table)
    print()
    print(jobs_table)


if __name__ == "__main__":
    main()
