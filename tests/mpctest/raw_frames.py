"""Client frames built by hand and sent over raw ZeroMQ with CurveZMQ, as a hostile KDC host
holding the compute client key could send them: no client library in between, so nothing
makes the three servers' copies of a request equal.

Frames follow mpc-engine/wire/client_messages.hpp:
  request: u8 version (1) | u8 type | 16-byte request id | body
  reply:   u8 version (1) | u8 0x80 | 16-byte request id | u16 status | u16-length error | body
  key id:  u16-length name | u32 version | u8 algorithm
"""

from __future__ import annotations

import hashlib
import re
import secrets
import struct
import time

import zmq

from mpctest.mpc_cluster import openssl_ctr_keystream, pid_alive

# Message types and statuses (client_messages.hpp).
COMPUTE, IMPORT_KEY, LIST_KEYS, DELETE_KEY, STATUS = 1, 2, 3, 4, 5
GCM_PREFETCH, GCM_TAG, GCM_OPEN, KRB, GCM_REOPEN, GCM_TAG_PARTS, GCM_PREFETCH_LOCAL, REPLY = 6, 7, 8, 9, 10, 11, 12, 0x80
CTR, ECB_ENCRYPT, ECB_DECRYPT = 1, 2, 3
KRB_ENCRYPT, KRB_DECRYPT, KRB_CHECKSUM = 1, 2, 3
KRB_COMBINE_FLAG = 0x80
KRB_RECORD_MASK_FLAG = 0x40
KRB_SEED_HASH_KEY = b"mpc-kdc krb record mask seed"
(OK, BAD_REQUEST, UNKNOWN_KEY, TOO_LARGE, BUSY, PEER_FAILURE, UNAUTHORIZED, KEY_EXISTS, INTERNAL, NOT_READY,
 UNKNOWN_NONCE, REQUEST_MISMATCH, REGROUPING, VERIFICATION_FAILED) = range(14)
# Key algorithms (key_id.hpp).
AES128, AES256, AES256_GCM, AES128_CTS, AES256_CTS, AES128_SHA2, AES256_SHA2 = range(1, 8)
REPLY_WAIT_MS = 3000


def key_id(name: str, version: int = 1, algorithm: int = AES128) -> bytes:
    raw = name.encode()
    return struct.pack("<H", len(raw)) + raw + struct.pack("<IB", version, algorithm)


def header(kind: int, request_id: bytes, version: int = 1) -> bytes:
    return bytes([version, kind]) + request_id


OUTPUT_PAD_FLAG = 0x40  # in a Compute request's operation byte: the client's pad seed ends it


def compute_ctr(request_id: bytes, name: str, blocks: int = 4, version: int = 1, algorithm: int = AES128,
                counter: bytes = bytes(16), output_pad: bytes | None = None) -> bytes:
    """A keystream request; with `output_pad` (32 bytes), the seed of this server's pad on the
    outputs, as the client library sends every server (two servers of security = "active"
    answer only under pads)."""
    operation = CTR | (OUTPUT_PAD_FLAG if output_pad is not None else 0)
    return (header(COMPUTE, request_id) + bytes([operation]) + key_id(name, version, algorithm) +
            struct.pack("<I", blocks) + counter + (output_pad or b""))


def compute_ecb(request_id: bytes, name: str, blocks: int, data: bytes, operation: int = ECB_ENCRYPT,
                version: int = 1, algorithm: int = AES128) -> bytes:
    return (header(COMPUTE, request_id) + bytes([operation]) + key_id(name, version, algorithm) +
            struct.pack("<I", blocks) + data)


def gcm_prefetch(request_id: bytes, key: bytes, count: int, blocks_per_nonce: int = 0, local: bool = False) -> bytes:
    kind = GCM_PREFETCH_LOCAL if local else GCM_PREFETCH
    return header(kind, request_id) + key + struct.pack("<II", count, blocks_per_nonce)


def gcm_tag(request_id: bytes, key: bytes, nonce: bytes, aad: bytes, text: bytes) -> bytes:
    return (header(GCM_TAG, request_id) + key + nonce + struct.pack("<I", len(aad)) + aad +
            struct.pack("<I", len(text)) + text)


def gcm_tag_chained(request_id: bytes, key: bytes, nonce: bytes, aad: bytes, chained_nonce: bytes,
                    prefix: bytes) -> bytes:
    """A tag of aad with a chained tag over prefix || nonce || tag under chained_nonce."""
    return (header(GCM_TAG_PARTS, request_id) + key + nonce + struct.pack("<I", len(aad)) + aad +
            struct.pack("<I", 0) + bytes([1]) + chained_nonce + bytes([len(prefix)]) + prefix)


