"""Kerberos and AES-256-GCM jobs on a two-server cluster, through the same libmpcclient.so
calls as on three servers, with two real mpc-server processes over CurveZMQ. gc2 and lut2
clusters run these jobs with the same garbled-circuit engine, so this runs on gc2 alone; the
protected realm of kdc/test_two_server_kdc.py runs on both. MIT libk5crypto (through ctypes) and
Python's `cryptography` AESGCM are the outside truth: what the engine encrypts, libk5crypto
decrypts and the other way round; checksums, the PRF and GCM tags are equal bit for bit.
"""

from __future__ import annotations

import secrets

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from test_gcm_jobs import MPC_EBADTAG as GCM_EBADTAG
from test_gcm_jobs import MPC_ENONCE, ctr_keystream, import_gcm_key, seal, wait_until_gcm_serving, xor
from test_gcm_jobs import Engine as GcmEngine
from test_gcm_jobs import GcmError
from test_krb_jobs import (CF2_PARTNER, DECRYPT_USAGES, ENCRYPT_USAGES, ENCTYPES, FULL_SWEEP, MPC_EBADTAG, KrbError,
                           check_cf2_jobs, wait_until_krb_serving)
from test_krb_jobs import Engine as KrbEngine
from test_krb_jobs import k5  # noqa: F401  (the libk5crypto fixture)

from mpc_cluster import start_cluster


@pytest.fixture(scope="module")
def gc2_cluster(tmp_path_factory):
    cluster = start_cluster(tmp_path_factory.mktemp("gc2-jobs") / "c", "gc2")
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
