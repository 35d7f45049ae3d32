"""Kerberos enctype jobs (aes128/aes256-cts-hmac-sha1-96, RFC 3962; aes128-cts-hmac-sha256-128 and
aes256-cts-hmac-sha384-192, RFC 8009) through libmpcclient.so against a real three-server cluster,
with MIT libk5crypto (through ctypes) and RFC 8009 Appendix A as the outside truth.

Keys are imported as protocol keys (mpc_client_import_key, or `mpcctl key import`); the
servers hold only shares of the derived keys. What the engine encrypts, libk5crypto decrypts
and the other way round; checksums and the PRF equal libk5crypto's bit for bit.

Plaintext lengths: the block edges and a few random lengths up to 1000 by default
(sweep_lengths); set MPC_KRB_FULL_SWEEP=1 to run every length 0..1000 for every enctype in both
directions (long: each job is a sequential computation, several hundred ms for short messages).
Latencies are measured by `make bench` (tests/bench/kdc_user_bench.py), not here.
"""

from __future__ import annotations

import contextlib
import ctypes
import secrets
import threading
import time

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from mpctest.krb_client import (CF2_PARTNER, CHECKSUM_USAGES, CONFOUNDER_BYTES, DECRYPT_USAGES, ENCRYPT_USAGES, ENCTYPES,
                                FULL_SWEEP, MAX_DATA_BYTES, MPC_AES128_CTS, MPC_AES256, MPC_AES256_CTS, MPC_EBADTAG,
                                MPC_EINVAL, MPC_EREFUSED, MPC_EUNREACHABLE, MPC_OK, RFC8009, Engine, KrbError,
                                check_cf2_jobs, k5, leader_evaluations, mac_bytes, restart_leader,  # noqa: F401 (k5 fixture)
                        sweep_lengths, wait_until_krb_serving)
from mpctest.mpc_cluster import Cluster


# ------------------------------------------------------------------------------ fixtures

@pytest.fixture(scope="module")
def krb(cluster):
    """The shared cluster with one random protocol key per enctype, imported through the C ABI."""
    admin = Engine(cluster.admin_config)
    compute = Engine(cluster.compute_config)
    keys = {}
    try:
        for enctype, (algorithm, _, krb5_enctype, cksumtype, size) in ENCTYPES.items():
            protocol_key = secrets.token_bytes(size)
            key_id = (f"krb/user-{enctype}@EXAMPLE.COM", 3, algorithm)
            admin.import_key(*key_id, protocol_key)
            keys[enctype] = {"id": key_id, "key": protocol_key, "enctype": krb5_enctype, "cksumtype": cksumtype}
        wait_until_krb_serving(compute, keys["aes256"]["id"])
        yield {"cluster": cluster, "admin": admin, "compute": compute, "keys": keys}
    finally:
        admin.close()
        compute.close()


@pytest.fixture(params=sorted(ENCTYPES), ids=sorted(ENCTYPES))
def enctype(request):
    return request.param


# ----------------------------------------------------------------- libk5crypto agreement

@contextlib.contextmanager
def job_context(enctype: str, length: int, usage: int):
    """Names the job of a sweep that failed."""
    try:
        yield
    except KrbError as error:
        raise AssertionError(f"{enctype}, plaintext of {length} bytes, usage {usage}: {error}") from error


@pytest.mark.timeout(7200 if FULL_SWEEP else 180)
def test_engine_encrypt_decrypts_with_libk5crypto(krb, k5, enctype):
    engine, key = krb["compute"], krb["keys"][enctype]
    for length in sweep_lengths(enctype, engine_encrypts=True):
        usage = ENCRYPT_USAGES[length % len(ENCRYPT_USAGES)]
        plaintext = secrets.token_bytes(length)
        with job_context(enctype, length, usage):
            ciphertext = engine.encrypt(key["id"], usage, plaintext)
        assert len(ciphertext) == CONFOUNDER_BYTES + length + mac_bytes(enctype)
        assert k5.decrypt(key["enctype"], key["key"], usage, ciphertext) == plaintext, (enctype, length, usage)


