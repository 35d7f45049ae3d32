"""The KDC plugin's formats, computed here independently of its C code (hashlib, hmac), so
that the tests check the plugin against a second implementation.

- kdc-plugin/kdb/handle.h: the 64-byte key handle and its principal name hash;
- kdc-plugin/kdb/protected_key.h: the private enctype, engine key names, the ticket key
  enrolled from an existing krbtgt key, a ticket's own key, and the AAD of encryptions and
  checksums;
- protected users: the user marker, and RFC 3961/3962 key derivation (n-fold, DK,
  string-to-key) to know a user's key and the derived keys the engine holds instead.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import struct

AES256, AES128 = 18, 17
PRIVATE_ENCTYPE = -19792                       # MPC_KDC_ENCTYPE_AES256_GCM
HANDLE_MAGIC = bytes([0x8A, 0xF7, ord("M"), ord("H")])
TICKET_KEY_LABEL = b"mpc-kdc aes256-gcm ticket key v1"
AAD_KEYSTREAM, AAD_CHECKSUM, AAD_TICKET_KEY = 0x01, 0x02, 0x03


def name_hash(principal: str) -> bytes:
    return hashlib.sha256(b"mpc-kdc principal v1\x00" + principal.encode()).digest()[:16]


def expected_handle(handle_key: bytes, principal: str, kvno: int, enctype: int) -> bytes:
    body = HANDLE_MAGIC + bytes([1, 0, 0, 0]) + struct.pack(">Ii", kvno, enctype) + name_hash(principal)
    return body + hmac.new(handle_key, body, hashlib.sha256).digest()


def engine_name(principal: str) -> str:
    return "kdc/" + name_hash(principal).hex()


def ticket_key(existing: bytes) -> bytes:
    """The engine's AES-256-GCM key enrolled from an existing krbtgt key."""
    return hmac.new(existing, TICKET_KEY_LABEL, hashlib.sha256).digest()


def keystream_aad(usage: int) -> bytes:
    """The AAD of the earlier ticket format: GCM's own keystream over the whole text."""
    return bytes([AAD_KEYSTREAM]) + struct.pack(">I", usage)


def ticket_aad(usage: int, ciphertext: bytes) -> bytes:
    return bytes([AAD_TICKET_KEY]) + struct.pack(">I", usage) + ciphertext


class EngineKey(bytes):
    """K, with what the engine makes local masks of (tests/mpctest/local_masks.py): the
    engine key id and the additive components the servers store. A nonce with the local mark
    is masked by M under these, any other by AES_K."""

    def __new__(cls, key: bytes, key_id: tuple[str, int, str], parts: list[bytes]):
        out = super().__new__(cls, key)
        out.local = (key_id, parts)
        return out


def _local(key: bytes, nonce: bytes):
    from mpctest import local_masks
    if not local_masks.is_local(nonce):
        return None
    assert isinstance(key, EngineKey), "a nonce with local masks needs the key's components"
    return local_masks, key.local


def _mask(key: bytes, nonce: bytes, block: int) -> bytes:
    """Block `block` of the nonce's masks: AES_K(N || block), or M(N || block)."""
    local = _local(key, nonce)
    if local is None:
        return _aes_block(key, nonce + struct.pack(">I", block))
    module, (key_id, parts) = local
    return module.masks(key_id, parts, nonce, block, 1)


def nonce_ticket_key(key: bytes, nonce: bytes) -> bytes:
    """A ticket's own key: the nonce's mask blocks 2 and 3 (GCM's keystream under K, or M)."""
    return _mask(key, nonce, 2) + _mask(key, nonce, 3)


def gmac_tag(key: bytes, nonce: bytes, aad: bytes, text: bytes = b"") -> bytes:
    """GHASH_H(aad, text) ^ the nonce's mask block 1: AES-GCM's tag under K for an AES nonce."""
    from mpctest import local_masks
    return bytes(a ^ b for a, b in zip(local_masks.ghash(key, aad, text), _mask(key, nonce, 1)))


def seal_ticket(key: bytes, nonce: bytes, usage: int, plain: bytes) -> bytes:
    """N || C || T: C is AES-256-CTR of plain under the ticket key from counter block 0, T the
    GCM tag of 32 zero bytes of ciphertext with AAD 0x03 || usage || C (for an AES nonce, the
    tag of AES-GCM under K; for a local one, its mask M(N || 1) in place of AES_K(N || 1))."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    own = nonce_ticket_key(key, nonce)
    encryptor = Cipher(algorithms.AES(own), modes.CTR(bytes(16))).encryptor()
    ciphertext = encryptor.update(plain) + encryptor.finalize()
    aad = ticket_aad(usage, ciphertext)
    if _local(key, nonce) is not None:
        return nonce + ciphertext + gmac_tag(key, nonce, aad, bytes(32))
    sealed = AESGCM(key).encrypt(nonce, own, aad)
    assert sealed[:32] == bytes(32), "the ticket key is the nonce's keystream"
    return nonce + ciphertext + sealed[32:]


CHECKSUM_LEN = 28  # N || T


def checksum_aad(usage: int, data: bytes) -> bytes:
    """0x02 || usage || SHA-256(data): the servers, which compute GHASH over the AAD, get the
    digest only; a PAC's KDC checksum over its server checksum (usage 17, 28 bytes) as it is."""
    body = data if usage == 17 and len(data) == CHECKSUM_LEN else hashlib.sha256(data).digest()
    return bytes([AAD_CHECKSUM]) + struct.pack(">I", usage) + body


