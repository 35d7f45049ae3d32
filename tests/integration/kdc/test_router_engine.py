"""The crypto router's engine paths for the protected krbtgt key against a real cluster: its
tickets and checksums (kdc-plugin/router/gcm_jobs.c) through the real libk5crypto entry points,
checked against Python's `cryptography` AES-GCM. The driver (router_driver.py) holds a keyblock
whose contents are a handle (kdc-plugin/kdb/handle.h, computed here with hashlib/hmac) of
enctype MPC_KDC_ENCTYPE_AES256_GCM for krbtgt/MPC.TEST@MPC.TEST, kvno 1; the cluster holds the
AES-256-GCM key K under the engine key name of that handle (kdc-plugin/kdb/protected_key.h:
"kdc/" + hex name hash).

What is asserted:
- krb5_c_encrypt gives nonce || C || tag with C || tag = AESGCM(K).encrypt(nonce, P,
  0x01 || u32be usage), enctype -19792, for plaintexts from empty to the engine's GHASH
  limit (the pool's 64-block entries and longer ones, prefetched for themselves); nonces
  never repeat; krb5_c_decrypt gives P back; a flipped byte anywhere, another usage, a
  truncated ciphertext or a too long plaintext fail with BAD_INTEGRITY / BAD_MSIZE and
  leave no plaintext behind;
- krb5_c_make_checksum (type 0 and the private type) and krb5_c_make_checksum_iov give
  nonce || GMAC with the tag = AESGCM(K).encrypt(nonce, b"", 0x02 || u32be usage ||
  data), data being the buffers libk5crypto checksums (HEADER, DATA, PADDING, SIGN_ONLY
  in order); verification accepts them and answers valid = false for any flipped byte;
- the krb5_key API gives the same;
- forked children (krb5kdc -w) each open their own engine connections and compute
  correctly at the same time;
- a restart of every server (the pooled nonces are forgotten: MPC_ENONCE) costs nothing
  but a retry, and an unreachable engine gives KRB5_CRYPTO_INTERNAL with the engine's
  message.
"""


from __future__ import annotations

import secrets
import subprocess
import time
from pathlib import Path

import pytest
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from mpctest import local_masks, mpc_cluster
from mpctest.kdc_formats import (EngineKey, checksum_aad, engine_name as engine_key_name,
                                 expected_handle as make_handle, gmac_tag, keystream_aad, seal_ticket)
from mpctest.router_driver import (EARLIER_MAX_PLAINTEXT, ENCTYPE_UNKNOWN, IOV_CHECKSUM, IOV_DATA, IOV_HEADER, IOV_PADDING,
                                   IOV_SIGN_ONLY, IOV_TRAILER, KRB5_BAD_ENCTYPE, KRB5_BAD_MSIZE, KRB5_CRYPTO_INTERNAL,
                                   KRB5KRB_AP_ERR_BAD_INTEGRITY, KVNO, MAX_CHECKSUM_DATA, MAX_PLAINTEXT, PRINCIPAL,
                                   PRIVATE_CKSUMTYPE, PRIVATE_ENCTYPE, DriverProcess)


def wait_for_gcm_key(cluster: mpc_cluster.Cluster, name: str, deadline_s: float = 15) -> None:
    """Polls a one-nonce prefetch until the servers compute (peers connected)."""
    deadline = time.monotonic() + deadline_s
    last = ""
    while time.monotonic() < deadline:
        result = cluster.mpcctl("aes", "gcm-prefetch", "--cluster", str(cluster.compute_config),
                                "--name", name, "--kvno", str(KVNO), "--count", "1",
                                check=False, timeout=15)
        if result.returncode == 0:
            return
        last = result.stderr.strip()
        time.sleep(0.1)
    raise AssertionError(f"the cluster does not prefetch after {deadline_s} s: {last}\n"
                         f"{cluster.log_tail()}")