@pytest.mark.timeout(7200 if FULL_SWEEP else 180)
def test_libk5crypto_encrypt_decrypts_with_engine(krb, k5, enctype):
    engine, key = krb["compute"], krb["keys"][enctype]
    for length in sweep_lengths(enctype, engine_encrypts=False):
        usage = DECRYPT_USAGES[length % len(DECRYPT_USAGES)]
        plaintext = secrets.token_bytes(length)
        ciphertext = k5.encrypt(key["enctype"], key["key"], usage, plaintext)
        with job_context(enctype, length, usage):
            decrypted = engine.decrypt(key["id"], usage, ciphertext)
        assert decrypted == plaintext, (enctype, length, usage)


def test_encrypt_with_a_given_confounder_is_deterministic(krb, k5, enctype):
    engine, key = krb["compute"], krb["keys"][enctype]
    confounder, plaintext = secrets.token_bytes(16), b"AS-REP enc-part"
    first = engine.encrypt(key["id"], 3, plaintext, confounder)
    assert engine.encrypt(key["id"], 3, plaintext, confounder) == first
    assert engine.encrypt(key["id"], 3, plaintext, secrets.token_bytes(16)) != first
    assert k5.decrypt(key["enctype"], key["key"], 3, first) == plaintext


@pytest.mark.parametrize("usage", (17, 56))
def test_checksum_equals_libk5crypto(krb, k5, enctype, usage):
    engine, key = krb["compute"], krb["keys"][enctype]
    # SHA-1 and SHA-256 pad at 55/56 bytes in a 64-byte block, SHA-384 at 111/112 in 128: both
    # edges for each usage, on either side.
    lengths = (0, 55, 56, 64, 300) if usage == 17 else (1, 111, 112, 128)
    for length in lengths:
        data = secrets.token_bytes(length)
        ours = engine.checksum(key["id"], usage, data)
        assert ours == k5.make_checksum(key["cksumtype"], key["enctype"], key["key"], usage, data), (length, usage)
        assert k5.verify_checksum(key["cksumtype"], key["enctype"], key["key"], usage, data, ours)


def test_checksum_of_every_usage_is_its_own(krb, k5, enctype):
    engine, key = krb["compute"], krb["keys"][enctype]
    data = b"PAC server checksum input"
    values = {usage: engine.checksum(key["id"], usage, data) for usage in CHECKSUM_USAGES}
    for usage, value in values.items():
        assert value == k5.make_checksum(key["cksumtype"], key["enctype"], key["key"], usage, data), usage
    assert len(set(values.values())) == len(CHECKSUM_USAGES)


@pytest.mark.timeout(600)
def test_cf2_jobs_equal_libk5crypto(krb, k5, enctype):
    """Three servers take thousands of rounds per KRB-FX-CF2 job, so by default one pair runs
    here (an RFC 3962 user key with an RFC 8009 armor key); the circuits of all 16 pairs are
    checked against libk5crypto in the unit tests, and all four enctypes through two servers
    (test_two_server_krb_gcm.py) and through krb5kdc (kdc/test_user_protection.py)."""
    if enctype != "aes256" and not FULL_SWEEP:
        pytest.skip("the other enctypes run with MPC_KRB_FULL_SWEEP=1")
    engine, key = krb["compute"], krb["keys"][enctype]
    check_cf2_jobs(engine, k5, key, CF2_PARTNER[enctype])


# RFC 3962 Appendix B: (iterations, passphrase, salt, AES-128 key, AES-256 key).
RFC3962_VECTORS = (
    (1, b"password", b"ATHENA.MIT.EDUraeburn", "42263c6e89f4fc28b8df68ee09799f15",
     "fe697b52bc0d3ce14432ba036a92e65bbb52280990a2fa27883998d72af30161"),
    (2, b"password", b"ATHENA.MIT.EDUraeburn", "c651bf29e2300ac27fa469d693bdda13",
     "a2e16d16b36069c135d5e9d2e25f896102685618b95914b467c67622225824ff"),
    (1200, b"password", b"ATHENA.MIT.EDUraeburn", "4c01cd46d632d01e6dbe230a01ed642a",
     "55a6ac740ad17b4846941051e1e8b0a7548d93b0ab30a8bc3ff16280382b8c2a"),
    (5, b"password", bytes.fromhex("1234567878563412"), "e9b23d52273747dd5c35cb55be619d8e", None),
    (1200, b"X" * 64, b"pass phrase equals block size", "59d1bb789a828b1aa54ef9c2883f69ed", None),
    (1200, b"X" * 65, b"pass phrase exceeds block size", "cb8005dc5f90179a7f02104c0018751d", None),
    (50, bytes.fromhex("f09d849e"), b"EXAMPLE.COMpianist", "f149c1f2e154a73452d43e7fe62a56e5", None),
)


