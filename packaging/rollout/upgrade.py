"""docs/operations.md "Upgrade": the packages of a higher version installed with apt on every
host (the postinst restarts mpc-server; krb5-kdc is restarted by hand), then a reinstall of
the version installed."""

from __future__ import annotations

from pathlib import Path

from .commands import KDC_RESTART_COMMAND, REINSTALL_COMMAND, UPGRADE_KDC_COMMAND, UPGRADE_SERVER_COMMAND
from .common import ENGINE_HOSTS, REPLICA, Failure, address, log, package_file, package_version, run
from .containers import Cluster, installed_version, main_pid
from .core_checks import check_units
from .realm import check_kept_tgt, cross_check, kdc_status, keep_tgt, wait_for_logins


def check_upgrade(cluster: Cluster, package_dir: Path, upgrade_dir: Path) -> None:
    """docs/operations.md "Upgrade" to a higher package version: apt on every host, the
    postinst restarts a running mpc-server, krb5-kdc is restarted by hand; then the
    reinstall of the version already installed."""
    old, new = package_version(package_dir), package_version(upgrade_dir)
    if run(["dpkg", "--compare-versions", new, "gt", old], check=False).returncode != 0:
        raise Failure(f"the upgrade packages ({new}) are not newer than the installed ones ({old})")
    debs = {name: package_file(upgrade_dir, name) for name in ("mpc-server", "mpc-kdc-plugin")}
    for name in [*ENGINE_HOSTS, "kdc", REPLICA]:
        names = ["mpc-server"] + (["mpc-kdc-plugin"] if name in ("kdc", REPLICA) else [])
        run(["scp", *cluster.ssh_args(name)[1:-1], *[debs[n] for n in names], f"root@{address(name)}:/root/"])
    keep_tgt(cluster)
    for name in ENGINE_HOSTS:
        before = main_pid(cluster, name, "mpc-server.service")
        cluster.ssh(name, f"cd /root && {UPGRADE_SERVER_COMMAND.format(version=new)}", timeout=180)
        after = main_pid(cluster, name, "mpc-server.service")
        if after in ("0", before):
            raise Failure(f"{name}: mpc-server not restarted by the postinst (MainPID {before} -> {after})")
        if installed_version(cluster, name, "mpc-server") != new:
            raise Failure(f"{name}: mpc-server is not at {new} after the upgrade")
        log(f"{name}: mpc-server {old} -> {new}, restarted by the postinst (MainPID {before} -> {after})")
    for kdc in ("kdc", REPLICA):
        cluster.ssh(kdc, f"cd /root && {UPGRADE_KDC_COMMAND.format(version=new)}", timeout=180)
        cluster.ssh(kdc, KDC_RESTART_COMMAND)
        for package in ("mpc-server", "mpc-kdc-plugin"):
            if installed_version(cluster, kdc, package) != new:
                raise Failure(f"{kdc}: {package} is not at {new} after the upgrade")
        log(f"{kdc}: mpc-server and mpc-kdc-plugin {old} -> {new}, krb5-kdc restarted")
    check_units(cluster)
    cross_check(cluster, "after the upgrade")
    kdc_status(cluster)
    wait_for_logins(cluster, "after the upgrade")
    check_kept_tgt(cluster, "the upgrade")

    name = ENGINE_HOSTS[0]
    before = main_pid(cluster, name, "mpc-server.service")
    cluster.ssh(name, f"cd /root && {REINSTALL_COMMAND.format(version=new)}", timeout=180)
    after = main_pid(cluster, name, "mpc-server.service")
    if after in ("0", before):
        raise Failure(f"{name}: mpc-server not restarted by the reinstall (MainPID {before} -> {after})")
    log(f"{name}: mpc-server {new} reinstalled, restarted (MainPID {before} -> {after})")
    wait_for_logins(cluster, "after the reinstall")
