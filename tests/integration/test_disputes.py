"""A server that deviates in every job cannot stop the service (node/disputes.hpp): the checks
that catch it put it in disputes, the honest two serve as an actively secure pair without it,
every job in between is served (the client library sends an aborted job again) and correct
against OpenSSL and libk5crypto, and only `mpcctl cluster readmit N` brings it back. A server
that claims disputes falsely gets no honest server excluded."""

from __future__ import annotations

import secrets
import time

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from mpctest import gcm_client as gcm
from mpctest.client_handle import ClientCallError
from mpctest.krb_client import k5  # noqa: F401 (k5: a fixture)
from mpctest.mpc_cluster import MpcctlError
from mpctest.service_checks import ALL_THREE, jobs_of, keys_enrolled, served, status_lines

# Alters the AND shares of three-party service and the openings of the pair's authenticated
# garbling, in every job and every preprocessing batch: a server deviating wherever it serves.
EVERYWHERE = "and-share-bit=2,auth2-step=0"
# Failed checks before the deviating server is out (disputes.hpp): one three-party, two pair
# checks; each fails the jobs in flight, a handful at most for one client's jobs in a row.
MOST_ABORTED_JOBS = 12
MUTUAL_CHECKS = "the pair makes its checks itself: the server that dealt them is in disputes with both others"
# A server's log event for a dispute it claims (node/exclusion.cpp).
DISPUTE = ("dispute: a check of active security failed between this server and a peer, so the peer deviated; "
           "this server serves without it")


@pytest.fixture
def enrolled(degraded_cluster):
    """A cluster of two-party degraded service with service_checks' two keys enrolled: the
    cluster, the compute engine, the aes256 key and the Kerberos key."""
    with keys_enrolled(degraded_cluster) as (_, engine, aes_key, krb):
        yield degraded_cluster, engine, aes_key, krb


def readmitted(cluster, k5, aes_key, engine, krb, party: int) -> None:
    """The deviating server restarted honest and readmitted: all three serve, it computes."""
    cluster.kill_server(party)
    cluster.restart_server(party)
    result = cluster.mpcctl("cluster", "readmit", str(party), "--cluster", str(cluster.admin_config))
    assert f"server {party} readmitted" in result.stdout, result.stdout
    cluster.wait_for_modes(ALL_THREE, deadline_s=60)
    jobs_before = jobs_of(cluster, party)
    served(cluster, k5, aes_key, engine, krb)
    assert jobs_of(cluster, party) > jobs_before
    for line in status_lines(cluster).values():
        assert "excluded none" in line and "(with none)" in line and "suspended" not in line, line


# Short form: server 1, the suspended pair's leader and garbler; long form: 2 and 3 as well.
@pytest.mark.timeout(420)
@pytest.mark.parametrize("deviating", [1, pytest.param(2, marks=pytest.mark.long), pytest.param(3, marks=pytest.mark.long)])
def test_a_server_deviating_in_every_job_is_excluded_and_every_job_is_served(enrolled, k5, deviating):
    cluster, engine, aes_key, krb = enrolled
    honest = [party for party in cluster.parties if party != deviating]
    served(cluster, k5, aes_key, engine, krb)
    before = cluster.verification_refusals()

    cluster.kill_server(deviating)
    cluster.restart_server(deviating, fault=EVERYWHERE)
    started = time.monotonic()
    for _ in range(6):
        served(cluster, k5, aes_key, engine, krb)
    # The deviating server serves nothing: it stays in three-party mode alone.
    cluster.wait_for_modes({party: f"two-party without server {deviating}" for party in honest} |
                           {deviating: "three-party"}, deadline_s=60)
    out_after_s = time.monotonic() - started
    lines = status_lines(cluster)
    for party in honest:
        assert f"excluded server {deviating} since unix ms" in lines[party], lines[party]
        assert cluster.log_events(party, "server excluded from service until an operator readmits it")
    # Found from two disputes by one honest server at least; the other may take it from both
    # its peers first (the deviating server, in two disputes itself, excludes itself).
    assert any("in disputes with both other servers" in lines[party] for party in honest), lines
    jobs_before = jobs_of(cluster, deviating)
    for _ in range(2):
        served(cluster, k5, aes_key, engine, krb)
    assert jobs_of(cluster, deviating) == jobs_before
    after = cluster.verification_refusals()
    aborted = max(after[party] - before[party] for party in honest)
    print(f"server {deviating} deviating everywhere: out of service after {out_after_s:.1f} s, "
          f"{aborted} jobs aborted and sent again")
    assert aborted <= MOST_ABORTED_JOBS, (before, after)

    readmitted(cluster, k5, aes_key, engine, krb, deviating)