def test_rfc3962_string_to_key_vectors_round_trip(krb, k5):
    admin, compute = krb["admin"], krb["compute"]
    for index, (iterations, password, salt, key128, key256) in enumerate(RFC3962_VECTORS):
        for enctype, published in (("aes128", key128), ("aes256", key256)):
            if published is None:
                continue
            algorithm, _, krb5_enctype, cksumtype, _ = ENCTYPES[enctype]
            protocol_key = k5.string_to_key(krb5_enctype, password, salt, iterations)
            assert protocol_key.hex() == published, (index, enctype)
            key_id = (f"krb/rfc3962-{index}", 1, algorithm)
            admin.import_key(*key_id, protocol_key)
            plaintext = b"RFC 3962 vector " + password[:8]
            assert k5.decrypt(krb5_enctype, protocol_key, 2, compute.encrypt(key_id, 2, plaintext)) == plaintext
            assert compute.decrypt(key_id, 1, k5.encrypt(krb5_enctype, protocol_key, 1, plaintext)) == plaintext
            assert compute.checksum(key_id, 17, salt) == k5.make_checksum(cksumtype, krb5_enctype, protocol_key,
                                                                          17, salt)


# RFC 8009 Appendix A: base key, then sample encryptions under usage 2 (confounder, plaintext,
# ciphertext || MAC), the checksum under usage 2 of 000102..14, and the PRF of "test".
RFC8009_VECTORS = {
    "aes128-sha2": (
        "3705d96080c17728a0e800eab6e0d23c",
        (("7e5895eaf2672435bad817f545a37148", "",
          "ef85fb890bb8472f4dab20394dca781dad877eda39d50c870c0d5a0a8e48c718"),
         ("7bca285e2fd4130fb55b1a5c83bc5b24", "000102030405",
          "84d7f30754ed987bab0bf3506beb09cfb55402cef7e6877ce99e247e52d16ed4421dfdf8976c"),
         ("56ab21713ff62c0a1457200f6fa9948f", "000102030405060708090a0b0c0d0e0f",
          "3517d640f50ddc8ad3628722b3569d2ae07493fa8263254080ea65c1008e8fc295fb4852e7d83e1e7c48c37eebe6b0d3"),
         ("a7a4e29a4728ce10664fb64e49ad3fac", "000102030405060708090a0b0c0d0e0f1011121314",
          "720f73b18d9859cd6ccb4346115cd336c70f58edc0c4437c5573544c31c813bce1e6d072c186b39a413c2f92ca9b8334a287ffcbfc")),
        "d78367186643d67b411cba9139fc1dee",
        "9d188616f63852fe86915bb840b4a886ff3e6bb0f819b49b893393d393854295"),
    "aes256-sha2": (
        "6d404d37faf79f9df0d33568d320669800eb4836472ea8a026d16b7182460c52",
        (("f764e9fa15c276478b2c7d0c4e5f58e4", "",
          "41f53fa5bfe7026d91faf9be959195a058707273a96a40f0a01960621ac612748b9bbfbe7eb4ce3c"),
         ("b80d3251c1f6471494256ffe712d0b9a", "000102030405",
          "4ed7b37c2bcac8f74f23c1cf07e62bc7b75fb3f637b9f559c7f664f69eab7b6092237526ea0d1f61cb20d69d10f2"),
         ("53bf8a0d105265d4e276428624ce5e63", "000102030405060708090a0b0c0d0e0f",
          "bc47ffec7998eb91e8115cf8d19dac4bbbe2e163e87dd37f49beca92027764f68cf51f14d798c2273f35df574d1f932e40c4ff255b36a266"),
         ("763e65367e864f02f55153c7e3b58af1", "000102030405060708090a0b0c0d0e0f1011121314",
          "40013e2df58e8751957d2878bcd2d6fe101ccfd556cb1eae79db3c3ee86429f2b2a602ac86fef6ecb647d6295fae077a1feb517508d2c16b4192e01f62")),
        "45ee791567eefca37f4ac1e0222de80d43c3bfa06699672a",
        "9801f69a368c2bf675e59521e177d9a07f67efe1cfde8d3c8d6f6a0256e3b17db3c1b62ad1b8553360d17367eb1514d2"),
}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("enctype", RFC8009)
def test_rfc8009_appendix_a_through_the_engine(krb, k5, enctype):
    """The published sample encryptions and checksum, computed by the engine from shares of the
    published base key; the published ciphertexts decrypt in the engine, and libk5crypto agrees
    on every one of them. (The published PRF output is never opened by the engine: it runs
    only inside KRB-FX-CF2 jobs, test_cf2_jobs_equal_libk5crypto.)"""
    admin, compute = krb["admin"], krb["compute"]
    algorithm, _, krb5_enctype, cksumtype, _ = ENCTYPES[enctype]
    base_key, encryptions, checksum, _prf = RFC8009_VECTORS[enctype]
    key_id = (f"krb/rfc8009-{enctype}", 1, algorithm)
    protocol_key = bytes.fromhex(base_key)
    admin.import_key(*key_id, protocol_key)
    try:
        for confounder, plaintext, expected in encryptions:
            plain, published = bytes.fromhex(plaintext), bytes.fromhex(expected)
            assert compute.encrypt(key_id, 2, plain, bytes.fromhex(confounder)) == published, plaintext
            assert compute.decrypt(key_id, 2, published) == plain, plaintext
            assert k5.decrypt(krb5_enctype, protocol_key, 2, published) == plain, plaintext
        # The published checksum is under usage 2, which the engine serves for tickets, not
        # checksums; libk5crypto checks the vector and the engine's checksum under usage 17.
        message = bytes(range(21))
        assert k5.make_checksum(cksumtype, krb5_enctype, protocol_key, 2, message) == bytes.fromhex(checksum)
        assert compute.checksum(key_id, 17, message) == k5.make_checksum(cksumtype, krb5_enctype, protocol_key, 17,
                                                                           message)
    finally:
        admin.delete_key(*key_id)