def gcm_open(request_id: bytes, key: bytes, nonce: bytes, aad: bytes, text: bytes, tag: bytes) -> bytes:
    return (header(GCM_OPEN, request_id) + key + nonce + struct.pack("<I", len(aad)) + aad +
            struct.pack("<I", len(text)) + text + tag)


def gcm_reopen(request_id: bytes, key: bytes, nonce: bytes, aad: bytes, text: bytes, tag: bytes) -> bytes:
    return (header(GCM_REOPEN, request_id) + key + nonce + struct.pack("<I", len(aad)) + aad +
            struct.pack("<I", len(text)) + text + tag)


def krb(request_id: bytes, key: bytes, operation: int, usage: int, data: bytes,
        combine: tuple[int, bytes, bytes] | None = None) -> bytes:
    """A Krb request without a record mask (which the servers refuse). combine: (combined
    algorithm, pepper, mask) for a job under KRB-FX-CF2."""
    return krb_common(request_id, key, operation, usage, data, combine)


def krb_common(request_id: bytes, key: bytes, operation: int, usage: int, data: bytes,
               combine: tuple[int, bytes, bytes] | None = None, seed_hashes: list[bytes] | None = None) -> bytes:
    flags = (KRB_COMBINE_FLAG if combine else 0) | (KRB_RECORD_MASK_FLAG if seed_hashes else 0)
    body = bytes([operation | flags]) + key + struct.pack("<II", usage, len(data))
    body += data
    if combine:
        algorithm, pepper, mask = combine
        body += bytes([algorithm]) + struct.pack("<H", len(pepper)) + pepper + mask
    if seed_hashes:
        body += bytes([len(seed_hashes)]) + b"".join(seed_hashes)
    return header(KRB, request_id) + body


def krb_seed_hash(seed: bytes) -> bytes:
    return hashlib.blake2b(seed, digest_size=32, key=KRB_SEED_HASH_KEY).digest()


def krb_copies(request_id: bytes, key: bytes, operation: int, usage: int, data: bytes,
               combine: tuple[int, bytes, bytes] | None = None, servers: int = 3) -> list[bytes]:
    """Each server's copy of a Krb request, as the client library sends them: the part all
    servers compare (with the hashes of the record mask's seeds), then the server's own seeds
    (components i and i - 1 of three, or i of two). The data goes as given: masked or not,
    no server can tell."""
    seeds = [secrets.token_bytes(32) for _ in range(servers)]
    common = krb_common(request_id, key, operation, usage, data, combine, [krb_seed_hash(s) for s in seeds])
    copies = []
    for party in range(servers):
        held = [party, (party + 2) % 3] if servers == 3 else [party]
        copies.append(common + bytes([len(held)]) + b"".join(bytes([c]) + seeds[c] for c in held))
    return copies


def krb_seeds_bytes(servers: int = 3) -> int:
    """Bytes of the seeds that end each server's copy (krb_copies)."""
    return 1 + (2 if servers == 3 else 1) * 33


def status_request(request_id: bytes) -> bytes:
    return header(STATUS, request_id)


def parse_reply(frame: bytes) -> tuple[bytes, int, str, bytes]:
    """(request id, status, error text, body); asserts the fixed layout."""
    assert len(frame) >= 22, f"reply of {len(frame)} bytes is too short"
    assert frame[0] == 1 and frame[1] == REPLY, f"reply header {frame[:2].hex()}"
    request_id = frame[2:18]
    status, error_length = struct.unpack_from("<HH", frame, 18)
    assert 22 + error_length <= len(frame), "error string overruns the reply"
    error = frame[22:22 + error_length].decode(errors="replace")
    return request_id, status, error, frame[22 + error_length:]


def read_key_file(path) -> dict[str, bytes]:
    keys = {}
    for line in open(path):
        kind, _, value = line.strip().partition(" ")
        if kind in ("secret-key", "public-key"):
            keys[kind] = value.encode()
    return keys


