"""docs/operations.md "Rotate keys", the krbtgt key: the first rotation (a TGT from before it
still accepted; the replica refuses the new kvno until it is sent the database), and the
second, once the longest ticket lifetime and the clock skew have passed, which retires the
kvno the first one kept from the database and the engine."""

from __future__ import annotations

import re
import time

from .commands import KPROP_COMMAND, ROTATE_COMMAND
from .common import CLOCKSKEW_S, REPLICA, TICKET_LIFETIME_S, Failure, log
from .containers import Cluster
from .realm import (PASSWORD, SERVICE, TGS, USER, check_kept_tgt, cross_check, cross_conf, kdc_status, keep_tgt, login,
                    propagate, status_kvnos, wait_for_logins)


def check_rotation(cluster: Cluster) -> float:
    """docs/operations.md "Rotate keys": a new kvno, new TGTs under it, and a TGT issued
    before the rotation still accepted (its kvno is kept until the longest ticket lifetime).
    Returns when the new kvno was made (monotonic), for the rotation that retires the old one."""
    before_kvnos = status_kvnos(kdc_status(cluster))
    if not before_kvnos:
        raise Failure("mpcctl kdc status lists no sound krbtgt kvno before the rotation")
    old = max(before_kvnos)
    old_cache = "FILE:/root/before-rotation.ccache"
    # Only a TGT in this cache: the service ticket asked for after the rotation must come from
    # a TGS exchange that presents the old TGT.
    cluster.ssh("kdc", f"printf '%s\\n' '{PASSWORD}' | KRB5CCNAME={old_cache} kinit {USER} >/dev/null")
    # No propagation by the timer between the rotation and the check of the replica's window.
    cluster.ssh("kdc", "systemctl stop mpc-kprop.timer")

    done = cluster.ssh("kdc", ROTATE_COMMAND)
    rotated = time.monotonic()
    log(f"{ROTATE_COMMAND}: {done.stdout.strip()}")
    status = kdc_status(cluster)
    after = status_kvnos(status)
    if old + 1 not in after or old not in after:
        raise Failure(f"after rotate, status should list kvno {old + 1} and the kept kvno {old}:\n{status}")
    log(f"mpcctl kdc status after rotate: krbtgt kvnos {after}")

    done, seconds = login(cluster)
    if done.returncode != 0:
        raise Failure(f"kinit/kvno failed after rotate: {done.stdout}{done.stderr}")
    # kvno of the cached TGT itself: which key the KDC issued it under.
    new_tgt = cluster.ssh("kdc", f"kvno {TGS}").stdout.strip()
    if not new_tgt.endswith(f"kvno = {old + 1}"):
        raise Failure(f"a TGT issued after rotate is not under kvno {old + 1}: {new_tgt}")
    log(f"kinit and kvno after rotate ({seconds:.2f} s); new TGT: {new_tgt}")

    old_tgt = cluster.ssh("kdc", f"KRB5CCNAME={old_cache} kvno {TGS}").stdout.strip()
    if not old_tgt.endswith(f"kvno = {old}"):
        raise Failure(f"the TGT from before rotate is not under kvno {old}: {old_tgt}")
    done = cluster.ssh("kdc", f"KRB5CCNAME={old_cache} kvno {SERVICE}", check=False)
    if done.returncode != 0:
        raise Failure(f"a TGT from before rotate (kvno {old}) was refused: {done.stdout}{done.stderr}")
    cluster.ssh("kdc", f"kdestroy -q -c {old_cache}")
    log(f"TGT from before rotate ({old_tgt}) still gets a service ticket: {done.stdout.strip()}")

    check_replica_window(cluster, old + 1)
    cluster.ssh("kdc", "systemctl start mpc-kprop.timer")
    return rotated


