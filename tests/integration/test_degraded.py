"""Two-of-three service: a three-server cluster (degraded_service = "two-party", the default)
keeps serving every job kind with any one server down, through the same client calls, and
returns to three-party service by itself once the server is back.

Each result is checked against a reference (OpenSSL through `cryptography`, libk5crypto), key
changes during an outage are refused with nothing left behind, and two servers down fail fast.
"""

from __future__ import annotations

import contextlib
import secrets
import threading
import time

import pytest
import zmq
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from mpctest import local_masks, mpc_cluster, gcm_client as gcm
from mpctest.raw_frames import REGROUPING, client_for, compute_ctr, parse_reply
from mpctest.service_checks import keys_enrolled, served
from mpctest.krb_client import (CF2_PARTNER, ENCTYPES, MPC_EBADTAG, MPC_EUNREACHABLE, Engine, KrbError,  # noqa: F401
                                check_cf2_jobs, k5, wait_until_krb_serving)

# A server's log event for a send to a peer that held its loop for the whole connect grace.
GRACE_WAITED = "peer send waited out the connect grace"


@contextlib.contextmanager
def checksum_key(cluster, name: str, k5):
    """An aes128 key enrolled as `name` and a compute engine serving it; yields the engine, the
    key's id and the reference checksum (usage 17) of some bytes under it."""
    admin = Engine(cluster.admin_config)
    engine = Engine(cluster.compute_config, timeout_ms=20000)
    try:
        algorithm, _, krb5_enctype, cksumtype, size = ENCTYPES["aes128"]
        protocol_key = secrets.token_bytes(size)
        key_id = (name, 1, algorithm)
        admin.import_key(*key_id, protocol_key)
        wait_until_krb_serving(engine, key_id)
        yield engine, key_id, lambda data: k5.make_checksum(cksumtype, krb5_enctype, protocol_key, 17, data)
    finally:
        engine.close()
        admin.close()


