"""Reads a server's share store as its documented format says (mpc-engine/store/share_store.hpp),
with liblmdb and libsodium through ctypes and nothing of the engine's code: the tests that look
for shares in other processes' memory learn from it what each server holds.

A record: LMDB key name | 00 | u32 BE version | u8 algorithm, in the database "shares";
value nonce (24) | crypto_secretbox_easy(plaintext) under the storage key (64 hex digits in
the server's storage.key); plaintext u8 format (1) | u16 LE record key length | record key |
u64 LE created | share.
"""

from __future__ import annotations

import ctypes
import struct
from pathlib import Path

MDB_RDONLY = 0x20000
MDB_FIRST, MDB_NEXT = 0, 8
MDB_NOTFOUND = -30798
NONCE_BYTES, MAC_BYTES = 24, 16


class _Val(ctypes.Structure):
    _fields_ = [("mv_size", ctypes.c_size_t), ("mv_data", ctypes.c_void_p)]


def _libraries():
    lmdb = ctypes.CDLL("liblmdb.so.0")
    sodium = ctypes.CDLL("libsodium.so.23")
    for name in ("mdb_env_create", "mdb_env_set_maxdbs", "mdb_env_open", "mdb_txn_begin", "mdb_dbi_open",
                 "mdb_cursor_open", "mdb_cursor_get"):
        getattr(lmdb, name).restype = ctypes.c_int
    lmdb.mdb_env_open.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint, ctypes.c_uint]
    lmdb.mdb_env_set_maxdbs.argtypes = [ctypes.c_void_p, ctypes.c_uint]
    lmdb.mdb_txn_begin.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint, ctypes.c_void_p]
    lmdb.mdb_dbi_open.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint, ctypes.c_void_p]
    lmdb.mdb_cursor_open.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_void_p]
    lmdb.mdb_cursor_get.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
    lmdb.mdb_cursor_close.argtypes = [ctypes.c_void_p]
    lmdb.mdb_txn_abort.argtypes = [ctypes.c_void_p]
    lmdb.mdb_env_close.argtypes = [ctypes.c_void_p]
    sodium.crypto_secretbox_open_easy.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulonglong,
                                                  ctypes.c_char_p, ctypes.c_char_p]
    sodium.crypto_secretbox_open_easy.restype = ctypes.c_int
    return lmdb, sodium


def _check(rc: int, what: str) -> None:
    if rc != 0:
        raise RuntimeError(f"{what} failed: LMDB error {rc}")


def _records(directory: Path) -> list[tuple[bytes, bytes]]:
    lmdb, _ = _libraries()
    env, txn, cursor = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    dbi = ctypes.c_uint()
    _check(lmdb.mdb_env_create(ctypes.byref(env)), "mdb_env_create")
    try:
        _check(lmdb.mdb_env_set_maxdbs(env, 4), "mdb_env_set_maxdbs")
        _check(lmdb.mdb_env_open(env, str(directory).encode(), MDB_RDONLY, 0o600), f"opening {directory}")
        _check(lmdb.mdb_txn_begin(env, None, MDB_RDONLY, ctypes.byref(txn)), "mdb_txn_begin")
        try:
            _check(lmdb.mdb_dbi_open(txn, b"shares", 0, ctypes.byref(dbi)), "mdb_dbi_open")
            _check(lmdb.mdb_cursor_open(txn, dbi.value, ctypes.byref(cursor)), "mdb_cursor_open")
            out = []
            key, value = _Val(), _Val()
            op = MDB_FIRST
            while True:
                rc = lmdb.mdb_cursor_get(cursor, ctypes.byref(key), ctypes.byref(value), op)
                if rc == MDB_NOTFOUND:
                    break
                _check(rc, "mdb_cursor_get")
                out.append((ctypes.string_at(key.mv_data, key.mv_size), ctypes.string_at(value.mv_data, value.mv_size)))
                op = MDB_NEXT
            lmdb.mdb_cursor_close(cursor)
            return out
        finally:
            lmdb.mdb_txn_abort(txn)
    finally:
        lmdb.mdb_env_close(env)


def stored_shares(server_dir: Path) -> dict[tuple[str, int, int], bytes]:
    """{(name, version, algorithm): share} of every record of the server in server_dir."""
    _, sodium = _libraries()
    storage_key = bytes.fromhex((Path(server_dir) / "storage.key").read_text().strip())
    shares = {}
    for record_key, value in _records(Path(server_dir) / "data"):
        nonce, box = value[:NONCE_BYTES], value[NONCE_BYTES:]
        plain = ctypes.create_string_buffer(len(box) - MAC_BYTES)
        if sodium.crypto_secretbox_open_easy(plain, box, len(box), nonce, storage_key) != 0:
            raise RuntimeError(f"{server_dir}: a record does not open under the storage key")
        plain = plain.raw
        if plain[0] != 1:
            raise RuntimeError(f"{server_dir}: record format {plain[0]}")
        (length,) = struct.unpack_from("<H", plain, 1)
        if plain[3:3 + length] != record_key:
            raise RuntimeError(f"{server_dir}: a record sealed under another key id")
        name, rest = record_key.split(b"\0", 1)
        version, algorithm = struct.unpack(">IB", rest)
        shares[(name.decode(), version, algorithm)] = plain[3 + length + 8:]
    return shares
