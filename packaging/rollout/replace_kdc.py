"""docs/operations.md "Back up" for the KDC and "Replace the KDC host": the database dumped and
the KDC's files copied off the host, the host destroyed, a new one at the same address given
the packages, the files and the database; then, with Ansible, new client key pairs that the
servers admit alone, a TGT of the old KDC still accepted, and the replica serving logins
while the primary is gone."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from .commands import KDC_BACKUP_COMMAND, KDC_BACKUP_DIR, KDC_PACKAGES_COMMAND, KDC_RESTORE_COMMAND
from .common import ENGINE_HOSTS, REPLICA, Failure, address, log, package_file, package_version, run
from .containers import Cluster
from .core_checks import check_logins, check_units
from .key_rotation import public_key
from .playbook import check_unchanged, playbook, write_inventory
from .realm import (PASSWORD, SERVICE, TGT_CACHE, USER, check_kept_tgt, cross_check, cross_conf, kdc_status, keep_tgt,
                    status_kvnos, wait_for_logins)


def client_keys(cluster: Cluster) -> set[str]:
    return {public_key(cluster, "kdc", f"/etc/mpc-kdc/kdc-{role}.pub") for role in ("compute", "admin")}


def replace_kdc_host(cluster: Cluster, name: str, package_dir: Path, while_down=None) -> None:
    """docs/operations.md "Back up" (the KDC) and "Replace the KDC host", steps 1 and 2: the
    database dumped and the KDC's files copied off NAME, with a TGT cache a client keeps;
    NAME destroyed; a new host under its name and address given the packages, the files and
    the database. Its client key pairs are still to be made (step 3)."""
    keep_tgt(cluster, name)
    cluster.ssh(name, KDC_BACKUP_COMMAND)
    # The backup outlives the host on the controller, as a client's ticket cache does on
    # the client.
    backup = cluster.run_dir / "kdc-backup"
    ccache = cluster.run_dir / "earlier.ccache"
    remote_ccache = TGT_CACHE.removeprefix("FILE:")
    scp = ["scp", "-rpq", *cluster.ssh_args(name)[1:-1]]
    run(scp + [f"root@{address(name)}:{KDC_BACKUP_DIR}", backup])
    run(scp + [f"root@{address(name)}:{remote_ccache}", ccache])
    members = run(["tar", "-tf", backup / "kdc-files.tar"]).stdout.split()
    saved_files = sorted(str(path.relative_to(backup)) for path in backup.iterdir()) + \
        [member for member in members if not member.endswith("/")]
    for needed in ("realm.dump", "etc/krb5.conf", "etc/krb5kdc/kdc.conf", "etc/krb5kdc/stash",
                   "etc/krb5kdc/mpc-handle.key", "etc/mpc-kdc/cluster.toml", "etc/mpc-kdc/cluster-admin.toml",
                   "etc/mpc-kdc/router.conf"):
        if needed not in saved_files:
            raise Failure(f"{name}: the KDC backup lacks {needed}: {saved_files}")
    if any(re.search(r"kdc-\w+\.key$", file) for file in saved_files):
        raise Failure(f"{name}: the KDC backup holds a client secret key: {saved_files}")
    log(f"{name}: KDC backed up: {', '.join(saved_files)}")

    cluster.destroy(name)
    if while_down is not None:
        while_down()
    cluster.start(name)
    cluster.wait_booted((name,))
    log(f"{name}: a new host booted from the image at the same address {address(name)}")
    version = package_version(package_dir)
    debs = [package_file(package_dir, package) for package in ("mpc-server", "mpc-kdc-plugin")]
    run(scp + [*debs, backup, f"root@{address(name)}:/root/"])
    run(scp + [ccache, f"root@{address(name)}:{remote_ccache}"])
    shutil.rmtree(backup)
    ccache.unlink()
    cluster.ssh(name, f"cd /root && {KDC_PACKAGES_COMMAND.format(version=version)}", timeout=180)
    cluster.ssh(name, KDC_RESTORE_COMMAND)
    log(f"{name}: packages installed, files and database restored (kdb5_util load)")


def replica_login(cluster: Cluster, what: str) -> None:
    """kinit and kvno through a krb5.conf naming the replica alone."""
    done = cluster.ssh(REPLICA, f"export KRB5CCNAME=FILE:/root/replica.ccache; "
                                f"printf '%s\\n' '{PASSWORD}' | KRB5_CONFIG={cross_conf(REPLICA)} kinit {USER} "
                                f">/dev/null && KRB5_CONFIG={cross_conf(REPLICA)} kvno {SERVICE}; status=$?; "
                                f"kdestroy -q; exit $status", check=False, timeout=60)
    if done.returncode != 0:
        raise Failure(f"{REPLICA} refused a login {what}: {done.stdout}{done.stderr}")
    log(f"{REPLICA} serves logins {what}: {done.stdout.strip()}")


def check_replace_kdc(cluster: Cluster, build_dir: Path, package_dir: Path) -> None:
    """docs/operations.md "Replace the KDC host" with Ansible: after the restore, the playbook
    makes new client key pairs, which the servers then admit alone. The krbtgt key stays in
    the engine, so a TGT from the old KDC is still accepted."""
    saved = status_kvnos(kdc_status(cluster))
    old_keys = client_keys(cluster)
    replace_kdc_host(cluster, "kdc", package_dir, while_down=lambda: replica_login(cluster, "with the primary gone"))
    inventory = write_inventory(cluster, package_dir)
    playbook(build_dir, inventory, cluster.log_dir / "playbook-new-kdc.log")
    new_keys = client_keys(cluster)
    if new_keys & old_keys:
        raise Failure("the playbook did not make new client key pairs on the new KDC")
    for host in ENGINE_HOSTS:
        text = cluster.ssh(host, "cat /etc/mpc-kdc/server.toml").stdout
        if any(key in text for key in old_keys) or not all(key in text for key in new_keys):
            raise Failure(f"{host}: server.toml does not list the new KDC's client keys alone")
    log("the servers list the new KDC's client keys and not the failed host's")
    check_units(cluster)
    wait_for_logins(cluster, "on the new KDC")
    check_logins(cluster)
    kvnos = status_kvnos(kdc_status(cluster))
    if kvnos != saved:
        raise Failure(f"on the new KDC, status lists krbtgt kvnos {kvnos}, not {saved}")
    log(f"the new KDC serves the restored realm: krbtgt protected, kvnos {kvnos}")
    check_kept_tgt(cluster, "the KDC host was replaced (issued by the old one)")
    cross_check(cluster, "with the replaced primary")
    check_unchanged(build_dir, inventory, cluster.log_dir / "playbook-new-kdc-again.log")
