"""Kerberos and AES-256-GCM jobs on a two-server cluster, through the same libmpcclient.so
calls as on three servers, with two real mpc-server processes over CurveZMQ. gc2 and lut2
clusters run these jobs with the same garbled-circuit engine, so this runs on gc2 alone, of
security = "passive" (the active form is test_two_server_active.py's); the protected realm of
kdc/test_two_server_kdc.py runs on both. MIT libk5crypto (through ctypes) and
Python's `cryptography` AESGCM are the outside truth: what the engine encrypts, libk5crypto
decrypts and the other way round; checksums, the PRF and GCM tags are equal bit for bit.
"""

from __future__ import annotations

import secrets

import pytest
import zmq
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from mpctest.gcm_client import MPC_EBADTAG as GCM_EBADTAG
from mpctest.gcm_client import MPC_ENONCE, ctr_keystream, import_gcm_key, seal, wait_until_gcm_serving, xor
from mpctest.gcm_client import Engine as GcmEngine
from mpctest.gcm_client import GcmError
from mpctest.krb_client import (CF2_PARTNER, DECRYPT_USAGES, ENCRYPT_USAGES, ENCTYPES, FULL_SWEEP, MPC_EBADTAG, KrbError,
                                check_cf2_jobs, wait_until_krb_serving)
from mpctest.krb_client import Engine as KrbEngine
from mpctest.krb_client import k5  # noqa: F401  (the libk5crypto fixture)

from mpctest import local_masks
from mpctest.mpc_cluster import start_cluster
from mpctest.raw_frames import (AES256_GCM, OK, client_for, exchange, gcm_reopen, gcm_tag, key_id, mismatch_counters,
                                prefetch_one_nonce, wait_for_mismatches)
from mpctest.gcm_client import KEY as GCM_KEY
from mpctest.gcm_client import gcm_tag_of


@pytest.fixture(scope="module")
def gc2_cluster(tmp_path_factory):
    cluster = start_cluster(tmp_path_factory.mktemp("gc2-jobs") / "c", "gc2", security="passive")
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def jobs(gc2_cluster):
    """A gc2 cluster with one protocol key per Kerberos enctype and one aes256-gcm key."""
    cluster = gc2_cluster
    admin = KrbEngine(cluster.admin_config)
    compute = KrbEngine(cluster.compute_config)
    gcm_compute = GcmEngine(cluster.compute_config)
    gcm_admin = GcmEngine(cluster.admin_config)
    keys = {}
    try:
        for enctype, (algorithm, _, krb5_enctype, cksumtype, size) in ENCTYPES.items():
            protocol_key = secrets.token_bytes(size)
            key_id = (f"krb/two-server-{enctype}@EXAMPLE.COM", 2, algorithm)
            admin.import_key(*key_id, protocol_key)
            keys[enctype] = {"id": key_id, "key": protocol_key, "enctype": krb5_enctype, "cksumtype": cksumtype}
        wait_until_krb_serving(compute, keys["aes256"]["id"])
        gcm_key = import_gcm_key(cluster)
        wait_until_gcm_serving(gcm_compute)
        yield {"cluster": cluster, "compute": compute, "keys": keys, "gcm": gcm_compute, "gcm_admin": gcm_admin,
               "gcm_key": gcm_key}
    finally:
        for engine in (admin, compute, gcm_compute, gcm_admin):
            engine.close()


@pytest.fixture(params=sorted(ENCTYPES), ids=sorted(ENCTYPES))
def enctype(request):
    return request.param


# ------------------------------------------------------------------------------- Kerberos

def test_encryption_both_ways_with_libk5crypto(jobs, k5, enctype):
    engine, key = jobs["compute"], jobs["keys"][enctype]
    for length in (0, 1, 16, 17, 31, 64, 265):
        usage = ENCRYPT_USAGES[length % len(ENCRYPT_USAGES)]
        plaintext = secrets.token_bytes(length)
        ciphertext = engine.encrypt(key["id"], usage, plaintext)
        assert k5.decrypt(key["enctype"], key["key"], usage, ciphertext) == plaintext, (length, usage)
        usage = DECRYPT_USAGES[length % len(DECRYPT_USAGES)]
        theirs = k5.encrypt(key["enctype"], key["key"], usage, plaintext)
        assert engine.decrypt(key["id"], usage, theirs) == plaintext, (length, usage)


def test_checksum_equals_libk5crypto(jobs, k5, enctype):
    engine, key = jobs["compute"], jobs["keys"][enctype]
    for length in (0, 20, 64, 271):
        data = secrets.token_bytes(length)
        for usage in (17, 56):
            assert engine.checksum(key["id"], usage, data) == k5.make_checksum(
                key["cksumtype"], key["enctype"], key["key"], usage, data), (length, usage)


@pytest.mark.timeout(600)
def test_cf2_jobs_equal_libk5crypto(jobs, k5, enctype):
    """FAST's KRB-FX-CF2 jobs, garbled, under an armor key of another size or hash."""
    check_cf2_jobs(jobs["compute"], k5, jobs["keys"][enctype], CF2_PARTNER[enctype])


