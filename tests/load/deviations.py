#!/usr/bin/env python3
"""One deviating server per fault hook of the test server, each during a storm of logins.

    PYTHONPATH=tests /usr/bin/python3 tests/load/deviations.py --build-dir build --out docs/benchmarks

For each deviation below, a soak (storm.py soak --deviate FAULT) against the protected KDC:
each engine server of --parties in turn is restarted as the test server deviating as
MPC_FAULT=FAULT says, for --outage seconds, then restarted honest and readmitted. The soak's
own checks hold for each (not one login failed, the KDC's count of tickets matches, the
others held the deviating server for what it did: served without it, or beside an honest server
in an actively secure pair, as docs/threat-model.md says). The deviations a pair member
alone can make (its key share, pad, Kerberos mask, padded report, authenticated garbling)
show only while a pair serves; the server then deviates in three-party service too (its AND
shares), which makes the others serve as a pair.

Writes storm-deviations.json and storm-deviations.md, a row per deviation: logins, failed
logins, when the others first held each deviating server and how, the checks that did not
hold (storm-deviations-users.* with --protected-users, whose users' logins run Kerberos jobs
garbled twice). Exits non-zero when any deviation failed a check. `make soak-deviations`.
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
from pathlib import Path

from mpctest import storm

# MPC_FAULT values, with what each alters (mpc-engine/common/fault_injection.hpp; the values
# are those of the integration tests that show each is caught).
THREE_PARTY = {
    "and-share-bit=2": "an AND share of three-party service",
    "check-message-bit=2": "its proof in the AND check",
    "garbled-table-bits=300000": "its garbled tables of a Kerberos batch (two garblers)",
    "tag-share-bit=77": "its share of a GCM tag",
    "chained-tag-bit=42": "its share of a chained GCM tag",
    "local-mask-bit=45": "a local mask it derives",
    "reopen-check-bit=9": "its answer to a reopen check",
    "reopen-keystream-bit=5": "the keystream it reopens",
    "stall-every=8000": "withholds its part of every batch, its heartbeats kept",
}
PAIR_ONLY = {
    "share-bit": "the key share it feeds a pair",
    "output-shift": "the pad it applies in a pair",
    "krb-mask-bit": "its share of a Kerberos record's mask in a pair",
    "padded-report-bit": "the padded output it reports in a pair",
    "auth2-step=0": "its masked inputs in the pair's authenticated garbling",
}
# What makes a pair serve, so that a pair-only deviation is made at all.
INTO_A_PAIR = "and-share-bit=2"


def deviations() -> dict[str, str]:
    out = dict(THREE_PARTY)
    for fault, what in PAIR_ONLY.items():
        out[f"{INTO_A_PAIR},{fault}"] = f"{what} (and an AND share, to be in a pair)"
    return out


def row(fault: str, what: str, report: dict | None, error: str | None) -> dict:
    if report is None:
        return {"fault": fault, "alters": what, "error": error, "failed_checks": ["the soak did not run to its end"]}
    summary = report["summary"]
    return {
        "fault": fault, "alters": what,
        "logins_ok": summary["ok"], "logins_failed": summary["failed"], "unstarted": summary["unstarted"],
        "out_of_service_after_s": {str(outage["party"]): (None if outage.get("out_of_service_at_s") is None else
                                                          round(outage["out_of_service_at_s"] - outage["killed_at_s"], 1))
                                   for outage in report["outages"]},
        "held": {str(outage["party"]): outage.get("held") for outage in report["outages"]},
        "failed_checks": [name for name, held in report["checks"].items() if not held],
        "errors": report["errors"],
    }


def commit() -> str:
    found = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                           cwd=Path(__file__).resolve().parent)
    return found.stdout.strip() or "unknown"


def table(rows: list[dict], method: dict, report: dict) -> str:
    keys = "the krbtgt key and users' keys" if method.get("protected_users") else "the krbtgt key"
    machine = report["machine"]
    lines = [f"Machine: {machine['cpu_model']}, {machine['cpus']} cores; {report['date']}; commit "
             f"{report.get('commit', 'unknown')}.",
             "",
             f"Deviations, one storm each: {method['rate']} logins/s offered (Poisson) for {method['seconds']} s, "
             f"{keys} in the engine, servers {', '.join(map(str, method['parties']))} deviating in turn for "
             f"{method['outage']} s each.",
             "",
             "| MPC_FAULT | alters | logins ok | failed | held after (s), per server: without it, beside an honest server, or by a suspension | checks that failed |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        if "logins_ok" not in r:
            lines.append(f"| `{r['fault']}` | {r['alters']} | | | | {r['error']} |")
            continue
        after = ", ".join(f"{party}: {r['held'].get(party) or 'never'}" if s is None else
                          f"{party}: {s} ({r['held'].get(party)})"
                          for party, s in r["out_of_service_after_s"].items())
        lines.append(f"| `{r['fault']}` | {r['alters']} | {r['logins_ok']} | {r['logins_failed'] + r['unstarted']} | "
                     f"{after} | {', '.join(r['failed_checks']) or 'none'} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--out", default="docs/benchmarks")
    parser.add_argument("--seconds", type=float, default=75)
    parser.add_argument("--outage", type=float, default=15)
    parser.add_argument("--rate", type=float, default=1)
    parser.add_argument("--parties", type=int, nargs="+", default=[1, 2, 3], choices=(1, 2, 3))
    parser.add_argument("--protected-users", action="store_true",
                        help="users' keys in the engine too, so that their Kerberos jobs (garbled twice) run")
    parser.add_argument("--only", nargs="+", metavar="FAULT",
                        help="these deviations alone (as listed in the table: the pair-only ones with their "
                             f"{INTO_A_PAIR} prefix)")
    args = parser.parse_args()
    chosen = deviations()
    if args.only:
        unknown = [fault for fault in args.only if fault not in chosen]
        if unknown:
            raise SystemExit(f"deviations: unknown {unknown}; known: {list(chosen)}")
        chosen = {fault: chosen[fault] for fault in args.only}
    method = {"seconds": args.seconds, "outage": args.outage, "rate": args.rate, "parties": args.parties,
              "protected_users": args.protected_users}
    rows, started = [], storm.machine()
    for number, (fault, what) in enumerate(chosen.items()):
        soak_args = storm.build_parser().parse_args(
            ["soak", "--build-dir", args.build_dir, "--out", args.out, "--seconds", str(args.seconds),
             "--outage", str(args.outage), "--rate", str(args.rate), "--deviate", fault,
             "--parties", *map(str, args.parties)] + (["--protected-users"] if args.protected_users else []))
        if number == 0:
            storm.prepare(soak_args)
        print(f"deviations: {fault}", flush=True)
        try:
            report, _, _, _ = storm.run_soak(soak_args)
            rows.append(row(fault, what, report, None))
        except (SystemExit, Exception) as error:  # noqa: BLE001 - one deviation's failure ends only its row
            rows.append(row(fault, what, None, f"{type(error).__name__}: {error}"))
        print(json.dumps(rows[-1]), flush=True)
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    report = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "machine": started, "commit": commit(), "method": method, "deviations": rows}
    name = "storm-deviations-users" if args.protected_users else "storm-deviations"
    (out / f"{name}.json").write_text(json.dumps(report, indent=1) + "\n")
    (out / f"{name}.md").write_text(table(rows, method, report))
    print(table(rows, method, report))
    if any(r["failed_checks"] for r in rows):
        sys.exit(f"deviations: checks failed for {[r['fault'] for r in rows if r['failed_checks']]}")


if __name__ == "__main__":
    main()
