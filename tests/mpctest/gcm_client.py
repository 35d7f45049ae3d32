"""A GCM client for the integration tests: the AES-256-GCM ticket jobs of libmpcclient.so
(Engine, through client_handle.py), Python's `cryptography` AES-GCM and CTR as the outside
truth (seal, ctr_keystream), the status counters and components of a cluster, and the ticket
forgeries a server must refuse. test_gcm_jobs.py and the two-server, degraded, data-link,
divergent-request and deviating-server tests use it.
"""

from __future__ import annotations

import ctypes
import re
import time

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from mpctest import local_masks
from mpctest.client_handle import ClientCallError, ClientHandle
from mpctest.mpc_cluster import Cluster

MPC_OK = 0
MPC_EINVAL = -1
MPC_EUNREACHABLE = -3
MPC_EREFUSED = -4
MPC_EBADTAG = -7
MPC_ENONCE = -8
MPC_EABORT = -10
MPC_AES256 = 2
MPC_AES256_GCM = 3

KEY = ("gcm/krbtgt", 7, "aes256-gcm")
NONCE_BYTES = 12
TAG_BYTES = 16
MAX_HASH_BLOCKS = 1024
DEFAULT_MAX_BATCH_BLOCKS = 8192


class GcmError(ClientCallError):
    pass


class Engine(ClientHandle):
    """One libmpcclient handle for the GCM calls."""

    _p, _s, _u32, _i, _z = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_size_t
    SIGNATURES = {
        "mpc_client_keystream": [_p, _s, _u32, _i, _s, _u32, _s],
        "mpc_client_gcm_prefetch": [_p, _s, _u32, _u32, _u32, _s, _s],
        "mpc_client_gcm_prefetch_local": [_p, _s, _u32, _u32, _u32, _s, _s],
        "mpc_client_gcm_tag": [_p, _s, _u32, _s, _s, _z, _s, _z, _s],
        "mpc_client_gcm_open": [_p, _s, _u32, _s, _s, _z, _s, _z, _s, _s],
        "mpc_client_gcm_tag_chained": [_p, _s, _u32, _s, _s, _z, _s, _s, _z, _s, _s],
        "mpc_client_gcm_tag_checked": [_p, _s, _u32, _s, _s, _z, _s, _z, _s, _s, _z, _s, _s],
    }
    Error = GcmError

    def prefetch(self, count: int, blocks_per_nonce: int = 0, key=KEY, local: bool = False) -> list[tuple[bytes, bytes]]:
        """[(nonce, keystream of blocks_per_nonce blocks)] in the servers' order; local: with
        local masks (local_masks.py)."""
        name, kvno, _ = key
        nonces = ctypes.create_string_buffer(max(1, count * NONCE_BYTES))
        keystream = ctypes.create_string_buffer(count * blocks_per_nonce * 16) if blocks_per_nonce else None
        call = "mpc_client_gcm_prefetch_local" if local else "mpc_client_gcm_prefetch"
        rc = getattr(self.lib, call)(self.handle, name.encode(), kvno, count, blocks_per_nonce, nonces, keystream)
        self._check(call, rc)
        out = []
        per = blocks_per_nonce * 16
        for i in range(count):
            stream = keystream.raw[i * per:(i + 1) * per] if keystream is not None else b""
            out.append((nonces.raw[i * NONCE_BYTES:(i + 1) * NONCE_BYTES], stream))
        return out

    def tag(self, nonce: bytes, aad: bytes, ciphertext: bytes, key=KEY) -> bytes:
        name, kvno, _ = key
        tag = ctypes.create_string_buffer(TAG_BYTES)
        rc = self.lib.mpc_client_gcm_tag(self.handle, name.encode(), kvno, nonce, aad or None, len(aad),
                                         ciphertext or None, len(ciphertext), tag)
        self._check("mpc_client_gcm_tag", rc)
        return tag.raw

    def tag_chained(self, nonce: bytes, aad: bytes, chained_nonce: bytes, prefix: bytes,
                    key=KEY) -> tuple[bytes, bytes]:
        """(tag of aad under nonce, unchecked tag of prefix || nonce || tag under chained_nonce)."""
        name, kvno, _ = key
        tag, chained = ctypes.create_string_buffer(TAG_BYTES), ctypes.create_string_buffer(TAG_BYTES)
        rc = self.lib.mpc_client_gcm_tag_chained(self.handle, name.encode(), kvno, nonce, aad or None, len(aad),
                                                 chained_nonce, prefix or None, len(prefix), tag, chained)
        self._check("mpc_client_gcm_tag_chained", rc)
        return tag.raw, chained.raw

    def tag_checked(self, nonce: bytes, aad: bytes, ciphertext: bytes, check: tuple[bytes, bytes, bytes],
                    key=KEY) -> bytes:
        """The tag of (aad, ciphertext) under nonce, once check = (nonce, aad, tag) verified."""
        name, kvno, _ = key
        check_nonce, check_aad, check_tag = check
        tag = ctypes.create_string_buffer(TAG_BYTES)
        rc = self.lib.mpc_client_gcm_tag_checked(self.handle, name.encode(), kvno, nonce, aad or None, len(aad),
                                                 ciphertext or None, len(ciphertext), check_nonce,
                                                 check_aad or None, len(check_aad), check_tag, tag)
        self._check("mpc_client_gcm_tag_checked", rc)
        return tag.raw

    def open(self, nonce: bytes, aad: bytes, ciphertext: bytes, tag: bytes, key=KEY) -> bytes:
        name, kvno, _ = key
        plaintext = ctypes.create_string_buffer(max(1, len(ciphertext)))
        if ciphertext:
            ctypes.memset(plaintext, 0xa5, len(ciphertext))
        rc = self.lib.mpc_client_gcm_open(self.handle, name.encode(), kvno, nonce, aad or None, len(aad),
                                          ciphertext or None, len(ciphertext), tag,
                                          plaintext if ciphertext else None)
        if rc == MPC_EBADTAG and ciphertext:
            assert plaintext.raw[:len(ciphertext)] == bytes(len(ciphertext)), "plaintext not zeroed on MPC_EBADTAG"
        self._check("mpc_client_gcm_open", rc)
        return plaintext.raw[:len(ciphertext)]


