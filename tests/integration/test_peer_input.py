"""Bad input on the servers' peer sockets, where only the other two servers may connect.

Peer frames (mpc-engine/wire/peer_messages.hpp):
  u8 version (2, the peer protocol) | u8 type | u64 epoch | u32 sequence | body
  Batch (1): u8 circuit | u32 slice count | slices (32-byte client key | 16-byte id | 32-byte
             request digest | u32 first | u32 blocks | u32 first nonce | u32 nonces), for an AES
             circuit
  Layer (2): u32 layer | payload
  Abort (3): u16 reason | u16-length detail
A key that is not a peer's gets nothing through; a peer's key sending garbage, stale or
hostile frames never takes a server down, and the cluster keeps computing correctly.
"""

from __future__ import annotations

import secrets
import struct
import time

import pytest

from mpctest.raw_frames import RawClient, assert_still_serving, read_key_file, server_public

PEER_PROTOCOL = 10  # wire::kPeerProtocolVersion
BATCH, LAYER, ABORT = 1, 2, 3
AES128_ENCRYPT_AND32 = 1


def peer_endpoint(cluster, party: int) -> str:
    return f"tcp://127.0.0.1:{cluster.base_port + 10 + party}"


def peer_frame(kind: int, epoch: int, sequence: int, body: bytes) -> bytes:
    return bytes([PEER_PROTOCOL, kind]) + struct.pack("<QI", epoch, sequence) + body


def batch_frame(epoch: int, sequence: int, slices: list[tuple[bytes, bytes, int, int]]) -> bytes:
    body = bytes([AES128_ENCRYPT_AND32]) + struct.pack("<I", len(slices))
    for client, request, first, blocks in slices:
        body += client + request + bytes(32) + struct.pack("<IIII", first, blocks, 0, 0)
    return peer_frame(BATCH, epoch, sequence, body)


def impersonate(cluster, context, as_party: int, to_party: int) -> RawClient:
    """A connection to `to_party`'s peer socket with `as_party`'s own server key."""
    keys = read_key_file(cluster.server_dir(as_party) / "server.key")
    return RawClient(context, peer_endpoint(cluster, to_party), server_public(cluster, to_party),
                     keys["public-key"], keys["secret-key"])


@pytest.mark.parametrize("party", [1, 2, 3])
def test_unknown_key_on_the_peer_socket_gets_nowhere(cluster, context, raw_key, party):
    import zmq
    public, secret = zmq.curve_keypair()
    stranger = RawClient(context, peer_endpoint(cluster, party), server_public(cluster, party), public, secret)
    try:
        # A stranger posing as the leader: if this got through, the follower would run a batch.
        stranger.send(batch_frame(secrets.randbits(64), 1, [(bytes(32), secrets.token_bytes(16), 0, 64)]))
        stranger.send(secrets.token_bytes(100))
        time.sleep(0.3)
    finally:
        stranger.close()
    assert_still_serving(cluster, raw_key)


def test_authenticated_peer_sending_garbage_leaves_the_cluster_working(cluster, context, raw_key):
    # Server 2's key talking to server 1's peer socket, next to the real server 2.
    fake = impersonate(cluster, context, as_party=2, to_party=1)
    try:
        for length in (0, 1, 2, 13, 14, 17, 18, 64, 4096):
            fake.send(secrets.token_bytes(length))
        epoch = secrets.randbits(64)
        fake.send(peer_frame(LAYER, epoch, 7, struct.pack("<I", 0) + secrets.token_bytes(500)))  # no such batch
        fake.send(peer_frame(ABORT, epoch, 7, struct.pack("<HH", 5, 4) + b"oops"))
        fake.send(peer_frame(LAYER, epoch, 7, b"\x00"))                      # truncated layer header
        fake.send(batch_frame(epoch, 1, [(bytes(32), bytes(16), 0, 1)]))   # batches only come from server 1
        fake.send([b"two", b"frames"])
        time.sleep(0.3)
    finally:
        fake.close()
    assert_still_serving(cluster, raw_key)


def test_forged_batches_from_the_leaders_key_are_refused_or_fail_cleanly(cluster, context, raw_key):
    # Server 1's key talking to server 2: an oversized batch, an empty one, and one naming
    # jobs nobody sent (evaluated on zeros, it times out waiting for a leader that never ran it).
    refused_before = len(cluster.log_events(2, "replayed batch id refused"))
    fake = impersonate(cluster, context, as_party=1, to_party=2)
    try:
        epoch = secrets.randbits(64)
        fake.send(batch_frame(epoch, 1, [(bytes(32), secrets.token_bytes(16), 0, 1 << 30)]))
        fake.send(batch_frame(epoch, 2, [(bytes(32), secrets.token_bytes(16), 0, 1 << 20),
                                         (bytes(32), secrets.token_bytes(16), 0, 1 << 20)]))
        fake.send(peer_frame(BATCH, epoch, 3, bytes([AES128_ENCRYPT_AND32]) + struct.pack("<I", 0)))
        fake.send(batch_frame(epoch, 4, [(bytes(32), secrets.token_bytes(16), 0, 100)]))
        fake.send(batch_frame(epoch, 4, [(bytes(32), secrets.token_bytes(16), 0, 100)]))  # replayed id
        time.sleep(1.5)  # the phantom batch times out within peer_timeout_ms
    finally:
        fake.close()
    # The first batch 4 ran (and failed: no leader); its copy was refused, not run again.
    deadline = time.monotonic() + 5
    refused = []
    while time.monotonic() < deadline:
        refused = cluster.log_events(2, "replayed batch id refused")[refused_before:]
        if refused:
            break
        time.sleep(0.1)
    assert [entry.get("sequence") for entry in refused] == [4], cluster.log_tail(20)
    assert_still_serving(cluster, raw_key)