# ---------------------------------------------------------------------- refusals# ---------------------------------------------------------------------- refusals

def test_a_flipped_byte_anywhere_is_refused(krb, k5, enctype):
    """The confounder, the last full block, the stolen block and the MAC, at both ends."""
    engine, key = krb["compute"], krb["keys"][enctype]
    plaintext = secrets.token_bytes(21)  # two blocks, the last one stolen, plus the MAC
    ciphertext = k5.encrypt(key["enctype"], key["key"], 2, plaintext)
    positions = (0, 15, 16, 31, 32, 36, 37, len(ciphertext) - 1)
    for position in positions:
        forged = bytearray(ciphertext)
        forged[position] ^= 1 << (position % 8)
        with pytest.raises(KrbError) as failure:
            engine.decrypt(key["id"], 2, bytes(forged))
        assert failure.value.code == MPC_EBADTAG, (position, failure.value)
        assert "integrity" in failure.value.message
    assert engine.decrypt(key["id"], 2, ciphertext) == plaintext


def test_truncated_or_extended_ciphertext_is_refused(krb, k5, enctype):
    engine, key = krb["compute"], krb["keys"][enctype]
    ciphertext = k5.encrypt(key["enctype"], key["key"], 2, secrets.token_bytes(40))
    overhead = CONFOUNDER_BYTES + mac_bytes(enctype)
    for forged in (ciphertext[:-1], ciphertext[1:], ciphertext + b"\0", ciphertext[:overhead]):
        with pytest.raises(KrbError) as failure:
            engine.decrypt(key["id"], 2, forged)
        assert failure.value.code == MPC_EBADTAG, len(forged)
    with pytest.raises(KrbError) as failure:
        engine.decrypt(key["id"], 2, ciphertext[:overhead - 1])
    assert failure.value.code == MPC_EINVAL


