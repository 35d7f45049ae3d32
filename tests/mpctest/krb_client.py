"""A Kerberos client for the integration tests: the enctype jobs of libmpcclient.so (Engine,
through client_handle.py), MIT libk5crypto through ctypes as the outside truth (K5Crypto and the
k5 fixture), the enctypes, usages and lengths the tests sweep, the FAST (KRB-FX-CF2) checks,
and helpers that restart or read server 1 of a cluster. test_krb_jobs.py and the two-server,
degraded, divergent-request and deviating-server tests use it.
"""

from __future__ import annotations

import ctypes
import json
import os
import secrets
import time

import pytest

from mpctest.client_handle import ClientCallError, ClientHandle
from mpctest.mpc_cluster import Cluster

MPC_OK = 0
MPC_EINVAL = -1
MPC_EUNREACHABLE = -3
MPC_EREFUSED = -4
MPC_EBADTAG = -7
MPC_AES128 = 1
MPC_AES256 = 2
MPC_AES256_GCM = 3
MPC_AES128_CTS = 4
MPC_AES256_CTS = 5
MPC_AES128_SHA2 = 6
MPC_AES256_SHA2 = 7

CONFOUNDER_BYTES = 16
MAX_DATA_BYTES = 4096
USAGES = (1, 2, 3, 17, 56)
# What a KDC does under each usage, and all the engine serves: it never encrypts a preauth
# timestamp (1) nor decrypts an AS-REP (3); 17 and 56 are checksums only.
ENCRYPT_USAGES = (2, 3)
DECRYPT_USAGES = (1, 2)
CHECKSUM_USAGES = (17, 56)
# MAC (encryption and checksum) bytes per libmpcclient algorithm (calls that name another
# algorithm are refused before any output is written).
MAC_BYTES = {MPC_AES128_CTS: 12, MPC_AES256_CTS: 12, MPC_AES128_SHA2: 16, MPC_AES256_SHA2: 24}

# enctype name -> (libmpcclient algorithm, mpcctl --alg, krb5 enctype, checksum type, key bytes)
ENCTYPES = {
    "aes128": (MPC_AES128_CTS, "aes128-cts-hmac-sha1-96", 17, 15, 16),
    "aes256": (MPC_AES256_CTS, "aes256-cts-hmac-sha1-96", 18, 16, 32),
    "aes128-sha2": (MPC_AES128_SHA2, "aes128-cts-hmac-sha256-128", 19, 19, 16),
    "aes256-sha2": (MPC_AES256_SHA2, "aes256-cts-hmac-sha384-192", 20, 20, 32),
}
RFC8009 = ("aes128-sha2", "aes256-sha2")


def mac_bytes(enctype: str) -> int:
    return MAC_BYTES[ENCTYPES[enctype][0]]

FULL_SWEEP = os.environ.get("MPC_KRB_FULL_SWEEP") == "1"


def sweep_lengths(enctype: str, engine_encrypts: bool) -> list[int]:
    """Plaintext lengths one direction checks for one enctype. By default the block edges of
    CBC with ciphertext stealing (one block, partial and whole second blocks, several
    blocks), different per direction, and two random lengths up to 1000; with
    MPC_KRB_FULL_SWEEP=1 every length 0..1000 in both directions (run for all four enctypes
    through three servers and, test_two_server_krb_gcm.py, through two)."""
    if FULL_SWEEP:
        return list(range(0, 1001))
    edges = (0, 15, 16, 17, 48) if engine_encrypts else (0, 2, 16, 31, 33)
    return list(edges) + sorted(secrets.SystemRandom().sample(range(65, 1001), 2))


# ------------------------------------------------------------------- libk5crypto (ctypes)

class Krb5Data(ctypes.Structure):
    _fields_ = [("magic", ctypes.c_int32), ("length", ctypes.c_uint), ("data", ctypes.c_void_p)]


class Krb5Keyblock(ctypes.Structure):
    _fields_ = [("magic", ctypes.c_int32), ("enctype", ctypes.c_int32), ("length", ctypes.c_uint),
                ("contents", ctypes.c_void_p)]


class Krb5EncData(ctypes.Structure):
    _fields_ = [("magic", ctypes.c_int32), ("enctype", ctypes.c_int32), ("kvno", ctypes.c_uint32),
                ("ciphertext", Krb5Data)]


class Krb5Checksum(ctypes.Structure):
    _fields_ = [("magic", ctypes.c_int32), ("checksum_type", ctypes.c_int32), ("length", ctypes.c_uint),
                ("contents", ctypes.c_void_p)]