def set_up(cluster: mpc_cluster.Cluster, root: Path, router_so: Path, extra_conf: str = ""):
    key = secrets.token_bytes(32)
    name = engine_key_name(PRINCIPAL)
    if not any(row[0] == name and row[1] == KVNO for row in cluster.list_keys("kdc/")):
        cluster.import_key(name, KVNO, "aes256-gcm", key.hex())
    else:
        raise AssertionError(f"{name} already imported in this cluster")
    wait_for_gcm_key(cluster, name)
    # A router of gcm_masks = local asks for local masks: their reference needs the components
    # the servers store.
    parts = local_masks.components([cluster.server_dir(party) for party in cluster.parties], (name, KVNO, "aes256-gcm"))
    key = EngineKey(key, (name, KVNO, "aes256-gcm"), parts)
    handle_key = secrets.token_bytes(32)
    handle = make_handle(handle_key, PRINCIPAL, KVNO, PRIVATE_ENCTYPE)
    return key, DriverProcess(root, router_so, cluster, handle_key, handle, extra_conf)


@pytest.fixture(scope="module")
def engine(cluster, router_so, tmp_path_factory):
    """(K, driver) on the module's cluster; small pools so that refills happen."""
    key, driver = set_up(cluster, tmp_path_factory.mktemp("router-engine"), router_so,
                         "pool_low = 4\npool_high = 16\n")
    try:
        yield key, driver
    finally:
        driver.close()


def check_sealed(key: bytes, usage: int, plain: bytes, result: dict) -> bytes:
    """The router's ciphertext against the format computed here; returns the nonce."""
    assert result["ret"] == 0, result["msg"]
    assert result["enctype"] == PRIVATE_ENCTYPE and result["kvno"] == 0
    cipher = bytes.fromhex(result["cipher"])
    assert len(cipher) == 12 + len(plain) + 16 == result["length"]
    nonce = cipher[:12]
    assert cipher == seal_ticket(key, nonce, usage, plain)
    return nonce


def check_checksum(key: bytes, usage: int, data: bytes, cksum: bytes) -> bytes:
    assert len(cksum) == 28
    nonce = cksum[:12]
    assert cksum[12:] == gmac_tag(key, nonce, checksum_aad(usage, data))
    return nonce


SIZES = [0, 1, 15, 16, 17, 341, 479, 1023, 1024, 1025, 5000, MAX_PLAINTEXT]


@pytest.mark.timeout(120)
def test_encrypt_and_decrypt_match_the_ticket_format(engine):
    key, driver = engine
    nonces = set()
    for api in ("c", "k"):
        for size in SIZES:
            plain = secrets.token_bytes(size)
            usage = 2 if size % 2 else 3
            sealed = driver.call("encrypt", usage=usage, plain=plain.hex(), api=api)
            nonce = check_sealed(key, usage, plain, sealed)
            assert nonce not in nonces, f"nonce reused at size {size}"
            nonces.add(nonce)
            opened = driver.call("decrypt", usage=usage, cipher=sealed["cipher"], api=api)
            assert opened["ret"] == 0, opened["msg"]
            assert bytes.fromhex(opened["plain"]) == plain
            # ENCTYPE_UNKNOWN on the ciphertext is accepted, as by libk5crypto.
            opened = driver.call("decrypt", usage=usage, cipher=sealed["cipher"],
                                 enctype=ENCTYPE_UNKNOWN)
            assert opened["ret"] == 0 and bytes.fromhex(opened["plain"]) == plain
    # What Python seals, the router opens: the format is the one computed here and nothing else.
    nonce, plain = secrets.token_bytes(12), b"sealed by Python"
    opened = driver.call("decrypt", usage=2, cipher=seal_ticket(key, nonce, 2, plain).hex())
    assert opened["ret"] == 0 and bytes.fromhex(opened["plain"]) == plain