def test_a_flipped_bit_fails_the_integrity_check(jobs, k5, enctype):
    engine, key = jobs["compute"], jobs["keys"][enctype]
    ciphertext = k5.encrypt(key["enctype"], key["key"], 1, secrets.token_bytes(21))
    for position in (0, 20, len(ciphertext) - 1):
        forged = bytearray(ciphertext)
        forged[position] ^= 0x10
        with pytest.raises(KrbError) as failure:
            engine.decrypt(key["id"], 1, bytes(forged))
        assert failure.value.code == MPC_EBADTAG, (position, failure.value)
    with pytest.raises(KrbError) as failure:
        engine.decrypt(key["id"], 2, ciphertext)  # another usage's keys
    assert failure.value.code == MPC_EBADTAG


@pytest.mark.skipif(not FULL_SWEEP, reason="every length 0..1000 runs with MPC_KRB_FULL_SWEEP=1")
@pytest.mark.timeout(7200)
def test_every_length_both_ways_with_libk5crypto(jobs, k5, enctype):
    """The issue's full sweep through a two-server cluster: the same compiled circuits as on
    three servers, evaluated garbled."""
    engine, key = jobs["compute"], jobs["keys"][enctype]
    for length in range(0, 1001):
        usage = ENCRYPT_USAGES[length % len(ENCRYPT_USAGES)]
        plaintext = secrets.token_bytes(length)
        ciphertext = engine.encrypt(key["id"], usage, plaintext)
        assert k5.decrypt(key["enctype"], key["key"], usage, ciphertext) == plaintext, (length, usage)
        usage = DECRYPT_USAGES[length % len(DECRYPT_USAGES)]
        theirs = k5.encrypt(key["enctype"], key["key"], usage, plaintext)
        assert engine.decrypt(key["id"], usage, theirs) == plaintext, (length, usage)


# ------------------------------------------------------------------------------------ GCM

@pytest.mark.parametrize("length,aad_length", [(0, 0), (1, 0), (40, 13), (200, 100)])
def test_prefetch_and_tag_equal_aesgcm(jobs, length, aad_length):
    engine, key = jobs["gcm"], jobs["gcm_key"]
    blocks = (length + 15) // 16
    entries = engine.prefetch(3, blocks)
    assert len({nonce for nonce, _ in entries}) == 3
    for nonce, keystream in entries:
        assert keystream == ctr_keystream(key, nonce, 2, blocks)
    nonce, keystream = entries[2]
    plaintext, aad = secrets.token_bytes(length), secrets.token_bytes(aad_length)
    assert seal(engine, nonce, keystream, plaintext, aad) == AESGCM(key).encrypt(nonce, plaintext, aad)


def test_local_masks_give_the_reference_and_reopen_on_two_servers(jobs):
    """A two-server cluster's XOR shares of K are its two components: M is the XOR of two terms,
    each server's own. Keystream and tag equal local_masks.py's; the ticket reopens in one round
    trip with no garbling, forged ones do not."""
    cluster, engine, key = jobs["cluster"], jobs["gcm"], jobs["gcm_key"]
    parts = local_masks.components([cluster.server_dir(party) for party in cluster.parties], GCM_KEY)
    assert len(parts) == 2
    entries = engine.prefetch(2, 3, local=True)
    for nonce, keystream in entries:
        assert local_masks.is_local(nonce)
        assert keystream == local_masks.masks(GCM_KEY, parts, nonce, 2, 3)
    nonce, keystream = entries[0]
    plaintext, aad = secrets.token_bytes(40), secrets.token_bytes(11)
    sealed = seal(engine, nonce, keystream, plaintext, aad)
    assert sealed == local_masks.seal(key, GCM_KEY, parts, nonce, plaintext, aad)
    ciphertext, tag = sealed[:-16], sealed[-16:]
    assert engine.open(nonce, aad, ciphertext, tag) == plaintext
    for args in ((nonce, aad, ciphertext, bytes([tag[0] ^ 2]) + tag[1:]), (nonce, aad + b"!", ciphertext, tag),
                 (entries[1][0], aad, ciphertext, tag)):
        with pytest.raises(GcmError) as failure:
            engine.open(*args)
        assert failure.value.code == GCM_EBADTAG


