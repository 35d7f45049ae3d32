"""AES-256-GCM jobs (tickets under a protected krbtgt key) through libmpcclient.so against a
real three-server cluster, with Python's `cryptography` AESGCM as the outside truth.

Prefetch gives server-chosen nonces and their keystream AES_K(N || 2 ..); tag consumes a
nonce and returns GHASH_H(aad, c) ^ AES_K(N || 1); open checks a tag inside the computation
and returns the plaintext or MPC_EBADTAG. See docs/ticket-format.md.
"""

from __future__ import annotations

import ctypes
import secrets
import statistics
import threading
import time

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from mpctest import local_masks
from mpctest.gcm_client import (DEFAULT_MAX_BATCH_BLOCKS, KEY, MAX_HASH_BLOCKS, MPC_AES256_GCM, MPC_EABORT, MPC_EBADTAG,
                                MPC_EINVAL, MPC_ENONCE, MPC_EREFUSED, MPC_EUNREACHABLE, NONCE_BYTES, PAC_CHAIN_PREFIX,
                                TAG_BYTES, Engine, GcmError, assert_forgeries_refused, cluster_components, ctr_keystream,
                                import_gcm_key, seal, server_counters, ticket_forgeries, wait_until_gcm_serving, xor)
from mpctest.mpc_cluster import Cluster


@pytest.fixture(scope="module")
def gcm(cluster):
    """The shared cluster with one aes256-gcm key; engines for the compute and admin client keys."""
    key = import_gcm_key(cluster)
    compute = Engine(cluster.compute_config)
    admin = Engine(cluster.admin_config)
    try:
        wait_until_gcm_serving(compute)
        yield {"cluster": cluster, "key": key, "compute": compute, "admin": admin}
    finally:
        compute.close()
        admin.close()


# ------------------------------------------------------------------------- prefetch + tag

@pytest.mark.parametrize("length,aad_length", [(0, 0), (0, 24), (1, 0), (16, 16), (40, 13), (64, 8), (200, 100)])
def test_prefetch_keystream_and_tag_equal_aesgcm(gcm, length, aad_length):
    engine, key = gcm["compute"], gcm["key"]
    blocks = (length + 15) // 16
    entries = engine.prefetch(3, blocks)
    for nonce, keystream in entries:
        assert keystream == ctr_keystream(key, nonce, 2, blocks)
    nonce, keystream = entries[1]
    plaintext = secrets.token_bytes(length)
    aad = secrets.token_bytes(aad_length)
    assert seal(engine, nonce, keystream, plaintext, aad) == AESGCM(key).encrypt(nonce, plaintext, aad)


def test_nonces_have_the_leader_epoch_then_a_growing_counter(gcm):
    engine = gcm["compute"]
    nonces = [nonce for nonce, _ in engine.prefetch(50)] + [nonce for nonce, _ in engine.prefetch(50)]
    assert len({nonce[:8] for nonce in nonces}) == 1
    counters = [int.from_bytes(nonce[8:], "big") for nonce in nonces]
    assert counters == sorted(counters) and len(set(counters)) == len(counters)


def test_a_nonce_tags_once(gcm):
    engine = gcm["compute"]
    [(nonce, _)] = engine.prefetch(1)
    engine.tag(nonce, b"aad", b"first ciphertext")
    with pytest.raises(GcmError) as failure:
        engine.tag(nonce, b"aad", b"second ciphertext")
    assert failure.value.code == MPC_ENONCE, failure.value
    assert "nonce" in failure.value.message


def test_a_nonce_nobody_prefetched_does_not_tag(gcm):
    engine = gcm["compute"]
    with pytest.raises(GcmError) as failure:
        engine.tag(secrets.token_bytes(NONCE_BYTES), b"", b"x")
    assert failure.value.code == MPC_ENONCE


def test_another_client_key_cannot_tag_a_nonce(gcm):
    compute, admin, key = gcm["compute"], gcm["admin"], gcm["key"]
    [(nonce, keystream)] = compute.prefetch(1, 1)
    with pytest.raises(GcmError) as failure:
        admin.tag(nonce, b"", xor(b"stolen", keystream))
    assert failure.value.code == MPC_ENONCE
    # The other key's attempt did not use it up.
    plaintext = b"ticket"
    assert seal(compute, nonce, keystream, plaintext, b"a") == AESGCM(key).encrypt(nonce, plaintext, b"a")