class MpcKrbCombine(ctypes.Structure):
    """mpc_krb_combine of mpc_client.h."""
    _fields_ = [("combined_algorithm", ctypes.c_int), ("pepper", ctypes.c_char_p), ("mask", ctypes.c_char_p),
                ("mask_length", ctypes.c_size_t)]


class K5Crypto:
    """The krb5_c_* calls of MIT libk5crypto on a known protocol key."""

    def __init__(self):
        self.krb5 = ctypes.CDLL("libkrb5.so.3")
        self.lib = ctypes.CDLL("libk5crypto.so.3")
        self.context = ctypes.c_void_p()
        assert self.krb5.krb5_init_context(ctypes.byref(self.context)) == 0
        self._buffers = []

    def close(self):
        self.krb5.krb5_free_context(self.context)

    @staticmethod
    def _data(buffer, length: int) -> Krb5Data:
        return Krb5Data(0, length, ctypes.cast(buffer, ctypes.c_void_p) if buffer is not None else None)

    def _keyblock(self, enctype: int, key: bytes) -> tuple[Krb5Keyblock, object]:
        contents = ctypes.create_string_buffer(key, len(key))
        return Krb5Keyblock(0, enctype, len(key), ctypes.cast(contents, ctypes.c_void_p)), contents

    def encrypt(self, enctype: int, key: bytes, usage: int, plaintext: bytes) -> bytes:
        keyblock, _keep = self._keyblock(enctype, key)
        length = ctypes.c_size_t()
        assert self.lib.krb5_c_encrypt_length(self.context, enctype, ctypes.c_size_t(len(plaintext)),
                                              ctypes.byref(length)) == 0
        source = ctypes.create_string_buffer(plaintext, max(1, len(plaintext)))
        target = ctypes.create_string_buffer(length.value)
        output = Krb5EncData(0, 0, 0, self._data(target, length.value))
        rc = self.lib.krb5_c_encrypt(self.context, ctypes.byref(keyblock), ctypes.c_int32(usage), None,
                                     ctypes.byref(self._data(source, len(plaintext))), ctypes.byref(output))
        assert rc == 0, f"krb5_c_encrypt: {rc}"
        return target.raw[:output.ciphertext.length]

    def decrypt(self, enctype: int, key: bytes, usage: int, ciphertext: bytes) -> bytes | None:
        """The plaintext, or None when libk5crypto refuses the ciphertext."""
        keyblock, _keep = self._keyblock(enctype, key)
        source = ctypes.create_string_buffer(ciphertext, len(ciphertext))
        target = ctypes.create_string_buffer(max(1, len(ciphertext)))
        enc = Krb5EncData(0, enctype, 0, self._data(source, len(ciphertext)))
        output = self._data(target, len(ciphertext))
        rc = self.lib.krb5_c_decrypt(self.context, ctypes.byref(keyblock), ctypes.c_int32(usage), None,
                                     ctypes.byref(enc), ctypes.byref(output))
        return target.raw[:output.length] if rc == 0 else None

    def make_checksum(self, cksumtype: int, enctype: int, key: bytes, usage: int, data: bytes) -> bytes:
        keyblock, _keep = self._keyblock(enctype, key)
        source = ctypes.create_string_buffer(data, max(1, len(data)))
        checksum = Krb5Checksum()
        rc = self.lib.krb5_c_make_checksum(self.context, ctypes.c_int32(cksumtype), ctypes.byref(keyblock),
                                           ctypes.c_int32(usage), ctypes.byref(self._data(source, len(data))),
                                           ctypes.byref(checksum))
        assert rc == 0, f"krb5_c_make_checksum: {rc}"
        value = ctypes.string_at(checksum.contents, checksum.length)
        self.krb5.krb5_free_checksum_contents(self.context, ctypes.byref(checksum))
        return value

    def verify_checksum(self, cksumtype: int, enctype: int, key: bytes, usage: int, data: bytes,
                        value: bytes) -> bool:
        keyblock, _keep = self._keyblock(enctype, key)
        source = ctypes.create_string_buffer(data, max(1, len(data)))
        contents = ctypes.create_string_buffer(value, len(value))
        checksum = Krb5Checksum(0, cksumtype, len(value), ctypes.cast(contents, ctypes.c_void_p))
        valid = ctypes.c_uint(0)
        rc = self.lib.krb5_c_verify_checksum(self.context, ctypes.byref(keyblock), ctypes.c_int32(usage),
                                             ctypes.byref(self._data(source, len(data))), ctypes.byref(checksum),
                                             ctypes.byref(valid))
        return rc == 0 and valid.value != 0

    def prfplus(self, enctype: int, key: bytes, data: bytes, length: int) -> bytes:
        keyblock, _keep = self._keyblock(enctype, key)
        source = ctypes.create_string_buffer(data, max(1, len(data)))
        target = ctypes.create_string_buffer(length)
        rc = self.lib.krb5_c_prfplus(self.context, ctypes.byref(keyblock), ctypes.byref(self._data(source, len(data))),
                                     ctypes.byref(self._data(target, length)))
        assert rc == 0, f"krb5_c_prfplus: {rc}"
        return target.raw

    def cf2(self, enctype1: int, key1: bytes, pepper1: str, enctype2: int, key2: bytes, pepper2: str) -> bytes:
        """krb5_c_fx_cf2_simple: the combined key, of key1's enctype."""
        keyblock1, _keep1 = self._keyblock(enctype1, key1)
        keyblock2, _keep2 = self._keyblock(enctype2, key2)
        out = ctypes.POINTER(Krb5Keyblock)()
        rc = self.lib.krb5_c_fx_cf2_simple(self.context, ctypes.byref(keyblock1), pepper1.encode(),
                                           ctypes.byref(keyblock2), pepper2.encode(), ctypes.byref(out))
        assert rc == 0, f"krb5_c_fx_cf2_simple: {rc}"
        combined = ctypes.string_at(out.contents.contents, out.contents.length)
        self.krb5.krb5_free_keyblock(self.context, out)
        return combined

    def string_to_key(self, enctype: int, password: bytes, salt: bytes, iterations: int) -> bytes:
        """PBKDF2 string-to-key with an explicit iteration count. Counts below 4096 are refused
        unless k5_allow_weak_pbkdf2iter is set, as MIT's own t_str2key test does for the RFC 3962
        vectors; it is set for this call only."""
        weak = ctypes.c_uint.in_dll(self.lib, "k5_allow_weak_pbkdf2iter")
        previous = weak.value
        weak.value = 1
        try:
            return self._string_to_key(enctype, password, salt, iterations)
        finally:
            weak.value = previous

    def _string_to_key(self, enctype: int, password: bytes, salt: bytes, iterations: int) -> bytes:
        keyblock = Krb5Keyblock()
        pw = ctypes.create_string_buffer(password, max(1, len(password)))
        sb = ctypes.create_string_buffer(salt, max(1, len(salt)))
        params = ctypes.create_string_buffer(iterations.to_bytes(4, "big"), 4)
        rc = self.lib.krb5_c_string_to_key_with_params(self.context, enctype,
                                                       ctypes.byref(self._data(pw, len(password))),
                                                       ctypes.byref(self._data(sb, len(salt))),
                                                       ctypes.byref(self._data(params, 4)), ctypes.byref(keyblock))
        assert rc == 0, f"krb5_c_string_to_key_with_params: {rc}"
        key = ctypes.string_at(keyblock.contents, keyblock.length)
        self.krb5.krb5_free_keyblock_contents(self.context, ctypes.byref(keyblock))
        return key


