"""The crypto router's engine paths for protected users' and services' keys, enctypes 17 and
18 (kdc-plugin/router/krb_jobs.c), against a real cluster. The engine holds a Kerberos protocol
key (imported with `mpcctl key import`, as the enrollment does) under the engine key name of a
handle of enctype 17 or 18; the driver (router_driver.py) holds that handle. Whatever the router
computes through the engine's Kerberos jobs must be what libk5crypto computes with the real key
(called here, in the test process, which is not preloaded with the router).
"""

from __future__ import annotations

import ctypes
import secrets
import time
from pathlib import Path

import pytest

from mpctest import mpc_cluster
from mpctest.kdc_formats import engine_name as engine_key_name, expected_handle as make_handle
from mpctest.router_driver import (ENCTYPE_UNKNOWN, IOV_CHECKSUM, IOV_DATA, IOV_PADDING, IOV_SIGN_ONLY, IOV_TRAILER,
                                   KRB5_BAD_ENCTYPE, KRB5_BAD_MSIZE, KRB5_CRYPTO_INTERNAL, KRB5KRB_AP_ERR_BAD_INTEGRITY,
                                   DriverProcess, KChecksum, KData, KEncData, KKeyblock)

USER_KVNO = 3
USER_ENCTYPES = {17: ("aes128-cts-hmac-sha1-96", 16, 15), 18: ("aes256-cts-hmac-sha1-96", 32, 16)}
SERVED_USAGES = (1, 2, 3, 17, 56)
# confounder + plaintext of one engine call (mpc_client.h MPC_KRB_MAX_DATA_BYTES)
KRB_MAX_PLAINTEXT = 4096 - 16


class K5:
    """MIT libk5crypto on a clear key, the outside truth."""

    def __init__(self) -> None:
        self.k5 = ctypes.CDLL("libk5crypto.so.3")
        self.krb5 = ctypes.CDLL("libkrb5.so.3")
        self.ctx = ctypes.c_void_p()
        assert self.krb5.krb5_init_context(ctypes.byref(self.ctx)) == 0

    @staticmethod
    def _key(enctype: int, key: bytes):
        buf = ctypes.create_string_buffer(key, len(key))
        return KKeyblock(0, enctype, len(key), ctypes.cast(buf, ctypes.c_void_p)), buf

    @staticmethod
    def _data(data: bytes, extra: int = 0):
        buf = ctypes.create_string_buffer(data + bytes(extra), max(1, len(data) + extra))
        return KData(0, len(data) + extra, ctypes.cast(buf, ctypes.c_void_p)), buf

    def encrypt_length(self, enctype: int, length: int) -> int:
        out = ctypes.c_size_t()
        assert self.k5.krb5_c_encrypt_length(self.ctx, enctype, ctypes.c_size_t(length),
                                             ctypes.byref(out)) == 0
        return out.value

    def encrypt(self, enctype: int, key: bytes, usage: int, plain: bytes) -> bytes:
        kb, _k = self._key(enctype, key)
        inp, _i = self._data(plain)
        total = self.encrypt_length(enctype, len(plain))
        outd, out = self._data(b"", total)
        enc = KEncData(0, 0, 0, outd)
        assert self.k5.krb5_c_encrypt(self.ctx, ctypes.byref(kb), usage, None, ctypes.byref(inp),
                                      ctypes.byref(enc)) == 0
        return out.raw[:enc.ciphertext.length]

    def decrypt(self, enctype: int, key: bytes, usage: int, cipher: bytes) -> bytes | None:
        kb, _k = self._key(enctype, key)
        ind, _i = self._data(cipher)
        enc = KEncData(0, enctype, 0, ind)
        outd, out = self._data(b"", len(cipher))
        ret = self.k5.krb5_c_decrypt(self.ctx, ctypes.byref(kb), usage, None, ctypes.byref(enc),
                                     ctypes.byref(outd))
        return out.raw[:outd.length] if ret == 0 else None

    def checksum(self, enctype: int, key: bytes, usage: int, data: bytes) -> tuple[int, bytes]:
        kb, _k = self._key(enctype, key)
        inp, _i = self._data(data)
        ck = KChecksum()
        assert self.k5.krb5_c_make_checksum(self.ctx, 0, ctypes.byref(kb), usage,
                                            ctypes.byref(inp), ctypes.byref(ck)) == 0
        result = ck.checksum_type, ctypes.string_at(ck.contents, ck.length)
        self.krb5.krb5_free_checksum_contents(self.ctx, ctypes.byref(ck))
        return result

    def prfplus(self, enctype: int, key: bytes, data: bytes, length: int,
                plus: bool = True) -> bytes:
        kb, _k = self._key(enctype, key)
        inp, _i = self._data(data)
        outd, out = self._data(b"", length)
        fn = self.k5.krb5_c_prfplus if plus else self.k5.krb5_c_prf
        assert fn(self.ctx, ctypes.byref(kb), ctypes.byref(inp), ctypes.byref(outd)) == 0
        return out.raw[:length]

    def cf2(self, e1: int, k1: bytes, pepper1: str, e2: int, k2: bytes, pepper2: str):
        kb1, _a = self._key(e1, k1)
        kb2, _b = self._key(e2, k2)
        out = ctypes.POINTER(KKeyblock)()
        assert self.k5.krb5_c_fx_cf2_simple(self.ctx, ctypes.byref(kb1), pepper1.encode(),
                                            ctypes.byref(kb2), pepper2.encode(),
                                            ctypes.byref(out)) == 0
        result = out.contents.enctype, ctypes.string_at(out.contents.contents,
                                                        out.contents.length)
        self.krb5.krb5_free_keyblock(self.ctx, out)
        return result


