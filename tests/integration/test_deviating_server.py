"""One server that deviates on purpose, in a real cluster over real sockets.

The deviating server is mpc-server-faults (common/fault_injection.hpp): the same server built
with deliberate alterations that the environment variable MPC_FAULT switches on; it is never
installed or packaged. Each test runs honest jobs before and after the deviation and checks
them against an independent implementation (libk5crypto, the cryptography package), checks
that the deviating job is refused with the error that names the check, and where the check
is part of active security, that the same deviation under security = "passive" changes the
result without anybody noticing, so these tests fail without the check.
"""
from __future__ import annotations

import re
import secrets
import time

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from mpctest import local_masks, gcm_client as gcm
from mpctest.mpc_cluster import Cluster, faults_server_binary, openssl_ctr_keystream, server_binary
from mpctest.krb_client import MPC_AES256_CTS, MPC_EUNREACHABLE, Engine, KrbError, k5, wait_until_krb_serving  # noqa: F401 (k5 fixture)

MPC_EMISMATCH = -5
MPC_EABORT = -10
CHECKSUM_USAGE = 17
CKSUMTYPE_HMAC_SHA1_96_AES256 = 16
ENCTYPE_AES256_CTS = 18
# A byte well inside the garbled tables of a checksum job (megabytes), past the input labels.
TABLE_BYTE = 300_000


def restart(cluster: Cluster, party: int, fault: str | None = None) -> None:
    cluster.kill_server(party)
    cluster.restart_server(party, fault=fault)


def after_restart(call, error_type, deadline_s: float = 30):
    """(result, None) of `call` once the restarted server is reachable, or (None, error) for the
    first error other than MPC_EUNREACHABLE that it raises."""
    deadline = time.monotonic() + deadline_s
    while True:
        try:
            return call(), None
        except error_type as error:
            if error.code != MPC_EUNREACHABLE or time.monotonic() > deadline:
                return None, error
            time.sleep(0.2)


# ------------------------------------------------------------------ garbled Kerberos jobs

@pytest.mark.timeout(240)
def test_an_altered_table_row_is_refused_when_active_and_opens_wrong_when_passive(fresh_cluster, k5):  # noqa: F811
    """Server 1 garbles every Kerberos job; with one bit flipped in each of 64 table rows, server 2's
    comparison with server 3's garbling refuses the job (MPC_EABORT), and server 1's answer to the
    refusal gets it named by an honest server. Garbled once, as security = "passive" does, the
    same flips yield a wrong checksum that nothing detects."""
    cluster = fresh_cluster
    admin = Engine(cluster.admin_config)
    engine = Engine(cluster.compute_config, timeout_ms=60000)
    key = secrets.token_bytes(32)
    key_id = ("krb/deviation", 1, MPC_AES256_CTS)
    data = secrets.token_bytes(57)
    expected = k5.make_checksum(CKSUMTYPE_HMAC_SHA1_96_AES256, ENCTYPE_AES256_CTS, key, CHECKSUM_USAGE, data)
    try:
        admin.import_key(*key_id, key)
        wait_until_krb_serving(engine, key_id)
        assert engine.checksum(key_id, CHECKSUM_USAGE, data) == expected
        before = cluster.verification_refusals()

        restart(cluster, 1, fault=f"garbled-table-bits={TABLE_BYTE}")
        result, refused = after_restart(lambda: engine.checksum(key_id, CHECKSUM_USAGE, data), KrbError)
        assert result is None, f"the deviating job succeeded: {result!r}"
        assert refused.code == MPC_EABORT, refused
        # Every server answers verification_failed with its own conclusion of server 2's refusal
        # (protocol/gc3/garbling_blame.hpp); the client names whichever reply came first.
        assert "answered verification_failed" in str(refused), refused
        assert "the garbling party 1 sent differs from party 3's" in str(refused), refused
        after = cluster.verification_refusals()
        assert all(after[party] > before[party] for party in cluster.parties), (before, after)
        expect_named_by_an_honest_server(cluster, 1, GARBLED_BATCH_REFUSED)

        restart(cluster, 1)
        wait_until_krb_serving(engine, key_id)
        assert engine.checksum(key_id, CHECKSUM_USAGE, data) == expected

        for party in cluster.parties:
            cluster.set_server_setting(party, "security", "passive")
        for party in (2, 3):
            restart(cluster, party)
        restart(cluster, 1, fault=f"garbled-table-bits={TABLE_BYTE}")
        wrong, error = after_restart(lambda: engine.checksum(key_id, CHECKSUM_USAGE, data), KrbError)
        assert error is None, error
        assert wrong != expected, "64 altered table rows left the checksum right"
    finally:
        engine.close()
        admin.close()