@pytest.mark.timeout(300)
def test_false_claims_exclude_only_their_maker(enrolled, k5):
    cluster, engine, aes_key, krb = enrolled
    # Server 2 claims a dispute with server 1: server 1 takes it for server 2's deviation;
    # both ask server 3, which pairs with the lower-numbered. Nobody is excluded.
    # A directory where server 1 keeps its disputes makes the first write fail; it is written
    # once the disk takes it, not only at the next change.
    disputes_file = cluster.server_dir(1) / "data" / "disputes"
    disputes_file.mkdir()
    cluster.kill_server(2)
    cluster.restart_server(2, fault="false-blame=1")
    cluster.wait_for_modes({1: "two-party without server 2", 2: "three-party", 3: "two-party without server 2"},
                           deadline_s=60)
    deadline = time.monotonic() + 10
    while not cluster.log_events(1, "disputes not recorded") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert cluster.log_events(1, "disputes not recorded"), cluster.log_tail()
    disputes_file.rmdir()
    deadline = time.monotonic() + 15
    while not disputes_file.is_file() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert disputes_file.is_file(), cluster.log_tail()
    served(cluster, k5, aes_key, engine, krb)
    lines = status_lines(cluster)
    assert "excluded none" in lines[1] and "excluded none" in lines[3], lines
    assert "(with server 2; last: server 2 claimed a dispute with this server)" in lines[1], lines
    assert "(with none)" in lines[3], lines

    # A restart does not wipe a dispute: server 1, started again while server 2 is down, still
    # holds it (from disk) and serves with server 3.
    cluster.kill_server(2)
    cluster.kill_server(1)
    cluster.restart_server(1)
    cluster.wait_for_modes({1: "two-party without server 2", 3: "two-party without server 2"}, deadline_s=60)
    assert "(with server 2; last: server 2 claimed a dispute with this server)" in status_lines(cluster)[1]
    assert cluster.log_events(1, "disputes held until an operator readmits a server")

    # Claiming both others makes it the one in two disputes: excluded by both honest servers.
    cluster.restart_server(2, fault="false-blame=13")
    cluster.wait_for_modes({1: "two-party without server 2", 2: "three-party", 3: "two-party without server 2"},
                           deadline_s=60)
    # The modes are those of the one dispute server 1 held already: the exclusion follows once
    # both honest servers have heard server 2's claims.
    deadline = time.monotonic() + 30
    lines = status_lines(cluster)
    while (not all("excluded server 2 since unix ms" in lines[party] for party in (1, 3))
           and time.monotonic() < deadline):
        time.sleep(0.5)
        lines = status_lines(cluster)
    for party in (1, 3):
        assert "excluded server 2 since unix ms" in lines[party], lines[party]
    # Found from two disputes by one honest server at least (the other may take it from both
    # its peers first: server 2, in two disputes itself, excludes itself).
    assert any("in disputes with both other servers" in lines[party] for party in (1, 3)), lines
    served(cluster, k5, aes_key, engine, krb)

    readmitted(cluster, k5, aes_key, engine, krb, 2)