def wait_for_krb_key(cluster: mpc_cluster.Cluster, name: str, alg: str,
                     deadline_s: float = 20) -> None:
    """Polls a checksum until the servers compute with the key (peers connected)."""
    deadline = time.monotonic() + deadline_s
    last = ""
    while time.monotonic() < deadline:
        result = cluster.mpcctl("krb", "checksum", "--cluster", str(cluster.compute_config),
                                "--name", name, "--kvno", str(USER_KVNO), "--alg", alg,
                                "--usage", "17", "--in", "00", check=False, timeout=15)
        if result.returncode == 0:
            return
        last = result.stderr.strip()
        time.sleep(0.2)
    raise AssertionError(f"the cluster does not serve Kerberos jobs after {deadline_s} s: "
                         f"{last}\n{cluster.log_tail()}")


@pytest.fixture(scope="module")
def k5():
    return K5()


def patient_config(cluster: mpc_cluster.Cluster) -> Path:
    """The compute configuration with a long timeout: the servers compile a Kerberos circuit
    on the first job of each data length, which takes seconds on a loaded test machine (a
    KDC sees the same few lengths over and over)."""
    path = cluster.compute_config.with_name("compute-patient.toml")
    text = cluster.compute_config.read_text()
    assert "timeout_ms = " in text
    path.write_text("\n".join("timeout_ms = 60000" if line.startswith("timeout_ms = ") else line
                              for line in text.splitlines()) + "\n")
    return path


@pytest.fixture(scope="module")
def user_keys(cluster, router_so, tmp_path_factory):
    """enctype -> (protocol key, driver holding a handle of it), one user per enctype."""
    drivers = {}
    engine_config = patient_config(cluster)
    try:
        for enctype, (alg, size, _) in USER_ENCTYPES.items():
            principal = f"user{enctype}@MPC.TEST"
            key = secrets.token_bytes(size)
            name = engine_key_name(principal)
            cluster.import_key(name, USER_KVNO, alg, key.hex())
            wait_for_krb_key(cluster, name, alg)
            handle_key = secrets.token_bytes(32)
            handle = make_handle(handle_key, principal, USER_KVNO, enctype)
            driver = DriverProcess(tmp_path_factory.mktemp(f"router-krb-{enctype}"), router_so,
                                   cluster, handle_key, handle, enctype=enctype,
                                   engine_config=engine_config)
            drivers[enctype] = (key, driver)
        yield drivers
    finally:
        for _, driver in drivers.values():
            driver.close()