def test_wrong_usage_is_refused(krb, k5, enctype):
    engine, key = krb["compute"], krb["keys"][enctype]
    ciphertext = k5.encrypt(key["enctype"], key["key"], 2, b"ticket")
    with pytest.raises(KrbError) as failure:
        engine.decrypt(key["id"], 1, ciphertext)
    assert failure.value.code == MPC_EBADTAG
    # Usages whose keys no server holds, and those a KDC never decrypts or encrypts under.
    for usage in (0, 3, 4, 7, 17, 55, 56, 1000):
        with pytest.raises(KrbError) as failure:
            engine.decrypt(key["id"], usage, ciphertext)
        assert failure.value.code == MPC_EINVAL and "usage" in failure.value.message, usage
    for usage in (0, 1, 4, 7, 17, 55, 56, 1000):
        with pytest.raises(KrbError) as failure:
            engine.encrypt(key["id"], usage, b"x")
        assert failure.value.code == MPC_EINVAL, usage
    for usage in (1, 2, 3):
        with pytest.raises(KrbError) as failure:
            engine.checksum(key["id"], usage, b"x")
        assert failure.value.code == MPC_EINVAL, usage


def test_another_keys_ciphertext_is_refused(krb, k5):
    engine = krb["compute"]
    key = krb["keys"]["aes256"]
    ciphertext = k5.encrypt(key["enctype"], secrets.token_bytes(32), 2, b"forged ticket")
    with pytest.raises(KrbError) as failure:
        engine.decrypt(key["id"], 2, ciphertext)
    assert failure.value.code == MPC_EBADTAG


def test_lengths_over_the_limit_are_refused(krb):
    engine, key = krb["compute"], krb["keys"]["aes128"]
    with pytest.raises(KrbError) as failure:
        engine.encrypt(key["id"], 2, bytes(MAX_DATA_BYTES - CONFOUNDER_BYTES + 1))
    assert failure.value.code == MPC_EINVAL
    with pytest.raises(KrbError) as failure:
        engine.checksum(key["id"], 17, bytes(MAX_DATA_BYTES + 1))
    assert failure.value.code == MPC_EINVAL
    with pytest.raises(KrbError) as failure:
        engine.decrypt(key["id"], 2, bytes(MAX_DATA_BYTES + 1))
    assert failure.value.code == MPC_EINVAL


def test_keys_serve_only_their_own_jobs(krb):
    cluster, engine, admin = krb["cluster"], krb["compute"], krb["admin"]
    name, kvno, algorithm = krb["keys"]["aes256"]["id"]
    # The plain AES and GCM calls refuse a Kerberos algorithm outright.
    out = ctypes.create_string_buffer(32)
    assert engine.lib.mpc_client_keystream(engine.handle, name.encode(), kvno, algorithm, bytes(16), 1, out) == MPC_EINVAL
    assert engine.lib.mpc_client_ecb_encrypt(engine.handle, name.encode(), kvno, algorithm, bytes(16), 16,
                                             out) == MPC_EINVAL
    assert "Kerberos" in engine.error()
    # A GCM job names an aes256-gcm key id: the Kerberos key of that name is another key.
    nonces = ctypes.create_string_buffer(12)
    rc = engine.lib.mpc_client_gcm_prefetch(engine.handle, name.encode(), kvno, 1, 0, nonces, None)
    assert rc == MPC_EREFUSED and "not found" in engine.error()
    # The Kerberos calls refuse the other algorithms, and an aes256 key is not a Kerberos key.
    plain = ("krb/plain-aes256", 1, MPC_AES256)
    cluster.import_key(plain[0], plain[1], "aes256")
    with pytest.raises(KrbError) as failure:
        engine.checksum(plain, 17, b"x")
    assert failure.value.code == MPC_EINVAL
    with pytest.raises(KrbError) as failure:
        engine.checksum((plain[0], plain[1], MPC_AES256_CTS), 17, b"x")
    assert failure.value.code == MPC_EREFUSED and "not found" in failure.value.message
    assert engine.lib.mpc_client_keystream(engine.handle, plain[0].encode(), 1, MPC_AES256, bytes(16), 1,
                                           out) == MPC_OK