@pytest.mark.timeout(120)
def test_new_tickets_take_aes_masks_unless_gcm_masks_is_local(engine, fresh_cluster, router_so, tmp_path):
    """By default every ticket and checksum the router makes has a nonce of AES_K's masks (the
    ticket is then AES-GCM's under K, as seal_ticket computes it); with gcm_masks = local, one
    with local masks. A router opens both kinds whatever its setting: the nonce's mark says
    which. A bad gcm_masks makes the configuration invalid."""
    key, driver = engine
    plain = secrets.token_bytes(100)
    assert not local_masks.is_local(check_sealed(key, 2, plain, driver.call("encrypt", usage=2, plain=plain.hex())))
    made = driver.call("make_checksum", usage=17, data="aa")
    assert not local_masks.is_local(check_checksum(key, 17, b"\xaa", bytes.fromhex(made["cksum"])))

    aes_key, aes_driver = set_up(fresh_cluster, tmp_path / "aes", router_so)
    local_driver = DriverProcess(tmp_path / "local", router_so, fresh_cluster, aes_driver.handle_key,
                                 aes_driver.handle, "gcm_masks = local\n")
    try:
        aes_ticket = aes_driver.call("encrypt", usage=2, plain=plain.hex())
        assert not local_masks.is_local(check_sealed(aes_key, 2, plain, aes_ticket))
        local_ticket = local_driver.call("encrypt", usage=2, plain=plain.hex())
        assert local_masks.is_local(check_sealed(aes_key, 2, plain, local_ticket))
        for opener in (aes_driver, local_driver):
            for ticket in (aes_ticket, local_ticket):
                opened = opener.call("decrypt", usage=2, cipher=ticket["cipher"])
                assert opened["ret"] == 0 and bytes.fromhex(opened["plain"]) == plain
    finally:
        local_driver.close()
        aes_driver.close()
    for number, bad in enumerate(("gcm_masks = both\n", "gcm_masks = aes\ngcm_masks = local\n")):
        refused = DriverProcess(tmp_path / f"bad{number}", router_so, fresh_cluster, aes_driver.handle_key,
                                aes_driver.handle, bad)
        try:
            result = refused.call("encrypt", usage=2, plain=plain.hex())
            assert result["ret"] != 0
            assert "gcm_masks" in refused.log(), refused.log()
        finally:
            refused.close()


@pytest.mark.timeout(120)
def test_tickets_of_the_earlier_format_still_open(engine):
    """Tickets issued before the ticket key (GCM's keystream over the whole text, AAD 0x01 ||
    usage) open as before, and only with their own usage and intact."""
    key, driver = engine
    for size in (EARLIER_MAX_PLAINTEXT, 0, 1, 341, 1024, MAX_PLAINTEXT):
        nonce, plain = secrets.token_bytes(12), secrets.token_bytes(size)
        earlier = nonce + AESGCM(key).encrypt(nonce, plain, keystream_aad(2))
        opened = driver.call("decrypt", usage=2, cipher=earlier.hex())
        assert opened["ret"] == 0, (size, opened["msg"])
        assert bytes.fromhex(opened["plain"]) == plain
    too_long = nonce + bytes(EARLIER_MAX_PLAINTEXT + 1) + bytes(16)
    result = driver.call("decrypt", usage=2, cipher=too_long.hex())
    assert result["ret"] == KRB5_BAD_MSIZE and "GHASH" in result["msg"], result
    assert driver.call("decrypt", usage=3, cipher=earlier.hex())["ret"] == KRB5KRB_AP_ERR_BAD_INTEGRITY
    for position in (0, 12, len(earlier) - 1):
        bad = bytearray(earlier)
        bad[position] ^= 0x80
        result = driver.call("decrypt", usage=2, cipher=bytes(bad).hex())
        assert result["ret"] == KRB5KRB_AP_ERR_BAD_INTEGRITY, (position, result)
        assert set(bytes.fromhex(result["left"])) <= {0}, "plaintext left after a bad tag"
    # A ticket of this format is never read as one of the earlier: its tag covers the AAD byte.
    sealed = bytes.fromhex(driver.call("encrypt", usage=2, plain=plain[:100].hex())["cipher"])
    with pytest.raises(InvalidTag):
        AESGCM(key).decrypt(sealed[:12], sealed[12:], keystream_aad(2))


