"""Procedures of docs/operations.md on one engine server that keep its shares: the GPU
drop-in ("GPU servers", on a host without a GPU), a reboot of the whole host, and the backups
of "Back up" (by copy with the server stopped, by mdb_copy with it running) restored."""

from __future__ import annotations

import subprocess
import time

from .commands import BACKUP_COMMAND, BACKUP_DIR, GPU_DROP_IN_COMMAND, MDB_COPY_BACKUP_COMMAND, RESTORE_COMMAND
from .common import Failure, log
from .containers import BOOT_TIMEOUT_S, Cluster
from .realm import kdc_status, status_kvnos, wait_for_logins


def check_gpu_drop_in(cluster: Cluster, name: str) -> None:
    """docs/operations.md "GPU servers" on a host without a GPU: the drop-in loads, the
    sandbox changes as it says, and the server (CPU back end) still serves logins."""
    cluster.ssh(name, GPU_DROP_IN_COMMAND)
    shown = cluster.ssh(name, "systemctl show -p PrivateDevices -p MemoryDenyWriteExecute -p DevicePolicy "
                              "-p DropInPaths mpc-server.service").stdout
    for expected in ("PrivateDevices=no", "MemoryDenyWriteExecute=no", "DevicePolicy=closed",
                     "/etc/systemd/system/mpc-server.service.d/gpu.conf"):
        if expected not in shown:
            raise Failure(f"{name}: with the GPU drop-in, systemctl show lacks {expected}:\n{shown}")
    state = cluster.ssh(name, "systemctl is-active mpc-server.service", check=False).stdout.strip()
    if state != "active":
        raise Failure(f"{name}: mpc-server.service is {state} with the GPU drop-in")
    wait_for_logins(cluster, f"with the GPU drop-in on {name} (no GPU: CPU back end)")


def check_reboot(cluster: Cluster, name: str) -> None:
    """The whole host reboots; mpc-server must come back from its enabled unit, and the KDC
    must reconnect, with nothing else touched."""
    process = cluster.processes[name]
    try:
        cluster.ssh(name, "systemctl reboot", check=False, timeout=30)
    except subprocess.TimeoutExpired:
        pass  # the SSH session may die with the host before it reports anything
    try:
        code = process.wait(timeout=BOOT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise Failure(f"{name} did not go down within {BOOT_TIMEOUT_S} s of systemctl reboot") from None
    # systemd-nspawn exits 133 when the container asks for a reboot (systemd-nspawn(1)); a
    # supervisor (systemd-nspawn@.service) starts it again, as boot() does here.
    if code != 133:
        raise Failure(f"{name}: systemd-nspawn exited {code} after systemctl reboot, not 133 (reboot)")
    rebooted = time.monotonic()
    cluster.boot(name)
    cluster.wait_booted((name,))
    # PID 1 younger than the reboot: a fresh boot, not the old system still answering.
    age = int(cluster.ssh(name, "ps -o etimes= -p 1").stdout)
    if age > time.monotonic() - rebooted + 1:
        raise Failure(f"{name}: PID 1 is {age} s old, older than the reboot")
    state = cluster.ssh(name, "systemctl is-active mpc-server.service", check=False).stdout.strip()
    if state != "active":
        raise Failure(f"{name}: mpc-server.service is {state} after the reboot")
    log(f"{name} rebooted (booted again in {time.monotonic() - rebooted:.1f} s), mpc-server active by itself")
    wait_for_logins(cluster, f"after {name} rebooted")


def backup_restore(cluster: Cluster, name: str, backup_command: str, what: str) -> None:
    """docs/operations.md "Back up": a server's state directory and keys saved with
    BACKUP_COMMAND, the store and storage key lost, the copy put back; the restored shares
    must serve logins and hold every kvno they held."""
    saved = status_kvnos(kdc_status(cluster))
    cluster.ssh(name, f"rm -rf {BACKUP_DIR}")
    cluster.ssh(name, backup_command)
    wait_for_logins(cluster, f"after the {what} backup of {name}")

    # The loss: the share store and the storage key are gone.
    cluster.ssh(name, "systemctl stop mpc-server && rm -rf /var/lib/mpc-server /etc/mpc-kdc/storage.key")
    cluster.ssh(name, RESTORE_COMMAND)
    state = cluster.ssh(name, "systemctl is-active mpc-server.service", check=False).stdout.strip()
    if state != "active":
        raise Failure(f"{name}: mpc-server.service is {state} after the restore")
    wait_for_logins(cluster, f"after {name}'s store was restored from its {what} backup")
    # status asks every server for its shares: the deleted store's keys are back.
    kvnos = status_kvnos(kdc_status(cluster))
    if kvnos != saved:
        raise Failure(f"after the restore, status lists krbtgt kvnos {kvnos} on all three servers, not {saved}")
    log(f"mpcctl kdc status after the restore of the {what} backup: krbtgt kvnos {kvnos} on all three servers")


def check_backup_restore(cluster: Cluster, copy_host: str, mdb_copy_host: str) -> None:
    backup_restore(cluster, copy_host, BACKUP_COMMAND, "cp -a (server stopped)")
    # mdb_copy reads a consistent snapshot while the server runs: no outage to check for.
    backup_restore(cluster, mdb_copy_host, MDB_COPY_BACKUP_COMMAND, "mdb_copy (server running)")
