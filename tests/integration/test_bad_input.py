"""Bad input straight onto the servers' client sockets (raw ZeroMQ with CurveZMQ).

Frames are built and parsed by raw_frames.py (mpc-engine/wire/client_messages.hpp).
After every kind of abuse the server must still be running and a normal keystream through
mpcctl must still equal OpenSSL.
"""

from __future__ import annotations

import secrets
import struct
import time

import pytest
import zmq

from mpctest.raw_frames import (AES128, AES256, BAD_REQUEST, COMPUTE, CTR, DELETE_KEY, ECB_ENCRYPT, IMPORT_KEY, LIST_KEYS,
                                OK, RAW_KEY_NAME, REGROUPING, REPLY, TOO_LARGE, UNAUTHORIZED, UNKNOWN_KEY, RawClient,
                                assert_still_serving, client_for, endpoint, header, key_id, parse_reply, read_key_file,
                                server_public, status_request)
from mpctest.raw_frames import compute_ctr as raw_compute_ctr
from mpctest.raw_frames import compute_ecb as raw_compute_ecb

MAX_JOB_BLOCKS = 1 << 20        # server default, not overridden by `mpcctl cluster init`
MAX_REQUEST_BLOCKS = 1 << 22    # wire::kMaxRequestBlocks
# An AES-128 replicated share (2 x 176 bytes) sealed to a server (wire/sealed_share.hpp): the
# key id's digest and the sealed box's ephemeral key and MAC add 80 bytes.
SEALED_AES128_SHARE = 2 * 176 + 80



def compute_ctr(request_id: bytes, name: str = RAW_KEY_NAME, blocks: int = 4, version: int = 1,
                algorithm: int = AES128, counter: bytes = bytes(16)) -> bytes:
    return raw_compute_ctr(request_id, name, blocks, version, algorithm, counter)


def compute_ecb(request_id: bytes, blocks: int, data: bytes, operation: int = ECB_ENCRYPT) -> bytes:
    return raw_compute_ecb(request_id, RAW_KEY_NAME, blocks, data, operation)


@pytest.fixture
def clients(cluster, context, raw_key):
    opened = {party: client_for(cluster, context, party) for party in (1, 2, 3)}
    yield opened
    for client in opened.values():
        client.close()


def fresh_id() -> bytes:
    return secrets.token_bytes(16)


def random_invalid_frame(length: int) -> bytes:
    """Random bytes under a valid header that can never decode: for every request type the
    first body bytes (operation or name length) are 0xff 0xff, out of range."""
    frame = bytearray(secrets.token_bytes(length))
    if length >= 2:
        frame[0] = 1
        frame[1] = secrets.choice([COMPUTE, IMPORT_KEY, LIST_KEYS, DELETE_KEY])
    if length >= 20:
        frame[18:20] = b"\xff\xff"
    return bytes(frame)


# -- tests -------------------------------------------------------------------------------

@pytest.mark.parametrize("party", (1, 2, 3))
def test_random_bytes_get_bad_request(cluster, clients, raw_key, party):
    client = clients[party]
    for length in (0, 1, 2, 17, 18, 19, 64, 1000, 70000):
        frame = random_invalid_frame(length)
        request_id, status, error, body = client.ask(frame)
        assert status == BAD_REQUEST, f"{length} random bytes: status {status} ({error})"
        assert error, "a refusal must say why"
        assert body == b""
        if length >= 18:
            assert request_id == frame[2:18], "the reply must carry the request id it could read"
    assert_still_serving(cluster, raw_key)