@pytest.mark.timeout(120)
def test_tampered_ciphertexts_fail_integrity(engine):
    key, driver = engine
    plain = secrets.token_bytes(341)
    sealed = bytes.fromhex(driver.call("encrypt", usage=2, plain=plain.hex())["cipher"])
    for position in (0, 11, 12, 12 + 170, 12 + 340, len(sealed) - 16, len(sealed) - 1):
        bad = bytearray(sealed)
        bad[position] ^= 0x01
        result = driver.call("decrypt", usage=2, cipher=bytes(bad).hex())
        assert result["ret"] == KRB5KRB_AP_ERR_BAD_INTEGRITY, (position, result)
        assert "integrity check failed" in result["msg"]
        assert set(bytes.fromhex(result["left"])) <= {0}, "plaintext left after a bad tag"
    for usage in (3, 17, 0x01000002):
        result = driver.call("decrypt", usage=usage, cipher=sealed.hex())
        assert result["ret"] == KRB5KRB_AP_ERR_BAD_INTEGRITY, (usage, result)
    # One byte short: the tag boundary moves.
    result = driver.call("decrypt", usage=2, cipher=(sealed[:-1]).hex())
    assert result["ret"] == KRB5KRB_AP_ERR_BAD_INTEGRITY
    for length in (0, 1, 27):
        result = driver.call("decrypt", usage=2, cipher=sealed[:length].hex())
        assert result["ret"] == KRB5_BAD_MSIZE, (length, result)
    for enctype in (18, 0):
        result = driver.call("decrypt", usage=2, cipher=sealed.hex(), enctype=enctype)
        assert result["ret"] == KRB5_BAD_ENCTYPE, (enctype, result)
    too_long = driver.call("encrypt", usage=2, plain=bytes(MAX_PLAINTEXT + 1).hex())
    assert too_long["ret"] == KRB5_BAD_MSIZE and "GHASH" in too_long["msg"]
    forged = secrets.token_bytes(12 + 64 + 16)
    result = driver.call("decrypt", usage=2, cipher=forged.hex())
    assert result["ret"] == KRB5KRB_AP_ERR_BAD_INTEGRITY


@pytest.mark.timeout(120)
def test_checksums_are_gmac_and_verify(engine):
    key, driver = engine
    nonces = set()
    for api in ("c", "k"):
        # Any length: the servers authenticate the data's digest (and 28 bytes, one checksum's,
        # as they are: a PAC's KDC checksum over its server checksum).
        for size, cksumtype in ((0, 0), (1, PRIVATE_CKSUMTYPE), (28, 0), (600, 0), (5000, 0),
                                (MAX_CHECKSUM_DATA, 0), (MAX_CHECKSUM_DATA + 1, 0), (65536, 0)):
            data = secrets.token_bytes(size)
            made = driver.call("make_checksum", usage=17, data=data.hex(), cksumtype=cksumtype,
                               api=api)
            assert made["ret"] == 0, made["msg"]
            assert made["type"] == PRIVATE_CKSUMTYPE
            cksum = bytes.fromhex(made["cksum"])
            nonce = check_checksum(key, 17, data, cksum)
            assert nonce not in nonces
            nonces.add(nonce)
            for checked_type in (0, PRIVATE_CKSUMTYPE):
                verdict = driver.call("verify_checksum", usage=17, data=data.hex(),
                                      cksumtype=checked_type, cksum=cksum.hex(), api=api)
                assert verdict["ret"] == 0 and verdict["valid"] == 1, verdict
            for position in (0, 12, 27):
                bad = bytearray(cksum)
                bad[position] ^= 0x80
                verdict = driver.call("verify_checksum", usage=17, data=data.hex(),
                                      cksumtype=0, cksum=bytes(bad).hex(), api=api)
                assert verdict["ret"] == 0 and verdict["valid"] == 0, (position, verdict)
            if size:
                other = bytes([data[0] ^ 1]) + data[1:]
                verdict = driver.call("verify_checksum", usage=17, data=other.hex(),
                                      cksumtype=0, cksum=cksum.hex(), api=api)
                assert verdict["ret"] == 0 and verdict["valid"] == 0
            verdict = driver.call("verify_checksum", usage=64, data=data.hex(), cksumtype=0,
                                  cksum=cksum.hex(), api=api)
            assert verdict["ret"] == 0 and verdict["valid"] == 0
    made = driver.call("make_checksum", usage=17, data="00", cksumtype=16)
    assert made["ret"] == KRB5_BAD_ENCTYPE
    # A ticket's tag is no checksum: the first AAD byte separates the two uses.
    sealed = bytes.fromhex(driver.call("encrypt", usage=17, plain="")["cipher"])
    verdict = driver.call("verify_checksum", usage=17, data="", cksumtype=0, cksum=sealed.hex())
    assert verdict["ret"] == 0 and verdict["valid"] == 0