@pytest.fixture(params=sorted(USER_ENCTYPES), ids=[f"enctype{e}" for e in sorted(USER_ENCTYPES)])
def user(request, user_keys):
    key, driver = user_keys[request.param]
    return request.param, key, driver


# Up to a large AS-REP. Every new data length makes the servers compile a circuit; lengths up
# to the engine's limit (KRB_MAX_PLAINTEXT) are the engine's own tests' business
# (tests/integration/test_krb_jobs.py), the limit itself is checked below.
KRB_SIZES = [0, 1, 15, 16, 17, 33, 309]


@pytest.mark.timeout(300)
def test_user_key_encryption_is_libk5cryptos(user, k5):
    enctype, key, driver = user
    # krb5kdc encrypts tickets (2) and AS-REPs (3) and decrypts tickets and preauth
    # timestamps (1); the engine serves exactly those directions.
    for i, size in enumerate(KRB_SIZES):
        usage = (2, 3)[i % 2]
        api = "k" if i % 4 == 3 else "c"
        plain = secrets.token_bytes(size)
        sealed = driver.call("encrypt", usage=usage, plain=plain.hex(), api=api)
        assert sealed["ret"] == 0, sealed["msg"]
        assert sealed["enctype"] == enctype and sealed["kvno"] == 0
        cipher = bytes.fromhex(sealed["cipher"])
        assert len(cipher) == sealed["length"] == k5.encrypt_length(enctype, size)
        # What the router encrypts, libk5crypto decrypts with the real key ...
        assert k5.decrypt(enctype, key, usage, cipher) == plain, size
        # ... under this usage only.
        assert k5.decrypt(enctype, key, 5 - usage, cipher) is None
        # What libk5crypto encrypts, the router decrypts.
        usage = (1, 2)[i % 2]
        theirs = k5.encrypt(enctype, key, usage, plain)
        opened = driver.call("decrypt", usage=usage, cipher=theirs.hex(), api=api)
        assert opened["ret"] == 0, opened["msg"]
        assert bytes.fromhex(opened["plain"]) == plain
    # The confounder is fresh random: the same plaintext never encrypts twice the same.
    plain = b"ticket"
    first, second = (bytes.fromhex(driver.call("encrypt", usage=2, plain=plain.hex())["cipher"])
                     for _ in range(2))
    assert first != second and first[:16] != second[:16]
    # ENCTYPE_UNKNOWN on the ciphertext is accepted, as by libk5crypto.
    opened = driver.call("decrypt", usage=2, cipher=first.hex(), enctype=ENCTYPE_UNKNOWN)
    assert opened["ret"] == 0 and bytes.fromhex(opened["plain"]) == plain
    # A preauth timestamp under the client's key is the client's to make, an AS-REP the
    # client's to read: refused, fail closed.
    refused = driver.call("encrypt", usage=1, plain=plain.hex())
    assert refused["ret"] == KRB5_CRYPTO_INTERNAL and "usage 1" in refused["msg"], refused
    refused = driver.call("decrypt", usage=3, cipher=k5.encrypt(enctype, key, 3, plain).hex())
    assert refused["ret"] == KRB5_CRYPTO_INTERNAL and "usage 3" in refused["msg"], refused