def every_job_kind(cluster, engine: Engine, gcm_engine: gcm.Engine, k5, keys: dict, aes_key: bytes,
                   gcm_key: bytes, local_tickets: list | None = None, pair: bool = False, cf2: bool = True) -> None:
    """One of each job kind, each against its reference. local_tickets gathers a ticket of a
    nonce with local masks per call while three servers serve, and every one made so far must
    open again. With `pair` (two servers serving, security = "active") nonces with local masks
    are refused, their prefetch and the reopening of every earlier ticket alike: each pair
    member would compute from its own masks, unchecked."""
    # AES: keystream and ECB (mpcctl, through the same client library), OpenSSL as reference.
    counter = secrets.token_bytes(16)
    blocks = 37
    expected = Cipher(algorithms.AES(aes_key), modes.CTR(counter)).encryptor().update(bytes(16 * blocks))
    assert cluster.keystream("degraded/aes", 1, "aes256", counter.hex(), blocks) == expected
    data = secrets.token_bytes(48)
    assert cluster.ecb("encrypt", "degraded/aes", 1, "aes256", data) == mpc_cluster.openssl_ecb(
        "aes256", aes_key.hex(), data)
    # GCM: prefetch, tag, open.
    [(nonce, stream)] = gcm_engine.prefetch(1, 2)
    plaintext = secrets.token_bytes(29)
    aad = secrets.token_bytes(11)
    sealed = AESGCM(gcm_key).encrypt(nonce, plaintext, aad)
    assert gcm.seal(gcm_engine, nonce, stream, plaintext, aad) == sealed
    [(nonce2, _)] = gcm_engine.prefetch(1, 0)
    sealed2 = AESGCM(gcm_key).encrypt(nonce2, plaintext, aad)
    assert gcm_engine.open(nonce2, aad, sealed2[:-16], sealed2[-16:]) == plaintext
    # GCM with local masks (local_masks.py, from the three stores): no garbling with two servers.
    if local_tickets is not None and pair:
        for attempt in (lambda: gcm_engine.prefetch(1, 2, local=True),
                        lambda: gcm_engine.open(*local_tickets[0][:2], local_tickets[0][2][:-16],
                                                local_tickets[0][2][-16:])):
            with pytest.raises(gcm.GcmError) as refused:
                attempt()
            assert refused.value.code == gcm.MPC_EREFUSED, refused.value
            assert "local masks have no actively secure two-party form" in str(refused.value), refused.value
    elif local_tickets is not None:
        parts = local_masks.components([cluster.server_dir(party) for party in (1, 2, 3)], gcm.KEY)
        [(local_nonce, local_stream)] = gcm_engine.prefetch(1, 2, local=True)
        sealed_local = gcm.seal(gcm_engine, local_nonce, local_stream, plaintext, aad)
        assert sealed_local == local_masks.seal(gcm_key, gcm.KEY, parts, local_nonce, plaintext, aad)
        local_tickets.append((local_nonce, aad, sealed_local, plaintext))
        for ticket_nonce, ticket_aad, ticket, ticket_plaintext in local_tickets:
            assert gcm_engine.open(ticket_nonce, ticket_aad, ticket[:-16], ticket[-16:]) == ticket_plaintext
        forged = local_tickets[0]
        with pytest.raises(gcm.GcmError) as failure:
            gcm_engine.open(forged[0], forged[1] + b"!", forged[2][:-16], forged[2][-16:])
        assert failure.value.code == gcm.MPC_EBADTAG
    # Kerberos: encrypt, decrypt, checksum, and the cf2 jobs, for every enctype.
    for enctype, key in keys.items():
        text = secrets.token_bytes(61)
        assert k5.decrypt(key["enctype"], key["key"], 3, engine.encrypt(key["id"], 3, text)) == text
        assert engine.decrypt(key["id"], 2, k5.encrypt(key["enctype"], key["key"], 2, text)) == text
        forged = bytearray(k5.encrypt(key["enctype"], key["key"], 2, text))
        forged[5] ^= 1
        with pytest.raises(KrbError) as failure:
            engine.decrypt(key["id"], 2, bytes(forged))
        assert failure.value.code == MPC_EBADTAG
        assert engine.checksum(key["id"], 17, text) == k5.make_checksum(key["cksumtype"], key["enctype"],
                                                                         key["key"], 17, text)
    if cf2:
        check_cf2_jobs(engine, k5, keys["aes256"], CF2_PARTNER["aes256"])


@pytest.mark.timeout(600)
@pytest.mark.parametrize("outages", [pytest.param((1,), id="server-1-down"),
                                     pytest.param((1, 2, 3), id="each-server-down", marks=pytest.mark.long)])
