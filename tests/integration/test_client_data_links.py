"""Clients' requests over data links (mpc-engine/node/client_links.hpp on the server,
mpc-engine/client/server_channel.hpp in the client library): a client whose cluster settings
name each server's data_endpoint sends its requests there, AES-256-GCM frames on a TCP link
keyed by a handshake on the pinned keys, instead of through ZeroMQ's I/O threads.

What is asserted, with real servers on loopback and libmpcclient loaded in this process:
  - GCM jobs over the links give AESGCM's results, and this process holds one link to each
    server's data port;
  - a relay in front of server 1's data port sees neither the request's data nor the key's
    name; a bit it flips closes the link (the server logs that the frame failed
    authentication), and the next call finds a new link and is served;
  - a client key the servers do not know gets no link, and no answer;
  - after a server restarts, the first call is served: the client replaces the closed link
    before sending on it;
  - a client without data endpoints is served over CurveZMQ as before, and so is one whose
    data endpoint never answers a handshake, which it tries again only after a pause.
"""

from __future__ import annotations

import os
import secrets
import socket
import threading
import time
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from mpctest.data_link_tools import Relay, client_config_with, data_port, established_sockets
from mpctest.gcm_client import KEY, Engine, GcmError, import_gcm_key, seal, wait_until_gcm_serving