@pytest.mark.timeout(420)
def test_a_dealer_proven_deviating_leaves_the_pair_it_dealt_serving_on_checks_its_members_make(enrolled, k5):
    """Server 3 deals the pair of servers 1 and 2 checks that fail (`false-deal`) and deviates
    wherever it serves. That pair fails every job of the keys it dealt, and the pairs with server
    3 abort theirs, until server 3 is in disputes with both others. Then servers 1 and 2, both
    honest, make each other's checks (node/pair_check_keeper.hpp) and serve every job, correct
    against OpenSSL and libk5crypto: a false deal costs a few jobs, not the keys' service."""
    cluster, engine, aes_key, krb = enrolled
    # Back in three-party service server 3 deals every key again: its false checks replace the
    # honest ones at servers 1 and 2. Then it deviates everywhere too (dealing falsely again,
    # if it deals before its peers take it out of service).
    swept = len(cluster.log_events(3, "pair checks of every key dealt to both peers"))
    cluster.kill_server(3)
    cluster.restart_server(3, fault="false-deal")
    cluster.wait_for_modes(ALL_THREE, deadline_s=60)
    deadline = time.monotonic() + 30
    while len(cluster.log_events(3, "pair checks of every key dealt to both peers")) <= swept:
        assert time.monotonic() < deadline, cluster.log_tail()
        time.sleep(0.2)
    cluster.kill_server(3)
    cluster.restart_server(3, fault=f"false-deal,{EVERYWHERE}")

    failures = []
    deadline = time.monotonic() + 180
    while True:
        try:
            served(cluster, k5, aes_key, engine, krb)
            break
        except Exception as error:  # noqa: BLE001 (a job refused on the way out: asked again)
            failures.append(str(error)[:200])
            assert time.monotonic() < deadline, (failures[-3:], cluster.log_tail())
    lines = status_lines(cluster)
    for party in (1, 2):
        assert "excluded server 3 since unix ms" in lines[party], lines[party]
        assert cluster.log_events(party, MUTUAL_CHECKS), cluster.log_tail()
    jobs_before = jobs_of(cluster, 3)
    for _ in range(3):
        served(cluster, k5, aes_key, engine, krb)
    assert jobs_of(cluster, 3) == jobs_before
    print(f"false deal and deviation everywhere by server 3: {len(failures)} calls failed before the pair served")

    readmitted(cluster, k5, aes_key, engine, krb, 3)


@pytest.mark.timeout(300)
def test_a_failed_and_check_names_the_deviating_server(enrolled, k5):
    """Server 3 deviates in three-party service only (a flipped AND share): its V- rejects its
    gates, its own audit of the rejection cannot put the failure on the verifier that followed
    the protocol, so that verifier, server 1, holds it in a dispute (rss3/and_check_blame.hpp),
    and servers 1 and 2 serve as a pair without it."""
    cluster, engine, aes_key, krb = enrolled
    cluster.kill_server(3)
    cluster.restart_server(3, fault="and-share-bit=2")
    cluster.wait_for_modes(ALL_THREE, deadline_s=60)
    for _ in range(3):
        served(cluster, k5, aes_key, engine, krb)
    cluster.wait_for_modes({1: "two-party without server 3", 2: "two-party without server 3", 3: "three-party"},
                           deadline_s=60)
    lines = status_lines(cluster)
    assert "(with server 3;" in lines[1], lines[1]
    # Named by the AND check at an honest server, not only taken from server 3's own claim.
    named = [entry for party in (1, 2) for entry in cluster.log_events(party, DISPUTE)
             if entry.get("check") == "and_check" and entry.get("server") == 3]
    assert named, cluster.log_tail()
    assert "with server 1" not in lines[2] and "with server 2" not in lines[1], lines
    for line in lines.values():
        assert "excluded none" in line, line
    jobs_before = jobs_of(cluster, 3)
    served(cluster, k5, aes_key, engine, krb)
    assert jobs_of(cluster, 3) == jobs_before

    # Server 1 is down when the operator readmits: it comes back holding the suspension from
    # disk, takes the readmission from both peers, and all three serve again (before, its word
    # brought the suspension back to the other two).
    cluster.kill_server(3)
    cluster.restart_server(3)
    cluster.kill_server(1)
    result = cluster.mpcctl("cluster", "readmit", "1", "--cluster", str(cluster.admin_config))
    assert "server 1 readmitted" in result.stdout, result.stdout
    cluster.restart_server(1)
    # Server 1 starts in three-party service and holds it until it hears its pair partner:
    # the modes are settled only once its word has had time to reach the others.
    time.sleep(2)
    cluster.wait_for_modes(ALL_THREE, deadline_s=60)
    jobs_before = jobs_of(cluster, 3)
    served(cluster, k5, aes_key, engine, krb)
    assert jobs_of(cluster, 3) > jobs_before
    for line in status_lines(cluster).values():
        assert "excluded none" in line and "(with none)" in line and "suspended" not in line, line
    assert cluster.log_events(1, "disputes held until an operator readmits a server")
    assert cluster.log_events(1, "disputes cleared by a readmission taken from both peers")


