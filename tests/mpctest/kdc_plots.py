"""Plots of the KDC benchmarks, drawn from their JSON (kdc_bench.py, kdc_user_bench.py call
these after a run; run this to draw them again):

    PYTHONPATH=tests /usr/bin/python3 -m mpctest.kdc_plots --out docs/benchmarks

kdc.png: AS exchanges/s by krb5kdc -w, stock against protected, and the CPU per AS exchange
of krb5kdc and of the three servers for stock, protected and protected with the KDC's requests
on CurveZMQ. kdc-users.png: a protected user's AS exchange, p50 latency and logins/s of each
variant beside stock.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def _pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def plot_kdc(report: dict, path: Path) -> None:
    plt = _pyplot()
    if plt is None:
        return
    figure, (by_workers, cpu) = plt.subplots(1, 2, figsize=(12, 4))
    rows = report["by_workers"]
    workers = [row["workers"] for row in rows]
    by_workers.plot(workers, [row["stock_as_per_second"] for row in rows], marker="o", label="stock")
    by_workers.plot(workers, [row["protected_as_per_second"] for row in rows], marker="o",
                    label="protected krbtgt")
    by_workers.set_xscale("log", base=2)
    by_workers.set_xticks(workers, [str(w) for w in workers])
    by_workers.set_xlabel("krb5kdc -w (worker processes)")
    by_workers.set_ylabel("AS exchanges/s")
    by_workers.set_title("AS throughput by workers (16 client threads)")
    by_workers.grid(True, alpha=0.3)
    by_workers.legend()

    variants = [("stock", report["stock"]), ("protected", report["protected"])]
    if "protected_curvezmq_client" in report:
        variants.append(("protected,\nKDC on CurveZMQ", report["protected_curvezmq_client"]))
    for name in ("stock", "protected"):
        tuned = report[name]
        if "as_per_second_w2_tuned" in tuned:
            variants.append((f"{name},\ntuned", {"kdc_cpu_ms_per_as": tuned["kdc_cpu_ms_per_as_tuned"],
                                                 "servers_cpu_ms_per_as": tuned["servers_cpu_ms_per_as_tuned"],
                                                 "as_per_second_w2": tuned["as_per_second_w2_tuned"]}))
    names = [name for name, _ in variants]
    kdc = [v["kdc_cpu_ms_per_as"] for _, v in variants]
    servers = [0.0 if name.startswith("stock") else v["servers_cpu_ms_per_as"] for name, v in variants]
    cpu.bar(names, kdc, label="krb5kdc")
    cpu.bar(names, servers, bottom=kdc, label="three engine servers")
    for i, (_, v) in enumerate(variants):
        cpu.annotate(f"{v['as_per_second_w2']:.0f} AS/s", (i, kdc[i] + servers[i]), ha="center",
                     xytext=(0, 3), textcoords="offset points")
    cpu.set_ylabel("CPU per AS exchange (ms)")
    cpu.set_title("CPU per AS exchange, krb5kdc -w 2")
    cpu.grid(True, axis="y", alpha=0.3)
    cpu.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


KDC_USER_VARIANTS = (("stock", "stock"), ("protected", "3 servers,\nactive"),
                     ("protected_passive", "3 servers,\npassive"), ("protected_layered", "3 servers,\nlayered"),
                     ("protected_gc2", "2 servers\n(gc2, passive)"))


def plot_kdc_users(report: dict, path: Path) -> None:
    plt = _pyplot()
    if plt is None:
        return
    variants = [(label, report[key]) for key, label in KDC_USER_VARIANTS if key in report]
    labels = [label for label, _ in variants]
    figure, (latency, rate) = plt.subplots(1, 2, figsize=(11, 4))
    # Back to back, and paced (one login every pause_ms: garblings prepared ahead), side by side.
    width = 0.4
    places = range(len(variants))
    latency.bar([x - width / 2 for x in places], [v["as_p50_ms"] for _, v in variants], width, label="back to back")
    if all("as_paced_p50_ms" in v for _, v in variants):
        pause = report.get("method", {}).get("pause_ms", "")
        latency.bar([x + width / 2 for x in places], [v["as_paced_p50_ms"] for _, v in variants], width,
                    label=f"one every {pause} ms")
        latency.legend()
    latency.set_xticks(list(places), labels)
    latency.set_yscale("log")
    latency.set_ylabel("AS exchange p50 (ms, log scale)")
    latency.set_title("A protected user's AS exchange: latency")
    latency.grid(True, axis="y", alpha=0.3)
    rate.bar(labels, [v["as_per_second_w8"] for _, v in variants])
    rate.set_yscale("log")
    rate.set_ylabel("AS exchanges/s, krb5kdc -w 8 (log scale)")
    rate.set_title("Throughput")
    rate.grid(True, axis="y", alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="docs/benchmarks")
    out = Path(parser.parse_args().out)
    if (out / "kdc.json").exists():
        plot_kdc(json.loads((out / "kdc.json").read_text()), out / "kdc.png")
    if (out / "kdc-users.json").exists():
        plot_kdc_users(json.loads((out / "kdc-users.json").read_text()), out / "kdc-users.png")


if __name__ == "__main__":
    main()