def test_every_job_kind_is_served_with_any_one_server_down(degraded_cluster, k5, outages):
    """Short form: server 1 down, its pair (servers 2 and 3) serving every job kind, under an
    RFC 3962 and an RFC 8009 enctype (the two-party Kerberos circuits of every enctype and the
    cf2 jobs are the two-server cluster's, test_two_server_active.py and
    kdc/test_two_server_active_kdc.py); the pair of servers 1 and 2 serves in
    test_degraded_active.py. Long form: each server down in turn, every enctype and the cf2 jobs
    in the pair server 2 leads."""
    cluster = degraded_cluster
    long_form = len(outages) > 1
    # mpcctl's AES jobs go through the admin configuration, whose timeout_ms (2 s) is not the
    # Kerberos jobs' krb_timeout_ms: an active pair garbles them from AND material it makes as it
    # goes once its stock is spent, about 2 s for 37 AES-256 blocks on a 2-core AVX2 host.
    mpc_cluster.Cluster.set_client_timeout(cluster.admin_config, 30000)
    admin = Engine(cluster.admin_config)
    engine = Engine(cluster.compute_config, timeout_ms=60000)
    gcm_engine = gcm.Engine(cluster.compute_config, timeout_ms=60000)
    try:
        keys = {}
        for enctype, (algorithm, _, krb5_enctype, cksumtype, size) in ENCTYPES.items():
            protocol_key = secrets.token_bytes(size)
            key_id = (f"degraded/{enctype}", 1, algorithm)
            admin.import_key(*key_id, protocol_key)
            keys[enctype] = {"id": key_id, "key": protocol_key, "enctype": krb5_enctype, "cksumtype": cksumtype}
        aes_key = bytes.fromhex(cluster.import_key("degraded/aes", 1, "aes256")[0])
        gcm_key = gcm.import_gcm_key(cluster)
        wait_until_krb_serving(engine, keys["aes256"]["id"])
        cluster.wait_for_modes({1: "three-party", 2: "three-party", 3: "three-party"})
        local_tickets: list = []
        every_job_kind(cluster, engine, gcm_engine, k5, keys, aes_key, gcm_key, local_tickets)
        # Switches counted from here: a server not heard for a moment while the cluster started
        # (a loaded host) is not an outage of the test's.
        switches_before = cluster.mode_switches()
        for party in outages:
            cluster.kill_server(party)
            others = [p for p in (1, 2, 3) if p != party]
            # The first job after the kill is served: the client retries while the two switch.
            started = time.monotonic()
            key = keys["aes128"]
            assert engine.checksum(key["id"], 17, b"first") == k5.make_checksum(
                key["cksumtype"], key["enctype"], key["key"], 17, b"first")
            first_s = time.monotonic() - started
            assert first_s < 15, f"first job with server {party} down took {first_s:.1f} s"
            cluster.wait_for_modes({p: f"two-party without server {party}" for p in others})
            # In the long form every enctype and the cf2 jobs in the pair that server 2 leads; the
            # other pairs run the same code for each, so one enctype there (an active pair's cf2
            # job takes seconds of AND material made as it goes).
            if long_form:
                pair_keys = keys if party == 1 else {"aes256": keys["aes256"]}
            else:
                pair_keys = {enctype: keys[enctype] for enctype in ("aes256", "aes128-sha2")}
            every_job_kind(cluster, engine, gcm_engine, k5, pair_keys, aes_key, gcm_key, local_tickets, pair=True,
                           cf2=long_form and party == 1)
            cluster.restart_server(party)
            cluster.wait_for_modes({1: "three-party", 2: "three-party", 3: "three-party"}, deadline_s=30)
            # Back in three-party service: every job kind again, one enctype (all ran before).
            every_job_kind(cluster, engine, gcm_engine, k5, {"aes256": keys["aes256"]}, aes_key, gcm_key,
                           local_tickets, cf2=long_form)
        # Two switches (out and back) per outage of another server that a server saw since its own
        # last start (or since the outages began, for a server never started again).
        switches = {party: count - (0 if party in outages else switches_before[party])
                    for party, count in cluster.mode_switches().items()}
        if long_form:
            # Servers went down in the order 1, 2, 3: server 1 (restarted first) saw the outages of
            # 2 and 3, server 2 that of 3, server 3 none.
            assert switches == {1: 4, 2: 2, 3: 0}
        else:
            # Server 1 went down alone: servers 2 and 3 saw its outage, server 1 none.
            assert switches == {1: 0, 2: 2, 3: 2}
    finally:
        gcm_engine.close()
        engine.close()
        admin.close()