@pytest.mark.timeout(60)
def test_checksum_iov_covers_libk5crypto_sign_buffers(engine):
    key, driver = engine
    parts = {IOV_HEADER: b"hdr", IOV_DATA: b"the pac", IOV_PADDING: b"pd", IOV_SIGN_ONLY: b"signed"}
    iov = [[IOV_HEADER, parts[IOV_HEADER].hex()], [IOV_DATA, parts[IOV_DATA].hex()],
           [IOV_CHECKSUM, bytes(32).hex()], [IOV_PADDING, parts[IOV_PADDING].hex()],
           [IOV_TRAILER, b"not signed".hex()], [IOV_SIGN_ONLY, parts[IOV_SIGN_ONLY].hex()]]
    made = driver.call("make_checksum_iov", usage=17, iov=iov)
    assert made["ret"] == 0, made["msg"]
    cksum = bytes.fromhex(made["cksum"])
    check_checksum(key, 17, b"hdr" + b"the pac" + b"pd" + b"signed", cksum)
    # The same data in one buffer gives a checksum krb5_c_verify_checksum accepts.
    verdict = driver.call("verify_checksum", usage=17, data=b"hdrthe pacpdsigned".hex(),
                          cksumtype=PRIVATE_CKSUMTYPE, cksum=cksum.hex())
    assert verdict["valid"] == 1
    iov[2] = [IOV_CHECKSUM, cksum.hex()]
    verdict = driver.call("verify_checksum_iov", usage=17, iov=iov)
    assert verdict["ret"] == 0 and verdict["valid"] == 1
    iov[1] = [IOV_DATA, b"the pad".hex()]
    verdict = driver.call("verify_checksum_iov", usage=17, iov=iov)
    assert verdict["ret"] == 0 and verdict["valid"] == 0
    iov[2] = [IOV_CHECKSUM, cksum[:27].hex()]
    verdict = driver.call("verify_checksum_iov", usage=17, iov=iov)
    assert verdict["ret"] == KRB5_BAD_MSIZE


@pytest.mark.timeout(120)
def test_forked_children_use_their_own_connections(engine):
    key, driver = engine
    plain = secrets.token_bytes(341)
    data = secrets.token_bytes(700)
    sealed = driver.call("encrypt", usage=2, plain=plain.hex())
    check_sealed(key, 2, plain, sealed)
    ops = [{"op": "encrypt", "usage": 2, "plain": plain.hex()},
           {"op": "decrypt", "usage": 2, "cipher": sealed["cipher"]},
           {"op": "make_checksum", "usage": 17, "data": data.hex()},
           {"op": "encrypt", "usage": 2, "plain": plain.hex()}]
    report = driver.call("fork", children=3, ops=ops)
    nonces = set()
    assert len(report["children"]) == 3
    for child in report["children"]:
        assert "error" not in child, child
        assert child["pid"] != report["parent"]
        assert child["own_sockets"] > 0, "a child used only its parent's sockets"
        first, opened, made, second = child["results"]
        for result in (first, second):
            nonce = check_sealed(key, 2, plain, result)
            assert nonce not in nonces
            nonces.add(nonce)
        assert opened["ret"] == 0 and bytes.fromhex(opened["plain"]) == plain
        assert made["ret"] == 0
        nonce = check_checksum(key, 17, data, bytes.fromhex(made["cksum"]))
        assert nonce not in nonces
        nonces.add(nonce)
    # The parent's engine still works after its children came and went.
    check_sealed(key, 2, plain, driver.call("encrypt", usage=2, plain=plain.hex()))