def test_a_nonce_serves_only_its_key(gcm):
    cluster, compute = gcm["cluster"], gcm["compute"]
    other = ("gcm/other", 1, "aes256-gcm")
    other_key = import_gcm_key(cluster, other)
    [(nonce, _)] = compute.prefetch(1)
    with pytest.raises(GcmError) as failure:
        compute.tag(nonce, b"", b"x", key=other)
    assert failure.value.code == MPC_ENONCE
    tag = compute.tag(nonce, b"", b"x")
    assert compute.open(nonce, b"", b"x", tag) == xor(b"x", ctr_keystream(gcm["key"], nonce, 2, 1))
    [(nonce, stream)] = compute.prefetch(1, 1, key=other)
    assert seal(compute, nonce, stream, b"y", b"", key=other) == AESGCM(other_key).encrypt(nonce, b"y", b"")


def test_tag_of_the_longest_input(gcm):
    engine, key = gcm["compute"], gcm["key"]
    # MAX_HASH_BLOCKS GHASH blocks: padded AAD + padded text + the length block.
    aad = secrets.token_bytes(16 * 100 + 3)
    length = 16 * (MAX_HASH_BLOCKS - 1 - 101)
    blocks = length // 16
    [(nonce, keystream)] = engine.prefetch(1, blocks)
    plaintext = secrets.token_bytes(length)
    assert seal(engine, nonce, keystream, plaintext, aad) == AESGCM(key).encrypt(nonce, plaintext, aad)


# ------------------------------------------------------------------------------------ open

@pytest.mark.parametrize("length", [0, 1, 15, 16, 17, 100, 16 * 60 + 5])
def test_open_returns_the_plaintext(gcm, length):
    engine = gcm["compute"]
    blocks = (length + 15) // 16
    [(nonce, keystream)] = engine.prefetch(1, blocks)
    plaintext, aad = secrets.token_bytes(length), secrets.token_bytes(20)
    sealed = seal(engine, nonce, keystream, plaintext, aad)
    assert engine.open(nonce, aad, sealed[:-16], sealed[-16:]) == plaintext