def test_an_unknown_key_fails_clearly(krb):
    engine = krb["compute"]
    with pytest.raises(KrbError) as failure:
        engine.encrypt(("krb/nobody@EXAMPLE.COM", 1, MPC_AES128_CTS), 2, b"x")
    assert failure.value.code == MPC_EREFUSED
    assert "not found" in failure.value.message and "krb/nobody@EXAMPLE.COM" in failure.value.message


def test_import_refuses_an_existing_id_and_delete_frees_it(krb, k5):
    admin, compute = krb["admin"], krb["compute"]
    key_id = ("krb/rotated@EXAMPLE.COM", 9, MPC_AES128_CTS)
    first, second = secrets.token_bytes(16), secrets.token_bytes(16)
    admin.import_key(*key_id, first)
    with pytest.raises(KrbError) as failure:
        admin.import_key(*key_id, second)
    assert failure.value.code == MPC_EREFUSED
    assert compute.decrypt(key_id, 2, k5.encrypt(17, first, 2, b"first")) == b"first"
    admin.delete_key(*key_id)
    admin.delete_key(*key_id)  # none holds it any more: still a success
    with pytest.raises(KrbError) as failure:
        compute.checksum(key_id, 17, b"x")
    assert failure.value.code == MPC_EREFUSED
    admin.import_key(*key_id, second)
    assert compute.decrypt(key_id, 2, k5.encrypt(17, second, 2, b"second")) == b"second"
    with pytest.raises(KrbError) as failure:
        admin.import_key("krb/short", 1, MPC_AES256_CTS, secrets.token_bytes(16))
    assert failure.value.code == MPC_EINVAL


# -------------------------------------------------------------------------- mpcctl

def mpcctl_krb(cluster: Cluster, action: str, alg: str, *args: str, check: bool = True):
    return cluster.mpcctl("krb", action, "--cluster", str(cluster.admin_config), "--name", "krb/mpcctl",
                          "--kvno", "4", "--alg", alg, *args, check=check)


def test_mpcctl_key_import_and_krb_commands(krb, k5, enctype):
    cluster = krb["cluster"]
    _, alg, krb5_enctype, cksumtype, size = ENCTYPES[enctype]
    protocol_key = secrets.token_bytes(size)
    cluster.import_key("krb/mpcctl", 4, alg, protocol_key.hex())
    assert ("krb/mpcctl", 4, alg) in [row[:3] for row in cluster.list_keys("krb/mpcctl")]

    plaintext, confounder = secrets.token_bytes(33), secrets.token_hex(16)
    ciphertext = bytes.fromhex(mpcctl_krb(cluster, "encrypt", alg, "--usage", "3", "--confounder", confounder,
                                          "--in", plaintext.hex()).stdout.strip())
    assert len(ciphertext) == 16 + 33 + mac_bytes(enctype)
    assert k5.decrypt(krb5_enctype, protocol_key, 3, ciphertext) == plaintext
    random_confounder = bytes.fromhex(mpcctl_krb(cluster, "encrypt", alg, "--usage", "3").stdout.strip())
    assert k5.decrypt(krb5_enctype, protocol_key, 3, random_confounder) == b""

    theirs = k5.encrypt(krb5_enctype, protocol_key, 1, plaintext)
    decrypted = mpcctl_krb(cluster, "decrypt", alg, "--usage", "1", "--in", theirs.hex())
    assert bytes.fromhex(decrypted.stdout.strip()) == plaintext
    refused = mpcctl_krb(cluster, "decrypt", alg, "--usage", "2", "--in", theirs.hex(), check=False)
    assert refused.returncode == 2 and "integrity check failed" in refused.stderr

    checksum = mpcctl_krb(cluster, "checksum", alg, "--usage", "17", "--in", plaintext.hex()).stdout.strip()
    assert bytes.fromhex(checksum) == k5.make_checksum(cksumtype, krb5_enctype, protocol_key, 17, plaintext)
    # Under KRB-FX-CF2 with an aes256 strengthen key, as krb5kdc's FAST reply key.
    strengthen = secrets.token_bytes(32)
    mask = k5.prfplus(18, strengthen, b"strengthenkey", 32)
    combined = k5.cf2(18, strengthen, "strengthenkey", krb5_enctype, protocol_key, "replykey")
    checksum = mpcctl_krb(cluster, "checksum", alg, "--usage", "56", "--in", plaintext.hex(), "--combine-alg",
                          "aes256-cts-hmac-sha1-96", "--pepper", "replykey", "--mask", mask.hex()).stdout.strip()
    assert bytes.fromhex(checksum) == k5.make_checksum(16, 18, combined, 56, plaintext)

    bad = mpcctl_krb(cluster, "checksum", alg, "--usage", "4", check=False)
    assert bad.returncode == 1 and "key usage 4" in bad.stderr
    bad = mpcctl_krb(cluster, "encrypt", alg, "--usage", "1", check=False)
    assert bad.returncode == 1 and "usage 1" in bad.stderr
    cluster.mpcctl("key", "delete", "--cluster", str(cluster.admin_config), "--name", "krb/mpcctl", "--kvno", "4",
                   "--alg", alg)