# ------------------------------------------------------------------------- GCM tag

@pytest.mark.timeout(180)
@pytest.mark.parametrize("party", [1, 2, 3])
def test_an_altered_tag_share_is_refused(fresh_cluster, party):
    """The GCM tag is linear: each server returns its share and the client opens it three ways
    (job_intake.cpp says why one altered share cannot pass). One flipped bit in any server's
    reply is refused (MPC_EMISMATCH), never returned as a tag."""
    cluster = fresh_cluster
    key = gcm.import_gcm_key(cluster)
    engine = gcm.Engine(cluster.compute_config, timeout_ms=60000)
    aad, plaintext = b"header", secrets.token_bytes(40)
    try:
        gcm.wait_until_gcm_serving(engine)
        nonce, keystream = engine.prefetch(1, 3)[0]
        sealed = gcm.seal(engine, nonce, keystream, plaintext, aad)
        assert AESGCM(key).decrypt(nonce, sealed, aad) == plaintext

        restart(cluster, party, fault="tag-share-bit=77")
        gcm.wait_until_gcm_serving(engine)
        nonce, keystream = engine.prefetch(1, 3)[0]
        ciphertext = gcm.xor(plaintext, keystream)
        with pytest.raises(gcm.GcmError) as refused:
            engine.tag(nonce, aad, ciphertext)
        assert refused.value.code == MPC_EMISMATCH, refused.value
        assert "disagree" in str(refused.value), refused.value

        restart(cluster, party)
        gcm.wait_until_gcm_serving(engine)
        nonce, keystream = engine.prefetch(1, 3)[0]
        sealed = gcm.seal(engine, nonce, keystream, plaintext, aad)
        assert AESGCM(key).decrypt(nonce, sealed, aad) == plaintext
    finally:
        engine.close()