def test_open_refuses_any_flipped_bit(gcm):
    engine = gcm["compute"]
    [(nonce, keystream)] = engine.prefetch(1, 3)
    plaintext, aad = secrets.token_bytes(40), b"usage 2, enctype -20"
    sealed = seal(engine, nonce, keystream, plaintext, aad)
    ciphertext, tag = sealed[:-16], sealed[-16:]

    def flip(data: bytes, bit: int) -> bytes:
        out = bytearray(data)
        out[bit // 8] ^= 1 << (bit % 8)
        return bytes(out)

    cases = {
        "ciphertext first bit": (nonce, aad, flip(ciphertext, 0), tag),
        "ciphertext last bit": (nonce, aad, flip(ciphertext, 8 * len(ciphertext) - 1), tag),
        "tag": (nonce, aad, ciphertext, flip(tag, 77)),
        "aad": (nonce, flip(aad, 5), ciphertext, tag),
        "nonce": (flip(nonce, 95), aad, ciphertext, tag),
        "truncated ciphertext": (nonce, aad, ciphertext[:-1], tag),
        "empty aad": (nonce, b"", ciphertext, tag),
    }
    for what, args in cases.items():
        with pytest.raises(GcmError) as failure:
            engine.open(*args)
        assert failure.value.code == MPC_EBADTAG, f"{what}: {failure.value}"
    assert engine.open(nonce, aad, ciphertext, tag) == plaintext


def test_open_checks_a_gmac(gcm):
    engine, key = gcm["compute"], gcm["key"]
    [(nonce, _)] = engine.prefetch(1)
    aad = secrets.token_bytes(33)
    tag = engine.tag(nonce, aad, b"")
    assert tag == AESGCM(key).encrypt(nonce, b"", aad)
    assert engine.open(nonce, aad, b"", tag) == b""
    with pytest.raises(GcmError) as failure:
        engine.open(nonce, aad + b"!", b"", tag)
    assert failure.value.code == MPC_EBADTAG


@pytest.mark.parametrize("length", [0, 5, 32, 333])
def test_open_of_a_python_ciphertext_under_a_client_nonce(gcm, length):
    engine, key = gcm["compute"], gcm["key"]
    nonce, aad, plaintext = secrets.token_bytes(12), secrets.token_bytes(7), secrets.token_bytes(length)
    sealed = AESGCM(key).encrypt(nonce, plaintext, aad)
    assert engine.open(nonce, aad, sealed[:-16], sealed[-16:]) == plaintext
    forged = AESGCM(secrets.token_bytes(32)).encrypt(nonce, plaintext, aad)
    with pytest.raises(GcmError) as failure:
        engine.open(nonce, aad, forged[:-16], forged[-16:])
    assert failure.value.code == MPC_EBADTAG


def test_tagged_tickets_reopen_without_aes_and_refuse_forged_tags(gcm):
    """A ticket the servers tagged opens again and again from what they kept at the tag: no
    batch (no AES between the servers), the plaintext right. Any change to the tag, the text or
    the AAD fails the zero test. A text longer than the nonce's keystream is opened in full."""
    cluster, engine = gcm["cluster"], gcm["compute"]
    [(nonce, keystream)] = engine.prefetch(1, 2)
    plaintext = secrets.token_bytes(32)
    sealed = seal(engine, nonce, keystream, plaintext, b"ticket")
    ciphertext, tag = sealed[:-16], sealed[-16:]
    before = server_counters(cluster)
    for _ in range(3):
        assert engine.open(nonce, b"ticket", ciphertext, tag) == plaintext
    forgeries = ticket_forgeries(ciphertext, tag, ciphertext[:16])
    assert_forgeries_refused(engine, nonce, forgeries)
    after = server_counters(cluster)
    for party in (1, 2, 3):
        assert after[party] == (before[party][0], before[party][1] + 3 + len(forgeries)), (party, before, after)
    with pytest.raises(GcmError) as failure:
        engine.open(nonce, b"ticket", ciphertext + b"!", tag)
    assert failure.value.code == MPC_EBADTAG
    assert all(server_counters(cluster)[party][0] == after[party][0] + 1 for party in (1, 2, 3))


def test_a_chained_tag_equals_aesgcm_and_a_checked_tag_verifies_it(gcm):
    """One round trip tags a checksum and the checksum over it (prefix || N || T) under a second
    nonce; both equal AESGCM's. The next tag, asked with that chained tag as its check, is right;
    asked with any other chained tag it is withheld (MPC_EABORT). Both nonces are spent, and the
    chained one reopens like any tag."""
    key, engine = gcm["key"], gcm["compute"]
    data = secrets.token_bytes(301)
    (n1, _), (n2, _), (n3, ks3), (n4, ks4) = engine.prefetch(4, 2)
    t1, t2 = engine.tag_chained(n1, data, n2, PAC_CHAIN_PREFIX)
    assert t1 == AESGCM(key).encrypt(n1, b"", data)
    chained_aad = PAC_CHAIN_PREFIX + n1 + t1
    assert t2 == AESGCM(key).encrypt(n2, b"", chained_aad)

    plaintext = secrets.token_bytes(32)
    ciphertext = xor(plaintext, ks3)
    tag = engine.tag_checked(n3, b"ticket", ciphertext, (n2, chained_aad, t2))
    assert AESGCM(key).decrypt(n3, ciphertext + tag, b"ticket") == plaintext

    wrong = bytes([t2[0] ^ 0x10]) + t2[1:]
    with pytest.raises(GcmError) as failure:
        engine.tag_checked(n4, b"ticket", xor(plaintext, ks4), (n2, chained_aad, wrong))
    assert failure.value.code == MPC_EABORT, failure.value
    assert "withheld" in str(failure.value), failure.value

    for nonce in (n1, n2):
        with pytest.raises(GcmError) as spent:
            engine.tag(nonce, b"again", b"")
        assert spent.value.code == MPC_ENONCE, spent.value
    assert engine.open(n2, chained_aad, b"", t2) == b""


def test_chained_and_checked_tags_refuse_what_the_servers_do_not_hold(gcm):
    """A chained tag under a nonce nobody prefetched, or the request's own, is refused; a check
    of a nonce the servers never tagged is refused before the new tag's nonce is spent."""
    engine = gcm["compute"]
    (n1, _), (n2, _) = engine.prefetch(2)
    with pytest.raises(GcmError) as refused:
        engine.tag_chained(n1, b"data", bytes(12), PAC_CHAIN_PREFIX)
    assert refused.value.code == MPC_ENONCE, refused.value
    with pytest.raises(GcmError) as refused:
        engine.tag_chained(n1, b"data", n1, PAC_CHAIN_PREFIX)
    assert refused.value.code == MPC_EINVAL, refused.value
    with pytest.raises(GcmError) as refused:
        engine.tag_chained(n1, b"data", n2, bytes(33))
    assert refused.value.code == MPC_EINVAL, refused.value
    with pytest.raises(GcmError) as refused:
        engine.tag_checked(n1, b"data", b"", (bytes(12), b"aad", bytes(16)))
    assert refused.value.code == MPC_ENONCE, refused.value
    assert len(engine.tag(n1, b"data", b"")) == TAG_BYTES


def test_status_counts_gcm_jobs(gcm):
    cluster, engine = gcm["cluster"], gcm["compute"]
    [(nonce, keystream)] = engine.prefetch(1, 1)
    before = server_counters(cluster)
    sealed = seal(engine, nonce, keystream, b"counted", b"")
    after_tag = server_counters(cluster)
    assert engine.open(nonce, b"", sealed[:-16], sealed[-16:]) == b"counted"
    after_reopen = server_counters(cluster)
    key = gcm["key"]
    client_nonce = secrets.token_bytes(12)
    foreign = AESGCM(key).encrypt(client_nonce, b"not tagged here", b"")
    assert engine.open(client_nonce, b"", foreign[:-16], foreign[-16:]) == b"not tagged here"
    after_open = server_counters(cluster)
    for party in (1, 2, 3):
        # A tag is one job and no batch; so is the reopen of the ticket the servers tagged. A
        # nonce they never tagged opens in full: one batch.
        assert after_tag[party] == (before[party][0], before[party][1] + 1), (party, before, after_tag)
        assert after_reopen[party] == (after_tag[party][0], after_tag[party][1] + 1), (party, after_reopen)
        assert after_open[party][0] == after_reopen[party][0] + 1, (party, after_open)


# ------------------------------------------------------------------------- local masks

@pytest.mark.parametrize("length,aad_length", [(0, 0), (0, 24), (16, 16), (40, 13), (200, 100)])
def test_local_masks_give_the_reference_keystream_and_tag(gcm, length, aad_length):
    """Keystream and tag of nonces with local masks against local_masks.py, computed from the
    components the servers store: M(N || 2 ..) and GHASH_H(aad, c) ^ M(N || 1)."""
    engine, key = gcm["compute"], gcm["key"]
    parts = cluster_components(gcm["cluster"])
    blocks = (length + 15) // 16
    entries = engine.prefetch(3, blocks, local=True)
    for nonce, keystream in entries:
        assert local_masks.is_local(nonce)
        assert keystream == local_masks.masks(KEY, parts, nonce, 2, blocks)
        # Not AES-GCM under K: the masks are another function of the key.
        if blocks:
            assert keystream != ctr_keystream(key, nonce, 2, blocks)
    nonce, keystream = entries[1]
    plaintext = secrets.token_bytes(length)
    aad = secrets.token_bytes(aad_length)
    sealed = seal(engine, nonce, keystream, plaintext, aad)
    assert sealed == local_masks.seal(key, KEY, parts, nonce, plaintext, aad)
    assert engine.open(nonce, aad, sealed[:-16], sealed[-16:]) == plaintext


def test_local_and_aes_nonces_share_one_counter_and_never_meet(gcm):
    """The mark is the counter's top bit; both kinds take counters from one run of the epoch."""
    engine = gcm["compute"]
    aes = [nonce for nonce, _ in engine.prefetch(2)]
    local = [nonce for nonce, _ in engine.prefetch(2, local=True)]
    after = [nonce for nonce, _ in engine.prefetch(1)]
    assert not any(local_masks.is_local(n) for n in aes + after)
    assert all(local_masks.is_local(n) for n in local)
    counters = [int.from_bytes(n[8:], "big") & 0x7fffffff for n in aes + local + after]
    assert counters == sorted(counters) and len(set(counters)) == 5, counters
    assert len({n[:8] for n in aes + local + after}) == 1


def test_local_tickets_reopen_without_a_batch_and_refuse_forgeries(gcm):
    """Any ticket of a local-mask nonce reopens from the shares: no batch at the tag or the
    reopen, and the prefetch's batch runs no circuit (its header is its only message between
    the servers). Any change to the tag, the text or the AAD fails, also for a text longer than
    the prefetch's keystream (the servers compute the keystream anew); a tag that fails its
    local masks is then checked as AES-GCM under K, one full open each."""
    cluster, engine = gcm["cluster"], gcm["compute"]
    before = server_counters(cluster)
    [(nonce, keystream)] = engine.prefetch(1, 2, local=True)
    plaintext = secrets.token_bytes(32)
    sealed = seal(engine, nonce, keystream, plaintext, b"ticket")
    ciphertext, tag = sealed[:-16], sealed[-16:]
    for _ in range(2):
        assert engine.open(nonce, b"ticket", ciphertext, tag) == plaintext
    after = server_counters(cluster)
    for party in (1, 2, 3):
        # The prefetch's batch of local masks; three jobs more (tag, two reopens).
        assert after[party] == (before[party][0] + 1, before[party][1] + 4), (party, before, after)
    forgeries = ticket_forgeries(ciphertext, tag, ciphertext + b"!")
    assert_forgeries_refused(engine, nonce, forgeries)
    forged = server_counters(cluster)
    for party in (1, 2, 3):
        assert forged[party][0] == after[party][0] + len(forgeries), (party, after, forged)
    # A local-mask nonce nobody tagged under this key opens to nothing.
    [(untagged, _)] = engine.prefetch(1, 2, local=True)
    with pytest.raises(GcmError) as failure:
        engine.open(untagged, b"ticket", ciphertext, tag)
    assert failure.value.code == MPC_EBADTAG


def test_concurrent_local_prefetches_are_held_by_every_server_before_they_return(gcm):
    """A batch of local masks ends at the leader at once, at a follower only when its header
    arrives: a prefetch must not return before all three answered. One without keystream looks
    the same in both reply forms but for the two servers' form byte, so before that byte a
    client took the first two of three answers for a two-server reply and tagged before the
    third server held the nonce (MPC_ENONCE). Four threads of one client key, prefetching and
    tagging at once."""
    cluster = gcm["cluster"]
    errors = []

    def worker() -> None:
        engine = Engine(cluster.compute_config)
        try:
            for i in range(150):
                [(nonce, keystream)] = engine.prefetch(1, 0 if i % 2 else 2, local=True)
                engine.tag(nonce, b"aad", keystream[:5])
        except GcmError as error:
            errors.append(error)
        finally:
            engine.close()

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def test_a_local_chained_tag_is_checked_by_the_next_tag(gcm):
    """Chained and checked tags work on local-mask nonces as on the others (the chained tag
    equals the reference)."""
    engine, key = gcm["compute"], gcm["key"]
    parts = cluster_components(gcm["cluster"])
    (n1, _), (n2, _) = engine.prefetch(2, local=True)
    [(n3, k3)] = engine.prefetch(1, 2, local=True)
    data = secrets.token_bytes(40)
    t1, t2 = engine.tag_chained(n1, data, n2, PAC_CHAIN_PREFIX)
    assert t1 == local_masks.seal(key, KEY, parts, n1, b"", data)
    chained_aad = PAC_CHAIN_PREFIX + n1 + t1
    assert t2 == local_masks.seal(key, KEY, parts, n2, b"", chained_aad)
    plaintext = secrets.token_bytes(30)
    ciphertext = xor(plaintext, k3)
    t3 = engine.tag_checked(n3, b"ticket", ciphertext, (n2, chained_aad, t2))
    assert ciphertext + t3 == local_masks.seal(key, KEY, parts, n3, plaintext, b"ticket")


# ---------------------------------------------------------------------- limits and errors

def test_prefetch_larger_than_a_batch(gcm):
    engine, key = gcm["compute"], gcm["key"]
    count, blocks_per_nonce = 7000, 2
    assert count * (1 + blocks_per_nonce) > DEFAULT_MAX_BATCH_BLOCKS
    entries = engine.prefetch(count, blocks_per_nonce)
    assert len({nonce for nonce, _ in entries}) == count
    for index in (0, 1, 5460, 5461, 5462, count - 1):  # on both sides of the batch boundary
        nonce, keystream = entries[index]
        assert keystream == ctr_keystream(key, nonce, 2, blocks_per_nonce), index
    for index in (0, 5461, count - 1):
        nonce, keystream = entries[index]
        plaintext = secrets.token_bytes(25)
        assert seal(engine, nonce, keystream, plaintext, b"") == AESGCM(key).encrypt(nonce, plaintext, b"")


def test_bad_sizes_are_refused(gcm):
    engine = gcm["compute"]
    nonce = bytes(12)
    for count, blocks_per_nonce in ((0, 0), (65537, 0), (1, 4097)):
        with pytest.raises(GcmError) as failure:
            engine.prefetch(count, blocks_per_nonce)
        assert failure.value.code == MPC_EINVAL, (count, blocks_per_nonce, failure.value)
    too_long = bytes(16 * MAX_HASH_BLOCKS)
    with pytest.raises(GcmError) as failure:
        engine.tag(nonce, too_long, b"")
    assert failure.value.code == MPC_EINVAL
    with pytest.raises(GcmError) as failure:
        engine.open(nonce, b"", too_long, bytes(16))
    assert failure.value.code == MPC_EINVAL
    # Within the client's limits but over the servers' max_job_blocks (2^20 instances):
    # 65536 nonces x (1 + 16) blocks.
    with pytest.raises(GcmError) as failure:
        engine.prefetch(65536, 16)
    assert failure.value.code == MPC_EREFUSED
    assert "max_job_blocks" in failure.value.message


def test_keys_serve_only_their_own_jobs(gcm):
    cluster, engine = gcm["cluster"], gcm["compute"]
    plain = ("gcm/plain-aes256", 1, "aes256")
    cluster.import_key(*plain)
    # A GCM job names an aes256-gcm key id: an aes256 key of that name is another key.
    with pytest.raises(GcmError) as failure:
        engine.prefetch(1, key=plain)
    assert failure.value.code == MPC_EREFUSED and "not found" in failure.value.message
    with pytest.raises(GcmError) as failure:
        engine.prefetch(1, key=("gcm/none", 1, "aes256-gcm"))
    assert failure.value.code == MPC_EREFUSED and "not found" in failure.value.message
    out = ctypes.create_string_buffer(16)
    name, kvno, _ = KEY
    rc = engine.lib.mpc_client_keystream(engine.handle, name.encode(), kvno, MPC_AES256_GCM, bytes(16), 1, out)
    assert rc == MPC_EINVAL, engine.error()


# ------------------------------------------------------------------------ server restarts

@pytest.mark.timeout(180)
def test_nonces_stay_distinct_across_a_leader_restart(fresh_cluster):
    cluster = fresh_cluster
    key = import_gcm_key(cluster)
    engine = Engine(cluster.compute_config, timeout_ms=60000)
    try:
        wait_until_gcm_serving(engine)
        first = [nonce for nonce, _ in engine.prefetch(10000)]
        assert len(set(first)) == 10000
        cluster.kill_server(1)
        cluster.restart_server(1)
        wait_until_gcm_serving(engine, deadline_s=30)
        second = [nonce for nonce, _ in engine.prefetch(10000)]
        assert len(set(second)) == 10000
        assert not set(first) & set(second)
        assert {n[:8] for n in first}.isdisjoint({n[:8] for n in second}), "a restarted leader keeps its epoch"
        # Nonces from before the restart are still in the followers' pools but not the leader's.
        with pytest.raises(GcmError) as failure:
            engine.tag(first[-1], b"", b"x")
        assert failure.value.code == MPC_ENONCE
        [(nonce, keystream)] = engine.prefetch(1, 1)
        assert seal(engine, nonce, keystream, b"after", b"") == AESGCM(key).encrypt(nonce, b"after", b"")
    finally:
        engine.close()


@pytest.mark.timeout(120)
def test_a_restarted_follower_forgets_its_nonces(fresh_cluster):
    cluster = fresh_cluster
    key = import_gcm_key(cluster)
    engine = Engine(cluster.compute_config)
    try:
        wait_until_gcm_serving(engine)
        old = engine.prefetch(2, 1)
        [(tagged_nonce, keystream)] = engine.prefetch(1, 2)
        ticket = secrets.token_bytes(32)
        sealed = seal(engine, tagged_nonce, keystream, ticket, b"tgt")
        cluster.kill_server(2)
        cluster.restart_server(2)
        wait_until_gcm_serving(engine, deadline_s=30)
        with pytest.raises(GcmError) as failure:
            engine.tag(old[0][0], b"", b"x")
        assert failure.value.code == MPC_ENONCE, failure.value
        [(nonce, keystream)] = engine.prefetch(1, 2)
        plaintext = secrets.token_bytes(30)
        assert seal(engine, nonce, keystream, plaintext, b"aad") == AESGCM(key).encrypt(nonce, plaintext, b"aad")
        # Its tagged nonces are gone too: a ticket tagged before the restart opens in full.
        batches = server_counters(cluster)[1][0]
        assert engine.open(tagged_nonce, b"tgt", sealed[:-16], sealed[-16:]) == ticket
        assert server_counters(cluster)[1][0] == batches + 1
    finally:
        engine.close()


@pytest.mark.timeout(120)
def test_a_restarted_server_reopens_local_tickets_and_checks_local_chained_tags(fresh_cluster):
    """A server keeps nothing of a local-mask nonce that a reopen needs: after a restart, a
    ticket tagged before it reopens in one round trip, with no batch, and a chained tag whose
    nonce the server forgot is checked by a reopen too."""
    cluster = fresh_cluster
    import_gcm_key(cluster)
    engine = Engine(cluster.compute_config)
    try:
        wait_until_gcm_serving(engine)
        [(nonce, keystream)] = engine.prefetch(1, 2, local=True)
        ticket = secrets.token_bytes(32)
        sealed = seal(engine, nonce, keystream, ticket, b"tgt")
        (n1, _), (n2, _) = engine.prefetch(2, local=True)
        t1, t2 = engine.tag_chained(n1, b"pac", n2, PAC_CHAIN_PREFIX)
        cluster.kill_server(3)
        cluster.restart_server(3)
        wait_until_gcm_serving(engine, deadline_s=30)
        batches = server_counters(cluster)
        assert engine.open(nonce, b"tgt", sealed[:-16], sealed[-16:]) == ticket
        assert engine.open(n2, PAC_CHAIN_PREFIX + n1 + t1, b"", t2) == b""
        assert server_counters(cluster) == {p: (batches[p][0], batches[p][1] + 2) for p in (1, 2, 3)}
        with pytest.raises(GcmError) as failure:
            engine.open(n2, PAC_CHAIN_PREFIX + n1 + t1, b"", bytes([t2[0] ^ 4]) + t2[1:])
        assert failure.value.code == MPC_EBADTAG
    finally:
        engine.close()


@pytest.mark.timeout(120)
def test_a_chained_tag_a_restarted_server_forgot_is_checked_by_a_full_open(fresh_cluster):
    """The check of a chained tag rides on the next tag's request only while every server still
    holds the chained nonce: after a restart the checked tag is refused with MPC_ENONCE (the
    router then checks the chained tag on its own), and the full open verifies it with AES."""
    cluster = fresh_cluster
    key = import_gcm_key(cluster)
    engine = Engine(cluster.compute_config)
    try:
        wait_until_gcm_serving(engine)
        (n1, _), (n2, _) = engine.prefetch(2)
        data = secrets.token_bytes(77)
        t1, t2 = engine.tag_chained(n1, data, n2, PAC_CHAIN_PREFIX)
        chained_aad = PAC_CHAIN_PREFIX + n1 + t1
        assert t2 == AESGCM(key).encrypt(n2, b"", chained_aad)
        cluster.kill_server(3)
        cluster.restart_server(3)
        wait_until_gcm_serving(engine, deadline_s=30)
        [(n3, keystream)] = engine.prefetch(1, 2)
        with pytest.raises(GcmError) as failure:
            engine.tag_checked(n3, b"ticket", keystream, (n2, chained_aad, t2))
        assert failure.value.code == MPC_ENONCE, failure.value
        assert engine.open(n2, chained_aad, b"", t2) == b""
        with pytest.raises(GcmError) as failure:
            engine.open(n2, chained_aad, b"", bytes([t2[0] ^ 4]) + t2[1:])
        assert failure.value.code == MPC_EBADTAG, failure.value
    finally:
        engine.close()


# --------------------------------------------------------------------- nonce pool bounds

def set_limits(cluster: Cluster, limits: dict[str, int]) -> None:
    for party in (1, 2, 3):
        for name, value in limits.items():
            cluster.set_server_table_setting(party, "limits", name, value)


POOL_TTL_S = 4
POOL_PER_CLIENT = 5


@pytest.fixture
def small_pool_cluster(tmp_path):
    """A cluster whose servers keep few prefetched nonces, briefly."""
    cluster = None
    try:
        for attempt in range(3):
            cluster = Cluster(tmp_path / f"c{attempt}")
            try:
                cluster.init()
                set_limits(cluster, {"gcm_nonce_ttl_s": POOL_TTL_S, "gcm_nonces_per_client": POOL_PER_CLIENT})
                cluster.start()
                break
            except Exception:
                cluster.stop()
                if attempt == 2:
                    raise
                # Most likely a port was taken between the probe and the bind: new ports.
        yield cluster
    finally:
        if cluster is not None:
            cluster.stop()


@pytest.mark.timeout(90)
def test_the_nonce_pool_is_bounded_per_client_and_in_time(small_pool_cluster):
    cluster = small_pool_cluster
    key = import_gcm_key(cluster)
    compute = Engine(cluster.compute_config)
    admin = Engine(cluster.admin_config)
    try:
        wait_until_gcm_serving(compute)
        with pytest.raises(GcmError) as failure:
            compute.prefetch(POOL_PER_CLIENT + 1)
        assert failure.value.code == MPC_EREFUSED and "gcm_nonces_per_client" in failure.value.message
        entries = compute.prefetch(4, 1) + compute.prefetch(4, 1)
        [(other_nonce, other_stream)] = admin.prefetch(1, 1)
        # Only the newest 5 of this client's nonces are kept; the other client's is untouched.
        for nonce, _ in entries[:3]:
            with pytest.raises(GcmError) as failure:
                compute.tag(nonce, b"", b"x")
            assert failure.value.code == MPC_ENONCE
        for nonce, keystream in entries[3:]:
            assert seal(compute, nonce, keystream, b"y", b"") == AESGCM(key).encrypt(nonce, b"y", b"")
        assert seal(admin, other_nonce, other_stream, b"z", b"") == AESGCM(key).encrypt(other_nonce, b"z", b"")
        [(nonce, _)] = compute.prefetch(1)
        time.sleep(POOL_TTL_S + 1.2)
        with pytest.raises(GcmError) as failure:
            compute.tag(nonce, b"", b"late")
        assert failure.value.code == MPC_ENONCE
    finally:
        compute.close()
        admin.close()


@pytest.mark.timeout(90)
def test_a_dead_peer_fails_batch_jobs_clearly(fresh_cluster):
    cluster = fresh_cluster
    import_gcm_key(cluster)
    engine = Engine(cluster.compute_config, timeout_ms=4000)
    try:
        wait_until_gcm_serving(engine)
        [(nonce, _)] = engine.prefetch(1)
        cluster.kill_server(3)
        for call in (lambda: engine.prefetch(10, 1), lambda: engine.open(nonce, b"", b"x", bytes(16))):
            started = time.monotonic()
            with pytest.raises(GcmError) as failure:
                call()
            assert failure.value.code == MPC_EUNREACHABLE, failure.value
            assert time.monotonic() - started < 4 + 3
        # A tag waits for no batch: the two servers left answer it and spend the nonce, so the
        # caller is told to prefetch a fresh one (which fails as above until two can serve).
        started = time.monotonic()
        with pytest.raises(GcmError) as failure:
            engine.tag(nonce, b"", b"x")
        assert failure.value.code == MPC_ENONCE and "went away" in str(failure.value), failure.value
        assert time.monotonic() - started < 4 + 3
    finally:
        engine.close()


# ----------------------------------------------------------------------------- latency

@pytest.mark.timeout(120)
def test_tag_and_open_latency(gcm, capsys):
    """Round trips as the KDC sees them (ticket-sized input); printed, bounded loosely."""
    engine = gcm["compute"]
    rounds = 30
    entries = engine.prefetch(rounds, 20)
    plaintext, aad = secrets.token_bytes(300), secrets.token_bytes(8)
    tag_times, open_times, sealed = [], [], []
    for nonce, keystream in entries:
        ciphertext = xor(plaintext, keystream)
        started = time.perf_counter()
        tag = engine.tag(nonce, aad, ciphertext)
        tag_times.append(time.perf_counter() - started)
        sealed.append((nonce, ciphertext, tag))
    for nonce, ciphertext, tag in sealed:
        started = time.perf_counter()
        assert engine.open(nonce, aad, ciphertext, tag) == plaintext
        open_times.append(time.perf_counter() - started)
    with capsys.disabled():
        print(f"\nGCM tag round trip: median {1000 * statistics.median(tag_times):.2f} ms, "
              f"GCM open (300 bytes): median {1000 * statistics.median(open_times):.2f} ms "
              f"over {rounds} calls")
    assert statistics.median(tag_times) < 1.0
    assert statistics.median(open_times) < 2.0