@pytest.mark.timeout(120)
def test_user_key_damaged_ciphertexts_fail_integrity(user, k5):
    enctype, key, driver = user
    plain = secrets.token_bytes(52)                    # a preauth timestamp's size
    cipher = k5.encrypt(enctype, key, 1, plain)
    for position in (0, 15, 16, 16 + 26, len(cipher) - 13, len(cipher) - 12, len(cipher) - 1):
        bad = bytearray(cipher)
        bad[position] ^= 0x01
        result = driver.call("decrypt", usage=1, cipher=bytes(bad).hex())
        assert result["ret"] == KRB5KRB_AP_ERR_BAD_INTEGRITY, (position, result)
        assert "integrity check failed" in result["msg"], result["msg"]
        assert set(bytes.fromhex(result["left"])) <= {0}, "plaintext left after a bad HMAC"
    # Another served usage, or another key's ciphertext (a wrong password): BAD_INTEGRITY.
    result = driver.call("decrypt", usage=2, cipher=cipher.hex())
    assert result["ret"] == KRB5KRB_AP_ERR_BAD_INTEGRITY, result
    other = k5.encrypt(enctype, secrets.token_bytes(len(key)), 1, plain)
    result = driver.call("decrypt", usage=1, cipher=other.hex())
    assert result["ret"] == KRB5KRB_AP_ERR_BAD_INTEGRITY, result
    result = driver.call("decrypt", usage=1, cipher=cipher[:-1].hex())
    assert result["ret"] == KRB5KRB_AP_ERR_BAD_INTEGRITY, result
    for length in (0, 1, 27):
        result = driver.call("decrypt", usage=1, cipher=cipher[:length].hex())
        assert result["ret"] == KRB5_BAD_MSIZE, (length, result)
    result = driver.call("decrypt", usage=1, cipher=cipher.hex(), enctype=35 - enctype)
    assert result["ret"] == KRB5_BAD_ENCTYPE, result
    too_long = driver.call("encrypt", usage=3, plain=bytes(KRB_MAX_PLAINTEXT + 1).hex())
    assert too_long["ret"] == KRB5_BAD_MSIZE, too_long


@pytest.mark.timeout(120)
def test_user_key_checksums_are_libk5cryptos(user, k5):
    enctype, key, driver = user
    cksumtype = USER_ENCTYPES[enctype][2]
    for usage, size, api in ((17, 0, "c"), (56, 1, "c"), (17, 300, "k"), (56, 1000, "c")):
        data = secrets.token_bytes(size)
        theirs_type, theirs = k5.checksum(enctype, key, usage, data)
        for requested in (0, cksumtype):
            made = driver.call("make_checksum", usage=usage, data=data.hex(),
                               cksumtype=requested, api=api)
            assert made["ret"] == 0, made["msg"]
            assert made["type"] == theirs_type == cksumtype
            assert bytes.fromhex(made["cksum"]) == theirs, (usage, size)
        verdict = driver.call("verify_checksum", usage=usage, data=data.hex(),
                              cksumtype=cksumtype, cksum=theirs.hex(), api=api)
        assert verdict["ret"] == 0 and verdict["valid"] == 1, verdict
        for position in (0, 11):
            bad = bytearray(theirs)
            bad[position] ^= 0x80
            verdict = driver.call("verify_checksum", usage=usage, data=data.hex(),
                                  cksumtype=cksumtype, cksum=bytes(bad).hex(), api=api)
            assert verdict["ret"] == 0 and verdict["valid"] == 0, (position, verdict)
        other_usage = 56 if usage == 17 else 17
        verdict = driver.call("verify_checksum", usage=other_usage, data=data.hex(),
                              cksumtype=cksumtype, cksum=theirs.hex())
        assert verdict["ret"] == 0 and verdict["valid"] == 0
    # The PAC server checksum goes through the _iov call: libk5crypto signs HEADER, DATA,
    # PADDING and SIGN_ONLY in order.
    iov = [[IOV_SIGN_ONLY, b"so".hex()], [IOV_DATA, b"the pac".hex()],
           [IOV_CHECKSUM, bytes(16).hex()], [IOV_TRAILER, b"not signed".hex()],
           [IOV_PADDING, b"pd".hex()]]
    made = driver.call("make_checksum_iov", usage=17, iov=iov)
    assert made["ret"] == 0, made["msg"]
    assert bytes.fromhex(made["cksum"]) == k5.checksum(enctype, key, 17, b"sothe pacpd")[1]
    iov[2] = [IOV_CHECKSUM, made["cksum"]]
    verdict = driver.call("verify_checksum_iov", usage=17, iov=iov)
    assert verdict["ret"] == 0 and verdict["valid"] == 1
    iov[1] = [IOV_DATA, b"the pad".hex()]
    verdict = driver.call("verify_checksum_iov", usage=17, iov=iov)
    assert verdict["ret"] == 0 and verdict["valid"] == 0
    wrong = driver.call("make_checksum", usage=17, data="00", cksumtype=31 - cksumtype)
    assert wrong["ret"] == KRB5_CRYPTO_INTERNAL and "checksum type" in wrong["msg"], wrong
    too_long = driver.call("make_checksum", usage=17, data=bytes(4097).hex())
    assert too_long["ret"] == KRB5_BAD_MSIZE, too_long


