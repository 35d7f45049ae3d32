"""The test's realm as its clients see it: the test user and service, logins (and waiting for
them to work again), `mpcctl kdc status` and the krbtgt kvnos it lists, a TGT kept across a
procedure, the database sent to the replica, and the cross check that each KDC accepts the
other's TGTs."""

from __future__ import annotations

import re
import subprocess
import time
import uuid

from .commands import KPROP_COMMAND, STATUS_COMMAND
from .common import DOMAIN, HOSTS, REALM, REPLICA, Failure, address, log
from .containers import Cluster, put_file

USER = "rollout-user"
PASSWORD = "rollout-" + uuid.uuid4().hex
SERVICE = f"host/kdc.{DOMAIN}"
TGS = f"krbtgt/{REALM}@{REALM}"
TGT_CACHE = "FILE:/root/earlier.ccache"
RECOVER_TIMEOUT_S = 60


def add_principals(cluster: Cluster) -> None:
    """The test's user and service on the primary, then sent to the replica at once, if there is
    one. With a replica the role has made host/kdc (kprop's principal) already."""
    cluster.ssh("kdc", f"kadmin.local -q 'addprinc -pw {PASSWORD} {USER}' && "
                       f"{{ kadmin.local -q 'getprinc {SERVICE}' | grep -q '^Principal: ' || "
                       f"kadmin.local -q 'addprinc -randkey {SERVICE}'; }}")
    if REPLICA in HOSTS:
        propagate(cluster)


def propagate(cluster: Cluster) -> None:
    started = time.monotonic()
    cluster.ssh("kdc", KPROP_COMMAND, timeout=180)
    sent = cluster.ssh("kdc", "journalctl -u mpc-kprop.service --no-pager -o cat -n 20 | "
                              "grep 'Database propagation to' | tail -n 1", check=False).stdout.strip()
    log(f"{KPROP_COMMAND} ({time.monotonic() - started:.1f} s): {sent}")


def cross_conf(name: str) -> str:
    return f"/root/krb5-{name}-only.conf"


def cross_check(cluster: Cluster, what: str, tgt_kvno: int | None = None) -> None:
    """Each KDC accepts the other's TGTs: kinit through a krb5.conf naming one KDC alone, then a
    service ticket through one naming the other alone (on the replica's host, as a client).
    With TGT_KVNO, both KDCs issue TGTs under it."""
    for name in ("kdc", REPLICA):
        put_file(cluster, REPLICA, cross_conf(name),
                 f"[libdefaults]\n    default_realm = {REALM}\n    dns_lookup_kdc = false\n"
                 f"    dns_lookup_realm = false\n    rdns = false\n\n[realms]\n    {REALM} = {{\n"
                 f"        kdc = {address(name)}\n    }}\n")
    kvnos = {}
    for issuer, server in (("kdc", REPLICA), (REPLICA, "kdc")):
        ccache = "FILE:/root/cross-check.ccache"
        done = cluster.ssh(REPLICA, f"export KRB5CCNAME={ccache}; kdestroy -q 2>/dev/null; "
                                    f"printf '%s\\n' '{PASSWORD}' | KRB5_CONFIG={cross_conf(issuer)} kinit {USER} "
                                    f">/dev/null && KRB5_CONFIG={cross_conf(issuer)} kvno {TGS} && "
                                    f"KRB5_CONFIG={cross_conf(server)} kvno {SERVICE}; status=$?; kdestroy -q; "
                                    f"exit $status", check=False, timeout=60)
        if done.returncode != 0:
            raise Failure(f"cross check {what}: a TGT from {issuer} got no service ticket at {server}: "
                          f"{done.stdout}{done.stderr}")
        kvnos[issuer] = int(re.search(r"kvno = (\d+)", done.stdout.splitlines()[0]).group(1))
    if tgt_kvno is not None and set(kvnos.values()) != {tgt_kvno}:
        raise Failure(f"cross check {what}: the KDCs issue TGTs under kvnos {kvnos}, not {tgt_kvno}")
    log(f"cross check {what}: a TGT from kdc gets a service ticket at {REPLICA} and one from {REPLICA} "
        f"at kdc (TGT kvnos: " + ", ".join(f"{name} {kvno}" for name, kvno in kvnos.items()) + ")")


def login(cluster: Cluster, timeout=60, host="kdc", service=SERVICE) -> tuple[subprocess.CompletedProcess, float]:
    started = time.monotonic()
    done = cluster.ssh(host, f"kdestroy -q 2>/dev/null; printf '%s\\n' '{PASSWORD}' | kinit {USER} >/dev/null "
                             f"&& kvno {service}", check=False, timeout=timeout)
    return done, time.monotonic() - started


def kdc_status(cluster: Cluster, host="kdc") -> str:
    """`mpcctl kdc status` output; exit 0 means every marker has its engine key on all three servers."""
    done = cluster.ssh(host, STATUS_COMMAND, check=False)
    if done.returncode != 0:
        raise Failure(f"{STATUS_COMMAND} exited {done.returncode}:\n{done.stdout}{done.stderr}")
    return done.stdout


def status_kvnos(status: str, tgs=TGS) -> list[int]:
    """The krbtgt kvnos whose marker is sound and whose engine key all three servers hold."""
    kvnos, in_tgs = [], False
    for line in status.splitlines():
        if not line.startswith(" "):
            in_tgs = line.startswith(tgs + ":")
        elif in_tgs:
            found = re.match(r"\s+kvno (\d+): marker ok, engine key on all three servers\b", line)
            if found:
                kvnos.append(int(found.group(1)))
    return kvnos


def wait_for_logins(cluster: Cluster, what: str, host="kdc", service=SERVICE) -> None:
    """Logins again within RECOVER_TIMEOUT_S, with nothing done but asking."""
    deadline = time.monotonic() + RECOVER_TIMEOUT_S
    started = time.monotonic()
    while True:
        done, _ = login(cluster, host=host, service=service)
        if done.returncode == 0:
            break
        if time.monotonic() > deadline:
            raise Failure(f"logins did not recover within {RECOVER_TIMEOUT_S} s {what}: {done.stdout}{done.stderr}")
        time.sleep(1)
    log(f"logins work {time.monotonic() - started:.1f} s {what}")


def keep_tgt(cluster: Cluster, host="kdc") -> None:
    """A TGT in a cache of its own, to show later that tickets issued before a change still work."""
    cluster.ssh(host, f"printf '%s\\n' '{PASSWORD}' | KRB5CCNAME={TGT_CACHE} kinit {USER} >/dev/null")


def check_kept_tgt(cluster: Cluster, what: str, host="kdc", service=SERVICE) -> None:
    done = cluster.ssh(host, f"KRB5CCNAME={TGT_CACHE} kvno {service} && kdestroy -q -c {TGT_CACHE}", check=False)
    if done.returncode != 0:
        raise Failure(f"a TGT from before {what} was refused: {done.stdout}{done.stderr}")
    log(f"a TGT from before {what} still gets a service ticket")