# ----------------------------------------------------------------- libmpcclient (ctypes)

class KrbError(ClientCallError):
    pass


class Engine(ClientHandle):
    """One libmpcclient handle for the Kerberos calls (and the key administration they need)."""

    _p, _s, _u32, _i, _z = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_size_t
    _combine = ctypes.POINTER(MpcKrbCombine)
    SIGNATURES = {
        "mpc_client_import_key": [_p, _s, _u32, _i, _s, _z],
        "mpc_client_delete_key": [_p, _s, _u32, _i],
        "mpc_client_keystream": [_p, _s, _u32, _i, _s, _u32, _s],
        "mpc_client_ecb_encrypt": [_p, _s, _u32, _i, _s, _z, _s],
        "mpc_client_gcm_prefetch": [_p, _s, _u32, _u32, _u32, _s, _s],
        "mpc_client_krb_encrypt": [_p, _s, _u32, _i, _u32, _s, _s, _z, _s],
        "mpc_client_krb_decrypt": [_p, _s, _u32, _i, _u32, _s, _z, _s],
        "mpc_client_krb_checksum": [_p, _s, _u32, _i, _u32, _s, _z, _s],
        "mpc_client_krb_cf2_encrypt": [_p, _s, _u32, _i, _combine, _u32, _s, _s, _z, _s],
        "mpc_client_krb_cf2_decrypt": [_p, _s, _u32, _i, _combine, _u32, _s, _z, _s],
        "mpc_client_krb_cf2_checksum": [_p, _s, _u32, _i, _combine, _u32, _s, _z, _s],
    }
    Error = KrbError

    def import_key(self, name: str, kvno: int, algorithm: int, key: bytes) -> None:
        self._check("mpc_client_import_key",
                    self.lib.mpc_client_import_key(self.handle, name.encode(), kvno, algorithm, key, len(key)))

    def delete_key(self, name: str, kvno: int, algorithm: int) -> None:
        self._check("mpc_client_delete_key", self.lib.mpc_client_delete_key(self.handle, name.encode(), kvno, algorithm))

    def encrypt(self, key, usage: int, plaintext: bytes, confounder: bytes | None = None) -> bytes:
        name, kvno, algorithm = key
        confounder = secrets.token_bytes(CONFOUNDER_BYTES) if confounder is None else confounder
        out = ctypes.create_string_buffer(CONFOUNDER_BYTES + len(plaintext) + MAC_BYTES.get(algorithm, 12))
        rc = self.lib.mpc_client_krb_encrypt(self.handle, name.encode(), kvno, algorithm, usage, confounder,
                                             plaintext or None, len(plaintext), out)
        self._check("mpc_client_krb_encrypt", rc)
        return out.raw

    def decrypt(self, key, usage: int, ciphertext: bytes) -> bytes:
        name, kvno, algorithm = key
        length = max(0, len(ciphertext) - CONFOUNDER_BYTES - MAC_BYTES.get(algorithm, 12))
        out = ctypes.create_string_buffer(b"\xa5" * max(1, length), max(1, length))
        rc = self.lib.mpc_client_krb_decrypt(self.handle, name.encode(), kvno, algorithm, usage, ciphertext,
                                             len(ciphertext), out if length else None)
        if rc == MPC_EBADTAG and length:
            assert out.raw[:length] == b"\xa5" * length, "plaintext written on MPC_EBADTAG"
        self._check("mpc_client_krb_decrypt", rc)
        return out.raw[:length]

    def checksum(self, key, usage: int, data: bytes) -> bytes:
        name, kvno, algorithm = key
        out = ctypes.create_string_buffer(MAC_BYTES.get(algorithm, 12))
        rc = self.lib.mpc_client_krb_checksum(self.handle, name.encode(), kvno, algorithm, usage, data or None,
                                              len(data), out)
        self._check("mpc_client_krb_checksum", rc)
        return out.raw

    # KRB-FX-CF2 jobs: combine = (combined algorithm, pepper, mask), the mask being
    # PRF+(K1, pepper1) of the combined key's length.
    @staticmethod
    def _combine(combine) -> MpcKrbCombine:
        algorithm, pepper, mask = combine
        return MpcKrbCombine(algorithm, pepper.encode(), mask, len(mask))

    def cf2_encrypt(self, key, combine, usage: int, plaintext: bytes) -> bytes:
        name, kvno, algorithm = key
        out = ctypes.create_string_buffer(CONFOUNDER_BYTES + len(plaintext) + MAC_BYTES[combine[0]])
        rc = self.lib.mpc_client_krb_cf2_encrypt(self.handle, name.encode(), kvno, algorithm,
                                                 ctypes.byref(self._combine(combine)), usage,
                                                 secrets.token_bytes(CONFOUNDER_BYTES), plaintext or None,
                                                 len(plaintext), out)
        self._check("mpc_client_krb_cf2_encrypt", rc)
        return out.raw

    def cf2_decrypt(self, key, combine, usage: int, ciphertext: bytes) -> bytes:
        name, kvno, algorithm = key
        length = max(0, len(ciphertext) - CONFOUNDER_BYTES - MAC_BYTES[combine[0]])
        out = ctypes.create_string_buffer(max(1, length))
        rc = self.lib.mpc_client_krb_cf2_decrypt(self.handle, name.encode(), kvno, algorithm,
                                                 ctypes.byref(self._combine(combine)), usage, ciphertext,
                                                 len(ciphertext), out if length else None)
        self._check("mpc_client_krb_cf2_decrypt", rc)
        return out.raw[:length]

    def cf2_checksum(self, key, combine, usage: int, data: bytes) -> bytes:
        name, kvno, algorithm = key
        out = ctypes.create_string_buffer(MAC_BYTES[combine[0]])
        rc = self.lib.mpc_client_krb_cf2_checksum(self.handle, name.encode(), kvno, algorithm,
                                                  ctypes.byref(self._combine(combine)), usage, data or None,
                                                  len(data), out)
        self._check("mpc_client_krb_cf2_checksum", rc)
        return out.raw