def router_counter(metrics_file: Path, name: str) -> float:
    """One sample of `mpcctl kdc metrics` over the router's counters file."""
    result = subprocess.run([str(mpc_cluster.mpcctl_binary()), "kdc", "metrics", "--file", str(metrics_file)],
                            capture_output=True, text=True, timeout=30, check=True)
    for line in result.stdout.splitlines():
        if line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name} not in the router's metrics:\n{result.stdout}")


@pytest.mark.timeout(180)
def test_server_restart_and_unreachable_engine(fresh_cluster, router_so, tmp_path):
    metrics_file = tmp_path / "router.metrics"
    key, driver = set_up(fresh_cluster, tmp_path / "driver", router_so,
                         f"pool_low = 4\npool_high = 16\nmetrics_file = {metrics_file}\n")
    try:
        plain = secrets.token_bytes(341)
        check_sealed(key, 2, plain, driver.call("encrypt", usage=2, plain=plain.hex()))
        made = driver.call("make_checksum", usage=17, data="aa")
        assert made["ret"] == 0
        time.sleep(2)   # the refill thread fills both pools meanwhile
        before = driver.call("encrypt", usage=2, plain=plain.hex())
        check_sealed(key, 2, plain, before)
        assert router_counter(metrics_file, 'mpc_kdc_nonces_pooled{pool="ticket"}') > 0
        assert router_counter(metrics_file, 'mpc_kdc_nonces_pooled{pool="checksum"}') > 0
        assert router_counter(metrics_file, "mpc_kdc_reseals_total") == 0

        # Every server restarts: the pooled nonces are gone from the servers. The next
        # seal takes one, gets MPC_ENONCE, drops the pool and prefetches for itself.
        fresh_cluster.stop()
        fresh_cluster.start()
        wait_for_gcm_key(fresh_cluster, engine_key_name(PRINCIPAL))
        for _ in range(3):
            check_sealed(key, 2, plain, driver.call("encrypt", usage=2, plain=plain.hex()))
            made = driver.call("make_checksum", usage=17, data="aa")
            assert made["ret"] == 0, made["msg"]
            check_checksum(key, 17, b"\xaa", bytes.fromhex(made["cksum"]))
        log = driver.log()
        assert "ticket nonce pool for" in log and "checksum nonce pool for" in log, log
        assert "dropped" in log and "the servers no longer know its nonces" in log, log
        # Each pool's first seal after the restart was tried again under a fresh nonce.
        assert router_counter(metrics_file, "mpc_kdc_reseals_total") >= 2
        # Tickets sealed before the restart still open (their keystream is recomputed).
        opened = driver.call("decrypt", usage=2, cipher=before["cipher"])
        assert opened["ret"] == 0 and bytes.fromhex(opened["plain"]) == plain

        fresh_cluster.stop()
        # Nonces may still be pooled: they seal nothing without a tag from the servers.
        for _ in range(2):
            result = driver.call("encrypt", usage=2, plain=plain.hex())
            assert result["ret"] == KRB5_CRYPTO_INTERNAL, result
            assert "engine unreachable" in result["msg"], result["msg"]
        result = driver.call("decrypt", usage=2, cipher=before["cipher"])
        assert result["ret"] == KRB5_CRYPTO_INTERNAL and "engine unreachable" in result["msg"]
        assert set(bytes.fromhex(result["left"])) <= {0}
        result = driver.call("verify_checksum", usage=17, data="aa", cksumtype=0,
                             cksum=made["cksum"])
        assert result["ret"] == KRB5_CRYPTO_INTERNAL and "engine unreachable" in result["msg"]
    finally:
        driver.close()
