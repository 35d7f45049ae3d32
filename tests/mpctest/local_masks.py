"""The reference for GCM nonces with local masks (docs/ticket-format.md, "Local masks"), written
from the documented format with Python's `cryptography` and hashlib and nothing of the
engine's code; the components come from the servers' stores (share_store_reader.py).

    M(N || b) = AES-256_{m_0}(N || b) ^ AES-256_{m_1}(N || b) ^ AES-256_{m_2}(N || b)
    m_j = BLAKE2b-256(key c_j; "mpc-kdc gcm local mask key v1" || u32 BE kvno || key name)

c_j are the additive components of K (the first 32 bytes of the key's material): in a
replicated share x || a (halves of equal length), server j's a half begins with c_j; in a
two-server cluster, each server's XOR share begins with its component.
"""

from __future__ import annotations

import hashlib
import struct
from pathlib import Path

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from mpctest.share_store_reader import stored_shares

LABEL = b"mpc-kdc gcm local mask key v1"
ALGORITHM_AES256_GCM = 3
LOCAL_MASK_BIT = 0x80


def is_local(nonce: bytes) -> bool:
    return bool(nonce[8] & LOCAL_MASK_BIT)


def _xor(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b))


def components(server_dirs: list[Path], key_id: tuple[str, int, str]) -> list[bytes]:
    """The key's additive components: one per server (a two-server cluster's XOR shares, or the
    a halves of a three-server cluster's replicated shares)."""
    name, kvno, _ = key_id
    out = []
    for directory in server_dirs:
        share = stored_shares(directory)[(name, kvno, ALGORITHM_AES256_GCM)]
        first = share[len(share) // 2:] if len(server_dirs) == 3 else share
        out.append(first[:32])
    return out


def masks(key_id: tuple[str, int, str], parts: list[bytes], nonce: bytes, first: int, count: int) -> bytes:
    """M(N || first), ..., M(N || first + count - 1)."""
    name, kvno, _ = key_id
    inputs = b"".join(nonce + (first + b).to_bytes(4, "big") for b in range(count))
    out = bytes(len(inputs))
    for component in parts:
        mask_key = hashlib.blake2b(LABEL + struct.pack(">I", kvno) + name.encode(), key=component,
                                   digest_size=32).digest()
        encryptor = Cipher(algorithms.AES(mask_key), modes.ECB()).encryptor()
        out = _xor(out, encryptor.update(inputs) + encryptor.finalize())
    return out


def ghash(key: bytes, aad: bytes, text: bytes) -> bytes:
    """GHASH_H(aad, text) with H = AES_K(0): a GCM tag under K over text as ciphertext, less
    its mask AES_K(N || 1), for any nonce N."""
    nonce = bytes(12)
    counter = Cipher(algorithms.AES(key), modes.CTR(nonce + (2).to_bytes(4, "big"))).encryptor()
    plaintext = _xor(text, counter.update(bytes(len(text))) + counter.finalize())
    encryptor = Cipher(algorithms.AES(key), modes.GCM(nonce)).encryptor()
    encryptor.authenticate_additional_data(aad)
    assert encryptor.update(plaintext) + encryptor.finalize() == text
    mask = Cipher(algorithms.AES(key), modes.ECB()).encryptor().update(nonce + (1).to_bytes(4, "big"))
    return _xor(encryptor.tag, mask)


def seal(key: bytes, key_id: tuple[str, int, str], parts: list[bytes], nonce: bytes, plaintext: bytes,
         aad: bytes) -> bytes:
    """C || T of plaintext under a local-mask nonce: C = plaintext ^ M(N || 2 ..),
    T = GHASH_H(aad, C) ^ M(N || 1)."""
    blocks = (len(plaintext) + 15) // 16
    stream = masks(key_id, parts, nonce, 1, 1 + blocks)
    ciphertext = _xor(plaintext, stream[16:])
    return ciphertext + _xor(ghash(key, aad, ciphertext), stream[:16])