class RawClient:
    def __init__(self, context: zmq.Context, endpoint: str, server_public: bytes, public: bytes, secret: bytes):
        self.socket = context.socket(zmq.DEALER)
        self.socket.setsockopt(zmq.LINGER, 0)
        # A refused handshake removes the socket's only pipe; a blocking send would then wait
        # forever. Bounded sends raise zmq.Again instead, which the callers treat as "dropped".
        self.socket.setsockopt(zmq.SNDTIMEO, 1000)
        self.socket.curve_serverkey = server_public
        self.socket.curve_publickey = public
        self.socket.curve_secretkey = secret
        self.socket.connect(endpoint)

    def send(self, frame: bytes | list[bytes]) -> bool:
        try:
            if isinstance(frame, list):
                self.socket.send_multipart(frame)
            else:
                self.socket.send(frame)
        except zmq.Again:
            return False
        return True

    def receive(self, timeout_ms: int = REPLY_WAIT_MS) -> bytes | None:
        if self.socket.poll(timeout_ms, zmq.POLLIN):
            parts = self.socket.recv_multipart()
            assert len(parts) == 1, f"reply of {len(parts)} frames"
            return parts[0]
        return None

    def ask(self, frame: bytes, timeout_ms: int = REPLY_WAIT_MS) -> tuple[bytes, int, str, bytes]:
        self.send(frame)
        reply = self.receive(timeout_ms)
        assert reply is not None, f"no reply within {timeout_ms} ms to frame {frame[:40].hex()}..."
        return parse_reply(reply)

    def close(self, linger_ms: int = 0) -> None:
        self.socket.close(linger_ms)


def endpoint(cluster, party: int) -> str:
    return f"tcp://127.0.0.1:{cluster.base_port + party}"


def server_public(cluster, party: int) -> bytes:
    return read_key_file(cluster.server_dir(party) / "server.pub")["public-key"]


def client_for(cluster, context, party: int, role: str = "admin") -> RawClient:
    keys = read_key_file(cluster.dir / f"{role}.key")
    return RawClient(context, endpoint(cluster, party), server_public(cluster, party), keys["public-key"],
                     keys["secret-key"])


# The AES-128 key the raw-frame tests compute under (the raw_key fixture imports it).
RAW_KEY_NAME = "raw/key"


def assert_still_serving(cluster, key_hex: str) -> None:
    for party in (1, 2, 3):
        assert pid_alive(cluster.server_pid(party)), f"server {party} died\n{cluster.log_tail()}"
    counter = secrets.token_hex(16)
    got = cluster.keystream(RAW_KEY_NAME, 1, "aes128", counter, 9)
    assert got == openssl_ctr_keystream("aes128", key_hex, counter, 9)


# How long exchange() waits for each server's reply.
REPLY_WAIT_MS = 5000


def fresh_id() -> bytes:
    return secrets.token_bytes(16)


def exchange(raw, frames: dict[int, bytes]) -> dict[int, tuple[int, str, bytes]]:
    """Sends frames[party] to each party at once; (status, error, body) of each reply."""
    ids = {frame[2:18] for frame in frames.values()}
    assert len(ids) == 1, "copies of one request share its id"
    for party, frame in frames.items():
        assert raw[party].send(frame)
    out = {}
    for party in frames:
        reply = raw[party].receive(REPLY_WAIT_MS)
        assert reply is not None, f"server {party} did not answer within {REPLY_WAIT_MS} ms"
        got_id, status, error, body = parse_reply(reply)
        assert got_id in ids
        out[party] = (status, error, body)
    return out


def prefetch_one_nonce(raw, gcm_key_id: bytes, local: bool = False) -> bytes:
    """One nonce prefetched the way the library does it, over the raw sockets."""
    replies = exchange(raw, dict.fromkeys(raw, gcm_prefetch(fresh_id(), gcm_key_id, 1, local=local)))
    nonces = set()
    for party, (status, error, body) in replies.items():
        assert status == OK, f"server {party}: prefetch status {status} ({error})"
        count, blocks_per_nonce = struct.unpack_from("<II", body)
        assert (count, blocks_per_nonce) == (1, 0)
        nonces.add(body[8:20])
    assert len(nonces) == 1, "the servers named different nonces"
    return nonces.pop()


def mismatch_counters(cluster) -> dict[int, int]:
    out = {}
    for line in cluster.mpcctl("cluster", "status", "--cluster", str(cluster.admin_config)).stdout.splitlines():
        match = re.match(r"server (\d):.*requests with differing copies (\d+)", line)
        if match:
            out[int(match.group(1))] = int(match.group(2))
    assert sorted(out) == list(cluster.parties), out
    return out


def steady_mismatch_counters(cluster, quiet_s: float = 0.3) -> dict[int, int]:
    """The counts once they stopped rising: a tag's copies sent earlier are compared after
    their answer, so its count may still come."""
    counts = mismatch_counters(cluster)
    deadline = time.monotonic() + 10
    while True:
        time.sleep(quiet_s)
        again = mismatch_counters(cluster)
        if again == counts or time.monotonic() > deadline:
            return again
        counts = again


def wait_for_mismatches(cluster, before: dict[int, int], added: int) -> dict[int, int]:
    """The servers compare a tag's copies after answering it: the count rises shortly after."""
    deadline = time.monotonic() + 5
    while True:
        after = mismatch_counters(cluster)
        if all(after[party] >= before[party] + added for party in before) or time.monotonic() > deadline:
            return after
        time.sleep(0.05)
