#!/usr/bin/env python3
"""Writes docs/benchmarks.md from the results in docs/benchmarks/: one section per benchmark,
in a fixed order, each with the machine and commit it ran on, its table, and its JSON.

The tables are the ones each benchmark wrote next to its JSON in the same run (`make bench`,
`make soak`, `cuda/run_on_gpu.sh run ...`, by the benchmark's own table function); the GPU
record and the soaks, which keep JSON alone, are rendered here from it; earlier runs, with what they showed, are in the
page's history in git. `make bench` runs this last; `--check` (run by `make test`) fails
when the page is not what the files in docs/benchmarks/ give, so it cannot drift from them.

Usage: benchmarks_page.py [--dir docs/benchmarks] [--page docs/benchmarks.md] [--check]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

INTRO = """\
# Benchmarks

The current result of each benchmark, generated from `docs/benchmarks/` by
`tests/bench/benchmarks_page.py` (run by `make bench`; `make test` checks that this page is
what those files give). Each section names the machine, the commit and the command that
measured it; say which SIMD path ran (AVX-512, or AVX2 without it) with any figure you quote.
Earlier runs, with what they showed and what was changed after them, are in this page's
history in git.

Every link is encrypted and authenticated in every run (CurveZMQ, or AES-256-GCM data links
between servers); nothing is measured with encryption off. All three servers share one host
unless a section says otherwise, so these are CPU costs, not network figures.
"""


def strip_title(markdown: str) -> str:
    """A benchmark's own table file without its first-level title (the section gives one)."""
    lines = markdown.strip("\n").splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    while lines and not lines[0].strip():
        lines = lines[1:]
    # Its own second-level headings become third-level ones under the section.
    return "\n".join("#" + line if line.startswith("## ") else line for line in lines)


def machine_of(report: dict) -> str:
    machine = report.get("machine", {})
    cpu = machine.get("cpu") or machine.get("cpu_model") or "?"
    cores = machine.get("nproc") or machine.get("cpus") or "?"
    flags = machine.get("simd_path") or machine.get("evaluator")
    commit = machine.get("commit") or report.get("commit")
    date = machine.get("date") or report.get("date")
    parts = [f"{cpu}, {cores} cores"]
    if flags:
        parts.append(f"SIMD path {flags}")
    if date:
        parts.append(str(date))
    if commit:
        parts.append(f"commit {commit}")
    return "; ".join(parts)


def render_gpu(report: dict) -> str:
    lines = [report["about"], "",
             "| device | date | commit | AES-128 AND gates/s per party | of the memory floor | three parties on one GPU |",
             "|---|---|---|---:|---:|---:|"]
    # Records of other kinds (the engine cluster, earlier evaluators) are in the JSON alone.
    for run in report["runs"]:
        if "aes128_and_gates_per_s_per_party" not in run:
            continue
        three = run.get("aes128_three_on_one_gpu_and_gates_per_s_per_party")
        lines.append(f"| {run['device']} | {run.get('date') or '?'} | {str(run.get('commit') or '?').split(' ')[0]} | "
                     f"{run['aes128_and_gates_per_s_per_party']:.3g} | {run['fraction_of_memory_floor']:.0%} | "
                     f"{'' if three is None else f'{three:.3g}'} |")
    return "\n".join(lines)


def render_storm(report: dict) -> str:
    method, summary = report.get("method", {}), report.get("summary", {})
    outages = report.get("outages") or [{"party": p, "killed_at_s": report["killed_at_s"],
                                         "restarted_at_s": report["restarted_at_s"]}
                                        for p in method.get("parties", [])][:1]
    lines = [f"Machine: {machine_of(report)}. {method.get('rate', '?')} logins/s for {method.get('seconds', '?')} s, "
             f"degraded service {method.get('degraded_service', 'off')}, protected users "
             f"{'yes' if method.get('protected_users') else 'no'}.", "",
             "| logins offered | succeeded | failed | failed during an outage | servers stopped in turn |",
             "|---:|---:|---:|---:|---|"]
    stopped = ", ".join(f"{o['party']} ({o['killed_at_s']:.0f}-{o['restarted_at_s']:.0f} s)" for o in outages)
    lines.append(f"| {summary.get('offered', '?')} | {summary.get('ok', '?')} | {summary.get('failed', '?')} | "
                 f"{report.get('failures_during_outage', '?')} | {stopped} |")
    if any("jobs_aborted_by_server" in o for o in outages):
        deviating = method.get("deviate")
        lines += ["", "| server deviating | the others served without it after | jobs aborted (per other server) |"
                  if deviating else "| server down | jobs aborted (per other server) |",
                  "|---:|---:|---|" if deviating else "|---:|---|"]
        for o in outages:
            after = o.get("out_of_service_after_s")
            aborted = ", ".join(f"{p}: {n}" for p, n in sorted(o.get("jobs_aborted_by_server", {}).items()))
            served_after = "" if after is None else f"{after:.1f} s"
            lines.append(f"| {o['party']} | {served_after} | {aborted} |" if deviating else f"| {o['party']} | {aborted} |")
    phases = report.get("latency_by_phase")
    if phases:
        lines += ["", "| logins | before the first outage | during the outages | after the last |",
                  "|---|---:|---:|---:|"]
        for key, label in (("p50_ms", "p50"), ("p99_ms", "p99")):
            cells = [f"{phases[p][key]:.0f} ms" if key in phases[p] else "" for p in ("before", "during", "after")]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# (heading, result name, how to run it, renderer for a result kept as JSON alone)