@pytest.mark.timeout(180)
@pytest.mark.parametrize("party", [1, 2, 3])
def test_an_altered_chained_tag_share_is_caught_by_the_check_before_the_next_tag(fresh_cluster, party):
    """A chained tag (a PAC's KDC checksum over its server checksum, made in the same round trip)
    is opened from additive shares: one server that flips a bit of its share changes it, and
    nothing in that reply can tell. The next tag, asked with the chained one as its check, is
    then withheld (MPC_EABORT), so a ticket carrying the wrong checksum never leaves the KDC;
    honest chains before and after are right against AESGCM."""
    cluster = fresh_cluster
    key = gcm.import_gcm_key(cluster)
    engine = gcm.Engine(cluster.compute_config, timeout_ms=60000)
    data, plaintext = secrets.token_bytes(120), secrets.token_bytes(32)

    def chain_then_seal() -> tuple[bytes, bytes, bytes, bytes]:
        """(chained tag, AESGCM's, sealed ticket text, nonce of the seal) of one honest-looking chain."""
        (n1, _), (n2, _), (n3, keystream) = engine.prefetch(3, 2)
        t1, t2 = engine.tag_chained(n1, data, n2, gcm.PAC_CHAIN_PREFIX)
        assert t1 == AESGCM(key).encrypt(n1, b"", data)
        chained_aad = gcm.PAC_CHAIN_PREFIX + n1 + t1
        expected = AESGCM(key).encrypt(n2, b"", chained_aad)
        ciphertext = gcm.xor(plaintext, keystream)
        sealed = ciphertext + engine.tag_checked(n3, b"ticket", ciphertext, (n2, chained_aad, t2))
        return t2, expected, sealed, n3

    try:
        gcm.wait_until_gcm_serving(engine)
        t2, expected, sealed, n3 = chain_then_seal()
        assert t2 == expected
        assert AESGCM(key).decrypt(n3, sealed, b"ticket") == plaintext

        restart(cluster, party, fault="chained-tag-bit=42")
        gcm.wait_until_gcm_serving(engine)
        with pytest.raises(gcm.GcmError) as refused:
            chain_then_seal()
        assert refused.value.code == MPC_EABORT, refused.value
        assert "one server's share was altered" in str(refused.value), refused.value
        # What the check stands between: the chained tag itself comes back wrong, unnoticed.
        (n1, _), (n2, _) = engine.prefetch(2)
        t1, t2 = engine.tag_chained(n1, data, n2, gcm.PAC_CHAIN_PREFIX)
        assert t2 != AESGCM(key).encrypt(n2, b"", gcm.PAC_CHAIN_PREFIX + n1 + t1)

        restart(cluster, party)
        gcm.wait_until_gcm_serving(engine)
        t2, expected, sealed, n3 = chain_then_seal()
        assert t2 == expected
        assert AESGCM(key).decrypt(n3, sealed, b"ticket") == plaintext
    finally:
        engine.close()


@pytest.mark.timeout(180)
@pytest.mark.parametrize("party", [1, 2, 3])
def test_a_server_computing_a_wrong_local_mask_is_refused(fresh_cluster, party):
    """A server that computes its term of M(N || 1) wrong, consistently in both places its share
    holds it (as with a wrong component), leaves the other holder of that term honest: the tag's
    three openings disagree and the client refuses it (MPC_EMISMATCH), the keystream of the same
    prefetch still opens right. Honest tags before and after open."""
    cluster = fresh_cluster
    gcm.import_gcm_key(cluster)
    engine = gcm.Engine(cluster.compute_config, timeout_ms=60000)
    aad, plaintext = b"header", secrets.token_bytes(40)
    try:
        gcm.wait_until_gcm_serving(engine)
        [(nonce, keystream)] = engine.prefetch(1, 3, local=True)
        sealed = gcm.seal(engine, nonce, keystream, plaintext, aad)
        assert engine.open(nonce, aad, sealed[:-16], sealed[-16:]) == plaintext

        restart(cluster, party, fault="local-mask-bit=45")
        gcm.wait_until_gcm_serving(engine)
        [(nonce, keystream)] = engine.prefetch(1, 3, local=True)
        ciphertext = gcm.xor(plaintext, keystream)
        with pytest.raises(gcm.GcmError) as refused:
            engine.tag(nonce, aad, ciphertext)
        assert refused.value.code == MPC_EMISMATCH, refused.value

        restart(cluster, party)
        gcm.wait_until_gcm_serving(engine)
        [(nonce, keystream)] = engine.prefetch(1, 3, local=True)
        sealed = gcm.seal(engine, nonce, keystream, plaintext, aad)
        assert engine.open(nonce, aad, sealed[:-16], sealed[-16:]) == plaintext
    finally:
        engine.close()


