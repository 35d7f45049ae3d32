"""Two KDCs of one realm on one engine cluster: a primary krb5kdc and a replica fed by the
stock kprop/kpropd, each with its own crypto router and its own compute client key, the
engine running the product's default degraded_service = "two-party".

What is asserted, with real kinit and kvno against both stock krb5kdc processes:
- a TGT from either KDC, of an unprotected and of a protected user, is accepted by the other;
- the same with one engine server killed (two-party service), and again once it is back;
- `mpcctl kdc rotate` on the primary: until the next propagation the replica refuses the
  primary's new-kvno TGTs (the documented window); after it, both issue kvno 2 TGTs, each
  accepts the other's, and TGTs issued under kvno 1 by either still work at both;
- the replica's compute key taken off the servers' lists: the replica's logins fail, the
  primary's go on.
"""

from __future__ import annotations

import re
import secrets
import subprocess
from pathlib import Path

import pytest

from mpctest import mpc_cluster, toml_files
from mpctest.protected_kdc import ProtectedRealm
from mpctest.replica_kdc import Propagation

USERS = {"alice": "alice-pw-1", "bob": "bob-pw-1"}   # bob's keys are protected
SERVICE = "svc/one"
THREE_PARTY = {1: "three-party", 2: "three-party", 3: "three-party"}


def with_ccache(realm: ProtectedRealm, ccache: Path, args: list[str], password: str | None = None
                ) -> subprocess.CompletedProcess:
    env = {**realm.env, "KRB5CCNAME": f"FILE:{ccache}"}
    return subprocess.run([str(a) for a in args], input=f"{password}\n" if password else "", env=env,
                          cwd=realm.root, capture_output=True, text=True, timeout=60)


def login(realm: ProtectedRealm, user: str, ccache: Path) -> Path:
    result = with_ccache(realm, ccache, ["kinit", f"{user}@{realm.realm}"], USERS[user])
    assert result.returncode == 0, f"kinit {user} at {realm.root.name}: {result.stdout}{result.stderr}"
    return ccache


def tgt_kvno_seen_by(realm: ProtectedRealm, ccache: Path) -> int:
    """The kvno of the TGT that `realm`'s KDC issues for a TGS request made with `ccache`."""
    result = with_ccache(realm, ccache, ["kvno", realm.tgs])
    assert result.returncode == 0, f"kvno {realm.tgs} at {realm.root.name}: {result.stdout}{result.stderr}"
    return int(re.search(r"kvno = (\d+)", result.stdout)[1])


def service_ticket(realm: ProtectedRealm, ccache: Path) -> subprocess.CompletedProcess:
    return with_ccache(realm, ccache, ["kvno", f"{SERVICE}@{realm.realm}"])


def assert_each_accepts_the_others(kdcs: dict[str, ProtectedRealm], root: Path, label: str,
                                   tgt_kvno: int) -> list[Path]:
    """kinit at each KDC, then a service ticket and a TGT from the other; the ccaches."""
    ccaches = []
    for issuer_name, issuer in kdcs.items():
        for other_name, other in kdcs.items():
            if other is issuer:
                continue
            for user in USERS:
                ccache = login(issuer, user, root / f"{label}-{issuer_name}-{user}.ccache")
                result = service_ticket(other, ccache)
                assert result.returncode == 0, \
                    f"{label}: {other_name} refused {user}'s TGT from {issuer_name}: {result.stdout}{result.stderr}"
                assert tgt_kvno_seen_by(other, ccache) == tgt_kvno
                ccaches.append(ccache)
    return ccaches


# Short form: all three servers serving throughout; long form: also with server 1 down (the
# pair's logins are test_degraded_logins.py's) and back.
@pytest.mark.timeout(240)
@pytest.mark.parametrize("outage", [pytest.param(False, id="three-servers"),
                                    pytest.param(True, id="with-an-outage", marks=pytest.mark.long)])
def test_primary_and_replica_serve_one_realm_from_one_engine(tmp_path, outage):
    cluster = mpc_cluster.start_cluster(tmp_path / "c", degraded_service="two-party",
                                        compute_clients=("replica-compute",))
    # As in test_degraded_logins: two servers garble every job, and on a busy 2-core host one
    # GCM prefetch may need more than the default 2 s.
    for config in (cluster.compute_config, cluster.dir / "replica-compute.toml"):
        cluster.set_client_timeout(config, 5000)
    name = f"R{secrets.token_hex(4).upper()}.TEST"
    primary = ProtectedRealm(tmp_path / "primary", cluster, enrol_users=True, realm=name)
    replica = ProtectedRealm(tmp_path / "replica", cluster, compute_config=cluster.dir / "replica-compute.toml",
                             realm=name)
    assert primary.handle_key_path.read_bytes() != replica.handle_key_path.read_bytes()
    propagation = Propagation(primary, replica, tmp_path / "kprop")
    kdcs = {"primary": primary, "replica": replica}
    try:
        primary.create()
        for user, password in USERS.items():
            primary.addprinc(user, password, options="+requires_preauth")
        primary.addprinc(SERVICE)
        primary.protect()
        primary.mpcctl_kdc("protect", "--principal", "bob")
        propagation.prepare()
        primary.start_kdc()
        propagation.start_kpropd()
        propagation.propagate()
        replica.start_kdc()
        assert "mpc-protected" in replica.kadmin_local(f"getstrs {primary.tgs}").stdout

        before_rotation = assert_each_accepts_the_others(kdcs, tmp_path, "three-servers", 1)

        if outage:
            cluster.kill_server(1)
            before_rotation += assert_each_accepts_the_others(kdcs, tmp_path, "server-1-down", 1)
            cluster.restart_server(1)
            cluster.wait_for_modes(THREE_PARTY, deadline_s=20)
            assert_each_accepts_the_others(kdcs, tmp_path, "server-1-back", 1)

        rotated = primary.mpcctl_kdc("rotate", primary.tgs, "--cluster", str(cluster.admin_config))
        assert "kvno 2 is engine key" in rotated.stdout, rotated.stdout
        early = login(primary, "alice", tmp_path / "before-propagation.ccache")
        refused = service_ticket(replica, early)
        assert refused.returncode != 0, "the replica accepted a TGT under a kvno it was never sent"
        propagation.propagate()
        assert service_ticket(replica, early).returncode == 0
        assert_each_accepts_the_others(kdcs, tmp_path, "rotated", 2)
        for ccache in before_rotation:
            for kdc_name, kdc in kdcs.items():
                result = service_ticket(kdc, ccache)
                assert result.returncode == 0, \
                    f"{kdc_name} refused a kvno 1 TGT ({ccache.name}) after the rotation: {result.stderr}"

        # Retiring the replica (lost, or compromised): its compute key off every server's list.
        for party in cluster.parties:
            with toml_files.editing(cluster.server_dir(party) / "server.toml") as config:
                config["clients"]["compute"].remove("../replica-compute.pub")
            cluster.kill_server(party)
            cluster.restart_server(party)
            cluster.wait_for_modes(THREE_PARTY, deadline_s=20)
        result = with_ccache(replica, tmp_path / "retired.ccache", ["kinit", f"alice@{name}"], USERS["alice"])
        assert result.returncode != 0, "the servers still serve the retired replica's compute key"
        for user in USERS:
            ccache = login(primary, user, tmp_path / f"replica-retired-{user}.ccache")
            assert service_ticket(primary, ccache).returncode == 0
            assert tgt_kvno_seen_by(primary, ccache) == 2
    finally:
        propagation.stop()
        primary.stop()
        replica.stop()
        cluster.stop()

