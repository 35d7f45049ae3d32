"""What every part of the rollout test shares: the test network (subnet, bridge, realm, the
hosts up now with their addresses, the metrics ports), the realm's shortened ticket lifetime,
and the helpers that log, run a program, fail the test, remove a tree that may hold mounts,
and find a package's file and version."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

# A /24 of the private range that nothing on the controller routes; override when it clashes.
SUBNET = os.environ.get("MPC_ROLLOUT_SUBNET", "10.231.77")
BRIDGE = os.environ.get("MPC_ROLLOUT_BRIDGE", "mpcrollout0")
REALM = "ROLLOUT.TEST"
DOMAIN = "rollout.test"
# The realm's ticket lifetimes (max_life and max_renewable_life), shortened from the role's
# 10 h and 7 days: a krbtgt kvno is retired by the `rotate` that runs once its successor is
# older than the longest ticket lifetime plus the clock skew, which the test then waits
# for. Long enough for every ticket the test keeps across a procedure.
TICKET_LIFETIME_S = 300
# [libdefaults] clockskew: krb5's default; the role sets none.
CLOCKSKEW_S = 300
# The hosts up now, with the last byte of their address; ENGINE_HOSTS in party order. Both
# change when "Replace a failed server" swaps a destroyed host for a new one.
HOSTS = {"mpc1": 11, "mpc2": 12, "mpc3": 13, "kdc": 20, "kdc2": 21}
ENGINE_HOSTS = ["mpc1", "mpc2", "mpc3"]
# The replica KDC (inventory group mpc_kdc_replicas); "kdc" is the primary.
REPLICA = "kdc2"
# The site installed by hand ("Install by hand"): its hosts answer to the names the guide
# uses, so that its files are the guide's word for word.
HAND_HOSTS = {"hand1": 31, "hand2": 32, "hand3": 33, "handkdc": 34}
HOST_ALIASES = {"hand1": "mpc1.example.org", "hand2": "mpc2.example.org", "hand3": "mpc3.example.org",
                "handkdc": "kdc.example.org"}
METRICS_PORT = 9464
NODE_EXPORTER_PORT = 9100


def log(message: str) -> None:
    print(f"rollout-test: {message}", flush=True)


class Failure(Exception):
    pass


def run(args, check=True, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, **kwargs)
    if check and done.returncode != 0:
        raise Failure(f"{' '.join(map(str, args))} exited {done.returncode}:\n{done.stdout}{done.stderr}")
    return done


def unmount_under(directory: Path) -> None:
    """Unmounts what a killed earlier run left mounted below DIRECTORY, deepest first, so
    that removing the directory cannot reach into the controller's /dev or /proc."""
    with open("/proc/self/mountinfo") as mountinfo:
        points = [line.split()[4] for line in mountinfo]
    for point in sorted(points, reverse=True):
        if point.startswith(str(directory) + "/"):
            subprocess.run(["umount", "-l", point], capture_output=True)


def remove_tree(directory: Path) -> None:
    unmount_under(directory)
    shutil.rmtree(directory, ignore_errors=True)


def address(name: str) -> str:
    return f"{SUBNET}.{HOSTS[name]}"


def package_file(package_dir: Path, name: str) -> Path:
    """The one NAME_*.deb in PACKAGE_DIR; two versions side by side would make the run ambiguous."""
    found = sorted(package_dir.glob(f"{name}_*.deb"))
    if len(found) != 1:
        raise Failure(f"{package_dir} holds {len(found)} {name} packages, not one: {[p.name for p in found]}")
    return found[0]


def package_version(package_dir: Path) -> str:
    return run(["dpkg-deb", "-f", package_file(package_dir, "mpc-server"), "Version"]).stdout.strip()