@pytest.mark.timeout(240)
@pytest.mark.parametrize("local", [False, True], ids=["aes", "local-masks"])
def test_a_leader_that_replays_an_epoch_gets_no_nonce_computed_twice(fresh_cluster, local):
    """Server 1 goes back, every third batch with nonces, to the other of two epochs with its
    sequence and nonce counter restarted ("epoch-replay"). Each nonce is tagged at once, so no
    server still holds it when it comes back. Both followers refuse every batch of an epoch
    they computed under before; the client's retries run in the leader's next epoch, so no
    nonce reaches the client twice and every keystream and tag is AES-GCM's. Without the
    followers' epoch ledger the same rounds hand the client a nonce of round one again."""
    cluster = fresh_cluster
    key = gcm.import_gcm_key(cluster)
    engine = gcm.Engine(cluster.compute_config, timeout_ms=60000)
    aad = b"tgt"

    parts = gcm.cluster_components(cluster) if local else None

    def reference(nonce: bytes, plaintext: bytes) -> bytes:
        if local:
            return local_masks.seal(key, gcm.KEY, parts, nonce, plaintext, aad)
        return AESGCM(key).encrypt(nonce, plaintext, aad)

    def sealed_round(rounds: int, seen: dict[bytes, int]) -> None:
        for round_index in range(rounds):
            [(nonce, keystream)] = engine.prefetch(1, 2, local=local)
            assert nonce not in seen, (f"nonce {nonce.hex()} reached the client in round {seen[nonce]} and "
                                       f"again in round {round_index}")
            seen[nonce] = round_index
            plaintext = secrets.token_bytes(30)
            assert gcm.seal(engine, nonce, keystream, plaintext, aad) == reference(nonce, plaintext)

    try:
        gcm.wait_until_gcm_serving(engine)
        sealed_round(2, {})

        restart(cluster, 1, fault="epoch-replay")
        gcm.wait_until_gcm_serving(engine, deadline_s=30)
        seen: dict[bytes, int] = {}
        sealed_round(15, seen)
        assert len({nonce[:8] for nonce in seen}) >= 3, "the leader never went back to an epoch"
        for party in (2, 3):
            refused = cluster.wait_for_log_event(party, "epoch opened before refused")
            assert refused, f"server {party} refused no replayed epoch"

        restart(cluster, 1)
        gcm.wait_until_gcm_serving(engine, deadline_s=30)
        sealed_round(2, seen)
    finally:
        engine.close()


@pytest.mark.timeout(180)
@pytest.mark.parametrize("party, fault, code", [(1, "reopen-keystream-bit=5", MPC_EMISMATCH),
                                                (3, "reopen-keystream-bit=131", MPC_EMISMATCH),
                                                (2, "reopen-check-bit=9", gcm.MPC_EBADTAG)])
def test_an_altered_reopen_answer_is_refused_or_fails_the_tag(fresh_cluster, party, fault, code):
    """A reopen (a ticket the servers tagged, opened without AES) is linear too. One flipped
    keystream bit is refused by the three-way opening (MPC_EMISMATCH); one flipped bit of a
    server's check share can only make the right tag fail (MPC_EBADTAG), never let a wrong one
    pass: the servers' shares of r * s carry randomness the deviating server lacks. The same
    holds for the reopen of a nonce with local masks, whose shares are computed anew."""
    cluster = fresh_cluster
    gcm.import_gcm_key(cluster)
    engine = gcm.Engine(cluster.compute_config, timeout_ms=60000)
    plaintext = secrets.token_bytes(32)
    try:
        restart(cluster, party, fault=fault)
        gcm.wait_until_gcm_serving(engine)
        for local in (False, True):
            [(nonce, keystream)] = engine.prefetch(1, 2, local=local)
            sealed = gcm.seal(engine, nonce, keystream, plaintext, b"tgt")
            with pytest.raises(gcm.GcmError) as refused:
                engine.open(nonce, b"tgt", sealed[:-16], sealed[-16:])
            # A local ticket whose reopen fails its check is then checked as AES-GCM in full,
            # which fails too: the same code.
            assert refused.value.code == code, (local, refused.value)

        restart(cluster, party)
        gcm.wait_until_gcm_serving(engine)
        [(nonce, keystream)] = engine.prefetch(1, 2)
        sealed = gcm.seal(engine, nonce, keystream, plaintext, b"tgt")
        assert engine.open(nonce, b"tgt", sealed[:-16], sealed[-16:]) == plaintext
    finally:
        engine.close()


