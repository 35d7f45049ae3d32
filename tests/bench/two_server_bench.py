#!/usr/bin/env python3
"""Two-server benchmark: the garbled-circuit (gc2) and lookup-table (lut2) back ends, in process
and as two real mpc-server processes over CurveZMQ, beside a three-server (rss3) cluster.

    PYTHONPATH=tests /usr/bin/python3 tests/bench/two_server_bench.py --build-dir build --out docs/benchmarks

In process (two threads, an in-memory channel): gc2_bench (AND gates garbled and evaluated
per second, bytes per AND, AES-128 blocks/s, one-block latency), ot_bench (base OTs, IKNP
OTs/s), lut2_bench (online AES-128 blocks/s, bytes per S-box, preprocessing per block by
dealer and by OT) and auth2_bench (authenticated bits and AND triples per second, and an
AES-128 block by authenticated garbling: its triples, masks and online run, time and bytes,
without and with the client's checks side by side).

Clusters on loopback, every link CurveZMQ: for rss3, gc2, gc2 with security = "active"
(authenticated garbling) and lut2 the p50/p99 latency of one-block AES-128 jobs and the
blocks/s of 256-block jobs (16-block jobs for active gc2, whose triples are made while the job
runs; lut2 after its pool has filled, so the online phase is what is timed), side by side in
one run. The transport's share is
1 - (in-process time per block) / (cluster time per block) for the same protocol.
Then Kerberos encryptions and the KDC's GCM ticket jobs (prefetch, tag, open) through
libmpcclient on gc2 clusters, passive and active, side by side. Writes OUT/two-server.json and OUT/two-server.md. About 3 minutes.
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mpctest import mpc_cluster
from mpctest.bench import bench_binary, machine, machine_line

LATENCY_JOBS = 200
THROUGHPUT_BLOCKS = 256
THROUGHPUT_SECONDS = 4
ACTIVE_THROUGHPUT_BLOCKS = 16
ACTIVE_LATENCY_JOBS = 40


def run_json(command: list[str], timeout: float = 300) -> dict:
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {result.returncode}: {result.stderr.strip()}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def binary(*parts: str) -> str:
    return str(mpc_cluster.build_dir() / Path(*parts))


def in_process() -> dict:
    return {
        "gc2": run_json([binary("tests", "bench", "gc2_bench"), "--json", "--seconds", "3"]),
        "ot": run_json([binary("tests", "bench", "ot_bench"), "--json"]),
        "lut2": run_json([binary("tests", "bench", "lut2_bench"), "--json", "--seconds", "3"]),
        "auth2": run_json([binary("tests", "bench", "auth2_bench"), "--json", "--triples", "262144", "--repeat", "1"]),
    }


def mpc_bench(config: Path, *args: str) -> dict:
    return run_json([str(bench_binary()), "--cluster", str(config), "--name", "bench",
                     "--kvno", "1", "--alg", "aes128", *args], timeout=600)


def cluster_run(root: Path, protocol: str, security: str | None = None) -> dict:
    cluster = mpc_cluster.Cluster(root / f"{protocol}-{security or 'default'}", protocol=protocol)
    try:
        cluster.init()
        if security:
            for party in (1, 2):
                cluster.set_server_setting(party, "security", security)
        config = cluster.dir / "cluster.toml"
        cluster.set_client_timeout(config, 60000)
        if protocol == "lut2":
            for party in (1, 2):
                cluster.set_server_table_setting(party, "lut", "pool_sboxes", 262144)
        cluster.start()
        cluster.import_key("bench", 1, "aes128")
        cluster.wait_until_serving(("bench", 1, "aes128"), deadline_s=60)
        if protocol == "lut2":
            # Let preprocessing fill the pool, so the timed jobs measure the online phase.
            time.sleep(20)
        active = security == "active"
        latency = mpc_bench(config, "--threads", "1", "--blocks", "1", "--jobs",
                            str(ACTIVE_LATENCY_JOBS if active else LATENCY_JOBS), "--warmup", "3")
        if active:
            # One client thread: a job waits for AND material the pool is still making, and a
            # second thread would only queue behind it (the pool's refill rate binds).
            throughput = mpc_bench(config, "--threads", "1", "--blocks", str(ACTIVE_THROUGHPUT_BLOCKS), "--seconds",
                                   str(THROUGHPUT_SECONDS))
        elif protocol == "lut2":
            time.sleep(5)
            throughput = mpc_bench(config, "--threads", "1", "--blocks", str(THROUGHPUT_BLOCKS), "--jobs", "4")
        else:
            throughput = mpc_bench(config, "--threads", "2", "--blocks", str(THROUGHPUT_BLOCKS), "--seconds",
                                   str(THROUGHPUT_SECONDS))
        return {"one_block": latency, "batch": throughput}
    finally:
        cluster.stop()


KRB_JOBS = 12
KRB_SECONDS = 8
KRB_REFILL_S = 1.5  # an active pool refills a Kerberos job's AND material in well under this
GCM_JOBS = 10


def krb_run(root: Path, security: str | None = None) -> dict:
    """Kerberos encryptions of 40 bytes under aes128-cts-hmac-sha1-96 through libmpcclient, one
    at a time: each from a full pool (a pause before each under security = "active"), then back
    to back for KRB_SECONDS (busy answers, a pool still making the job's entries, asked again)."""
    from mpctest.krb_client import ENCTYPES, KrbError
    from mpctest.krb_client import Engine as KrbEngine
    cluster = mpc_cluster.Cluster(root / f"krb-{security or 'default'}", protocol="gc2")
    admin = compute = None
    try:
        cluster.init()
        for party in (1, 2):
            if security:
                cluster.set_server_setting(party, "security", security)
            cluster.set_server_table_setting(party, "limits", "and_material_entries", 1048576)
        cluster.start()
        admin, compute = KrbEngine(cluster.admin_config), KrbEngine(cluster.compute_config)
        algorithm = ENCTYPES["aes128"][0]
        key_id = ("krb/bench@BENCH", 1, algorithm)
        admin.import_key(*key_id, bytes(range(16)))
        plaintext = bytes(40)

        def one() -> float:
            start = time.perf_counter()
            while True:
                try:
                    compute.encrypt(key_id, 3, plaintext)
                    return time.perf_counter() - start
                except KrbError as failure:
                    if "busy" not in failure.message or time.perf_counter() - start > 60:
                        raise
                    time.sleep(0.05)

        active = security == "active"
        time.sleep(5 if active else 0)  # the pool's first fill
        one()
        latencies = []
        for _ in range(KRB_JOBS):
            if active:
                time.sleep(KRB_REFILL_S)
            latencies.append(one())
        latencies.sort()
        start, done = time.perf_counter(), 0
        while time.perf_counter() - start < KRB_SECONDS:
            one()
            done += 1
        return {"jobs": KRB_JOBS, "p50_ms": latencies[len(latencies) // 2] * 1e3,
                "p99_ms": latencies[-1] * 1e3, "jobs_per_s": done / (time.perf_counter() - start),
                "gcm": gcm_jobs(cluster, active)}
    finally:
        for engine in (admin, compute):
            if engine is not None:
                engine.close()
        cluster.stop()


def gcm_jobs(cluster: mpc_cluster.Cluster, active: bool) -> dict:
    """The KDC's ticket jobs on the same cluster, one at a time, each from a refilled pool under
    security = "active": a prefetch of one nonce with a ticket key (two keystream blocks), its
    tag, and an open of the 32-byte ticket key sealed with them."""
    from mpctest.gcm_client import KEY, GcmError, import_gcm_key, seal
    from mpctest.gcm_client import Engine as GcmEngine
    import_gcm_key(cluster)
    gcm = GcmEngine(cluster.compute_config)

    def timed(call) -> tuple[float, object]:
        start = time.perf_counter()
        while True:
            try:
                result = call()
                return time.perf_counter() - start, result
            except GcmError as failure:
                if "busy" not in failure.message or time.perf_counter() - start > 60:
                    raise
                time.sleep(0.05)

    try:
        prefetches, tags, opens = [], [], []
        for _ in range(GCM_JOBS):
            if active:
                time.sleep(KRB_REFILL_S)
            took, prefetched = timed(lambda: gcm.prefetch(1, 2))
            prefetches.append(took)
            nonce, keystream = prefetched[0]
            start = time.perf_counter()
            sealed = seal(gcm, nonce, keystream, bytes(32), b"ticket")
            tags.append(time.perf_counter() - start)
            took, _ = timed(lambda: gcm.open(nonce, b"ticket", sealed[:-16], sealed[-16:]))
            opens.append(took)
        for series in (prefetches, tags, opens):
            series.sort()
        return {"jobs": GCM_JOBS, "key": KEY[0], "prefetch_p50_ms": prefetches[len(prefetches) // 2] * 1e3,
                "tag_p50_ms": tags[len(tags) // 2] * 1e3, "open_p50_ms": opens[len(opens) // 2] * 1e3}
    finally:
        gcm.close()


def fmt(value: float, digits: int = 0) -> str:
    return f"{value:,.{digits}f}"


def markdown(report: dict) -> str:
    core = report["in_process"]
    clusters = report["clusters"]
    gc2, ot, lut2, auth2 = core["gc2"], core["ot"], core["lut2"], core["auth2"]
    aes = auth2["aes128"]
    lines = [
        "# Two-server back ends",
        "",
        f"{report['date']}, {machine_line(report['machine'])}. Generated by `tests/bench/two_server_bench.py` (`make bench`).",
        "",
        "## In process (two threads, in-memory channel)",
        "",
        "| measure | value |",
        "|---|---|",
        f"| gc2: AND gates/s, garbled and evaluated together (AES-128, {gc2['batch_blocks']}-block batches) | "
        f"{fmt(gc2['and_gates_per_s_together'] / 1e6, 1)} M |",
        f"| gc2: garbling alone, one core | {fmt(gc2['and_gates_per_s_garble'] / 1e6, 1)} M AND/s |",
        f"| gc2: evaluating alone, one core | {fmt(gc2['and_gates_per_s_evaluate'] / 1e6, 1)} M AND/s |",
        f"| gc2: bytes per AND on the wire | {fmt(gc2['bytes_per_and'], 1)} ({fmt(gc2['bytes_per_and'] * 8)} bits) |",
        f"| gc2: AES-128 blocks/s ({gc2['ands_per_block']} ANDs per block) | {fmt(gc2['aes128_blocks_per_s'])} |",
        f"| gc2: one block, p50 | {fmt(gc2['one_block_p50_us'])} µs ({gc2.get('kernel', 'portable')} kernel) |",
        f"| OT: 128 base OTs (Masny-Rindal, ristretto255) | {fmt(ot['base_ot_ms'], 1)} ms |",
        f"| OT: IKNP random OTs/s | {fmt(ot['random_ots_per_s'] / 1e6, 2)} M ({fmt(ot['random_bytes_per_ot'])} bytes each) |",
        f"| lut2: online AES-128 blocks/s ({lut2['batch_blocks']}-block batches) | "
        f"{fmt(lut2['online_aes128_blocks_per_s'])} |",
        f"| lut2: bytes per S-box online, each way | {fmt(lut2['online_bytes_per_sbox_party0'], 1)} |",
        f"| lut2: online AES-128 blocks per CPU second of a party | {fmt(lut2['online_aes128_blocks_per_cpu_s'])} |",
        f"| lut2: one block, p50 | {fmt(lut2['one_block_p50_us'])} µs |",
        f"| lut2: preprocessing by dealer, per block | {fmt(lut2['dealer_us_per_block'], 1)} µs, "
        f"{fmt(lut2['dealer_bytes_per_block'])} bytes |",
        f"| lut2: preprocessing by OT, per block | {fmt(lut2['ot_us_per_block'])} µs, "
        f"{fmt((lut2['ot_bytes_per_block_party0'] + lut2['ot_bytes_per_block_party1']) / 1e3)} KB |",
        f"| auth2: authenticated bits/s (both directions counted) | {fmt(auth2['authenticated_bits_per_s'] / 1e6, 2)} M, "
        f"{fmt(auth2['authenticated_bit_bytes'], 1)} bytes each |",
        f"| auth2: AND triples/s ({auth2['triples']:,} per call, buckets of {auth2['bucket_size']}, "
        f"2^-{auth2['statistical_security']}) | {fmt(auth2['triples_per_s'])}, {fmt(auth2['triple_bytes'])} bytes each |",
        f"| auth2: AND material entries/s as a server stocks them (batches of {auth2['material_batch']:,}) | "
        f"{fmt(auth2['material_entries_per_s'])}, {fmt(auth2['material_entry_bytes'])} bytes each |",
        f"| auth2: AES-128 block, authenticated garbling: triples | {fmt(aes['triples_ms_per_block'], 1)} ms, "
        f"{fmt(aes['triple_bytes_per_block'] / 1e6, 2)} MB |",
        f"| auth2: AES-128 block: masks (function-dependent) | {fmt(aes['masks_ms_per_block'], 1)} ms, "
        f"{fmt(aes['mask_bytes_per_block'] / 1e3)} KB |",
        f"| auth2: AES-128 block: online (garbled rows, inputs, output shares) | {fmt(aes['online_ms_per_block'], 1)} ms, "
        f"{fmt(aes['online_bytes_per_block'] / 1e3)} KB |",
        f"| auth2: the same block with the client's checks (padded outputs, both key shares checked), "
        f"as an active cluster runs it: masks | {fmt(aes['checked_masks_ms_per_block'], 1)} ms, "
        f"{fmt(aes['checked_mask_bytes_per_block'] / 1e3)} KB |",
        f"| auth2: the same, online | {fmt(aes['checked_online_ms_per_block'], 1)} ms, "
        f"{fmt(aes['checked_online_bytes_per_block'] / 1e3)} KB |",
        f"| auth2: AES-128 blocks/s in all (without the checks) | {fmt(aes['blocks_per_s'], 1)} |",
        "",
        "## Clusters on loopback (CurveZMQ on every link), side by side",
        "",
        "| protocol | one AES-128 block p50 / p99 | blocks/s (job size) | transport share |",
        "|---|---|---|---|",
    ]
    for protocol, result in clusters.items():
        one = result["one_block"]["latency_ms"]
        rate = result["batch"]["blocks_per_s"]
        share = result.get("transport_share")
        size = ACTIVE_THROUGHPUT_BLOCKS if protocol == "gc2-active" else THROUGHPUT_BLOCKS
        lines.append(f"| {protocol} | {fmt(one['p50'], 2)} / {fmt(one['p99'], 2)} ms | {fmt(rate, 1 if rate < 100 else 0)} "
                     f"({size}) | {'–' if share is None else fmt(100 * share) + ' %'} |")
    gc2_stream_mb_s = clusters["gc2"]["batch"]["blocks_per_s"] * gc2["ands_per_block"] * gc2["bytes_per_and"] / 1e6
    lines += [
        "",
        f"gc2 streams {fmt(gc2['ands_per_block'] * gc2['bytes_per_and'] / 1e3)} KB of garbled tables per AES-128 block; "
        f"its cluster rate is {fmt(gc2_stream_mb_s)} MB/s through the",
        "one CurveZMQ peer link, which is what bounds it here. Its one-block latency is the lowest of the three:",
        "one round trip and one stream, against rss3's round trip per AND layer.",
        "",
        "Transport share: 1 − (in-process time per block) / (cluster time per block) at the protocol's own",
        "batch rate above; it counts CurveZMQ's encryption, the copies between threads and the loopback",
        "sockets. lut2's cluster rate is its online phase with a filled pool; its pool refills at the OT",
        "preprocessing rate above, which bounds lut2's sustained rate on this machine.",
        "",
        "gc2-active is the same cluster with security = \"active\": AES jobs by authenticated garbling from",
        "AND material the servers make ahead into a pool (one client thread: the pool's refill rate binds",
        "throughput; a one-block job pays its masks and online part only). Compare the in-process rows above.",
        "",
        "## Kerberos jobs, side by side",
        "",
        "Encryptions of 40 bytes under aes128-cts-hmac-sha1-96 through libmpcclient, one client thread: "
        f"{report['kerberos']['gc2']['jobs']} one at a time (under security = \"active\" each from a refilled "
        f"pool of AND material), then back to back for {KRB_SECONDS} s (a job whose AND material is still being "
        "made is answered busy and asked again).",
        "",
        "| gc2 cluster | one job p50 / max | jobs/s back to back |",
        "|---|---|---|",
    ]
    for name, label in (("gc2", "passive (half-gates)"), ("gc2-active", "active (authenticated garbling, checked)")):
        krb = report["kerberos"][name]
        lines.append(f"| {label} | {fmt(krb['p50_ms'], 1)} / {fmt(krb['p99_ms'], 1)} ms | {fmt(krb['jobs_per_s'], 2)} |")
    lines += [
        "",
        "## GCM ticket jobs, side by side",
        "",
        f"The KDC's jobs under an aes256-gcm key on the same clusters, {report['kerberos']['gc2']['gcm']['jobs']} of each "
        "one at a time (under security = \"active\" each from a refilled pool): a prefetch of one nonce with a "
        "ticket key (AES_K over N || 1..3), its tag (local), and the open of the sealed 32-byte ticket key (AES "
        "over N || 1..3, GHASH and the tag's comparison). Under \"active\" both are padded for the client.",
        "",
        "| gc2 cluster | prefetch p50 | tag p50 | open p50 |",
        "|---|---|---|---|",
    ]
    for name, label in (("gc2", "passive (half-gates)"), ("gc2-active", "active (authenticated garbling, checked)")):
        gcm = report["kerberos"][name]["gcm"]
        lines.append(f"| {label} | {fmt(gcm['prefetch_p50_ms'], 1)} ms | {fmt(gcm['tag_p50_ms'], 2)} ms | "
                     f"{fmt(gcm['open_p50_ms'], 1)} ms |")
    lines.append("")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--out", default="docs/benchmarks")
    args = parser.parse_args()
    import os
    os.environ["MPC_BUILD_DIR"] = str(Path(args.build_dir).resolve())
    mpc_cluster.become_subreaper()
    report = {
        "date": datetime.date.today().isoformat(),
        "machine": machine(),
        "in_process": in_process(),
        "clusters": {},
    }
    with tempfile.TemporaryDirectory(prefix="two-server-bench-") as root:
        for protocol in ("rss3", "gc2", "lut2"):
            report["clusters"][protocol] = cluster_run(Path(root), protocol, "passive" if protocol == "gc2" else None)
        report["clusters"]["gc2-active"] = cluster_run(Path(root), "gc2", "active")
        report["kerberos"] = {"gc2": krb_run(Path(root), "passive"), "gc2-active": krb_run(Path(root), "active")}
    core_rate = {"gc2": report["in_process"]["gc2"]["aes128_blocks_per_s"],
                 "gc2-active": report["in_process"]["auth2"]["aes128"]["blocks_per_s"],
                 "lut2": report["in_process"]["lut2"]["online_aes128_blocks_per_s"]}
    for protocol, rate in core_rate.items():
        cluster_rate = report["clusters"][protocol]["batch"]["blocks_per_s"]
        report["clusters"][protocol]["transport_share"] = max(0.0, 1 - cluster_rate / rate)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "two-server.json").write_text(json.dumps(report, indent=2) + "\n")
    table = markdown(report)
    (out / "two-server.md").write_text(table)
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