@pytest.mark.timeout(300)
def test_a_garbling_that_differs_from_the_other_garblers_is_a_dispute(enrolled, k5):
    """Server 1 alters the tables it streams of Kerberos batches garbled twice, and nothing else.
    Server 2 finds the garbling is not server 3's and shows both garblers the digest's key;
    server 1 answers from the garbling it made (gc3/garbling_blame.hpp), so server 2 holds it in
    a dispute by the digest check, while server 1 claims server 2 refused falsely. One dispute,
    {1, 2}, which comes before server 3's suspension: server 3 pairs with the lower-numbered of
    the two, and every job
    is served (the aborted ones by their retry), the Kerberos jobs by an actively secure pair in
    which server 1 cannot change a result."""
    cluster, engine, aes_key, krb = enrolled
    cluster.kill_server(1)
    cluster.restart_server(1, fault="garbled-table-bits=300000")
    cluster.wait_for_modes(ALL_THREE, deadline_s=60)
    for _ in range(3):
        served(cluster, k5, aes_key, engine, krb)
    cluster.wait_for_modes({1: "two-party without server 2", 2: "three-party", 3: "two-party without server 2"},
                           deadline_s=60)
    named = [entry for entry in cluster.log_events(2, DISPUTE)
             if entry.get("check") == "garbling_digest" and entry.get("server") == 1]
    assert named, cluster.log_tail()
    lines = status_lines(cluster)
    assert "(with server 1;" in lines[2] and "(with server 2;" in lines[1], lines
    # Server 3, told of differing garblings and answered that its own digest was right, knows
    # only that one of the other two deviated: it suspends three-party service, which the
    # dispute comes before.
    assert "(with none; three-party service suspended" in lines[3], lines
    for line in lines.values():
        assert "excluded none" in line, line
    served(cluster, k5, aes_key, engine, krb)


# A server's log event for a pair set aside (node/exclusion.cpp).
PAIR_FAILED = ("a check of a pair's service failed that names neither of its servers: one of the three deviated; while "
               "three-party service is suspended the next pair serves, until an operator readmits "
               "(mpcctl cluster readmit)")


# A server deviating where only a client, or a check naming nobody, sees it: in three-party
# service it alters AND shares (the AND check names it and server 2, whom its own audit accuses,
# in one dispute; server 3 pairs with the lower-numbered, server 1); in that pair it alters what
# the client's pads check ("output-shift": the client refuses the padded keystream and reports
# it) or its key share ("share-bit": the check against the share's checks the third server dealt
# fails, which the dealer could have caused too). Either way that pair is set aside and server 3
# pairs with the other disputed server: servers 2 and 3 serve.
@pytest.mark.timeout(300)
@pytest.mark.parametrize("pair_fault", ["output-shift", "share-bit"])
def test_a_pair_failing_checks_that_name_nobody_hands_the_service_to_the_next_pair(enrolled, k5, pair_fault):
    cluster, engine, aes_key, krb = enrolled
    cluster.kill_server(1)
    cluster.restart_server(1, fault=f"and-share-bit=2,{pair_fault}")
    cluster.wait_for_modes(ALL_THREE, deadline_s=60)
    for _ in range(3):
        served(cluster, k5, aes_key, engine, krb)
    cluster.wait_for_modes({1: "three-party", 2: "two-party without server 1", 3: "two-party without server 1"},
                           deadline_s=60)
    lines = status_lines(cluster)
    for party in (2, 3):
        assert "the pair without server 2 failed" in lines[party], lines[party]
        assert "excluded none" in lines[party], lines[party]
    assert "(with server 1" in lines[2], lines[2]
    # Seen by the pair's member the client reported to, or taken from the other's hello.
    assert any(cluster.log_events(party, PAIR_FAILED) for party in (1, 3)), cluster.log_tail()
    if pair_fault == "output-shift":
        assert any("client_check failed in a client's job" in line for line in lines.values()), lines
    jobs_before = jobs_of(cluster, 1)
    served(cluster, k5, aes_key, engine, krb)
    assert jobs_of(cluster, 1) == jobs_before

    # Kept on disk: server 2 restarted still knows the pair failed and serves with server 3.
    cluster.kill_server(2)
    cluster.restart_server(2)
    cluster.wait_for_modes({1: "three-party", 2: "two-party without server 1", 3: "two-party without server 1"},
                           deadline_s=60)
    served(cluster, k5, aes_key, engine, krb)

    readmitted(cluster, k5, aes_key, engine, krb, 1)
    assert "the pair without server" not in " ".join(status_lines(cluster).values())