# ------------------------------------------------------------------- layered jobs (rss3)

KEY = ("it/deviation", 1, "aes128")
# One block runs on the server's shell thread, 1000 on a batch worker: both paths check.
LAYERED_BLOCKS = (1, 1000)


def keystream_attempt(cluster: Cluster, counter: str, blocks: int, deadline_s: float = 30):
    """(keystream, None), or (None, mpcctl's error) for the first refusal for failed verification;
    other failures (the restarted server still joining the ring) are retried until the deadline,
    then returned."""
    deadline = time.monotonic() + deadline_s
    while True:
        result = cluster.mpcctl("aes", "keystream", "--cluster", str(cluster.admin_config), *cluster.key_args(*KEY),
                                "--counter", counter, "--blocks", str(blocks), check=False, timeout=60)
        if result.returncode == 0:
            return cluster.keystream_of(result), None
        if "verification" in result.stderr or time.monotonic() > deadline:
            return None, result.stderr.strip()
        time.sleep(0.2)


# Short form: server 1; long form: servers 2 and 3 as well.
@pytest.mark.timeout(300)
@pytest.mark.parametrize("party", [1, pytest.param(2, marks=pytest.mark.long), pytest.param(3, marks=pytest.mark.long)])
def test_a_flipped_and_share_is_refused_when_active_and_changes_the_keystream_when_passive(fresh_cluster, party):
    """A server flips one bit of its r in AND layer 2, in its own buffer, so its share and the
    copy its neighbour receives agree and no reconstruction disagrees. With security = "active"
    its neighbours' AND check refuses the keystream job (MPC_EABORT), naming it among the two
    parties one of which deviated, and every
    server counts the refusal; honest jobs before and after equal OpenSSL. Under "passive" the
    same flip returns a wrong keystream that nothing detects."""
    cluster = fresh_cluster
    key_hex, _ = cluster.import_key(*KEY)
    cluster.wait_until_serving(KEY)
    counter = secrets.token_hex(16)
    want = {blocks: openssl_ctr_keystream("aes128", key_hex, counter, blocks) for blocks in LAYERED_BLOCKS}
    for blocks in LAYERED_BLOCKS:
        assert cluster.keystream(KEY[0], KEY[1], KEY[2], counter, blocks) == want[blocks]
    before = cluster.verification_refusals()

    restart(cluster, party, fault="and-share-bit=2")
    for blocks in LAYERED_BLOCKS:
        result, refused = keystream_attempt(cluster, counter, blocks)
        assert result is None, f"{blocks} blocks: the deviating job succeeded"
        assert "failed verification" in refused or "verification_failed" in refused, refused
        suspects = re.search(r"AND gates failed.*one of parties (\d) and (\d) deviated", refused)
        assert suspects and str(party) in suspects.groups(), refused
    after = cluster.verification_refusals()
    assert all(after[p] > before[p] for p in cluster.parties), (before, after)
    expect_named_by_an_honest_server(cluster, party)

    restart(cluster, party)
    cluster.wait_until_serving(KEY, deadline_s=30)
    for blocks in LAYERED_BLOCKS:
        assert cluster.keystream(KEY[0], KEY[1], KEY[2], counter, blocks) == want[blocks]

    for p in cluster.parties:
        cluster.set_server_setting(p, "security", "passive")
    for p in cluster.parties:
        if p != party:
            restart(cluster, p)
    restart(cluster, party, fault="and-share-bit=2")
    for blocks in LAYERED_BLOCKS:
        # The flipped AND output can be absorbed further down the S-box (by an AND whose other
        # input is 0 for this key and counter), so a few fresh counters are tried: the first
        # wrong keystream shows the flip went through undetected.
        for _ in range(8):
            trial = secrets.token_hex(16)
            wrong, error = keystream_attempt(cluster, trial, blocks)
            assert error is None, error
            if wrong != openssl_ctr_keystream("aes128", key_hex, trial, blocks):
                break
        else:
            raise AssertionError(f"{blocks} blocks: a flipped AND share left the keystream right for 8 counters")