def test_local_reopen_answers_of_two_servers_are_noise_unless_the_tag_is_right(jobs):
    """Each server answers r * s_p ^ m with r and m from a key the two share and the digest of
    its copy: the client's two answers are equal for the true tag, differ by a fresh r * s for a
    forged one (never s), and by noise when the copies differ."""
    cluster, engine = jobs["cluster"], jobs["gcm"]
    gcm_key_id = key_id(GCM_KEY[0], GCM_KEY[1], AES256_GCM)
    [(nonce, keystream)] = engine.prefetch(1, 1, local=True)
    text = xor(b"two-server local", keystream)
    tag = engine.tag(nonce, b"aad", text)
    context = zmq.Context()
    raw = {party: client_for(cluster, context, party, role="compute") for party in cluster.parties}

    def difference(frames: dict[int, bytes]) -> bytes:
        replies = exchange(raw, frames)
        checks = []
        for party, (status, error, body) in replies.items():
            assert status == OK, f"server {party}: {status} ({error})"
            assert len(body) == 4 + 16 + 16 + 1 and body[-1] == 1, "not a two-server reopen answer"
            checks.append(body[20:36])
        return xor(checks[0], checks[1])

    try:
        right = gcm_reopen(secrets.token_bytes(16), gcm_key_id, nonce, b"aad", text, tag)
        assert difference(dict.fromkeys(raw, right)) == bytes(16)
        unit = bytes([0x40]) + bytes(15)
        forged = xor(tag, unit)
        first = difference(dict.fromkeys(raw, gcm_reopen(secrets.token_bytes(16), gcm_key_id, nonce, b"aad", text,
                                                         forged)))
        assert first not in (bytes(16), unit)
        second = difference(dict.fromkeys(raw, gcm_reopen(secrets.token_bytes(16), gcm_key_id, nonce, b"aad", text,
                                                          forged)))
        assert second not in (bytes(16), first)
        request_id = secrets.token_bytes(16)
        copies = {1: gcm_reopen(request_id, gcm_key_id, nonce, b"aad", text, tag),
                  2: gcm_reopen(request_id, gcm_key_id, nonce, b"aaD", text, tag)}
        before = mismatch_counters(cluster)
        assert difference(copies) != bytes(16)
        # The two compare their copies afterwards and count the difference.
        after = wait_for_mismatches(cluster, before, 1)
        assert all(after[party] == before[party] + 1 for party in cluster.parties), (before, after)
    finally:
        for client in raw.values():
            client.close()
        context.term()


def test_a_nonce_tags_once_and_only_for_its_client(jobs):
    engine, other = jobs["gcm"], jobs["gcm_admin"]
    [(nonce, keystream)] = engine.prefetch(1, 1)
    with pytest.raises(GcmError) as failure:
        other.tag(nonce, b"", xor(b"stolen", keystream))
    assert failure.value.code == MPC_ENONCE
    engine.tag(nonce, b"aad", b"first")
    with pytest.raises(GcmError) as failure:
        engine.tag(nonce, b"aad", b"second")
    assert failure.value.code == MPC_ENONCE


def test_divergent_tag_copies_combine_into_no_tag(jobs):
    """Each server answers its own copy of a tag at once: differing copies give the KDC host
    its tag share of one copy XOR the other's, AES_K(N || 1) XOR GHASH_H(one copy) XOR a term in
    server 2's share of the hash key powers, which is no tag and, with the nonce spent at both,
    hidden by a pad used once. The two servers count the differing copies afterwards."""
    cluster, key = jobs["cluster"], jobs["gcm_key"]
    gcm_key_id = key_id(GCM_KEY[0], GCM_KEY[1], AES256_GCM)
    context = zmq.Context()
    raw = {party: client_for(cluster, context, party, role="compute") for party in cluster.parties}
    try:
        before = mismatch_counters(cluster)
        nonce = prefetch_one_nonce(raw, gcm_key_id)
        text = secrets.token_bytes(40)
        other = text[:16] + xor(text[16:32], bytes([0x80]) + bytes(15)) + text[32:]
        request_id = secrets.token_bytes(16)
        replies = exchange(raw, {1: gcm_tag(request_id, gcm_key_id, nonce, b"", text),
                                 2: gcm_tag(request_id, gcm_key_id, nonce, b"", other)})
        assert all(status == OK for status, _, _ in replies.values()), replies
        combined = xor(replies[1][2][:16], replies[2][2][:16])
        assert combined not in (gcm_tag_of(key, nonce, b"", text), gcm_tag_of(key, nonce, b"", other))
        after = wait_for_mismatches(cluster, before, 1)
        assert all(after[party] == before[party] + 1 for party in cluster.parties), (before, after)
        # The same copy at both gives the tag.
        nonce = prefetch_one_nonce(raw, gcm_key_id)
        replies = exchange(raw, dict.fromkeys(raw, gcm_tag(secrets.token_bytes(16), gcm_key_id, nonce, b"", text)))
        assert xor(replies[1][2][:16], replies[2][2][:16]) == gcm_tag_of(key, nonce, b"", text)
    finally:
        for client in raw.values():
            client.close()
        context.term()


@pytest.mark.parametrize("length", [0, 17, 300])
def test_open_returns_the_plaintext_and_refuses_forgeries(jobs, length):
    engine, key = jobs["gcm"], jobs["gcm_key"]
    nonce, aad, plaintext = secrets.token_bytes(12), secrets.token_bytes(9), secrets.token_bytes(length)
    sealed = AESGCM(key).encrypt(nonce, plaintext, aad)
    ciphertext, tag = sealed[:-16], sealed[-16:]
    assert engine.open(nonce, aad, ciphertext, tag) == plaintext
    forged_tag = bytes([tag[0] ^ 0x80]) + tag[1:]
    for args in ((nonce, aad, ciphertext, forged_tag), (nonce, aad + b"!", ciphertext, tag),
                 (bytes(12), aad, ciphertext, tag)):
        with pytest.raises(GcmError) as failure:
            engine.open(*args)
        assert failure.value.code == GCM_EBADTAG