def own_links_to(port: int) -> int:
    """ESTABLISHED TCP connections of this process whose far end is local port `port`."""
    inodes = set()
    for fd in Path("/proc/self/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    return sum(1 for inode in established_sockets(port, far_end=True) if inode in inodes)


def assert_seal_equals_aesgcm(engine: Engine, key: bytes, length: int = 100, aad: bytes | None = None) -> None:
    [(nonce, keystream)] = engine.prefetch(1, (length + 15) // 16)
    plaintext = secrets.token_bytes(length)
    aad = secrets.token_bytes(24) if aad is None else aad
    sealed = seal(engine, nonce, keystream, plaintext, aad)
    assert sealed == AESGCM(key).encrypt(nonce, plaintext, aad)
    assert engine.open(nonce, aad, sealed[:-16], sealed[-16:]) == plaintext


@pytest.fixture
def linked(fresh_cluster):
    cluster = fresh_cluster
    key = import_gcm_key(cluster)
    assert "data_endpoint" in cluster.compute_config.read_text(), "cluster init wrote no client data endpoints"
    engine = Engine(cluster.compute_config)
    try:
        wait_until_gcm_serving(engine)
        yield cluster, key, engine
    finally:
        engine.close()


def test_gcm_jobs_over_data_links_equal_aesgcm(linked):
    cluster, key, engine = linked
    for length in (0, 1, 100, 1000):
        assert_seal_equals_aesgcm(engine, key, length)
    for party in (1, 2, 3):
        assert own_links_to(data_port(cluster, party)) == 1, f"no data link to server {party}"


def test_the_link_hides_the_request_and_a_flipped_bit_closes_it(linked):
    cluster, key, _ = linked
    relay = Relay(data_port(cluster, 1))
    config = client_config_with(cluster, "relayed", {1: f"tcp://127.0.0.1:{relay.port}"})
    engine = Engine(config, timeout_ms=5000)
    try:
        marker = secrets.token_bytes(48)
        assert_seal_equals_aesgcm(engine, key, 64, aad=marker)
        with relay.lock:
            assert len(relay.recordings) == 1, "the request did not go over the data link"
            recorded = bytes(relay.recordings[0])
        assert len(recorded) > 200
        assert marker not in recorded and KEY[0].encode() not in recorded

        closed_before = len(cluster.log_events(1, "client data link closed"))
        relay.flip_one_bit_soon(after=8)
        try:
            engine.prefetch(1)  # its frame to server 1 is the one altered: it may fail
        except GcmError:
            pass
        closed = cluster.wait_for_log_event(1, "client data link closed",
                                            lambda event: "failed authentication" in event.get("error", ""))
        assert len(cluster.log_events(1, "client data link closed")) > closed_before and closed, cluster.log_tail()
        assert_seal_equals_aesgcm(engine, key, 64)
        with relay.lock:
            assert len(relay.recordings) == 2, "the next call did not make a new link"
    finally:
        engine.close()
        relay.stopping = True
        relay.listener.close()


def test_a_key_the_servers_do_not_know_gets_no_link(linked):
    cluster, _, _ = linked
    cluster.mpcctl("keygen", "--out", str(cluster.dir / "stranger"))
    config = client_config_with(cluster, "stranger", {}, key_file="stranger.key")
    before = {party: own_links_to(data_port(cluster, party)) for party in (1, 2, 3)}
    engine = Engine(config, timeout_ms=1500)
    try:
        with pytest.raises(GcmError):
            engine.prefetch(1)
        assert {party: own_links_to(data_port(cluster, party)) for party in (1, 2, 3)} == before
        # The client does not even try a data link while CurveZMQ refuses its key; a data port
        # refuses the key by itself too (test_data_links.py, a stranger's hello).
        assert cluster.wait_for_log_event(1, "connection rejected"), cluster.log_tail()
    finally:
        engine.close()


def test_after_a_server_restarts_the_first_call_is_served(linked):
    cluster, key, engine = linked
    assert_seal_equals_aesgcm(engine, key)
    cluster.kill_server(2)
    cluster.restart_server(2)
    # Another handle (the same client key) waits until the cluster serves again and prefetches
    # the nonce, so that this handle's first call since the restart is a tag: a tag is never
    # sent twice, so a request lost on the closed link would fail it.
    other = Engine(cluster.compute_config)
    try:
        wait_until_gcm_serving(other)
        [(nonce, keystream)] = other.prefetch(1, 4)
    finally:
        other.close()
    plaintext, aad = secrets.token_bytes(64), secrets.token_bytes(16)
    assert seal(engine, nonce, keystream, plaintext, aad) == AESGCM(key).encrypt(nonce, plaintext, aad)
    # The handle makes its new link once its CurveZMQ session to the restarted server is up
    # again, which on a busy host may come after that first call (served over CurveZMQ then).
    deadline = time.monotonic() + 5
    while own_links_to(data_port(cluster, 2)) != 1:
        assert time.monotonic() < deadline, "no new data link to the restarted server"
        assert_seal_equals_aesgcm(engine, key)
        time.sleep(0.1)


def test_a_client_without_data_endpoints_is_served_over_curvezmq(linked):
    cluster, key, _ = linked
    config = client_config_with(cluster, "zmq-only", {1: None, 2: None, 3: None})
    before = {party: own_links_to(data_port(cluster, party)) for party in (1, 2, 3)}
    engine = Engine(config)
    try:
        assert_seal_equals_aesgcm(engine, key)
        assert {party: own_links_to(data_port(cluster, party)) for party in (1, 2, 3)} == before
    finally:
        engine.close()


def test_a_data_port_that_never_answers_costs_one_try_per_pause(linked):
    cluster, key, _ = linked
    silent = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                accepted.append(silent.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    config = client_config_with(cluster, "silent", {1: f"tcp://127.0.0.1:{silent.getsockname()[1]}"})
    engine = Engine(config, timeout_ms=5000)
    try:
        # Long enough for a second try after the first pause: neither try may cost a call.
        started = time.monotonic()
        calls = 0
        while time.monotonic() - started < 2.0:
            assert_seal_equals_aesgcm(engine, key, 32)
            calls += 1
        assert 1 <= len(accepted) <= 3, f"{len(accepted)} connections in {calls} calls to a data port that never answers"
        assert own_links_to(data_port(cluster, 2)) >= 1  # the other servers' links are up
    finally:
        engine.close()
        silent.close()
        for connection in accepted:
            connection.close()