@pytest.mark.timeout(300)
def test_user_key_prf_is_never_opened_and_cf2_stays_in_the_engine(user, k5):
    """krb5kdc's FAST uses of a protected key: the combined key it gets back from
    krb5_c_fx_cf2_simple is a handle (not the key libk5crypto computes), and the encrypted
    challenge, the KDC's challenge and the strengthened reply key's AS-REP encryption and
    checksum under it are libk5crypto's."""
    enctype, key, driver = user
    if enctype == 17:
        pytest.skip("one user enctype is enough here: the circuits are checked per enctype pair elsewhere")
    for api in ("c", "k"):
        result = driver.call("prf", data="00", api=api)
        assert result["ret"] == KRB5_CRYPTO_INTERNAL and "never opened" in result["msg"], result
    result = driver.call("prfplus", data=b"pepper".hex(), length=32)
    assert result["ret"] == KRB5_CRYPTO_INTERNAL and "never opened" in result["msg"], result
    # The armor key of the other AES size.
    for armor_enctype, armor_size in ((17, 16),) if enctype == 18 else ((18, 32),):
        armor = secrets.token_bytes(armor_size)

        def combined_job(pepper1: str, pepper2: str, job: dict) -> dict:
            result = driver.call("cf2_job", clear_enctype=armor_enctype, clear=armor.hex(), pepper1=pepper1,
                                 pepper2=pepper2, job=job)
            assert result["ret"] == 0, result["msg"]
            assert result["enctype"] == armor_enctype
            _, combined = k5.cf2(armor_enctype, armor, pepper1, enctype, key, pepper2)
            assert len(bytes.fromhex(result["contents"])) == 136
            assert combined.hex() not in result["contents"], "the combined key reached krb5kdc"
            assert result["job"]["ret"] == 0, result["job"]["msg"]
            return result["job"]

        _, challenge_key = k5.cf2(armor_enctype, armor, "clientchallengearmor", enctype, key, "challengelongterm")
        timestamp = secrets.token_bytes(26)
        challenge = k5.encrypt(armor_enctype, challenge_key, 54, timestamp)
        job = combined_job("clientchallengearmor", "challengelongterm",
                           {"op": "decrypt", "usage": 54, "cipher": challenge.hex()})
        assert bytes.fromhex(job["plain"]) == timestamp
        _, kdc_key = k5.cf2(armor_enctype, armor, "kdcchallengearmor", enctype, key, "challengelongterm")
        job = combined_job("kdcchallengearmor", "challengelongterm", {"op": "encrypt", "usage": 55, "plain": "00" * 21})
        assert k5.decrypt(armor_enctype, kdc_key, 55, bytes.fromhex(job["cipher"])) == bytes(21)
        _, reply_key = k5.cf2(armor_enctype, armor, "strengthenkey", enctype, key, "replykey")
        as_rep = secrets.token_bytes(265)
        job = combined_job("strengthenkey", "replykey", {"op": "encrypt", "usage": 3, "plain": as_rep.hex()})
        assert k5.decrypt(armor_enctype, reply_key, 3, bytes.fromhex(job["cipher"])) == as_rep
        request = secrets.token_bytes(271)
        job = combined_job("strengthenkey", "replykey", {"op": "make_checksum", "usage": 56, "data": request.hex()})
        assert bytes.fromhex(job["cksum"]) == k5.checksum(armor_enctype, reply_key, 56, request)[1]
    # Uses krb5kdc never makes of a combined key are refused: the client's own challenge
    # (it would forge one), another usage, a pepper of the armor's side.
    refused = driver.call("cf2_job", clear_enctype=18, clear=bytes(32).hex(), pepper1="clientchallengearmor",
                          pepper2="challengelongterm", job={"op": "encrypt", "usage": 54, "plain": "00"})
    assert refused["ret"] == 0 and refused["job"]["ret"] == KRB5_CRYPTO_INTERNAL, refused
    refused = driver.call("cf2_job", clear_enctype=18, clear=bytes(32).hex(), pepper1="strengthenkey",
                          pepper2="replykey", job={"op": "encrypt", "usage": 2, "plain": "00"})
    assert refused["job"]["ret"] == KRB5_CRYPTO_INTERNAL and "usage 2 is not served" in refused["job"]["msg"], refused
    refused = driver.call("cf2_job", clear_enctype=18, clear=bytes(32).hex(), pepper1="kdcchallengearmor",
                          pepper2="challengelongterm", handle_first=True,
                          job={"op": "encrypt", "usage": 55, "plain": "00"})
    assert refused["job"]["ret"] == KRB5_CRYPTO_INTERNAL and "pepper" in refused["job"]["msg"], refused