def check_replica_window(cluster: Cluster, kvno: int) -> None:
    """After a rotation on the primary, the replica refuses TGTs under the new KVNO until it is
    sent the database; once sent (KPROP_COMMAND), each KDC accepts the other's TGTs under it."""
    done = cluster.ssh(REPLICA, f"export KRB5CCNAME=FILE:/root/window.ccache; "
                                f"printf '%s\\n' '{PASSWORD}' | KRB5_CONFIG={cross_conf('kdc')} kinit {USER} "
                                f">/dev/null && KRB5_CONFIG={cross_conf(REPLICA)} kvno {SERVICE}; status=$?; "
                                f"kdestroy -q; exit $status", check=False, timeout=60)
    if done.returncode == 0:
        raise Failure(f"{REPLICA} accepted a TGT under kvno {kvno} before it was sent the database: {done.stdout}")
    log(f"before the database is sent, {REPLICA} refuses a TGT under kvno {kvno}: {done.stderr.strip()[:120]}")
    propagate(cluster)
    cross_check(cluster, f"after rotate and {KPROP_COMMAND}", tgt_kvno=kvno)


def engine_kvnos(cluster: Cluster) -> list[int]:
    """Versions of the krbtgt engine key (aes256-gcm) the engine lists."""
    listing = cluster.ssh("kdc", "mpcctl key list --cluster /etc/mpc-kdc/cluster-admin.toml").stdout
    return sorted(int(fields[1]) for fields in (line.split("\t") for line in listing.splitlines())
                  if len(fields) >= 3 and fields[2] == "aes256-gcm")


def check_second_rotation(cluster: Cluster, first_rotated: float) -> None:
    """docs/operations.md "Rotate keys": `rotate` run again once the longest ticket lifetime
    has passed since the first one retires the kvno that one kept: its marker leaves the
    database and its shares the engine, the kvno it made stays, and a new one is added."""
    before = sorted(status_kvnos(kdc_status(cluster)))
    if len(before) != 2:
        raise Failure(f"before the second rotation, status should list the new and the kept kvno, not {before}")
    kept, retired = before[1], before[0]
    # The tool retires a kvno once its successor is older, on the engine's clock, than the
    # longest lifetime plus the skew; a few seconds more for whole-second rounding.
    ready = first_rotated + TICKET_LIFETIME_S + CLOCKSKEW_S + 5
    if time.monotonic() < ready:
        log(f"waiting {ready - time.monotonic():.0f} s: the longest ticket lifetime ({TICKET_LIFETIME_S} s) plus "
            f"the clock skew ({CLOCKSKEW_S} s) since the first rotation")
        time.sleep(ready - time.monotonic())
    keep_tgt(cluster)  # under the kvno the first rotation made, which this one keeps
    done = cluster.ssh("kdc", ROTATE_COMMAND)
    log(f"{ROTATE_COMMAND}: {done.stdout.strip()}")
    if f"kept kvnos: {kept};" not in done.stdout or f"retired kvnos: {retired}" not in done.stdout:
        raise Failure(f"the second rotation should keep kvno {kept} and retire kvno {retired}:\n{done.stdout}")
    status = kdc_status(cluster)
    after = sorted(status_kvnos(status))
    if after != [kept, kept + 1] or re.search(rf"^\s+kvno {retired}\b", status, re.MULTILINE):
        raise Failure(f"after the second rotation, status should list kvnos {kept} and {kept + 1} alone:\n{status}")
    engine = engine_kvnos(cluster)
    if engine != [kept, kept + 1]:
        raise Failure(f"after the second rotation the engine holds krbtgt kvnos {engine}, not {[kept, kept + 1]}")
    log(f"mpcctl kdc status and mpcctl key list after the second rotation: krbtgt kvnos {after}; "
        f"kvno {retired} retired from the database and the engine")
    wait_for_logins(cluster, "after the second rotation")
    new_tgt = cluster.ssh("kdc", f"kvno {TGS}").stdout.strip()
    if not new_tgt.endswith(f"kvno = {kept + 1}"):
        raise Failure(f"a TGT issued after the second rotation is not under kvno {kept + 1}: {new_tgt}")
    log(f"new TGT: {new_tgt}")
    check_kept_tgt(cluster, f"the second rotation (under the kept kvno {kept})")
    propagate(cluster)
    cross_check(cluster, f"after the second rotation and {KPROP_COMMAND}", tgt_kvno=kept + 1)
