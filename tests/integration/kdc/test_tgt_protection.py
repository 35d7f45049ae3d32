"""TGT protection end to end: the stock Debian krb5kdc issues and accepts tickets under a
krbtgt key that exists only as shares on the three engine servers.

Real processes only: three mpc-server processes, a realm whose database goes through
mpc_kdb.so over db2, `mpcctl kdc protect` on it, krb5kdc with mpc_crypto_router.so
preloaded, and the unmodified MIT clients (kinit, klist, kvno). What is asserted:
- kinit with a password and a keytab, klist -e, kvno, renewal, FAST armor (kinit -T),
  user-to-user, with krb5kdc as one process and with -w 2;
- a TGT with one flipped byte, a TGT from before protection (under the old key), the same
  relabelled as a protected ticket, and a ticket sealed under a random key are rejected;
- no krbtgt key bytes (nor the engine key derived from them, their round keys or the
  engine key's GHASH key H) in any file of the realm or in the memory of any krb5kdc
  process after a burst of logins; the same scan finds them all in a process that holds them;
- one server stopped: kinit fails at once with the engine's message in the KDC log and
  krb5kdc stays up; the server restarted: logins work again, nothing else restarted;
- one server that alters its share of the PAC's KDC checksum (made in the same round trip as
  the server checksum) gets no TGT out: the seal's check refuses it;
- a server that answers with garbage, truncated replies or not at all never brings
  krb5kdc down.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
import zmq

from mpctest import ccache_tickets, mpc_cluster
from mpctest.krb5_realm import Realm
from mpctest.protected_kdc import (PRIVATE_ENCTYPE, ProtectedRealm, assert_scan_finds, files_containing, kdc_pids,
                                   memory_contains)

ALICE_PW = "alice-pw"
SERVICE = "svc/host.test"


def make_protected_realm(root: Path, cluster: mpc_cluster.Cluster) -> ProtectedRealm:
    # Realms sharing a cluster need their own names: the engine names a key by its principal.
    realm = ProtectedRealm(root, cluster, realm=f"P{secrets.token_hex(4).upper()}.TEST")
    realm.create()
    realm.kadmin_local(f"modprinc -maxrenewlife 7d {realm.tgs}", check=True)
    realm.addprinc("alice", password=ALICE_PW, options="-maxrenewlife 7d +requires_preauth")
    realm.addprinc("bob", options="-maxrenewlife 7d")
    realm.addprinc(SERVICE)
    realm.ktadd(["bob"], realm.root / "bob.keytab")
    realm.remember_krbtgt_keys()
    # A TGT under the old key, kept for the rejection test.
    realm.start_kdc()
    old = realm.root / "before-protection.ccache"
    realm.run(["kinit", "-c", f"FILE:{old}", realm.principal("alice")], input=f"{ALICE_PW}\n", check=True)
    realm.stop_kdc()
    realm.protect()
    return realm


@pytest.fixture(scope="module")
def protected(tmp_path_factory, cluster, router_so):
    realm = make_protected_realm(tmp_path_factory.mktemp("protected") / "realm", cluster)
    realm.start_kdc()
    try:
        yield realm
    finally:
        realm.stop()


def cache(realm: ProtectedRealm, name: str) -> str:
    return f"FILE:{realm.root / name}"


def kinit_alice(realm: ProtectedRealm, ccache: str, *args: str):
    return realm.run(["kinit", "-c", ccache, *args, realm.principal("alice")], input=f"{ALICE_PW}\n")


def kvno(realm: ProtectedRealm, ccache: str, *args: str):
    return realm.run(["kvno", "-c", ccache, *args])


# -- clients ------------------------------------------------------------------------------

def test_tgt_uses_the_private_format(protected):
    cc = cache(protected, "alice.cc")
    assert kinit_alice(protected, cc, "-r", "2d").check()
    ticket = ccache_tickets.tgt(protected.root / "alice.cc", protected.tgs)
    assert ticket.etype == PRIVATE_ENCTYPE
    assert ticket.kvno == 1
    klist = protected.run(["klist", "-e", "-c", cc]).check()
    assert protected.tgs in klist.stdout
    print(klist.stdout)


def test_password_keytab_kvno_and_renewal(protected):
    cc = cache(protected, "renew.cc")
    kinit_alice(protected, cc, "-r", "2d").check()
    out = kvno(protected, cc, protected.principal(SERVICE)).check()
    assert "kvno = 1" in out.stdout
    protected.run(["kinit", "-R", "-c", cc]).check()
    renewed = ccache_tickets.tgt(protected.root / "renew.cc", protected.tgs)
    assert renewed.etype == PRIVATE_ENCTYPE
    kvno(protected, cc, protected.principal(SERVICE)).check()

    bob = cache(protected, "bob.cc")
    protected.run(["kinit", "-c", bob, "-k", "-t", protected.root / "bob.keytab",
                   protected.principal("bob")]).check()
    kvno(protected, bob, protected.principal(SERVICE)).check()


def test_fast_armored_request(protected):
    armor = cache(protected, "armor.cc")
    protected.run(["kinit", "-c", armor, "-k", "-t", protected.root / "bob.keytab",
                   protected.principal("bob")]).check()
    cc = cache(protected, "fast.cc")
    kinit_alice(protected, cc, "-T", armor).check()
    kvno(protected, cc, protected.principal(SERVICE)).check()


def test_user_to_user(protected):
    bob = cache(protected, "u2u-bob.cc")
    protected.run(["kinit", "-c", bob, "-k", "-t", protected.root / "bob.keytab",
                   protected.principal("bob")]).check()
    alice = cache(protected, "u2u-alice.cc")
    kinit_alice(protected, alice).check()
    out = kvno(protected, alice, "--u2u", bob, protected.principal("bob"))
    assert out.returncode == 0, out.output


def test_workers_after_fork(tmp_path, cluster, router_so):
    realm = make_protected_realm(tmp_path / "realm", cluster)
    try:
        realm.start_kdc(workers=2)
        for i in range(6):
            cc = cache(realm, f"w{i}.cc")
            kinit_alice(realm, cc).check()
            kvno(realm, cc, realm.principal(SERVICE)).check()
    finally:
        realm.stop()


# -- rejected tickets --------------------------------------------------------------------

def rejected(realm: ProtectedRealm, source: Path, ticket: ccache_tickets.Ticket, name: str) -> str:
    out_path = realm.root / name
    ccache_tickets.replace_tgt(source, realm.tgs, ticket, out_path)
    result = kvno(realm, f"FILE:{out_path}", realm.principal(SERVICE))
    assert result.returncode != 0, f"{name}: the KDC accepted it"
    assert realm.kdc_running()
    return result.stderr


def test_tampered_and_foreign_tickets_are_rejected(protected):
    good = protected.root / "good.cc"
    kinit_alice(protected, f"FILE:{good}").check()
    ticket = ccache_tickets.tgt(good, protected.tgs)

    for position in (0, 13, len(ticket.cipher) // 2, len(ticket.cipher) - 1):
        flipped = bytearray(ticket.cipher)
        flipped[position] ^= 0x01
        tampered = ccache_tickets.Ticket(ticket.prefix, ticket.etype, ticket.kvno, bytes(flipped))
        error = rejected(protected, good, tampered, f"flipped-{position}.cc")
        assert "integrity" in error.lower(), error

    old_cc = protected.root / "before-protection.ccache"
    old = ccache_tickets.tgt(old_cc, protected.tgs)
    assert old.etype == 18
    rejected(protected, old_cc, old, "old-key.cc")
    relabelled = ccache_tickets.Ticket(old.prefix, PRIVATE_ENCTYPE, ticket.kvno, old.cipher)
    rejected(protected, old_cc, relabelled, "old-key-relabelled.cc")

    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    nonce = secrets.token_bytes(12)
    aad = bytes([0x01]) + (2).to_bytes(4, "big")
    sealed = AESGCM(secrets.token_bytes(32)).encrypt(nonce, secrets.token_bytes(len(ticket.cipher) - 28), aad)
    forged = ccache_tickets.Ticket(ticket.prefix, PRIVATE_ENCTYPE, ticket.kvno, nonce + sealed)
    rejected(protected, good, forged, "random-key.cc")

    # The KDC still serves the genuine ticket afterwards.
    kvno(protected, f"FILE:{good}", protected.principal(SERVICE)).check()


# -- where the key is not --------------------------------------------------------------

def test_key_absent_from_files_and_kdc_memory(tmp_path, cluster, router_so):
    realm = make_protected_realm(tmp_path / "realm", cluster)
    try:
        realm.start_kdc(workers=2)
        for i in range(20):
            cc = cache(realm, f"burst{i}.cc")
            kinit_alice(realm, cc).check()
            kvno(realm, cc, realm.principal(SERVICE)).check()
        needles = realm.secrets()
        assert needles
        pids = kdc_pids(realm.kdc_pid())
        assert len(pids) == 3, pids
        for pid in pids:
            assert memory_contains(pid, needles) == [], f"krb5kdc pid {pid} holds krbtgt key bytes"
        assert files_containing(realm.root, needles) == []
    finally:
        realm.stop()
    # The check can fail: the same scan finds every needle in a separate process holding them.
    assert_scan_finds(needles)


# -- engine failures -----------------------------------------------------------------------

def test_a_server_stalled_for_a_moment_costs_no_login(protected, cluster):
    """Server 1 frozen for 0.3 s during a login (as a starved host freezes it): the other two
    give up the tag of the TGT when server 1 does not confirm it within job_wait, its nonce
    spent; the router seals again under a fresh nonce, which server 1 serves once it runs."""
    cc = cache(protected, "stall.cc")
    assert kinit_alice(protected, cc).check()      # pools filled
    server = cluster.server_pid(1)
    for attempt in range(3):    # where in the login the stall falls varies
        os.kill(server, signal.SIGSTOP)
        try:
            login = subprocess.Popen(["kinit", "-c", cc, protected.principal("alice")], env=protected.env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
            login.stdin.write(f"{ALICE_PW}\n")
            login.stdin.flush()
            time.sleep(0.3)
        finally:
            os.kill(server, signal.SIGCONT)
        _, stderr = login.communicate(timeout=60)
        assert login.returncode == 0, f"login {attempt + 1}: {stderr}\n{protected.kdc_log()[-2000:]}"
        assert kvno(protected, cc, protected.principal(SERVICE)).check()


def test_server_down_fails_fast_then_recovers(tmp_path, fresh_cluster, router_so):
    realm = make_protected_realm(tmp_path / "realm", fresh_cluster)
    try:
        realm.start_kdc()
        kinit_alice(realm, cache(realm, "before.cc")).check()
        fresh_cluster.kill_server(2)
        started = time.monotonic()
        result = kinit_alice(realm, cache(realm, "down.cc"))
        elapsed = time.monotonic() - started
        assert result.returncode != 0
        assert elapsed < 15, f"kinit took {elapsed:.1f} s with a server down"
        assert realm.kdc_running()
        assert "mpc_crypto_router" in realm.kdc_log(), realm.kdc_log()[-2000:]
        # While the engine is known to be down, logins are refused at once rather than
        # each waiting out the engine timeout (which would stall a KDC under load).
        for i in range(5):
            started = time.monotonic()
            assert kinit_alice(realm, cache(realm, f"down{i}.cc")).returncode != 0
            assert time.monotonic() - started < 1.0
        assert "engine unreachable (next try in" in realm.kdc_log()

        fresh_cluster.restart_server(2)
        deadline = time.monotonic() + 20
        while True:
            result = kinit_alice(realm, cache(realm, "after.cc"))
            if result.returncode == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert result.returncode == 0, result.output
        kvno(realm, cache(realm, "after.cc"), realm.principal(SERVICE)).check()
    finally:
        realm.stop()


def kinit_when_serving(realm: ProtectedRealm, name: str, deadline_s: float = 20):
    """kinit as alice, again while the engine is still coming back (a restarted server, the
    KDC's fail-fast pause); the last result."""
    deadline = time.monotonic() + deadline_s
    while True:
        result = kinit_alice(realm, cache(realm, name))
        if result.returncode == 0 or time.monotonic() > deadline:
            return result
        if "engine unreachable" not in realm.kdc_log()[-4000:] and "unknown nonce" not in result.output:
            return result
        time.sleep(0.5)


# The altered share caught: in the round trip that seals the TGT, or, where that round trip
# cannot check it (a server no longer holds the nonce it was made under), by a reopen of its own;
# either way the router makes the checksum again.
REMADE = "made again, and the ticket sealed with it"


@pytest.mark.timeout(240)
def test_a_server_altering_the_pac_kdc_checksum_costs_no_tgt(tmp_path, fresh_cluster, router_so):
    """An AS makes the PAC's two checksums in one round trip; the second comes from the servers'
    additive shares and is checked in the round trip that seals the TGT. A server that flips a
    bit of its share gets that check failed; the router makes the KDC checksum again, puts it
    in the ticket in place of the altered one and seals the TGT, whose PAC the next TGS accepts.
    With the server honest again, logins and TGS work as before."""
    realm = make_protected_realm(tmp_path / "realm", fresh_cluster)
    stderr = realm.root / "krb5kdc.stderr"
    try:
        realm.start_kdc()
        kinit_alice(realm, cache(realm, "before.cc")).check()
        kvno(realm, cache(realm, "before.cc"), realm.principal(SERVICE)).check()

        fresh_cluster.kill_server(3)
        fresh_cluster.restart_server(3, fault="chained-tag-bit=99")
        # The first logins after the restart find the KDC's nonces forgotten and make their
        # checksums one at a time (three-way checked); the next ones chain again.
        deadline = time.monotonic() + 30
        attempt = 0
        while True:
            attempt += 1
            result = kinit_alice(realm, cache(realm, f"deviating{attempt}.cc"))
            assert result.returncode == 0, result.output + realm.kdc_log()[-3000:] + Realm.read(stderr)[-3000:]
            if REMADE in Realm.read(stderr) or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        assert REMADE in Realm.read(stderr), Realm.read(stderr)[-3000:]
        # The TGT that met the altered checksum: its PAC is whole, so a TGS accepts it.
        kvno(realm, cache(realm, f"deviating{attempt}.cc"), realm.principal(SERVICE)).check()
        assert realm.kdc_running()

        fresh_cluster.kill_server(3)
        fresh_cluster.restart_server(3)
        result = kinit_when_serving(realm, "after.cc")
        assert result.returncode == 0, result.output
        kvno(realm, cache(realm, "after.cc"), realm.principal(SERVICE)).check()
    finally:
        realm.stop()


# "tag-share-bit": its share of every GCM tag; "chained-tag-bit": its share of the PAC's KDC
# checksum made ahead with the server checksum, which the next seal checks.
@pytest.mark.timeout(180)
@pytest.mark.parametrize("fault", ["tag-share-bit=77", "chained-tag-bit=42"])
def test_a_server_altering_its_tag_shares_costs_no_login(tmp_path, degraded_cluster, router_so, fault):
    """A server that flips a bit of its share of GCM tags (three-party service). A tag: the
    client library finds the shares disagree, withholds the tag and reports it; three-party
    service is suspended, and the router seals again under a fresh nonce of the pair that
    serves then. A KDC checksum made ahead: its check fails in the round trip of the ticket
    that carries it, and the router makes the checksum again and seals the ticket with it.
    Every login succeeds, the one that met the deviation included."""
    cluster = degraded_cluster
    # Two servers garble every job: on a busy 2-core host a GCM prefetch may need more than the
    # default 2 s (as in test_degraded_logins).
    cluster.set_client_timeout(cluster.compute_config, 10000)
    realm = make_protected_realm(tmp_path / "realm", cluster)
    try:
        realm.start_kdc()
        kinit_alice(realm, cache(realm, "before.cc")).check()
        cluster.kill_server(3)
        cluster.restart_server(3, fault=fault)
        # Past peer_down the others have seen server 3 go: the modes then say whether it is taken
        # in again. A login the pair served meanwhile would stop the router chaining checksums
        # for 600 s (gcm_checksums.c), and no checksum made ahead would meet the fault.
        time.sleep(1.0)
        cluster.wait_for_modes({1: "three-party", 2: "three-party", 3: "three-party"}, deadline_s=30)
        # A checksum made ahead is met only once the KDC chains again: the first logins after
        # the restart may make theirs one at a time (three-way checked), so log in until one
        # meets the deviation.
        deadline = time.monotonic() + 30
        attempt = 0
        while True:
            attempt += 1
            result = kinit_alice(realm, cache(realm, f"deviating{attempt}.cc"))
            assert result.returncode == 0, result.output + realm.kdc_log()[-3000:]
            modes = cluster.modes()
            if attempt >= 3 and (modes.get(1) != "three-party" or time.monotonic() > deadline):
                break
            time.sleep(0.3)
        kvno(realm, cache(realm, f"deviating{attempt}.cc"), realm.principal(SERVICE)).check()
        assert modes.get(1) == modes.get(2) == "two-party without server 3", modes
        if fault.startswith("tag-share-bit"):
            assert any("client_check failed in a client's job" in line for line in cluster.status_lines().values())
        else:
            stderr = Realm.read(realm.root / "krb5kdc.stderr")
            assert REMADE in stderr, stderr[-3000:]
    finally:
        realm.stop()


def impersonate(cluster: mpc_cluster.Cluster, party: int, behaviour: str, stop: threading.Event,
                ready: threading.Event, requests: list[int]) -> None:
    """Serves party's client endpoint with its own CURVE key and answers every request
    per behaviour: 'drop' (never), 'truncate' (a reply cut short), 'garbage' (random bytes)."""
    import tomllib
    settings = tomllib.loads((cluster.server_dir(party) / "server.toml").read_text())
    endpoint = settings["client_endpoint"]
    secret_file = Path(settings["secret_key_file"])
    if not secret_file.is_absolute():
        secret_file = cluster.server_dir(party) / secret_file
    keys = {}
    for line in open(secret_file):
        kind, _, value = line.strip().partition(" ")
        keys[kind] = value.encode()
    context = zmq.Context()
    socket = context.socket(zmq.ROUTER)
    socket.setsockopt(zmq.LINGER, 0)
    socket.curve_server = True
    socket.curve_secretkey = keys["secret-key"]
    socket.curve_publickey = keys["public-key"]
    for _ in range(100):
        try:
            socket.bind(endpoint)
            break
        except zmq.ZMQError:
            time.sleep(0.05)  # the killed server's listening socket may linger briefly
    else:
        socket.bind(endpoint)
    ready.set()
    try:
        while not stop.is_set():
            if not socket.poll(100):
                continue
            routing, frame = socket.recv_multipart()[:2]
            requests.append(len(frame))
            if behaviour == "drop":
                continue
            if behaviour == "truncate":
                reply = bytes([1, 0x80]) + frame[2:18] + b"\x00\x00\x00"
            else:
                reply = secrets.token_bytes(secrets.choice([1, 17, 40, 300]))
            socket.send_multipart([routing, reply])
    finally:
        socket.close(0)
        context.term()


# Short form: a server that answers nothing; long form: also one that answers a reply cut short
# and one that answers garbage (frames the reply decoder's fuzzing covers too).
@pytest.mark.parametrize("behaviour", ["drop", pytest.param("truncate", marks=pytest.mark.long),
                                       pytest.param("garbage", marks=pytest.mark.long)])
def test_malformed_replies_never_crash_the_kdc(tmp_path, fresh_cluster, router_so, behaviour):
    realm = make_protected_realm(tmp_path / "realm", fresh_cluster)
    stop, ready, requests = threading.Event(), threading.Event(), []
    try:
        realm.start_kdc()
        kinit_alice(realm, cache(realm, "before.cc")).check()
        fresh_cluster.kill_server(3)
        server = threading.Thread(target=impersonate,
                                  args=(fresh_cluster, 3, behaviour, stop, ready, requests))
        server.start()
        assert ready.wait(10), "the impersonating server could not bind"
        for i in range(3):
            result = kinit_alice(realm, cache(realm, f"bad{i}.cc"))
            assert result.returncode != 0
            assert realm.kdc_running()
        assert requests, "the KDC never reached the impersonating server"
        stop.set()
        server.join()
        fresh_cluster.restart_server(3)
        deadline = time.monotonic() + 20
        while kinit_alice(realm, cache(realm, "after.cc")).returncode != 0:
            assert time.monotonic() < deadline, realm.kdc_log()[-2000:]
            time.sleep(0.5)
        assert realm.kdc_running()
    finally:
        stop.set()
        realm.stop()