def ctr_keystream(key: bytes, nonce: bytes, first_counter: int, blocks: int) -> bytes:
    counter = nonce + first_counter.to_bytes(4, "big")
    encryptor = Cipher(algorithms.AES(key), modes.CTR(counter)).encryptor()
    return encryptor.update(bytes(16 * blocks)) + encryptor.finalize()


def xor(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b))


def seal(engine: Engine, nonce: bytes, keystream: bytes, plaintext: bytes, aad: bytes, key=KEY) -> bytes:
    """What the KDC does with a prefetched nonce: encrypt with its keystream, then tag."""
    ciphertext = xor(plaintext, keystream[:len(plaintext)])
    return ciphertext + engine.tag(nonce, aad, ciphertext, key=key)


def wait_until_gcm_serving(engine: Engine, deadline_s: float = 20) -> None:
    """Retries a small prefetch with a short timeout, as the KDC does: a request that was
    in flight while a server restarted is answered by nobody and only times out."""
    deadline = time.monotonic() + deadline_s
    last = None
    usual = engine.timeout_ms
    engine.set_timeout(3000)
    try:
        while time.monotonic() < deadline:
            try:
                engine.prefetch(1)
                return
            except GcmError as error:
                last = error
                time.sleep(0.2)
    finally:
        engine.set_timeout(usual)
    raise AssertionError(f"cluster does not serve GCM jobs after {deadline_s} s: {last}")


def server_counters(cluster: Cluster) -> dict[int, tuple[int, int]]:
    """(batches, jobs) per server, from `mpcctl cluster status`."""
    out = {}
    for line in cluster.mpcctl("cluster", "status", "--cluster", str(cluster.admin_config)).stdout.splitlines():
        match = re.match(r"server (\d): batches (\d+), jobs (\d+)", line)
        if match:
            out[int(match.group(1))] = (int(match.group(2)), int(match.group(3)))
    assert sorted(out) == [1, 2, 3], out
    return out


def import_gcm_key(cluster: Cluster, key=KEY) -> bytes:
    key_hex, _ = cluster.import_key(*key)
    return bytes.fromhex(key_hex)


# A PAC's KDC checksum covers its server checksum: the chained tag's AAD is this prefix (the
# checksum AAD's type byte and usage 17) || N || T.
PAC_CHAIN_PREFIX = bytes([0x02, 0, 0, 0, 17])


def ticket_forgeries(ciphertext: bytes, tag: bytes, other_length: bytes) -> list[tuple[bytes, bytes, bytes]]:
    """(aad, text, tag) of a 32-byte ticket sealed with AAD b"ticket", each changed once: the
    tag, the text, the AAD, and the text's length (other_length)."""
    return [(b"ticket", ciphertext, bytes([tag[0] ^ 1]) + tag[1:]),
            (b"ticket", ciphertext[:31] + bytes([ciphertext[31] ^ 0x80]), tag),
            (b"tickeT", ciphertext, tag),
            (b"ticket", other_length, tag)]


def assert_forgeries_refused(engine: Engine, nonce: bytes, forgeries: list[tuple[bytes, bytes, bytes]]) -> None:
    for aad, text, forged_tag in forgeries:
        with pytest.raises(GcmError) as failure:
            engine.open(nonce, aad, text, forged_tag)
        assert failure.value.code == MPC_EBADTAG, (aad, failure.value)


def cluster_components(cluster: Cluster, key=KEY) -> list[bytes]:
    return local_masks.components([cluster.server_dir(party) for party in (1, 2, 3)], key)


def gcm_tag_of(key: bytes, nonce: bytes, aad: bytes, text: bytes) -> bytes:
    """AES-GCM's tag over (aad, text) as ciphertext, from Python's AESGCM."""
    plaintext = xor(text, ctr_keystream(key, nonce, 2, (len(text) + 15) // 16))
    return AESGCM(key).encrypt(nonce, plaintext, aad)[-16:]