# ---------------------------------------------------------------- evaluations

@pytest.mark.timeout(180)
def test_garbled_and_layered_evaluations_agree_with_libk5crypto(fresh_cluster, k5):
    """Server 1 leads every batch, so its krb_evaluation decides how the three servers run a
    Kerberos job: garbled by default (twice, by servers 1 and 3, under the default security =
    "active"), layer by layer when asked. Both give libk5crypto's bytes."""
    cluster = fresh_cluster
    admin = Engine(cluster.admin_config)
    try:
        key = secrets.token_bytes(32)
        key_id = ("krb/evaluations", 1, MPC_AES256_CTS)
        admin.import_key(*key_id, key)
        for settings, expected in (({"log_level": "debug"}, "garbled twice"),
                                   ({"log_level": "debug", "krb_evaluation": "layered"}, "layered")):
            restart_leader(cluster, settings)
            # A client of its own per leader: a request sent while a killed server's connection
            # still looked up would wait out the whole timeout.
            engine = Engine(cluster.compute_config, timeout_ms=60000)
            try:
                wait_until_krb_serving(engine, key_id)
                plaintext = secrets.token_bytes(61)
                ciphertext = engine.encrypt(key_id, 3, plaintext)
                assert k5.decrypt(18, key, 3, ciphertext) == plaintext, expected
                sealed = k5.encrypt(18, key, 2, plaintext)
                assert engine.decrypt(key_id, 2, sealed) == plaintext, expected
                data = secrets.token_bytes(57)
                assert engine.checksum(key_id, 17, data) == k5.make_checksum(16, 18, key, 17, data), expected
            finally:
                engine.close()
            evaluations = {evaluation for evaluation, _ in leader_evaluations(cluster)}
            assert expected in evaluations, evaluations
        # The round budget each way: a garbled batch runs its circuit of fewest AND gates in
        # three messages, a layered one a round per AND layer of the circuit of fewest layers.
        depths = leader_evaluations(cluster)
        assert all(depth > 100 for _, depth in depths), depths
    finally:
        admin.close()


# ------------------------------------------------------------------------- faults

@pytest.mark.timeout(90)
def test_a_killed_server_gives_unreachable_within_the_timeout(fresh_cluster):
    cluster = fresh_cluster
    timeout_s = 3.0
    admin = Engine(cluster.admin_config)
    engine = Engine(cluster.compute_config, timeout_ms=int(timeout_s * 1000))
    try:
        key_id = ("krb/fault", 1, MPC_AES256_CTS)
        admin.import_key(*key_id, secrets.token_bytes(32))
        wait_until_krb_serving(engine, key_id)
        cluster.kill_server(2)
        calls = (lambda: engine.encrypt(key_id, 2, bytes(300)), lambda: engine.decrypt(key_id, 2, bytes(40)),
                 lambda: engine.checksum(key_id, 17, bytes(300)),
                 lambda: engine.cf2_checksum(key_id, (MPC_AES256_CTS, "replykey", bytes(32)), 56, b"x"))
        for call in calls:
            started = time.monotonic()
            with pytest.raises(KrbError) as failure:
                call()
            elapsed = time.monotonic() - started
            assert failure.value.code == MPC_EUNREACHABLE, failure.value
            assert elapsed < timeout_s + 1.5, f"failed after {elapsed:.2f} s"
    finally:
        engine.close()
        admin.close()


