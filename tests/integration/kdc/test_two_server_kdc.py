"""A protected realm on a two-server cluster (protocol gc2 of security = "passive", and lut2; the
default, active gc2 is kdc/test_two_server_active_kdc.py's): the krbtgt key and users' keys
shared between two mpc-server processes, the stock krb5kdc with the crypto router, and
the unmodified Debian clients. The KDB module, the router and mpcctl are the ones of the
three-server realm; only the cluster configuration differs.

Asserted: kinit by password for users holding only an aes256-cts-hmac-sha1-96 or only an
aes256-cts-hmac-sha384-192 key, with FAST too, then kvno; a wrong password is refused; the
krbtgt key is in no krb5kdc process's memory.
"""

from __future__ import annotations

import re
import secrets

import pytest

from mpctest.mpc_cluster import Cluster
from mpctest.protected_kdc import ProtectedRealm, assert_scan_finds, kdc_pids, memory_contains, router_library

ATTRIBUTE = "mpc-protected"
SERVICE = "svc/two.test"
USERS = {"amy": ("amy-pw-1", "aes256-cts-hmac-sha1-96"), "bo": ("bo-pw-1", "aes256-cts-hmac-sha384-192")}
ENGINE_TIMEOUT_MS = 20000


@pytest.fixture(scope="module")
def realm(tmp_path_factory, two_server_cluster):
    if not router_library().is_file():
        pytest.fail(f"mpc_crypto_router.so not built: {router_library()}")
    cluster = two_server_cluster
    root = tmp_path_factory.mktemp("two-server-realm") / "realm"
    realm = ProtectedRealm(root, cluster, enrol_users=True, realm=f"T{secrets.token_hex(4).upper()}.TEST")
    patient = cluster.dir / "compute-patient.toml"
    Cluster.copy_client_config(cluster.compute_config, patient, ENGINE_TIMEOUT_MS)
    # A garbled AES-256 block is about 230 KB between the servers: small ticket pools keep
    # each refill short (docs/two-server.md, "Sizing the KDC's nonce pools").
    realm.router_conf.write_text(f"handle_key_file = {realm.handle_key_path}\nengine_config = {patient}\n"
                                 "pool_low = 8\npool_high = 32\n")
    try:
        realm.create()
        realm.remember_krbtgt_keys()
        realm.protect()
        for user, (password, enctype) in USERS.items():
            realm.addprinc(user, password=password, options=f"+requires_preauth -e {enctype}:normal")
            realm.setstr(user, ATTRIBUTE, "true")
        realm.addprinc(SERVICE)
        realm.start_kdc(workers=2)
        yield realm
    finally:
        realm.stop()


def kinit(realm: ProtectedRealm, user: str, password: str, ccache: str, *args: str):
    return realm.run(["kinit", "-c", ccache, *args, realm.principal(user)], input=f"{password}\n")


@pytest.mark.parametrize("user", sorted(USERS))
def test_password_login_then_kvno(realm, user):
    password, _ = USERS[user]
    ccache = f"FILE:{realm.root / (user + '.cc')}"
    result = kinit(realm, user, password, ccache)
    assert result.returncode == 0, f"{result.output}\n--- KDC log:\n{realm.kdc_log()[-3000:]}"
    listing = realm.run(["klist", "-e", "-c", ccache])
    assert realm.tgs in listing.stdout, listing.output
    service = realm.run(["kvno", "-c", ccache, realm.principal(SERVICE)])
    assert service.returncode == 0, service.output


@pytest.mark.parametrize("user", sorted(USERS))
def test_fast_login(realm, user):
    password, _ = USERS[user]
    armour = f"FILE:{realm.root / (user + '-armour.cc')}"
    first = kinit(realm, user, password, armour)
    assert first.returncode == 0, first.output
    ccache = f"FILE:{realm.root / (user + '-fast.cc')}"
    result = kinit(realm, user, password, ccache, "-T", armour)
    assert result.returncode == 0, f"{result.output}\n--- KDC log:\n{realm.kdc_log()[-3000:]}"
    assert realm.run(["kvno", "-c", ccache, realm.principal(SERVICE)]).returncode == 0


def test_wrong_password_is_refused(realm):
    result = kinit(realm, "amy", "not-amy", f"FILE:{realm.root / 'wrong.cc'}")
    assert result.returncode != 0
    assert re.search(r"Preauthentication failed|Password incorrect", result.output), result.output


def test_no_krbtgt_key_in_krb5kdc_memory(realm):
    assert kinit(realm, "amy", USERS["amy"][0], f"FILE:{realm.root / 'memory.cc'}").returncode == 0
    needles = realm.secrets()
    for pid in kdc_pids(realm.kdc_pid()):
        assert memory_contains(pid, needles) == [], pid
    # The same scan finds every needle in a separate process that holds them.
    assert_scan_finds(needles)