def wait_until_krb_serving(engine: Engine, key, deadline_s: float = 20) -> None:
    deadline = time.monotonic() + deadline_s
    last = None
    while time.monotonic() < deadline:
        try:
            engine.checksum(key, 17, b"ping")
            return
        except KrbError as error:
            last = error
            time.sleep(0.2)
    raise AssertionError(f"cluster does not serve Kerberos jobs after {deadline_s} s: {last}")


@pytest.fixture(scope="module")
def k5():
    library = K5Crypto()
    try:
        yield library
    finally:
        library.close()


def check_cf2_jobs(engine, k5, key, armor_enctype: str) -> None:
    """FAST's uses of a protected key combined with a key the KDC holds, against libk5crypto's
    krb5_c_fx_cf2_simple: the client's encrypted challenge (usage 54) decrypts, a forged one is
    refused, the KDC's challenge (55) and a strengthened-reply-key AS-REP (3) decrypt under
    libk5crypto's combined key, and the PA-REQ-ENC-PA-REP checksum (56) is its own."""
    algorithm, _, armor_krb5, armor_cksumtype, armor_size = ENCTYPES[armor_enctype]
    armor = secrets.token_bytes(armor_size)
    for pepper1, pepper2, usages in (("clientchallengearmor", "challengelongterm", (54,)),
                                     ("kdcchallengearmor", "challengelongterm", (55,)),
                                     ("strengthenkey", "replykey", (3, 56))):
        combined = k5.cf2(armor_krb5, armor, pepper1, key["enctype"], key["key"], pepper2)
        combine = (algorithm, pepper2, k5.prfplus(armor_krb5, armor, pepper1.encode(), armor_size))
        for usage in usages:
            if usage == 54:
                timestamp = secrets.token_bytes(26)
                challenge = k5.encrypt(armor_krb5, combined, 54, timestamp)
                assert engine.cf2_decrypt(key["id"], combine, 54, challenge) == timestamp
                forged = bytearray(challenge)
                forged[-1] ^= 1
                with pytest.raises(KrbError) as failure:
                    engine.cf2_decrypt(key["id"], combine, 54, bytes(forged))
                assert failure.value.code == MPC_EBADTAG
                # The client's challenge is the one thing a KDC must not be able to make.
                with pytest.raises(KrbError) as failure:
                    engine.cf2_encrypt(key["id"], combine, 54, timestamp)
                assert failure.value.code == MPC_EINVAL
            elif usage == 56:
                request = secrets.token_bytes(271)
                assert engine.cf2_checksum(key["id"], combine, 56, request) == k5.make_checksum(
                    armor_cksumtype, armor_krb5, combined, 56, request)
            else:
                plaintext = secrets.token_bytes(40 if usage == 55 else 265)
                ciphertext = engine.cf2_encrypt(key["id"], combine, usage, plaintext)
                assert k5.decrypt(armor_krb5, combined, usage, ciphertext) == plaintext, usage


# The armor key's enctype for each protected key's: every enctype is both once, each time
# with another key size or hash than its partner.
CF2_PARTNER = {"aes128": "aes256", "aes256": "aes128-sha2", "aes128-sha2": "aes256-sha2", "aes256-sha2": "aes128"}


def leader_evaluations(cluster: Cluster) -> set[tuple[str, int]]:
    """(evaluation, AND depth) of the Kerberos batches in server 1's debug log."""
    seen = set()
    for line in (cluster.server_dir(1) / "server.log").read_text(errors="replace").splitlines():
        if '"batch done"' in line and '"evaluation"' in line:
            record = json.loads(line)
            if 11 <= int(record["circuit"]) <= 24:
                seen.add((record["evaluation"], int(record["and_depth"])))
    return seen


def restart_leader(cluster: Cluster, settings: dict[str, str]) -> None:
    """Server 1 restarted with log_level and krb_evaluation as `settings` gives them, each one
    it leaves out at the server's default."""
    for name in ("log_level", "krb_evaluation"):
        if name in settings:
            cluster.set_server_setting(1, name, settings[name])
        else:
            cluster.unset_server_setting(1, name)
    cluster.kill_server(1)
    cluster.restart_server(1)