@pytest.mark.timeout(120)
def test_a_request_crossing_a_server_restart_fails_at_once_or_succeeds(fresh_cluster):
    """A request sent as a server is killed and restarted may go down with the old session;
    the client then fails it at once (unreachable), not after its whole timeout, and the next
    request is served. Kills alternate between the leader and a follower."""
    cluster = fresh_cluster
    admin = Engine(cluster.admin_config)
    engine = Engine(cluster.compute_config, timeout_ms=20000)
    try:
        key_id = ("krb/restarts", 1, MPC_AES256_CTS)
        admin.import_key(*key_id, secrets.token_bytes(32))
        wait_until_krb_serving(engine, key_id)
        outcomes = []
        for round_ in range(6):
            party = 1 if round_ % 2 == 0 else 2
            cluster.kill_server(party)
            cluster.restart_server(party)
            started = time.monotonic()
            try:
                engine.checksum(key_id, 17, b"crossing a restart")
                outcomes.append("served")
            except KrbError as error:
                assert error.code == MPC_EUNREACHABLE, error
                outcomes.append("unreachable")
            elapsed = time.monotonic() - started
            assert elapsed < 3.0, f"round {round_} (server {party}): {outcomes[-1]} after {elapsed:.1f} s"
            wait_until_krb_serving(engine, key_id)
    finally:
        engine.close()
        admin.close()


# ------------------------------------------------------------------------ latency

@pytest.mark.timeout(240)
def test_concurrent_jobs_of_different_lengths_and_aes_jobs_between_them_are_all_right(krb, k5):
    """Kerberos jobs of different lengths cannot share a batch and run on their own workers;
    AES jobs keep running beside them. Every result is checked, from its own handle and thread."""
    cluster = krb["cluster"]
    aes_key = secrets.token_bytes(32)
    aes_id = ("krb-test/aes-beside@EXAMPLE.COM", 1, 2)
    krb["admin"].import_key(*aes_id, aes_key)
    failures: list[str] = []
    krb_jobs_done = threading.Event()

    def kerberos(index: int) -> None:
        engine = Engine(cluster.compute_config, timeout_ms=120000)
        try:
            key = krb["keys"]["aes256" if index % 2 else "aes128"]
            for round_ in range(2):
                plaintext = secrets.token_bytes(100 + 37 * index + round_)
                ciphertext = engine.encrypt(key["id"], 3, plaintext)
                if k5.decrypt(key["enctype"], key["key"], 3, ciphertext) != plaintext:
                    failures.append(f"kerberos job {index}/{round_}: libk5crypto does not decrypt it")
        except Exception as error:  # noqa: BLE001 - reported below, from the main thread
            failures.append(f"kerberos job {index}: {error}")
        finally:
            engine.close()

    def aes() -> None:
        engine = Engine(cluster.compute_config)
        try:
            name, kvno, algorithm = aes_id
            calls = 0
            while not krb_jobs_done.is_set() or calls < 3:
                counter = secrets.token_bytes(16)
                out = ctypes.create_string_buffer(16 * 4)
                rc = engine.lib.mpc_client_keystream(engine.handle, name.encode(), kvno, algorithm, counter, 4, out)
                if rc != MPC_OK:
                    failures.append(f"AES keystream beside Kerberos jobs: {rc}: {engine.error()}")
                    return
                encryptor = Cipher(algorithms.AES(aes_key), modes.CTR(counter)).encryptor()
                if out.raw != encryptor.update(bytes(64)):
                    failures.append("AES keystream beside Kerberos jobs differs from OpenSSL's")
                    return
                calls += 1
        finally:
            engine.close()

    workers = [threading.Thread(target=kerberos, args=(i,)) for i in range(6)]
    beside = threading.Thread(target=aes)
    beside.start()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    krb_jobs_done.set()
    beside.join()
    krb["admin"].delete_key(*aes_id)
    assert not failures, "\n".join(failures)