# A server's log event for a batch a check of active security refused (batch_worker.cpp, and
# garbled_krb_batch.cpp for a Kerberos batch garbled twice); its error says which peers the
# server can show deviated ("party N deviated").
BATCH_REFUSED = "batch refused: a check of active security failed"
GARBLED_BATCH_REFUSED = "garbled batch refused: a check of active security failed"


def expect_named_by_an_honest_server(cluster, deviating: int, event: str = BATCH_REFUSED) -> None:
    """The failed check names the deviating server (rss3/and_check_blame.hpp for the AND check,
    gc3/garbling_blame.hpp for a Kerberos batch garbled twice, logged as `event`): an honest
    server shows it deviated, and no honest server names the other honest one."""
    honest = [p for p in cluster.parties if p != deviating]
    deadline = time.monotonic() + 10
    while True:
        named = {p: {int(n) for entry in cluster.log_events(p, event)
                     for n in re.findall(r"\bparty (\d) deviated", entry.get("error", ""))} for p in honest}
        if any(deviating in found for found in named.values()) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert any(deviating in found for found in named.values()), named
    for party, found in named.items():
        assert found <= {deviating}, f"honest server {party} names {found}"


# Short form: the even hops (each hop, altered by each party, runs in process in
# and_check_test.cpp); long form: every hop.
@pytest.mark.timeout(300)
@pytest.mark.parametrize("hop", [0, pytest.param(1, marks=pytest.mark.long), 2, pytest.param(3, marks=pytest.mark.long),
                                 4, pytest.param(5, marks=pytest.mark.long), 6])
def test_an_altered_check_message_is_refused_and_names_its_sender(fresh_cluster, hop):
    """Server 2 alters one of the AND check's own messages as it sends it: its receipt of
    server 1's last layer (0), the share of server 3's weights' seed it sends as its V- (1), its
    proof (2), its findings as the next verifier (3), its verdict (4), the verdict it relays (5),
    or the relay it forwards (6). The job is refused and nothing is returned; an honest server
    holds server 2 in a dispute, since what it signed or sent shows it deviated; the cluster
    serves honestly again once server 2 does."""
    cluster = fresh_cluster
    key_hex, _ = cluster.import_key(*KEY)
    cluster.wait_until_serving(KEY)
    counter = secrets.token_hex(16)
    restart(cluster, 2, fault=f"check-message-bit={hop}")
    result, refused = keystream_attempt(cluster, counter, 1000)
    assert result is None, "the job succeeded"
    assert "fail" in refused and ("failed verification" in refused or "verification_failed" in refused), refused
    expect_named_by_an_honest_server(cluster, 2)
    restart(cluster, 2)
    cluster.wait_until_serving(KEY, deadline_s=30)
    assert cluster.keystream(KEY[0], KEY[1], KEY[2], counter, 7) == openssl_ctr_keystream("aes128", key_hex, counter, 7)


def test_the_installed_server_carries_no_deviation():
    """Only the test server reads MPC_FAULT; the server that is installed and packaged is built
    without any of the deviations."""
    assert b"MPC_FAULT" in faults_server_binary().read_bytes()
    shipped = server_binary().read_bytes()
    for marker in (b"MPC_FAULT", b"garbled-table-bits", b"tag-share-bit", b"chained-tag-bit", b"and-share-bit", b"check-message-bit",
                   b"reopen-check-bit", b"reopen-keystream-bit", b"local-mask-bit", b"stall-every"):
        assert marker not in shipped, marker