@pytest.mark.parametrize("party", (1, 2, 3))
def test_truncated_frames_get_bad_request(cluster, clients, raw_key, party):
    client = clients[party]
    request_id = fresh_id()
    valid_frames = [compute_ctr(request_id),
                    compute_ecb(request_id, 2, secrets.token_bytes(32)),
                    header(DELETE_KEY, request_id) + key_id(RAW_KEY_NAME),
                    header(IMPORT_KEY, request_id) + key_id("raw/new") + struct.pack("<I", SEALED_AES128_SHARE)
                    + bytes(SEALED_AES128_SHARE)]
    for valid in valid_frames:
        for length in sorted({*range(0, min(40, len(valid))), len(valid) // 2, len(valid) - 2, len(valid) - 1}):
            truncated = valid[:length]
            _, status, error, _ = client.ask(truncated)
            assert status == BAD_REQUEST, f"frame cut to {length} of {len(valid)} bytes: status {status} ({error})"
    assert_still_serving(cluster, raw_key)


@pytest.mark.parametrize("party", (1, 2, 3))
def test_wrong_version_type_and_fields_get_bad_request(cluster, clients, raw_key, party):
    client = clients[party]
    bad = []
    request_id = fresh_id()
    valid = compute_ctr(request_id)
    for version in (0, 2, 255):
        bad.append(("version", bytes([version]) + valid[1:]))
    for kind in (0, 6, 0x7f, REPLY, 0xff):
        bad.append(("type", bytes([1, kind]) + valid[2:]))
    bad.append(("trailing byte", valid + b"\0"))
    bad.append(("trailing bytes on status", status_request(fresh_id()) + b"xyz"))
    bad.append(("trailing bytes on list", header(LIST_KEYS, fresh_id()) + struct.pack("<H", 0) + b"\0"))
    body = 18
    bad.append(("operation 0", valid[:body] + b"\0" + valid[body + 1:]))
    bad.append(("operation 4", valid[:body] + b"\4" + valid[body + 1:]))
    bad.append(("algorithm 0", compute_ctr(fresh_id(), algorithm=0)))
    bad.append(("algorithm 3", compute_ctr(fresh_id(), algorithm=3)))
    bad.append(("empty name", compute_ctr(fresh_id(), name="")))
    bad.append(("name with space", compute_ctr(fresh_id(), name="raw key")))
    bad.append(("name too long", compute_ctr(fresh_id(), name="x" * 256)))
    bad.append(("zero blocks", compute_ctr(fresh_id(), blocks=0)))
    bad.append(("blocks over the wire limit", compute_ctr(fresh_id(), blocks=MAX_REQUEST_BLOCKS + 1)))
    bad.append(("ECB input short", compute_ecb(fresh_id(), 3, bytes(32))))
    bad.append(("ECB input long", compute_ecb(fresh_id(), 1, bytes(32))))
    bad.append(("name length overruns", header(COMPUTE, fresh_id()) + bytes([CTR]) + struct.pack("<H", 60000) + b"ab"))
    bad.append(("import share length wrong",
                header(IMPORT_KEY, fresh_id()) + key_id("raw/new") + struct.pack("<I", 100) + bytes(100)))
    for what, frame in bad:
        request_id, status, error, _ = client.ask(frame)
        assert status == BAD_REQUEST, f"{what}: status {status} ({error})"
        assert request_id == frame[2:18]
    # Nothing was imported by the malformed imports.
    assert not [row for row in cluster.list_keys("raw/new")]
    assert_still_serving(cluster, raw_key)


@pytest.mark.parametrize("party", (1, 2, 3))
def test_multipart_junk_is_dropped(cluster, clients, raw_key, party):
    client = clients[party]
    for parts in ([b"junk", b"more junk"], [compute_ctr(fresh_id()), b""], [b"", b"", b""],
                  [status_request(fresh_id()), status_request(fresh_id())]):
        client.send(parts)
    # Multi-frame messages are dropped whole; whatever comes back must be a refusal.
    deadline = time.monotonic() + 0.5
    while time.monotonic() < deadline:
        frame = client.receive(100)
        if frame is not None:
            _, status, _, _ = parse_reply(frame)
            assert status == BAD_REQUEST
    # The connection still works afterwards.
    request_id = fresh_id()
    got_id, status, _, body = client.ask(status_request(request_id))
    assert (got_id, status) == (request_id, OK)
    assert body[0] == party - 1, "status names the wrong party"
    assert_still_serving(cluster, raw_key)


@pytest.mark.parametrize("party", (1, 2, 3))
def test_unknown_key_ids(cluster, clients, raw_key, party):
    client = clients[party]
    for name, version, algorithm in (("raw/none", 1, AES128), (RAW_KEY_NAME, 2, AES128), (RAW_KEY_NAME, 1, AES256)):
        request_id = fresh_id()
        got_id, status, error, body = client.ask(compute_ctr(request_id, name=name, version=version,
                                                             algorithm=algorithm))
        assert (got_id, status) == (request_id, UNKNOWN_KEY), f"{name} {version} {algorithm}: {status} {error}"
        assert "not found" in error and body == b""
        request_id = fresh_id()
        got_id, status, error, _ = client.ask(header(DELETE_KEY, request_id) + key_id(name, version, algorithm))
        assert (got_id, status) == (request_id, UNKNOWN_KEY), error
    assert_still_serving(cluster, raw_key)


@pytest.mark.parametrize("party", (1, 2, 3))
def test_oversized_jobs_get_too_large(cluster, clients, raw_key, party):
    client = clients[party]
    for blocks in (MAX_JOB_BLOCKS + 1, MAX_REQUEST_BLOCKS):
        request_id = fresh_id()
        got_id, status, error, _ = client.ask(compute_ctr(request_id, blocks=blocks))
        assert (got_id, status) == (request_id, TOO_LARGE), f"{blocks} blocks: status {status} ({error})"
        assert "max_job_blocks" in error
    assert_still_serving(cluster, raw_key)


@pytest.mark.parametrize("party", (1, 2, 3))
def test_compute_key_may_not_administer(cluster, context, raw_key, party):
    client = client_for(cluster, context, party, role="compute")
    try:
        request_id = fresh_id()
        got_id, status, _, body = client.ask(status_request(request_id))
        assert (got_id, status) == (request_id, OK)
        for what, frame in (
                ("import", header(IMPORT_KEY, fresh_id()) + key_id("raw/evil") + struct.pack("<I", SEALED_AES128_SHARE)
                 + bytes(SEALED_AES128_SHARE)),
                ("list", header(LIST_KEYS, fresh_id()) + struct.pack("<H", 0)),
                ("delete", header(DELETE_KEY, fresh_id()) + key_id(RAW_KEY_NAME))):
            got_id, status, error, body = client.ask(frame)
            assert (got_id, status) == (frame[2:18], UNAUTHORIZED), f"{what}: status {status} ({error})"
            assert body == b""
    finally:
        client.close()
    listed = {(name, kvno) for name, kvno, _, _ in cluster.list_keys("raw/")}
    assert (RAW_KEY_NAME, 1) in listed and ("raw/evil", 1) not in listed
    assert_still_serving(cluster, raw_key)


@pytest.mark.parametrize("party", (1, 2, 3))
def test_unknown_client_key_gets_nothing(cluster, context, raw_key, party):
    public, secret = zmq.curve_keypair()
    stranger = RawClient(context, endpoint(cluster, party), server_public(cluster, party), public, secret)
    # A client that pins the wrong server key cannot complete the handshake either.
    admin = read_key_file(cluster.dir / "admin.key")
    wrong_pin = RawClient(context, endpoint(cluster, party), zmq.curve_keypair()[0], admin["public-key"],
                          admin["secret-key"])
    try:
        for client in (stranger, wrong_pin):
            client.send(status_request(fresh_id()))
            client.send(header(LIST_KEYS, fresh_id()) + struct.pack("<H", 0))
            client.send(compute_ctr(fresh_id()))
        assert stranger.receive(1500) is None, "a client with an unknown key got an answer"
        assert wrong_pin.receive(200) is None, "a client pinning the wrong server key got an answer"
    finally:
        stranger.close()
        wrong_pin.close()
    assert_still_serving(cluster, raw_key)


def test_flood_of_garbage_from_all_servers(cluster, clients, raw_key):
    """Many malformed frames at once, on every server: each is answered, none kills anything."""
    count = 300
    for client in clients.values():
        for _ in range(count):
            client.send(random_invalid_frame(secrets.randbelow(200)))
    for party, client in clients.items():
        answered = 0
        while answered < count:
            frame = client.receive()
            assert frame is not None, f"server {party} answered only {answered} of {count} garbage frames"
            assert parse_reply(frame)[1] == BAD_REQUEST
            answered += 1
    assert_still_serving(cluster, raw_key)


def test_client_vanishing_mid_job_leaves_servers_working(cluster, context, raw_key):
    """A client sends a real job to all three servers and disconnects before the reply."""
    ids = fresh_id()
    for party in (1, 2, 3):
        client = client_for(cluster, context, party)
        client.send(compute_ctr(ids, blocks=5000))
        client.close(linger_ms=1000)  # sent once the handshake is done, then gone
    time.sleep(0.3)
    assert_still_serving(cluster, raw_key)


@pytest.mark.parametrize("late_party", (1, 2, 3))
def test_a_copy_one_server_lacks_is_computed_nowhere(cluster, clients, raw_key, late_party):
    """No server computes a request that another does not hold: replicated sharing needs all
    three parties' inputs, and the two servers that have a copy must not run it with the third
    evaluating zeros (what they would reconstruct mixes one server's key shares in on their
    own). The two copies that came are answered once job_wait_ms (200 by default) has passed
    without the third server's note: Regrouping (send it again), since the server that lacks
    it is still heard from (a follower) or is the leader whose own copy is late (the client's
    link to it coming up); the late copy is answered the same at once, and the id stays
    taken."""
    request_id = fresh_id()
    frame = compute_ctr(request_id, blocks=3)
    on_time = [party for party in (1, 2, 3) if party != late_party]
    for party in on_time:
        clients[party].send(frame)
    reason = ("party 1 did not receive the request" if late_party == 1
              else f"party {late_party} did not confirm holding the request")
    expected = REGROUPING
    for party in on_time:
        got_id, status, error, body = parse_reply(clients[party].receive())
        assert (got_id, status, body) == (request_id, expected, b""), f"server {party}: status {status} ({error})"
        assert reason in error, error
    started = time.monotonic()
    got_id, status, error, body = clients[late_party].ask(frame)
    assert time.monotonic() - started < 1.0, "the late copy was not answered at once"
    assert (got_id, status, body) == (request_id, expected, b""), f"status {status} ({error})"
    assert reason in error, error
    assert clients[late_party].ask(frame)[1] == BAD_REQUEST
    assert_still_serving(cluster, raw_key)
