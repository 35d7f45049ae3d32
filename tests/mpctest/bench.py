"""What the benchmarks share: the machine a figure was measured on, mpc-bench runs, the servers'
counters, CPU time from /proc, and the cluster's throughput and latency for one key.
"""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
from pathlib import Path

from mpctest import mpc_cluster

REPO = Path(__file__).resolve().parents[2]

THROUGHPUT_THREADS = 4
THROUGHPUT_BLOCKS = 65536         # eight server batches of the default max_batch_blocks (8,192)
BENCH_TIMEOUT_MS = 60000          # the bench's own client timeout: big jobs queue behind each other


def run(command: list[str], timeout: float) -> str:
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {result.returncode}: {result.stderr.strip()}")
    return result.stdout


def bench_binary() -> Path:
    return mpc_cluster.build_dir() / "tests" / "bench" / "tools" / "mpc-bench"


def mpc_bench(*args: str, timeout: float = 300) -> dict:
    return json.loads(run([str(bench_binary()), *args], timeout).strip().splitlines()[-1])


# -- machine --------------------------------------------------------------------------------

def machine_line(info: dict) -> str:
    """One line for a report's table header: CPU, cores, SIMD path."""
    return f"{info.get('cpu', 'unknown CPU')}, {info.get('nproc')} cores, {info.get('simd_path', 'unknown')} path"


def machine() -> dict:
    info = {"nproc": os.cpu_count(), "kernel": platform.release(), "machine": platform.machine()}
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
        models = re.findall(r"^model name\s*:\s*(.+)$", cpuinfo, re.M)
        info["cpu"] = models[0].strip() if models else "unknown"
        flags = set(re.search(r"^flags\s*:\s*(.+)$", cpuinfo, re.M).group(1).split())
        info["simd_flags"] = sorted(flag for flag in flags if flag in (
            "aes", "pclmulqdq", "avx2", "avx512f", "avx512bw", "avx512vl", "vaes", "vpclmulqdq", "gfni"))
        # The evaluator path the servers pick (rss3::best_simd_level): AVX-512 needs F and BW.
        info["simd_path"] = ("avx512" if {"avx512f", "avx512bw"} <= flags else "avx2" if "avx2" in flags
                             else "portable")
        mhz = re.findall(r"^cpu MHz\s*:\s*([\d.]+)$", cpuinfo, re.M)
        if mhz:
            info["cpu_mhz"] = float(mhz[0])
    except (OSError, AttributeError):
        info["cpu"] = "unknown"
    try:
        info["nproc"] = int(run(["nproc"], 10).strip())
    except (OSError, RuntimeError, ValueError):
        pass
    try:
        info["loadavg_at_start"] = [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except (OSError, ValueError):
        pass
    try:
        meminfo = Path("/proc/meminfo").read_text()
        info["memory_gib"] = round(int(re.search(r"MemTotal:\s+(\d+)", meminfo).group(1)) / 2**20, 1)
    except (OSError, AttributeError):
        pass
    # Binaries carried to another machine name their own commit (cuda/run_on_gpu.sh sets it): the
    # tree there may be a copy whose history is not the one they were built from.
    if os.environ.get("MPC_COMMIT"):
        info["commit"] = os.environ["MPC_COMMIT"]
        return info
    try:
        info["commit"] = run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], 10).strip()
        dirty = run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"], 10).strip()
        if dirty:
            info["commit"] += " (with uncommitted changes)"
    except (OSError, RuntimeError):
        # A copy of the tree without its git history (a machine the binaries were carried to).
        info["commit"] = os.environ.get("MPC_COMMIT", "unknown")
    return info


# -- /proc counters -----------------------------------------------------------------------

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime of one process (fields 14 and 15 of /proc/PID/stat), 0 when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    except (OSError, IndexError, ValueError):
        return 0.0


def cpu_total(pids: list[int]) -> float:
    return sum(cpu_seconds(pid) for pid in pids)


def median(values: list[float]) -> float:
    """The upper median: a measured value, never the mean of two."""
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def loopback_tx_bytes() -> int | None:
    try:
        for line in Path("/proc/net/dev").read_text().splitlines():
            name, _, rest = line.partition(":")
            if name.strip() == "lo":
                return int(rest.split()[8])
    except (OSError, IndexError, ValueError):
        pass
    return None


def server_counters(cluster: mpc_cluster.Cluster) -> list[dict[str, int]]:
    """`mpcctl cluster status` as {label: value} per server ("batches", "jobs", ...)."""
    text = cluster.mpcctl("cluster", "status", "--cluster", str(cluster.admin_config)).stdout
    servers = []
    for line in text.splitlines():
        match = re.match(r"server (\d+): (.*)$", line.strip())
        if not match:
            continue
        counters = {}
        for item in match.group(2).split(","):
            pair = re.match(r"\s*([A-Za-z_ /-]+?)\s+(\d+)\s*$", item)
            if pair:
                counters[pair.group(1).strip().lower()] = int(pair.group(2))
        servers.append(counters)
    return servers


def byte_counter(counters: dict[str, int]) -> int | None:
    """Bytes this server sent to its peer, if its Status reply reports them."""
    for label, value in counters.items():
        if "byte" in label and ("peer" in label or "sent" in label or "layer" in label):
            return value
    return None


# -- one key's service --------------------------------------------------------------------

def payload_counters(cluster: mpc_cluster.Cluster) -> list[tuple[int, int]]:
    """(payload bytes sent, AND gates) per server."""
    text = cluster.mpcctl("cluster", "status", "--cluster", str(cluster.admin_config)).stdout
    out = []
    for line in text.splitlines():
        sent = re.search(r"payload bytes sent (\d+)", line)
        gates = re.search(r"AND gates (\d+)", line)
        if sent and gates:
            out.append((int(sent.group(1)), int(gates.group(1))))
    return out


def restart_all(cluster: mpc_cluster.Cluster, key: tuple[str, int, str]) -> None:
    """Every server stopped, then started again with its configuration as it now is."""
    for party in cluster.parties:
        cluster.kill_server(party)
    for party in cluster.parties:
        cluster.restart_server(party)
    cluster.wait_until_serving(key, deadline_s=60)


def measure(cluster: mpc_cluster.Cluster, key: tuple[str, int, str], seconds: float, single_jobs: int,
            threads: int, blocks: int) -> dict:
    """Throughput of `threads` clients sending `blocks`-block jobs, then single-block latency, and
    the bits each server sent per AND gate meanwhile."""
    config = str(cluster.admin_config)
    name, kvno, alg = key
    before = payload_counters(cluster)
    throughput = mpc_bench("--cluster", config, "--name", name, "--kvno", str(kvno), "--alg", alg,
                           "--threads", str(threads), "--blocks", str(blocks),
                           "--seconds", str(max(1, round(seconds))), timeout=seconds + 300)
    after = payload_counters(cluster)
    single = mpc_bench("--cluster", config, "--name", name, "--kvno", str(kvno), "--alg", alg, "--threads", "1",
                       "--blocks", "1", "--jobs", str(single_jobs), "--warmup", "3", timeout=600)
    bits = [8 * (a[0] - b[0]) / (a[1] - b[1]) for a, b in zip(after, before) if a[1] > b[1]]
    return {
        "throughput_blocks_per_s": throughput["blocks_per_s"],
        "single_block_ms": single["latency_ms"],
        "bits_per_and_per_party": sum(bits) / len(bits) if bits else None,
    }
