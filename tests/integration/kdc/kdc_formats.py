"""The KDC plugin's formats, computed here independently of its C code (hashlib, hmac), so
that the tests check the plugin against a second implementation.

- kdc-plugin/kdb/handle.h: the 64-byte key handle and its principal name hash;
- kdc-plugin/kdb/protected_key.h: the private enctype, engine key names, the ticket key
  enrolled from an existing krbtgt key, and the AAD of encryptions and checksums.
"""

from __future__ import annotations

import hashlib
import hmac
import struct

AES256, AES128 = 18, 17
PRIVATE_ENCTYPE = -19792                       # MPC_KDC_ENCTYPE_AES256_GCM
HANDLE_MAGIC = bytes([0x8A, 0xF7, ord("M"), ord("H")])
TICKET_KEY_LABEL = b"mpc-kdc aes256-gcm ticket key v1"
AAD_ENCRYPT, AAD_CHECKSUM = 0x01, 0x02


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


def encrypt_aad(usage: int) -> bytes:
    return bytes([AAD_ENCRYPT]) + struct.pack(">I", usage)


def checksum_aad(usage: int, data: bytes) -> bytes:
    return bytes([AAD_CHECKSUM]) + struct.pack(">I", usage) + data