SECTIONS = [
    ("Engine, three parties on one machine", "engine", "make bench (tests/bench/run_bench.py)", None),
    ("Peer data plane: data links against CurveZMQ, by cores", "data-plane",
     "make bench (tests/bench/data_plane_bench.py)", None),
    ("Peer data plane without AVX-512 (AVX2 and VAES)", "data-plane-avx2",
     "tests/bench/data_plane_bench.py on a machine without AVX-512", None),
    ("Peer data plane on the 16-core host of a GPU machine", "data-plane-16-cores",
     "cuda/run_on_gpu.sh run engine", None),
    ("Batch size on the 16-core host", "data-plane-16-cores-batch-size",
     "data_plane_bench.py --limits on the 16-core host", None),
    ("The evaluator alone on every core", "core-scaling", "make bench (tests/bench/core_scaling_bench.py)", None),
    ("The evaluator alone on every core of the 16-core host", "core-scaling-16-cores",
     "cuda/run_on_gpu.sh run scaling", None),
    ("Active security against passive, side by side", "active", "make bench (tests/bench/active_bench.py)", None),
    ("Active against passive on the 16-core host", "active-16-cores", "cuda/run_on_gpu.sh run active", None),
    ("The engine on shaped links: rate and round trip between servers", "links",
     "make bench-links (tests/bench/links_bench.py)", None),
    ("Two servers: garbled circuits and lookup tables", "two-server",
     "make bench (tests/bench/two_server_bench.py)", None),
    ("KDC with a protected krbtgt key, side by side with the stock KDC", "kdc",
     "make bench (tests/bench/kdc_bench.py)", None),
    ("Protected users: an AS exchange whose client key is shares", "kdc-users",
     "make bench (tests/bench/kdc_user_bench.py)", None),
    ("One server down: degraded service", "degraded", "make bench (tests/bench/degraded_bench.py)", None),
    ("The Prometheus endpoint on and off", "metrics", "tests/bench/metrics_bench.py", None),
    ("GPU", "gpu", "cuda/run_on_gpu.sh run bench (docs/gpu.md)", render_gpu),
    ("Soak: a storm while each server stops in turn", "storm-soak", "make soak (tests/load/storm.py)",
     render_storm),
    ("Soak with protected users", "storm-soak-users", "make soak (tests/load/storm.py --protected-users)",
     render_storm),
    ("Soak without degraded service", "storm-soak-off", "make soak (tests/load/storm.py, degraded off)",
     render_storm),
    ("Soak with protected users, without degraded service", "storm-soak-users-off",
     "make soak (tests/load/storm.py --protected-users, degraded off)", render_storm),
    ("Soak with every server deviating in turn", "storm-soak-deviating", "make soak-deviating", render_storm),
    ("Soak with protected users, every server deviating in turn", "storm-soak-users-deviating",
     "make soak-deviating SOAK_ARGS=--protected-users", render_storm),
    ("One storm per fault hook, each server deviating with it in turn", "storm-deviations",
     "make soak-deviations (tests/load/deviations.py)", None),
    ("One storm per fault hook with protected users", "storm-deviations-users",
     "make soak-deviations SOAK_ARGS=--protected-users (tests/load/deviations.py)", None),
]


def section(results: Path, heading: str, name: str, how: str, render) -> str | None:
    table, data = results / f"{name}.md", results / f"{name}.json"
    if table.exists():
        body = strip_title(table.read_text())
    elif data.exists() and render is not None:
        body = render(json.loads(data.read_text()))
    else:
        return None
    links = [f"[{path.name}](benchmarks/{path.name})" for path in
             (data, results / f"{name}.csv") if path.exists()]
    images = [f"![{name}](benchmarks/{path.name})" for path in [results / f"{name}.png"] if path.exists()]
    parts = [f"## {heading}", "", f"Measured by: {how}." + (f" Results: {', '.join(links)}." if links else ""),
             "", body]
    if images:
        parts += ["", *images]
    return "\n".join(parts)


def page(results: Path) -> str:
    sections = [text for heading, name, how, render in SECTIONS
                if (text := section(results, heading, name, how, render)) is not None]
    return INTRO + "\n" + "\n\n".join(sections) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default=str(REPO / "docs" / "benchmarks"))
    parser.add_argument("--page", default=str(REPO / "docs" / "benchmarks.md"))
    parser.add_argument("--check", action="store_true", help="fail if the page differs from what it would be")
    args = parser.parse_args()
    text = page(Path(args.dir))
    target = Path(args.page)
    if args.check:
        if not target.exists() or target.read_text() != text:
            print(f"{target} is not what {args.dir} gives: run tests/bench/benchmarks_page.py", file=sys.stderr)
            return 1
        return 0
    target.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