def test_a_server_that_goes_away_holds_up_no_survivor(degraded_cluster, k5):
    """The leader's batch headers, aborts and notes to a server killed a moment ago do not wait
    out the connect grace (500 ms, for a peer still handshaking) on the shell's thread: waiting
    there, once per send, would hold up the switch to two-party service and the first job after
    the kill by a second. A peer whose session was lost and that has not spoken since is not
    waited for. Each send that waits the grace out is logged, so the survivors' logs count them."""
    cluster = degraded_cluster
    with checksum_key(cluster, "degraded/gone", k5) as (engine, key_id, expected):
        # A server switches no sooner than peer_down + heartbeat (600 ms) after it started,
        # before which it may not have heard the others yet (membership.hpp).
        time.sleep(0.7)
        for party in (2, 3):   # the leader (server 1) sends every batch header to both
            cluster.wait_for_modes({1: "three-party", 2: "three-party", 3: "three-party"}, deadline_s=30)
            engine.checksum(key_id, 17, b"warm")
            survivors = [other for other in (1, 2, 3) if other != party]
            waits_before = {other: len(cluster.log_events(other, GRACE_WAITED)) for other in survivors}
            cluster.kill_server(party)
            assert engine.checksum(key_id, 17, b"first") == expected(b"first")
            waits = {other: len(cluster.log_events(other, GRACE_WAITED)) - waits_before[other] for other in survivors}
            assert waits == {other: 0 for other in survivors}, \
                f"sends to server {party} waited out the grace after it was killed: {waits}\n{cluster.log_tail()}"
            cluster.restart_server(party)


@pytest.mark.timeout(240)
def test_jobs_keep_being_served_while_a_server_dies_under_load(degraded_cluster, k5):
    """Four clients send Kerberos checksums back to back while server 2 is killed and later
    restarted: every call returns the right bytes, none fails."""
    cluster = degraded_cluster
    admin = Engine(cluster.admin_config)
    algorithm, _, krb5_enctype, cksumtype, size = ENCTYPES["aes256"]
    protocol_key = secrets.token_bytes(size)
    key_id = ("degraded/load", 1, algorithm)
    admin.import_key(*key_id, protocol_key)
    admin.close()
    probe = Engine(cluster.compute_config)
    wait_until_krb_serving(probe, key_id)
    probe.close()
    stop = threading.Event()
    failures: list[str] = []
    served = [0] * 4

    def client(index: int) -> None:
        engine = Engine(cluster.compute_config, timeout_ms=20000)
        try:
            while not stop.is_set():
                data = secrets.token_bytes(40 + index)
                try:
                    mac = engine.checksum(key_id, 17, data)
                except KrbError as error:
                    failures.append(f"client {index}: {error}")
                    continue
                if mac != k5.make_checksum(cksumtype, krb5_enctype, protocol_key, 17, data):
                    failures.append(f"client {index}: wrong checksum")
                served[index] += 1
        finally:
            engine.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    try:
        time.sleep(1.0)
        cluster.kill_server(2)
        time.sleep(3.0)
        during = sum(served)
        cluster.restart_server(2)
        cluster.wait_for_modes({1: "three-party", 2: "three-party", 3: "three-party"}, deadline_s=30)
        time.sleep(1.0)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
    assert not failures, failures[:5]
    assert during > 0 and sum(served) > during, served


@pytest.mark.timeout(180)
def test_key_changes_are_refused_while_a_server_is_down(degraded_cluster):
    cluster = degraded_cluster
    admin = Engine(cluster.admin_config)
    try:
        admin.import_key("degraded/kept", 1, 2, secrets.token_bytes(32))
        cluster.kill_server(3)
        cluster.wait_for_modes({1: "two-party without server 3", 2: "two-party without server 3"})
        with pytest.raises(KrbError) as failure:
            admin.import_key("degraded/new", 1, 2, secrets.token_bytes(32))
        assert failure.value.code == MPC_EUNREACHABLE, failure.value
        assert "all three servers" in str(failure.value), failure.value
        with pytest.raises(KrbError) as failure:
            admin.delete_key("degraded/kept", 1, 2)
        assert "all three servers" in str(failure.value), failure.value
        # Nothing changed on the two that answer.
        listing = cluster.mpcctl("key", "list", "--cluster", str(cluster.admin_config), check=False)
        cluster.restart_server(3)
        cluster.wait_for_modes({1: "three-party", 2: "three-party", 3: "three-party"}, deadline_s=30)
        names = {entry[0] for entry in cluster.list_keys("degraded/")}
        assert names == {"degraded/kept"}, (names, listing.stdout, listing.stderr)
        admin.import_key("degraded/new", 1, 2, secrets.token_bytes(32))
        assert {entry[0] for entry in cluster.list_keys("degraded/")} == {"degraded/kept", "degraded/new"}
    finally:
        admin.close()


