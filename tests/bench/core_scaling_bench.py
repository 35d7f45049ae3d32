#!/usr/bin/env python3
"""What a many-core host gives the evaluator: N copies of the three parties' in-process AES-128
evaluation (mpc-bench --local, no network), one pinned to each of N CPUs, run at once, for
passive and active security and for several batch sizes, with the CPUs' topology as the
kernel reports it.

    PYTHONPATH=tests /usr/bin/python3 tests/bench/core_scaling_bench.py --build-dir build --out docs/benchmarks

It separates what binds a server's scaling on cores: if small batches scale where large ones
do not, the caches and memory bind (a batch's shares outgrow the per-core caches); if CPUs
that are hyper-thread siblings add little, the physical cores bind; if copies on distinct
cores lose per copy at every batch size, the shared clock, power or a virtual machine's
scheduling does. Writes OUT/core-scaling.json and prints a table.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

from mpctest.bench import machine

REPO = Path(__file__).resolve().parents[2]

BATCHES = (4096, 8192, 16384, 65536)


def siblings_of(cpu: int) -> list[int]:
    """The CPUs sharing cpu's physical core, itself included (from sysfs; itself alone if unknown)."""
    path = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list")
    try:
        text = path.read_text().strip()
    except OSError:
        return [cpu]
    cpus: list[int] = []
    for part in text.split(","):
        first, _, last = part.partition("-")
        cpus.extend(range(int(first), int(last or first) + 1))
    return cpus


def topology(cpus: list[int]) -> dict:
    cores = sorted({tuple(siblings_of(cpu)) for cpu in cpus})
    lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    wanted = ("Model name", "Thread(s) per core", "Core(s) per socket", "Socket(s)", "L2 cache", "L3 cache",
              "Hypervisor vendor", "Virtualization type", "NUMA node(s)")
    facts = {line.split(":", 1)[0].strip(): line.split(":", 1)[1].strip()
             for line in lscpu.splitlines() if ":" in line and line.split(":", 1)[0].strip() in wanted}
    return {"cpus": len(cpus), "physical_cores": len(cores), "siblings": [list(core) for core in cores],
            "lscpu": facts}


def one_per_core_first(cpus: list[int]) -> list[int]:
    """The CPUs ordered so that every physical core comes before any core's second thread."""
    seen: set[tuple[int, ...]] = set()
    firsts, seconds = [], []
    for cpu in cpus:
        core = tuple(siblings_of(cpu))
        (seconds if core in seen else firsts).append(cpu)
        seen.add(core)
    return firsts + seconds


def run_copies(binary: Path, cpus: list[int], security: str, blocks: int, repeat: int) -> dict:
    copies = [subprocess.Popen(["taskset", "-c", str(cpu), str(binary), "--local", "--alg", "aes128", "--sbox",
                                "and32", "--blocks", str(blocks), "--repeat", str(repeat), "--security", security],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for cpu in cpus]
    rates = []
    for copy in copies:
        out, err = copy.communicate(timeout=600)
        if copy.returncode != 0:
            raise RuntimeError(f"mpc-bench failed: {err.strip()}")
        rates.append(json.loads(out.strip().splitlines()[-1])["blocks_per_s"])
    return {"cpus": cpus, "blocks_per_s": sum(rates), "per_copy_min": min(rates), "per_copy_max": max(rates)}


def counts_up_to(total: int) -> list[int]:
    counts, count = {total}, 1
    while count < total:
        counts.add(count)
        count *= 2
    return sorted(counts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--out", default="docs/benchmarks")
    parser.add_argument("--work-blocks", type=int, default=262144,
                        help="blocks each copy evaluates per configuration (repeats of one batch)")
    args = parser.parse_args()

    binary = Path(args.build_dir).resolve() / "tests" / "bench" / "tools" / "mpc-bench"
    available = sorted(os.sched_getaffinity(0))
    ordered = one_per_core_first(available)
    report = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
              "commit": os.environ.get("MPC_COMMIT") or subprocess.run(
                  ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
              ).stdout.strip() or "unknown",
              "machine": machine(), "topology": topology(available), "runs": []}
    for security in ("passive", "active"):
        for blocks in BATCHES:
            # Active evaluates about six times slower: fewer repeats keep each run a few seconds.
            repeat = max(1, args.work_blocks // blocks // (6 if security == "active" else 1))
            for count in counts_up_to(len(ordered)):
                run = run_copies(binary, ordered[:count], security, blocks, repeat)
                run.update({"security": security, "batch_blocks": blocks, "copies": count})
                report["runs"].append(run)
                print(f"core_scaling_bench: {security} {blocks} blocks, {count} copies: "
                      f"{run['blocks_per_s']:,.0f} blocks/s", file=sys.stderr)
        # Two copies on one physical core's two threads against two on distinct cores.
        pair_core = next((core for core in report["topology"]["siblings"] if len(core) >= 2), None)
        if pair_core is not None:
            run = run_copies(binary, pair_core[:2], security, BATCHES[-1],
                             max(1, args.work_blocks // BATCHES[-1] // (6 if security == "active" else 1)))
            run.update({"security": security, "batch_blocks": BATCHES[-1], "copies": 2, "siblings": True})
            report["runs"].append(run)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "core-scaling.json").write_text(json.dumps(report, indent=2) + "\n")
    write_markdown(report, out / "core-scaling.md")
    print(table(report))
    return 0


def write_markdown(report: dict, path: Path) -> None:
    """The table of `report` with its date and commit, as docs/benchmarks.md takes it."""
    path.write_text("# The evaluator alone on every core\n\n"
                    f"Run {report['date']}; commit {report['commit']}. Copies of the three parties in one "
                    "process, each pinned to a core, no network. Written by tests/bench/core_scaling_bench.py.\n\n"
                    + table(report))


def table(report: dict) -> str:
    topo = report["topology"]
    lines = [f"{report['machine'].get('cpu', '')}: {topo['cpus']} CPUs, {topo['physical_cores']} physical cores "
             f"({topo['lscpu'].get('Hypervisor vendor', 'no hypervisor reported')})", "",
             "| security | batch blocks | copies | blocks/s | x one copy | per copy min / max |",
             "|---|---:|---:|---:|---:|---:|"]
    single = {(run["security"], run["batch_blocks"]): run["blocks_per_s"]
              for run in report["runs"] if run["copies"] == 1}
    for run in report["runs"]:
        base = single[(run["security"], run["batch_blocks"])]
        copies = f"{run['copies']}{' (siblings)' if run.get('siblings') else ''}"
        lines.append(f"| {run['security']} | {run['batch_blocks']} | {copies} | {run['blocks_per_s']:,.0f} | "
                     f"{run['blocks_per_s'] / base:.2f} | {run['per_copy_min']:,.0f} / {run['per_copy_max']:,.0f} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