# ---- protected users' keys (aes128/aes256-cts-hmac-sha1-96, RFC 3961 / RFC 3962) ---------

USER_MARKER = b"mpc-kdc user key in engine, v1" + bytes(2)   # MPC_KDC_USER_MARKER, 32 bytes
USER_ALGORITHMS = {AES128: "aes128-cts-hmac-sha1-96", AES256: "aes256-cts-hmac-sha1-96"}
KEY_BYTES = {AES128: 16, AES256: 32}
ENGINE_USAGES = (1, 2, 3, 17, 56)                   # the usages whose derived keys the engine holds


def nfold(data: bytes, size: int) -> bytes:
    """RFC 3961 n-fold of data to size bytes."""
    def rotate_right(value: bytes, bits: int) -> bytes:
        total = len(value) * 8
        number = int.from_bytes(value, "big")
        bits %= total
        number = ((number >> bits) | (number << (total - bits))) & ((1 << total) - 1)
        return number.to_bytes(len(value), "big")

    lcm = len(data) * size // math.gcd(len(data), size)
    big = b"".join(rotate_right(data, 13 * i) for i in range(lcm // len(data)))
    out = [0] * size
    for start in range(0, lcm, size):
        carry = 0
        for i in range(size - 1, -1, -1):
            total = out[i] + big[start + i] + carry
            out[i], carry = total & 0xFF, total >> 8
        # end-around carry (ones' complement addition)
        while carry:
            for i in range(size - 1, -1, -1):
                total = out[i] + carry
                out[i], carry = total & 0xFF, total >> 8
                if not carry:
                    break
    return bytes(out)


def _aes_block(key: bytes, block: bytes) -> bytes:
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    encryptor = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    return encryptor.update(block) + encryptor.finalize()


def derive_key(key: bytes, constant: bytes) -> bytes:
    """RFC 3961 DK(key, constant) for the AES enctypes (random-to-key is the identity)."""
    block = nfold(constant, 16)
    out = b""
    while len(out) < len(key):
        block = _aes_block(key, block)
        out += block
    return out[:len(key)]


def string_to_key(password: str, salt: str, enctype: int) -> bytes:
    """RFC 3962 string-to-key with the default 4096 iterations."""
    tkey = hashlib.pbkdf2_hmac("sha1", password.encode(), salt.encode(), 4096, KEY_BYTES[enctype])
    return derive_key(tkey, b"kerberos")


def default_salt(principal: str) -> str:
    """The normal salt: the realm, then the name components without separators."""
    name, realm = principal.rsplit("@", 1)
    return realm + "".join(name.split("/"))


def _sbox() -> list[int]:
    """FIPS-197 S-box: the inverse in GF(2^8) modulo x^8 + x^4 + x^3 + x + 1, then the affine map."""
    def multiply(a: int, b: int) -> int:
        product = 0
        while b:
            if b & 1:
                product ^= a
            a = ((a << 1) ^ 0x11B) if a & 0x80 else a << 1
            b >>= 1
        return product

    box = []
    for value in range(256):
        inverse = next((c for c in range(1, 256) if multiply(value, c) == 1), 0)
        out = 0x63
        for shift in range(5):
            out ^= ((inverse << shift) | (inverse >> (8 - shift))) & 0xFF
        box.append(out)
    return box


_SBOX = _sbox()


def aes_expand_key(key: bytes) -> bytes:
    """FIPS-197 key expansion: 176 bytes for a 16-byte key, 240 for a 32-byte one."""
    nk = len(key) // 4
    rounds = {4: 10, 8: 14}[nk]
    words = [list(key[4 * i:4 * i + 4]) for i in range(nk)]
    rcon = 1
    for i in range(nk, 4 * (rounds + 1)):
        word = list(words[i - 1])
        if i % nk == 0:
            word = [_SBOX[b] for b in word[1:] + word[:1]]
            word[0] ^= rcon
            rcon = ((rcon << 1) ^ 0x11B) if rcon & 0x80 else rcon << 1
        elif nk == 8 and i % nk == 4:
            word = [_SBOX[b] for b in word]
        words.append([a ^ b for a, b in zip(words[i - nk], word)])
    return bytes(b for word in words for b in word)


def round_key_needles(label: str, key: bytes) -> dict[str, bytes]:
    """The round keys after the key itself, in FIPS-197 byte order (AES-NI schedules, the
    engine's material) and with each 32-bit word byte-swapped (OpenSSL's portable AES_KEY)."""
    tail = aes_expand_key(key)[len(key):]
    swapped = b"".join(tail[i:i + 4][::-1] for i in range(0, len(tail), 4))
    return {f"{label} round keys": tail, f"{label} round keys, words swapped": swapped}


def ghash_key(key: bytes) -> bytes:
    """GCM's hash key H = AES_K(0^128) (NIST SP 800-38D)."""
    return _aes_block(key, bytes(16))


def derived_keys(key: bytes) -> dict[str, bytes]:
    """The keys the engine holds shares of instead of key: Ke, Ki, Kc per usage, the PRF key."""
    out = {"prf key": derive_key(key, b"prf")}
    for usage in ENGINE_USAGES:
        for label, byte in (("Ke", 0xAA), ("Ki", 0x55), ("Kc", 0x99)):
            out[f"{label} usage {usage}"] = derive_key(key, struct.pack(">I", usage) + bytes([byte]))
    return out