@pytest.mark.timeout(180)
def test_two_servers_down_fail_fast_and_recover(degraded_cluster, k5):
    cluster = degraded_cluster
    with checksum_key(cluster, "degraded/two-down", k5) as (engine, key_id, expected):
        cluster.kill_server(1)
        cluster.kill_server(3)
        for _ in range(3):
            started = time.monotonic()
            with pytest.raises(KrbError) as failure:
                engine.checksum(key_id, 17, b"alone")
            elapsed = time.monotonic() - started
            assert failure.value.code == MPC_EUNREACHABLE, failure.value
            assert elapsed < 3.0, f"failed after {elapsed:.1f} s of a 20 s timeout: {failure.value}"
        status = cluster.mpcctl("cluster", "status", "--cluster", str(cluster.admin_config), check=False)
        assert status.returncode != 0
        assert "server 1: not answering" in status.stdout and "server 3: not answering" in status.stdout
        cluster.restart_server(3)
        cluster.wait_for_modes({2: "two-party without server 1", 3: "two-party without server 1"}, deadline_s=30)
        assert engine.checksum(key_id, 17, b"pair") == expected(b"pair")
        cluster.restart_server(1)
        cluster.wait_for_modes({1: "three-party", 2: "three-party", 3: "three-party"}, deadline_s=30)
        assert engine.checksum(key_id, 17, b"all") == expected(b"all")


# Server 1, the leader in both services below, changes modes this long after the other two.
LATE_SWITCH_MS = 3000


@pytest.mark.timeout(240)
def test_a_request_caught_between_two_modes_is_answered_by_every_server(degraded_cluster):
    """Servers change modes one after another, not at one instant. A request sent while server 2
    already serves three-party and server 1 (the test server, switching late) still serves the
    pair reaches server 1 in the pair's service and servers 2 and 3 in the three-party one. Server
    1 refuses it, so no batch of it will ever form: the other two must answer it as soon as server
    1 switches and tells them, not hold it until they forget it, unanswered."""
    cluster = degraded_cluster
    cluster.kill_server(1)
    cluster.restart_server(1, fault=f"late-mode-switch={LATE_SWITCH_MS}")
    cluster.wait_for_modes({1: "three-party", 2: "three-party", 3: "three-party"}, deadline_s=30)
    # Imported while all three serve, after server 1's restart: server 3 deals the checks of
    # the halves to the pair below at the import (a deal to a server killed just after it
    # would wait for the sweep once all three serve again).
    # The others may notice server 1's restart only now (within peer_down), and serve as a pair
    # for rejoin_ms: an import then is refused whole and is sent again.
    deadline = time.monotonic() + 30
    while True:
        key_hex, imported = cluster.import_key("degraded/caught", 1, "aes128", check=False)
        if imported.returncode == 0:
            break
        assert "keys are changed only while all three servers serve" in imported.stderr, imported.stderr
        assert time.monotonic() < deadline, imported.stderr
        time.sleep(0.5)
    cluster.wait_until_serving(("degraded/caught", 1, "aes128"), deadline_s=30)
    cluster.kill_server(3)
    cluster.wait_for_modes({1: "two-party without server 3", 2: "two-party without server 3"}, deadline_s=30)
    cluster.restart_server(3)
    deadline = time.monotonic() + 30
    while True:
        modes = cluster.modes()
        if modes.get(2) == "three-party" and modes.get(1) == "two-party without server 3":
            break
        assert time.monotonic() < deadline, f"no window between the servers' switches: {modes}"
        time.sleep(0.05)
    context = zmq.Context()
    raw = {party: client_for(cluster, context, party, role="compute") for party in (1, 2, 3)}
    try:
        request_id, counter = secrets.token_bytes(16), secrets.token_bytes(16)
        # Each server's copy with a pad of its own, as the client library sends them.
        for party in raw:
            frame = compute_ctr(request_id, "degraded/caught", blocks=4, counter=counter,
                                output_pad=secrets.token_bytes(32))
            assert raw[party].send(frame)
        answer_by = time.monotonic() + (LATE_SWITCH_MS + 4000) / 1000
        for party in raw:
            reply = raw[party].receive(max(1, int((answer_by - time.monotonic()) * 1000)))
            assert reply is not None, (f"server {party} did not answer the request within "
                                       f"{LATE_SWITCH_MS + 4000} ms\n{cluster.log_tail()}")
            _, status, error, _ = parse_reply(reply)
            assert status == REGROUPING, (party, status, error)
    finally:
        for client in raw.values():
            client.close()
        context.term()
    cluster.wait_for_modes({1: "three-party", 2: "three-party", 3: "three-party"}, deadline_s=30)
    counter = secrets.token_hex(16)
    assert cluster.keystream("degraded/caught", 1, "aes128", counter, 3) == mpc_cluster.openssl_ctr_keystream(
        "aes128", key_hex, counter, 3)


