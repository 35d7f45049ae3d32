"""Reading and rewriting the tickets of a FILE credential cache (format version 4), to hand
the KDC tickets that were tampered with.

Layouts: MIT krb5 doc/formats/ccache_file_format.rst (version 4), and RFC 4120 5.3
(Ticket ::= [APPLICATION 1] SEQUENCE { tkt-vno [0], realm [1], sname [2], enc-part [3]
EncryptedData }, EncryptedData ::= SEQUENCE { etype [0] Int32, kvno [1] UInt32 OPTIONAL,
cipher [2] OCTET STRING }).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path


# -- DER ---------------------------------------------------------------------------------

def _read_tlv(data: bytes, pos: int) -> tuple[int, int, int]:
    """(tag, value start, value end) of the DER element at pos."""
    tag = data[pos]
    length = data[pos + 1]
    pos += 2
    if length & 0x80:
        count = length & 0x7F
        length = int.from_bytes(data[pos:pos + count], "big")
        pos += count
    return tag, pos, pos + length


def _children(data: bytes, start: int, end: int) -> list[tuple[int, int, int, int]]:
    """(tag, element start, value start, value end) of each element in data[start:end]."""
    out, pos = [], start
    while pos < end:
        tag, value_start, value_end = _read_tlv(data, pos)
        out.append((tag, pos, value_start, value_end))
        pos = value_end
    return out


def _encode(tag: int, value: bytes) -> bytes:
    n = len(value)
    if n < 0x80:
        return bytes([tag, n]) + value
    raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([tag, 0x80 | len(raw)]) + raw + value


def _integer(value: int) -> bytes:
    raw = value.to_bytes(max(1, (value.bit_length() + 8) // 8), "big", signed=True)
    return _encode(0x02, raw)


@dataclass
class Ticket:
    prefix: bytes           # tkt-vno, realm and sname elements, as encoded
    etype: int
    kvno: int | None
    cipher: bytes

    @classmethod
    def decode(cls, der: bytes) -> "Ticket":
        tag, start, end = _read_tlv(der, 0)
        assert tag == 0x61, f"not a Ticket: tag {tag:#x}"
        tag, start, end = _read_tlv(der, start)
        assert tag == 0x30
        fields = _children(der, start, end)
        assert [f[0] for f in fields] == [0xA0, 0xA1, 0xA2, 0xA3], "unexpected Ticket fields"
        prefix = der[fields[0][1]:fields[3][1]]
        _, _, enc_start, enc_end = fields[3]
        tag, seq_start, seq_end = _read_tlv(der, enc_start)
        assert tag == 0x30
        etype, kvno, cipher = None, None, None
        for ftag, _, vstart, vend in _children(der, seq_start, seq_end):
            inner_tag, istart, iend = _read_tlv(der, vstart)
            if ftag == 0xA0:
                etype = int.from_bytes(der[istart:iend], "big", signed=True)
            elif ftag == 0xA1:
                kvno = int.from_bytes(der[istart:iend], "big", signed=False)
            elif ftag == 0xA2:
                assert inner_tag == 0x04
                cipher = der[istart:iend]
        assert etype is not None and cipher is not None
        return cls(prefix, etype, kvno, cipher)

    def encode(self) -> bytes:
        enc = _encode(0xA0, _integer(self.etype))
        if self.kvno is not None:
            enc += _encode(0xA1, _integer(self.kvno))
        enc += _encode(0xA2, _encode(0x04, self.cipher))
        body = self.prefix + _encode(0xA3, _encode(0x30, enc))
        return _encode(0x61, _encode(0x30, body))


# -- credential cache ----------------------------------------------------------------------

@dataclass
class Credential:
    server: str
    ticket_offset: int      # of the u32 length before the ticket
    ticket: bytes
    session_key: bytes = b""


def _principal(data: bytes, pos: int) -> tuple[str, int]:
    _name_type, count = struct.unpack_from(">II", data, pos)
    pos += 8
    (length,) = struct.unpack_from(">I", data, pos)
    realm = data[pos + 4:pos + 4 + length].decode()
    pos += 4 + length
    parts = []
    for _ in range(count):
        (length,) = struct.unpack_from(">I", data, pos)
        parts.append(data[pos + 4:pos + 4 + length].decode(errors="replace"))
        pos += 4 + length
    return "/".join(parts) + "@" + realm, pos


def credentials(data: bytes) -> list[Credential]:
    assert data[:2] == b"\x05\x04", "only version 4 FILE caches are supported"
    (header_length,) = struct.unpack_from(">H", data, 2)
    pos = 4 + header_length
    _, pos = _principal(data, pos)  # default principal
    creds = []
    while pos < len(data):
        _client, pos = _principal(data, pos)
        server, pos = _principal(data, pos)
        pos += 2                                    # key enctype
        (length,) = struct.unpack_from(">I", data, pos)
        session_key = data[pos + 4:pos + 4 + length]
        pos += 4 + length                           # key
        pos += 16 + 1 + 4                           # times, is_skey, flags
        for _ in range(2):                          # addresses, then authdata
            (count,) = struct.unpack_from(">I", data, pos)
            pos += 4
            for _ in range(count):
                (length,) = struct.unpack_from(">I", data, pos + 2)
                pos += 6 + length
        ticket_offset = pos
        (length,) = struct.unpack_from(">I", data, pos)
        ticket = data[pos + 4:pos + 4 + length]
        pos += 4 + length
        (length,) = struct.unpack_from(">I", data, pos)
        pos += 4 + length                           # second ticket
        creds.append(Credential(server, ticket_offset, ticket, session_key))
    return creds


def session_keys(path: Path) -> dict[str, bytes]:
    """The session key of each ticket in the cache (not its configuration entries), by server."""
    return {cred.server: cred.session_key for cred in credentials(Path(path).read_bytes())
            if not cred.server.startswith("krb5_ccache_conf_data/")}


def tgt(path: Path, tgs: str) -> Ticket:
    for cred in credentials(Path(path).read_bytes()):
        if cred.server == tgs:
            return Ticket.decode(cred.ticket)
    raise AssertionError(f"no ticket for {tgs} in {path}")


def replace_tgt(path: Path, tgs: str, ticket: Ticket, out: Path) -> None:
    """Writes a copy of the cache at `out` whose ticket for tgs is `ticket`."""
    data = Path(path).read_bytes()
    for cred in credentials(data):
        if cred.server == tgs:
            encoded = ticket.encode()
            start = cred.ticket_offset
            end = start + 4 + len(cred.ticket)
            Path(out).write_bytes(data[:start] + struct.pack(">I", len(encoded)) + encoded + data[end:])
            Path(out).chmod(0o600)
            return
    raise AssertionError(f"no ticket for {tgs} in {path}")
