"""docs/operations.md "Install by hand" and "Enroll" by hand, the first rotation, and "Replace
the KDC host" without Ansible: a site of its own on four more containers (three servers and a
KDC, realm EXAMPLE.ORG, the guide's host names) set up with the guide's commands and files
alone."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

from .commands import (ADMIN_CLUSTER_COMMAND, DATABASE_CREATE_COMMAND, HAND_CLUSTER_TOML, HAND_KDC_CONF,
                       HAND_KRB5_CONF, HAND_REALM, HAND_ROTATE_COMMAND, HAND_ROUTER_CONF, HANDLE_KEY_NEW_COMMAND,
                       KDC_KEYGEN_COMMAND, KDC_PACKAGES_COMMAND, KDC_RESTART_COMMAND, PROTECT_COMMAND,
                       SERVER_ENABLE_COMMAND, SERVER_KEY_OWNER_COMMAND, SERVER_KEYGEN_COMMAND, SERVER_RESTART_COMMAND,
                       STATUS_COMMAND, UPGRADE_SERVER_COMMAND, hand_server_toml)
from .common import HAND_HOSTS, HOST_ALIASES, HOSTS, Failure, address, log, package_file, package_version, run
from .containers import Cluster, put_file
from .realm import PASSWORD, USER, check_kept_tgt, kdc_status, login, status_kvnos, wait_for_logins
from .replace_kdc import replace_kdc_host

HAND_TGS = f"krbtgt/{HAND_REALM}@{HAND_REALM}"
HAND_SERVICE = "host/kdc.example.org"


def check_install_by_hand(cluster: Cluster, package_dir: Path) -> None:
    """docs/operations.md "Install by hand" and "Enroll" by hand, then the first rotation: a
    site of its own (three servers and a KDC, realm EXAMPLE.ORG, the guide's host names) set up
    with the guide's commands and files alone, without Ansible; logins with the krbtgt key
    protected."""
    servers, kdc = ["hand1", "hand2", "hand3"], "handkdc"
    HOSTS.update(HAND_HOSTS)
    for name in HAND_HOSTS:
        cluster.start(name)
    cluster.wait_booted(tuple(HAND_HOSTS))
    log(f"{', '.join(HAND_HOSTS)} booted for a site installed by hand ({', '.join(HOST_ALIASES.values())})")
    version = package_version(package_dir)
    debs = {name: package_file(package_dir, name) for name in ("mpc-server", "mpc-kdc-plugin")}
    for name in HAND_HOSTS:
        names = ["mpc-server"] + (["mpc-kdc-plugin"] if name == kdc else [])
        run(["scp", *cluster.ssh_args(name)[1:-1], *[debs[n] for n in names], f"root@{address(name)}:/root/"])

    # Steps 1 and 2: packages and keys, made on each host.
    for name in servers:
        cluster.ssh(name, f"cd /root && {UPGRADE_SERVER_COMMAND.format(version=version)}", timeout=180)
        cluster.ssh(name, SERVER_KEYGEN_COMMAND)
        cluster.ssh(name, SERVER_KEY_OWNER_COMMAND)
    cluster.ssh(kdc, f"cd /root && {KDC_PACKAGES_COMMAND.format(version=version)}", timeout=180)
    cluster.ssh(kdc, KDC_KEYGEN_COMMAND)
    # Step 3: the public keys, copied as an operator would, here through the controller.
    server_pubs = {party: cluster.ssh(name, "cat /etc/mpc-kdc/server.pub").stdout
                   for party, name in enumerate(servers, 1)}
    kdc_pubs = {role: cluster.ssh(kdc, f"cat /etc/mpc-kdc/kdc-{role}.pub").stdout for role in ("compute", "admin")}
    # Step 4: each server's configuration, then the server.
    for party, name in enumerate(servers, 1):
        for other, pub in server_pubs.items():
            if other != party:
                put_file(cluster, name, f"/etc/mpc-kdc/server{other}.pub", pub)
        for role, pub in kdc_pubs.items():
            put_file(cluster, name, f"/etc/mpc-kdc/kdc-{role}.pub", pub)
        put_file(cluster, name, "/etc/mpc-kdc/server.toml", hand_server_toml(party))
        cluster.ssh(name, SERVER_ENABLE_COMMAND)
    # Step 5: the KDC's files, keys, database and service.
    for party, pub in server_pubs.items():
        put_file(cluster, kdc, f"/etc/mpc-kdc/server{party}.pub", pub)
    for path, text in (("/etc/krb5.conf", HAND_KRB5_CONF), ("/etc/krb5kdc/kdc.conf", HAND_KDC_CONF),
                       ("/etc/mpc-kdc/cluster.toml", HAND_CLUSTER_TOML),
                       ("/etc/mpc-kdc/router.conf", HAND_ROUTER_CONF)):
        put_file(cluster, kdc, path, text)
    cluster.ssh(kdc, ADMIN_CLUSTER_COMMAND)
    cluster.ssh(kdc, HANDLE_KEY_NEW_COMMAND)
    master = "hand-" + uuid.uuid4().hex
    cluster.ssh(kdc, f"printf '%s\\n%s\\n' '{master}' '{master}' | {DATABASE_CREATE_COMMAND} >/dev/null")
    cluster.ssh(kdc, KDC_RESTART_COMMAND)
    for name in servers:
        state = cluster.ssh(name, "systemctl is-active mpc-server.service", check=False).stdout.strip()
        enabled = cluster.ssh(name, "systemctl is-enabled mpc-server.service", check=False).stdout.strip()
        if (state, enabled) != ("active", "enabled"):
            raise Failure(f"{name}: mpc-server.service is {state} and {enabled}, installed by hand")
    state = cluster.ssh(kdc, "systemctl is-active krb5-kdc.service", check=False).stdout.strip()
    if state != "active":
        raise Failure(f"{kdc}: krb5-kdc.service is {state}, installed by hand")
    log(f"installed by hand: mpc-server active and enabled on {', '.join(servers)}; krb5-kdc active on {kdc}")

    # "Enroll", by hand: the realm is krb5.conf's default.
    done = cluster.ssh(kdc, STATUS_COMMAND, check=False)
    if done.returncode != 0 or "0 protected principals, 0 problems" not in done.stdout:
        raise Failure(f"{kdc}: before protect, {STATUS_COMMAND} exited {done.returncode}:\n{done.stdout}{done.stderr}")
    done = cluster.ssh(kdc, PROTECT_COMMAND)
    log(f"{PROTECT_COMMAND}: {done.stdout.strip()}")
    status = kdc_status(cluster, kdc)
    if not re.search(rf"^{re.escape(HAND_TGS)}: protected\b", status, re.MULTILINE) or \
            status_kvnos(status, HAND_TGS) != [1]:
        raise Failure(f"{kdc}: after protect, status should list {HAND_TGS} protected at kvno 1:\n{status}")
    log(f"{kdc}: {STATUS_COMMAND}: {status.strip()}")
    cluster.ssh(kdc, f"kadmin.local -q 'addprinc -pw {PASSWORD} {USER}' && "
                     f"kadmin.local -q 'addprinc -randkey {HAND_SERVICE}'")
    wait_for_logins(cluster, f"on {kdc}, installed and enrolled by hand", kdc, HAND_SERVICE)
    tgt = cluster.ssh(kdc, f"kvno {HAND_TGS}").stdout.strip()
    if not tgt.endswith("kvno = 1"):
        raise Failure(f"{kdc}: the TGT after protect is not under kvno 1: {tgt}")
    log(f"{kdc}: kinit and kvno succeed; TGT: {tgt}")

    # "Then rotate once".
    done = cluster.ssh(kdc, HAND_ROTATE_COMMAND)
    log(f"{kdc}: {HAND_ROTATE_COMMAND}: {done.stdout.strip()}")
    kvnos = sorted(status_kvnos(kdc_status(cluster, kdc), HAND_TGS))
    if kvnos != [1, 2]:
        raise Failure(f"{kdc}: after rotate, status lists krbtgt kvnos {kvnos}, not [1, 2]")
    done, _ = login(cluster, host=kdc, service=HAND_SERVICE)
    tgt = cluster.ssh(kdc, f"kvno {HAND_TGS}", check=False).stdout.strip()
    if done.returncode != 0 or not tgt.endswith("kvno = 2"):
        raise Failure(f"{kdc}: after rotate, kinit/kvno: {done.stdout}{done.stderr}; TGT: {tgt}")
    log(f"{kdc}: after rotate, krbtgt kvnos {kvnos}, new TGT: {tgt}")

    # "Replace the KDC host" without Ansible: new client key pairs made and handed to the
    # servers by hand.
    replace_kdc_host(cluster, kdc, package_dir)
    cluster.ssh(kdc, KDC_KEYGEN_COMMAND)
    kdc_pubs = {role: cluster.ssh(kdc, f"cat /etc/mpc-kdc/kdc-{role}.pub").stdout for role in ("compute", "admin")}
    for name in servers:
        for role, pub in kdc_pubs.items():
            put_file(cluster, name, f"/etc/mpc-kdc/kdc-{role}.pub", pub)
        cluster.ssh(name, SERVER_RESTART_COMMAND)
    cluster.ssh(kdc, KDC_RESTART_COMMAND)
    wait_for_logins(cluster, f"on {kdc} replaced by hand", kdc, HAND_SERVICE)
    status = kdc_status(cluster, kdc)
    if sorted(status_kvnos(status, HAND_TGS)) != kvnos:
        raise Failure(f"{kdc}: on the new KDC, status should list krbtgt kvnos {kvnos}:\n{status}")
    log(f"{kdc}: replaced by hand (new client keys given to the servers): krbtgt kvnos {kvnos}, kinit and kvno "
        f"succeed")
    check_kept_tgt(cluster, f"{kdc} was replaced by hand (issued by the old one)", kdc, HAND_SERVICE)

    for name in HAND_HOSTS:
        cluster.destroy(name)
        del HOSTS[name]