def test_a_pair_member_that_shuns_the_returning_server_cannot_keep_the_cluster_degraded(degraded_cluster):
    """The pair serving without server 3 is servers 1 and 2, server 1 its leader and garbler. A
    server 1 that wants to keep that service (the test server, "shun-missing-server") neither
    hears nor speaks to server 3 once it is back. Server 2 takes server 3 back on what it
    observes itself, and the two serve three-party while server 1 stays behind alone in a pair
    nobody serves with: it can stop jobs, not keep the weaker service."""
    cluster = degraded_cluster
    cluster.kill_server(1)
    cluster.restart_server(1, fault="shun-missing-server")
    cluster.wait_for_modes({1: "three-party", 2: "three-party", 3: "three-party"}, deadline_s=30)
    cluster.kill_server(3)
    cluster.wait_for_modes({1: "two-party without server 3", 2: "two-party without server 3"}, deadline_s=30)
    cluster.restart_server(3)
    expected = {1: "two-party without server 3", 2: "three-party", 3: "three-party"}
    cluster.wait_for_modes(expected, deadline_s=30)
    time.sleep(1.0)  # and it stays so: nobody flaps back into the pair
    assert cluster.modes() == expected



# AND material made ahead by a pair's two members is gone on the second member once it starts
# again, while its leader still holds its part. The second member says it started, and the
# leader's pool starts afresh: no job takes material the second member lacks (which failed the
# job after the pool's wait).
LEADER_STARTS_AFRESH = "the other server started again: the pool starts afresh"


@pytest.mark.timeout(300)
def test_a_pair_whose_second_member_started_again_serves_without_failing_a_job(degraded_cluster, k5):
    cluster = degraded_cluster
    with keys_enrolled(cluster) as (admin, engine, aes_key, krb):
        served(cluster, k5, aes_key, engine, krb)
        # The pair of servers 1 and 2 (its leader server 1) makes AND material ahead meanwhile.
        time.sleep(20)
        cluster.kill_server(2)
        cluster.restart_server(2)
        cluster.wait_for_modes({1: "three-party", 2: "three-party", 3: "three-party"}, deadline_s=60)
        cluster.kill_server(3)
        cluster.wait_for_modes({1: "two-party without server 3", 2: "two-party without server 3"}, deadline_s=30)
        for _ in range(3):
            served(cluster, k5, aes_key, engine, krb)
        assert cluster.log_events(1, LEADER_STARTS_AFRESH), cluster.log_tail()
        for party in (1, 2):
            failed = [event for event in cluster.log_events(party, "job failed") if "pool empty" in event["error"]]
            assert not failed, failed
