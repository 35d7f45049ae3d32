"""docs/operations.md "Replace a failed server": a destroyed engine server's party taken by a
new container at a new address, either restored from the failed one's backup (case 2) or
empty and followed by a krbtgt rotation that retires at once the kvnos whose shares were lost,
a TGT under them then refused (case 3). Case 1, the service restarted, ends the engine outage
check of the short form."""

from __future__ import annotations

import shutil
from pathlib import Path

from .commands import (BACKUP_COMMAND, BACKUP_DIR, KPROP_COMMAND, RESTORE_NEW_HOST_COMMAND, RETIRE_COMMAND,
                       STATUS_COMMAND)
from .common import ENGINE_HOSTS, HOSTS, Failure, address, log, package_file, run
from .containers import Cluster
from .core_checks import check_logins, check_units
from .playbook import check_unchanged, playbook, write_inventory
from .realm import (SERVICE, TGS, TGT_CACHE, cross_check, kdc_status, keep_tgt, propagate, status_kvnos,
                    wait_for_logins)


def replace_host(old: str, new: str, number: int) -> None:
    """NEW takes OLD's party: same place in ENGINE_HOSTS, a new name and address."""
    ENGINE_HOSTS[ENGINE_HOSTS.index(old)] = new
    del HOSTS[old]
    HOSTS[new] = number


def bring_up(cluster: Cluster, old: str, new: str, number: int) -> None:
    cluster.destroy(old)
    replace_host(old, new, number)
    cluster.start(new)
    cluster.wait_booted((new,))
    log(f"{new} booted at {address(new)} from the image, for {old}'s party")


def check_replace_with_backup(cluster: Cluster, build_dir: Path, package_dir: Path,
                              old: str, new: str, number: int) -> None:
    """docs/operations.md "Replace a failed server", case 2: OLD's backup, taken as "Back up"
    says and kept off the host, restored on a NEW host that the playbook then joins in."""
    saved = status_kvnos(kdc_status(cluster))
    cluster.ssh(old, BACKUP_COMMAND)
    # The copy must outlive the host: it goes to the controller, then to the new host.
    copy = cluster.run_dir / "mpc-backup"
    scp = ["scp", "-rpq", *cluster.ssh_args(old)[1:-1]]
    run(scp + [f"root@{address(old)}:{BACKUP_DIR}", copy])
    bring_up(cluster, old, new, number)
    deb = package_file(package_dir, "mpc-server")
    run(scp + [deb, copy, f"root@{address(new)}:/root/"])
    shutil.rmtree(copy)
    cluster.ssh(new, f"cd /root && apt install -y ./{deb.name}", timeout=180)
    cluster.ssh(new, RESTORE_NEW_HOST_COMMAND)
    inventory = write_inventory(cluster, package_dir)
    playbook(build_dir, inventory, cluster.log_dir / "playbook-case2.log")
    check_units(cluster)
    check_logins(cluster)
    kvnos = status_kvnos(kdc_status(cluster))
    if kvnos != saved:
        raise Failure(f"with {new} restored from {old}'s backup, status lists krbtgt kvnos {kvnos}, not {saved}")
    log(f"{new} serves {old}'s restored shares: krbtgt kvnos {kvnos} on all three servers")
    check_unchanged(build_dir, inventory, cluster.log_dir / "playbook-case2-again.log")


def check_replace_without_backup(cluster: Cluster, build_dir: Path, package_dir: Path,
                                 old: str, new: str, number: int) -> None:
    """docs/operations.md "Replace a failed server", case 3: OLD lost with its shares; an
    empty NEW host for its party, then a krbtgt key that every server holds again; a TGT
    under the kvnos retired at once is refused."""
    before = status_kvnos(kdc_status(cluster))
    keep_tgt(cluster)
    bring_up(cluster, old, new, number)
    inventory = write_inventory(cluster, package_dir)
    # Enrollment stops the play while the engine lacks a share of a kvno in use, which it
    # does until the rotation below.
    playbook(build_dir, inventory, cluster.log_dir / "playbook-case3.log", "--skip-tags", "mpc_enroll")
    check_units(cluster)
    done = cluster.ssh("kdc", STATUS_COMMAND, check=False)
    if done.returncode != 3 or "engine key MISSING" not in done.stdout:
        raise Failure(f"with {new} empty, {STATUS_COMMAND} should exit 3 naming the missing engine key, "
                      f"exited {done.returncode}:\n{done.stdout}{done.stderr}")
    log(f"with {new} empty: {STATUS_COMMAND} exits 3, engine key MISSING")

    done = cluster.ssh("kdc", RETIRE_COMMAND, check=False)
    log(f"{RETIRE_COMMAND}: exit {done.returncode}: {(done.stdout + done.stderr).strip()}")
    if done.returncode != 0:
        raise Failure(f"{RETIRE_COMMAND} exited {done.returncode}:\n{done.stdout}{done.stderr}")
    status = kdc_status(cluster)
    after = status_kvnos(status)
    if after != [max(before) + 1] or "MISSING" in status:
        raise Failure(f"after rotate --retire-now, status should list kvno {max(before) + 1} alone:\n{status}")
    log(f"mpcctl kdc status after rotate --retire-now: krbtgt kvnos {after}, consistent")
    wait_for_logins(cluster, f"after the rotation with {new} empty")
    tgt = cluster.ssh("kdc", f"kvno {TGS}").stdout.strip()
    if not tgt.endswith(f"kvno = {after[0]}"):
        raise Failure(f"a TGT issued after rotate --retire-now is not under kvno {after[0]}: {tgt}")
    check_refused_tgt(cluster, f"kvno {max(before)}, retired by rotate --retire-now")
    check_logins(cluster)
    propagate(cluster)
    cross_check(cluster, f"after rotate --retire-now and {KPROP_COMMAND}", tgt_kvno=after[0])
    check_unchanged(build_dir, inventory, cluster.log_dir / "playbook-case3-again.log")


def check_refused_tgt(cluster: Cluster, what: str) -> None:
    """The TGT kept in TGT_CACHE is refused by the KDC (an error reply, the KDC still up)."""
    done = cluster.ssh("kdc", f"KRB5CCNAME={TGT_CACHE} kvno {SERVICE}", check=False)
    cluster.ssh("kdc", f"kdestroy -q -c {TGT_CACHE}")
    if done.returncode == 0:
        raise Failure(f"a TGT under {what} still gets a service ticket: {done.stdout}")
    if "Cannot contact any KDC" in done.stderr:
        raise Failure(f"the KDC did not answer a TGT under {what}: {done.stderr}")
    state = cluster.ssh("kdc", "systemctl is-active krb5-kdc.service", check=False).stdout.strip()
    if state != "active":
        raise Failure(f"krb5-kdc is {state} after a TGT under {what} was presented")
    # Refused because the database no longer holds the kvno (krb5kdc's words), not because
    # the engine failed: the last TGS request the KDC logged.
    logged = cluster.ssh("kdc", "journalctl -u krb5-kdc --no-pager -o cat -n 50 | grep TGS_REQ | tail -n 1",
                         check=False).stdout.strip()
    if "No matching key in entry" not in logged:
        raise Failure(f"the KDC did not refuse the TGT under {what} for its missing kvno: {logged}")
    log(f"a TGT under {what} is refused, the KDC up: {done.stderr.strip()}; KDC log: ...{logged[-90:]}")
