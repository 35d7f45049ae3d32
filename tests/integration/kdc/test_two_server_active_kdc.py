"""A protected realm on a two-server cluster of security = "active" (protocol gc2, authenticated
garbling): the krbtgt key and users' keys shared between two mpc-server processes, each held to
the share the importing client dealt it, the stock krb5kdc with the crypto router
(gcm_masks = aes: tickets under nonces masked by AES_K, since nonces with local masks have no
actively secure two-party form), and the unmodified Debian clients.

Asserted: kinit by password for users holding only an aes256-cts-hmac-sha1-96 or only an
aes256-cts-hmac-sha384-192 key, with FAST for the first, then kvno (every ticket sealed and opened by the
authenticated GCM jobs); a wrong password is refused; a server that feeds its key share with a
bit flipped gets no login through (the KDC's jobs abort), and once it is honest again logins
work.
"""

from __future__ import annotations

import re
import secrets
import time

import pytest

from mpctest.mpc_cluster import Cluster
from mpctest.protected_kdc import ProtectedRealm, router_library

ATTRIBUTE = "mpc-protected"
SERVICE = "svc/active.test"
USERS = {"amy": ("amy-pw-1", "aes256-cts-hmac-sha1-96"), "bo": ("bo-pw-1", "aes256-cts-hmac-sha384-192")}
ENGINE_TIMEOUT_MS = 20000


@pytest.fixture(scope="module")
def realm(tmp_path_factory):
    if not router_library().is_file():
        pytest.fail(f"mpc_crypto_router.so not built: {router_library()}")
    root = tmp_path_factory.mktemp("active-realm")
    cluster = Cluster(root / "c", protocol="gc2")
    realm = None
    try:
        cluster.init()
        for party in cluster.parties:
            cluster.set_server_setting(party, "security", "active")
            # A login on an RFC 8009 key with FAST takes several hundred thousand entries.
            cluster.set_server_table_setting(party, "limits", "and_material_entries", 1048576)
        cluster.start()
        # An AS exchange takes seconds here: over UDP the client would send it again over TCP
        # after one, and the KDC's second worker would spend the same AND material on the copy.
        realm = ProtectedRealm(root / "realm", cluster, enrol_users=True, clients_use_tcp=True,
                               realm=f"A{secrets.token_hex(4).upper()}.TEST")
        patient = cluster.dir / "compute-patient.toml"
        Cluster.copy_client_config(cluster.compute_config, patient, ENGINE_TIMEOUT_MS)
        # Small ticket pools: a prefetched nonce costs three AES-256 blocks of AND material.
        realm.router_conf.write_text(f"handle_key_file = {realm.handle_key_path}\nengine_config = {patient}\n"
                                     "pool_low = 2\npool_high = 6\ngcm_masks = aes\n")
        realm.create()
        realm.protect()
        for user, (password, enctype) in USERS.items():
            realm.addprinc(user, password=password, options=f"+requires_preauth -e {enctype}:normal")
            realm.setstr(user, ATTRIBUTE, "true")
        realm.addprinc(SERVICE)
        realm.start_kdc(workers=2)
        wait_until_logins_served(realm)
        yield realm
    finally:
        if realm is not None:
            realm.stop()
        cluster.stop()


def kinit(realm: ProtectedRealm, user: str, password: str, ccache: str, *args: str):
    return realm.run(["kinit", "-c", ccache, *args, realm.principal(user)], input=f"{password}\n")


def served(realm: ProtectedRealm, command: list[str], stdin: str | None = None, deadline_s: float = 120):
    """`command`'s result once it succeeds. Each login takes several hundred thousand entries of
    the servers' AND material, made at about 100,000 a second on two cores, and a job whose
    entries are neither made nor being made is refused as busy (the KDC then answers with an
    error): back-to-back logins wait for the pool to refill, long enough between tries that a
    try's first jobs do not eat what its last one needs."""
    deadline = time.monotonic() + deadline_s
    while True:
        result = realm.run(command, input=stdin) if stdin is not None else realm.run(command)
        if result.returncode == 0:
            return result
        assert time.monotonic() < deadline, f"{result.output}\n--- KDC log:\n{realm.kdc_log()[-3000:]}"
        time.sleep(5)


def wait_until_logins_served(realm: ProtectedRealm) -> None:
    password, _ = USERS["amy"]
    served(realm, ["kinit", "-c", f"FILE:{realm.root / 'warm-up.cc'}", realm.principal("amy")], f"{password}\n")


def login_then_kvno(realm: ProtectedRealm, user: str, tag: str) -> None:
    password, _ = USERS[user]
    ccache = f"FILE:{realm.root / (user + tag + '.cc')}"
    served(realm, ["kinit", "-c", ccache, realm.principal(user)], f"{password}\n")
    assert realm.tgs in realm.run(["klist", "-e", "-c", ccache]).stdout
    served(realm, ["kvno", "-c", ccache, realm.principal(SERVICE)])


@pytest.mark.timeout(300)
@pytest.mark.parametrize("user", sorted(USERS))
def test_password_login_then_kvno(realm, user):
    login_then_kvno(realm, user, "")


@pytest.mark.timeout(300)
def test_fast_login(realm):
    """FAST for the aes256-cts-hmac-sha1-96 user. (Its KRB-FX-CF2 jobs under an RFC 8009 key
    take over 1.2 million entries of AND material for one login, more than this machine's two
    cores make in the time a kinit waits while the KDC's nonce refills take their share.)"""
    user = "amy"
    password, _ = USERS[user]
    armour = f"FILE:{realm.root / (user + '-armour.cc')}"
    served(realm, ["kinit", "-c", armour, realm.principal(user)], f"{password}\n")
    ccache = f"FILE:{realm.root / (user + '-fast.cc')}"
    served(realm, ["kinit", "-c", ccache, "-T", armour, realm.principal(user)], f"{password}\n")
    served(realm, ["kvno", "-c", ccache, realm.principal(SERVICE)])


@pytest.mark.timeout(300)
def test_wrong_password_is_refused(realm):
    result = kinit(realm, "amy", "not-amy", f"FILE:{realm.root / 'wrong.cc'}")
    assert result.returncode != 0
    assert re.search(r"Preauthentication failed|Password incorrect", result.output), result.output


@pytest.mark.timeout(400)
def test_a_server_feeding_another_key_share_gets_no_login_through(realm):
    """Server 2 feeds its share of every key with a bit flipped (mpc-server-faults, share-bit):
    each job of a login aborts on server 1's check of the share, so no ticket is issued; the
    KDC answers an error, never a ticket under a shifted key. Honest again, it serves."""
    cluster = realm.cluster
    cluster.kill_server(2)
    cluster.restart_server(2, fault="share-bit")
    try:
        # Until server 1 has caught the deviation (the first tries may find the pool refilling).
        deadline = time.monotonic() + 120
        while cluster.verification_refusals()[1] == 0:
            result = kinit(realm, "amy", USERS["amy"][0], f"FILE:{realm.root / 'deviating.cc'}")
            assert result.returncode != 0, result.output
            assert time.monotonic() < deadline, realm.kdc_log()[-3000:]
            time.sleep(1)
        result = kinit(realm, "amy", USERS["amy"][0], f"FILE:{realm.root / 'deviating.cc'}")
        assert result.returncode != 0, result.output
    finally:
        cluster.kill_server(2)
        cluster.restart_server(2)
    wait_until_logins_served(realm)
    login_then_kvno(realm, "amy", "-after")