@pytest.mark.timeout(60)
def test_user_key_refuses_other_usages_and_entry_points(user):
    enctype, key, driver = user
    name = engine_key_name(f"user{enctype}@MPC.TEST")
    alg = USER_ENCTYPES[enctype][0]
    for usage in (0, 4, 7, 54, 64, 514):
        assert usage not in SERVED_USAGES
        result = driver.call("encrypt", usage=usage, plain="00")
        assert result["ret"] == KRB5_CRYPTO_INTERNAL, result
        assert (f"krb5_c_encrypt: encrypt with the protected key {name} kvno {USER_KVNO} "
                f"({alg}) refused: usage {usage} is not served") in result["msg"], result["msg"]
        result = driver.call("make_checksum", usage=usage, data="00")
        assert result["ret"] == KRB5_CRYPTO_INTERNAL and f"usage {usage}" in result["msg"]
        result = driver.call("decrypt", usage=usage, cipher=bytes(40).hex())
        assert result["ret"] == KRB5_CRYPTO_INTERNAL and f"usage {usage}" in result["msg"]
    # The first refusal by each function in the process leaves a line in the router's log
    # naming the call, usage and key (krb5_c_make_checksum's first may have been an earlier
    # test's refused checksum type: it names the key too).
    lines = [line for line in driver.log().splitlines() if line.startswith("mpc_crypto_router[")]
    for fn in ("krb5_c_encrypt", "krb5_c_decrypt", "krb5_c_make_checksum"):
        assert any(f"]: {fn}: " in line and name in line for line in lines), (fn, lines)
    for fn in ("krb5_c_encrypt", "krb5_c_decrypt"):
        assert any(f"]: {fn}: " in line and "usage" in line and name in line for line in lines), (fn, lines)


@pytest.mark.timeout(180)
def test_user_key_in_forked_children(user_keys, k5):
    """krb5kdc -w: each worker opens its own engine connection for users' keys too."""
    key, driver = user_keys[18]
    plain = secrets.token_bytes(52)
    cipher = k5.encrypt(18, key, 1, plain)
    ops = [{"op": "decrypt", "usage": 1, "cipher": cipher.hex()},
           {"op": "encrypt", "usage": 3, "plain": plain.hex()},
           {"op": "make_checksum", "usage": 56, "data": "00"}]
    report = driver.call("fork", children=2, ops=ops)
    assert len(report["children"]) == 2
    for child in report["children"]:
        assert "error" not in child, child
        assert child["own_sockets"] > 0, "a child used only its parent's sockets"
        opened, sealed, checksum = child["results"]
        assert opened["ret"] == 0 and bytes.fromhex(opened["plain"]) == plain, opened
        assert sealed["ret"] == 0, sealed["msg"]
        assert k5.decrypt(18, key, 3, bytes.fromhex(sealed["cipher"])) == plain
        assert bytes.fromhex(checksum["cksum"]) == k5.checksum(18, key, 56, b"\x00")[1]
    opened = driver.call("decrypt", usage=1, cipher=cipher.hex())
    assert opened["ret"] == 0 and bytes.fromhex(opened["plain"]) == plain