@pytest.mark.timeout(300)
def test_a_tag_share_only_the_client_sees_altered_suspends_three_party_service(enrolled):
    """Server 3 alters its share of GCM tags, which the servers do not check: the client finds
    the shares disagree, refuses the tag and reports it; three-party service is suspended, and
    the next tag, from servers 1 and 2, is AES-GCM's."""
    cluster, _, _, _ = enrolled
    gcm_key = gcm.import_gcm_key(cluster)
    cluster.kill_server(3)
    cluster.restart_server(3, fault="tag-share-bit=5")
    cluster.wait_for_modes(ALL_THREE, deadline_s=60)
    gcm_engine = gcm.Engine(cluster.compute_config, timeout_ms=60000)
    try:
        gcm.wait_until_gcm_serving(gcm_engine)
        plaintext, aad = secrets.token_bytes(29), secrets.token_bytes(11)
        [(nonce, stream)] = gcm_engine.prefetch(1, 2)
        with pytest.raises(gcm.GcmError) as refused:
            gcm.seal(gcm_engine, nonce, stream, plaintext, aad)
        assert "disagree" in str(refused.value), refused.value
        cluster.wait_for_modes({1: "two-party without server 3", 2: "two-party without server 3", 3: "three-party"},
                               deadline_s=30)
        for party, line in status_lines(cluster).items():
            assert "three-party service suspended" in line, line
        assert any("client_check failed in a client's job" in line for line in status_lines(cluster).values())
        [(nonce, stream)] = gcm_engine.prefetch(1, 2)
        assert gcm.seal(gcm_engine, nonce, stream, plaintext, aad) == AESGCM(gcm_key).encrypt(nonce, plaintext, aad)
    finally:
        gcm_engine.close()


# A server that keeps its heartbeats and sends each batch's first message later than the peers
# wait (peer_timeout, 1 s): no check can name it (node/service_stall.hpp).
STALLING = "stall-every=8000"
# The shell's event when it leaves a service that serves nothing (node/exclusion.cpp).
STALLED = ("the service serves nothing while every server is heard: one of them withholds its part; it is left as "
           "after a failed check that names nobody")


# Short form: server 3 (left by the suspension at once); long form: server 1, which the
# suspension leaves in the pair of servers 1 and 2, where its deviation is a three-party one only.
@pytest.mark.timeout(300)
@pytest.mark.parametrize("stalling", [3, pytest.param(1, marks=pytest.mark.long)])
def test_a_server_withholding_its_part_of_every_batch_no_longer_stops_every_job(enrolled, k5, stalling):
    """Server N answers heartbeats but holds back its part of every three-party batch past the
    peer timeout: every job fails on a peer's timeout, each after its one retry. After ten
    seconds of nothing served with all three heard, three-party service is suspended, servers 1
    and 2 serve, and jobs are served again, correct against OpenSSL and libk5crypto."""
    cluster, engine, aes_key, krb = enrolled
    served(cluster, k5, aes_key, engine, krb)
    cluster.kill_server(stalling)
    cluster.restart_server(stalling, fault=STALLING)
    cluster.wait_for_modes(ALL_THREE, deadline_s=60)
    started = time.monotonic()
    failed = 0
    while True:
        try:
            served(cluster, k5, aes_key, engine, krb)
            break
        except (MpcctlError, ClientCallError):
            failed += 1
            assert time.monotonic() - started < 120, "no job served two minutes into the stall"
    took = time.monotonic() - started
    honest = [party for party in cluster.parties if party != stalling]
    # The first server whose watch saw it suspends, the others take the suspension from its hellos.
    assert any(cluster.log_events(party, STALLED) for party in cluster.parties)
    for party, line in status_lines(cluster).items():
        if party in honest:
            assert "three-party service suspended" in line, line
    served(cluster, k5, aes_key, engine, krb)
    print(f"server {stalling} stalling every batch: served again after {took:.1f} s "
          f"({failed} rounds of jobs failed at the client, the rest sent again by the client library)")
