"""The servers' data links (mpc-engine/engines/three_party/data_plane.hpp): batch layer messages
over AES-256-GCM TCP links, one per batch worker (lane), keyed by a handshake on the pinned keys.

What is asserted, with real servers on loopback:
  - jobs spread over every lane give OpenSSL's keystream, and each lane is one link (the
    workers' lanes, and the shell's for batches small enough to run on its own thread);
  - a relay between server 1 and server 2 records the stream: it is framed, carries none of the
    key's or the output's bytes, and no two frames begin alike (plaintext layer frames of one
    lane would all begin with the same version, type and epoch);
  - a bit flipped on that link is caught: the lane is closed ("failed authentication"), no wrong
    keystream reaches the client, and the next job finds a new link;
  - strangers on a data port are refused, and silent ones hold up no server's lanes;
  - a restarted server's lanes come back by themselves;
  - a server without data links (an older release) is served over CurveZMQ, with a warning,
    until it has them.
"""

from __future__ import annotations

import os
import re
import secrets
import socket
import struct
import threading
import time
from pathlib import Path

import pytest

from mpctest import toml_files
from mpctest.data_link_tools import HELLO_MAGIC, Relay, data_port, established_sockets, frames_of
from mpctest.mpc_cluster import Cluster, openssl_ctr_keystream

KEY = ("links/k", 1, "aes128")
WORKERS = 3
KRB_WORKERS = 2  # the workers of Kerberos batches, beside `workers` (kKrbBatchesInFlight)
REJOIN_WINDOW_S = 6.0


def established_links(port: int) -> int:
    """ESTABLISHED TCP connections whose local port is `port` (the listening end of a lane)."""
    return len(established_sockets(port))


def thread_names(pid: int) -> list[str]:
    names = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            names.append((task / "comm").read_text().strip())
        except OSError:
            pass
    return names


def set_limit(cluster: Cluster, party: int, name: str, value: int) -> None:
    cluster.set_server_table_setting(party, "limits", name, value)


def keystream_job(cluster: Cluster, counter: str, blocks: int):
    return cluster.mpcctl("aes", "keystream", "--cluster", str(cluster.admin_config), *cluster.key_args(*KEY),
                          "--counter", counter, "--blocks", str(blocks), check=False, timeout=60)


def assert_keystream(cluster: Cluster, key_hex: str, blocks: int) -> None:
    counter = secrets.token_hex(16)
    result = keystream_job(cluster, counter, blocks)
    assert result.returncode == 0, result.stderr + cluster.log_tail()
    assert Cluster.keystream_of(result) == openssl_ctr_keystream("aes128", key_hex, counter, blocks)


@pytest.fixture
def lanes_cluster(tmp_path):
    """A cluster with three workers per server (passive security, so that a change to a layer
    message would reach the output unless the link itself refuses it), and a relay in front of
    server 2's data port for server 1's lanes."""
    cluster = Cluster(tmp_path / "c")
    relay = None
    try:
        cluster.init()
        relay = Relay(data_port(cluster, 2))
        for party in cluster.parties:
            set_limit(cluster, party, "workers", WORKERS)
            cluster.set_server_setting(party, "security", "passive")
        server1 = cluster.server_dir(1) / "server.toml"
        server1.write_text(server1.read_text().replace(f"127.0.0.1:{data_port(cluster, 2)}\"",
                                                       f"127.0.0.1:{relay.port}\""))
        cluster.start()
        key_hex, _ = cluster.import_key(*KEY)
        cluster.wait_until_serving(KEY)
        yield cluster, relay, key_hex
    finally:
        cluster.stop()
        if relay is not None:
            relay.close()


@pytest.mark.timeout(120)
def test_jobs_over_every_lane_match_openssl_and_the_link_carries_no_secret(lanes_cluster):
    cluster, relay, key_hex = lanes_cluster
    counters = [secrets.token_hex(16) for _ in range(2 * WORKERS)]
    blocks = 20000  # two batches each (16,384 + the rest), too many for the shell's own thread
    results: dict[str, object] = {}

    def run(counter: str) -> None:
        results[counter] = keystream_job(cluster, counter, blocks)

    threads = [threading.Thread(target=run, args=(counter,)) for counter in counters]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=90)
    expected = {}
    for counter in counters:
        result = results[counter]
        assert result.returncode == 0, result.stderr + cluster.log_tail()
        expected[counter] = openssl_ctr_keystream("aes128", key_hex, counter, blocks)
        assert Cluster.keystream_of(result) == expected[counter]

    # Every lane of every server carried batches: one link per worker into each data port, and
    # the shell's lane (the one-block jobs that waited for the cluster to serve).
    for party in cluster.parties:
        assert established_links(data_port(cluster, party)) == WORKERS + 1, f"server {party}'s lanes"
    assert len(relay.recordings) == WORKERS + 1
    # ... and the threads that carry them are named for what they do (top -H, perf).
    for party in cluster.parties:
        names = thread_names(cluster.server_pid(party))
        assert names.count("batch worker") == WORKERS + KRB_WORKERS, (party, names)
        assert names.count("data lane in") == WORKERS, (party, names)  # lane 0: the shell reads it

    # What went over server 1's lanes to server 2: framed ciphertext, nothing in clear.
    frames = [frame for recording in relay.recordings for frame in frames_of(bytes(recording))]
    payload = sum(len(frame) for frame in frames)
    assert payload >= 2 * WORKERS * 16384 * 5120 // 8 * 0.9, f"only {payload} bytes of frames were seen"
    beginnings = [frame[:14] for frame in frames if len(frame) >= 14]
    assert len(beginnings) > 100 and len(set(beginnings)) == len(beginnings), \
        "frames begin alike: layer messages crossed the link unencrypted"
    captured = b"".join(bytes(recording) for recording in relay.recordings)
    secrets_in_clear = {"the key": bytes.fromhex(key_hex),
                        **{f"keystream {counter}": expected[counter][:16] for counter in counters}}
    for name, needle in secrets_in_clear.items():
        assert needle not in captured, f"{name} crossed the data link in clear"


@pytest.mark.timeout(120)
def test_a_bit_flipped_on_a_data_link_is_refused_and_the_link_comes_back(lanes_cluster):
    cluster, relay, key_hex = lanes_cluster
    assert_keystream(cluster, key_hex, 20000)
    links_before = len(relay.recordings)

    relay.flip_one_bit_soon()
    counter = secrets.token_hex(16)
    result = keystream_job(cluster, counter, 20000)
    assert relay.flipped, "the relay saw no frame to alter"
    if result.returncode == 0:  # the client may try once more: then the answer must be right
        assert Cluster.keystream_of(result) == openssl_ctr_keystream("aes128", key_hex, counter, 20000), \
            "an altered layer message reached the output"
    # (A flip in a frame's length instead leaves the frame unfinished until the lane's stall
    # limit: closed all the same.)
    refusals = [event for event in cluster.log_events(2, "data link closed")
                if re.search("failed authentication|stalled", event.get("error", ""))]
    assert refusals, "server 2 did not refuse the altered frame\n" + cluster.log_tail()

    deadline = time.monotonic() + REJOIN_WINDOW_S
    while True:
        counter = secrets.token_hex(16)
        result = keystream_job(cluster, counter, 20000)
        if result.returncode == 0:
            break
        assert time.monotonic() < deadline, result.stderr + cluster.log_tail()
    assert Cluster.keystream_of(result) == openssl_ctr_keystream("aes128", key_hex, counter, 20000)
    assert len(relay.recordings) > links_before, "the lane did not connect again"

    # The same on the shell's lane, which one-block jobs take, read by the shell's own thread.
    links_before = len(relay.recordings)
    refusals_before = len(cluster.log_events(2, "data link closed"))
    relay.flip_one_bit_soon(after=20)
    deadline = time.monotonic() + REJOIN_WINDOW_S
    while True:
        counter = secrets.token_hex(16)
        result = keystream_job(cluster, counter, 1)
        if result.returncode == 0:
            assert Cluster.keystream_of(result) == openssl_ctr_keystream("aes128", key_hex, counter, 1), \
                "an altered layer message reached the output"
            if relay.flipped and len(relay.recordings) > links_before:
                break
        assert time.monotonic() < deadline, result.stderr + cluster.log_tail()
    shell_refusals = [event for event in cluster.log_events(2, "data link closed")[refusals_before:]
                      if event.get("lane") == 0 and re.search("failed authentication|stalled", event.get("error", ""))]
    assert shell_refusals, "server 2 did not refuse the altered frame on the shell's lane\n" + cluster.log_tail()


def hello_from_a_stranger() -> bytes:
    return HELLO_MAGIC + secrets.token_bytes(32) + secrets.token_bytes(32) + struct.pack(">I", 0)


@pytest.mark.timeout(120)
def test_strangers_on_a_data_port_are_refused_and_silent_ones_hold_up_nothing(fresh_cluster):
    cluster = fresh_cluster
    key_hex, _ = cluster.import_key(*KEY)
    cluster.wait_until_serving(KEY)
    port = data_port(cluster, 2)

    # An unpinned key gets no reply: the connection is closed.
    with socket.create_connection(("127.0.0.1", port), timeout=5) as stranger:
        stranger.sendall(hello_from_a_stranger())
        assert stranger.recv(64) == b"", "a stranger's hello was answered"
    assert cluster.wait_for_log_event(2, "data link refused", lambda event: "not pinned" in event.get("error", "")), \
        cluster.log_tail()

    # Connections that never finish a handshake do not delay server 1's lanes after its restart
    # (a lane that cannot connect would send by CurveZMQ meanwhile: the lanes' own log says).
    silent = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(20)]
    try:
        lanes_before = len(cluster.log_events(2, "data link up"))
        cluster.kill_server(1)
        cluster.restart_server(1)
        started = time.monotonic()
        while True:
            counter = secrets.token_hex(16)
            result = keystream_job(cluster, counter, 20000)
            if result.returncode == 0 and len(cluster.log_events(2, "data link up")) > lanes_before:
                break
            assert time.monotonic() - started < REJOIN_WINDOW_S, \
                f"no data link {REJOIN_WINDOW_S} s after the restart: {result.stderr}{cluster.log_tail()}"
            time.sleep(0.2)
        assert Cluster.keystream_of(result) == openssl_ctr_keystream("aes128", key_hex, counter, 20000)
    finally:
        for connection in silent:
            connection.close()
    assert_keystream(cluster, key_hex, 100)
    assert not cluster.log_events(1, "data link unavailable: layer messages go by CurveZMQ until it is back")


@pytest.mark.timeout(120)
def test_a_server_without_data_links_is_served_over_curvezmq_until_it_has_them(tmp_path):
    """Server 2 as a release without data links (no data_endpoint of its own), while server 1
    is told to reach it over one: every job still runs, server 1 says it sends by CurveZMQ,
    and once server 2 listens the lanes move to data links by themselves."""
    cluster = Cluster(tmp_path / "c")
    try:
        cluster.init()
        config = cluster.server_dir(2) / "server.toml"
        own_endpoint = f"tcp://127.0.0.1:{data_port(cluster, 2)}"
        assert toml_files.value(config, "data_endpoint") == own_endpoint
        toml_files.remove_value(config, "data_endpoint")
        cluster.start()
        key_hex, _ = cluster.import_key(*KEY)
        cluster.wait_until_serving(KEY)
        for blocks in (1, 20000):
            assert_keystream(cluster, key_hex, blocks)
        warnings = cluster.log_events(1, "data link unavailable: layer messages go by CurveZMQ until it is back")
        assert warnings and all(event.get("to") == 2 for event in warnings)
        assert established_links(data_port(cluster, 2)) == 0

        toml_files.set_value(config, "data_endpoint", own_endpoint)
        cluster.kill_server(2)
        cluster.restart_server(2)
        deadline = time.monotonic() + REJOIN_WINDOW_S
        while True:
            served = keystream_job(cluster, "0" * 32, 20000).returncode == 0
            if served and cluster.log_events(1, "data link back"):
                break
            assert time.monotonic() < deadline, cluster.log_tail()
            time.sleep(0.2)
        assert_keystream(cluster, key_hex, 20000)
        assert established_links(data_port(cluster, 2)) >= 1
    finally:
        cluster.stop()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("party", (2, 3))
def test_a_restarted_servers_lanes_come_back(fresh_cluster, party):
    cluster = fresh_cluster
    key_hex, _ = cluster.import_key(*KEY)
    cluster.wait_until_serving(KEY)
    assert_keystream(cluster, key_hex, 20000)
    assert established_links(data_port(cluster, party)) >= 1

    cluster.kill_server(party)
    cluster.restart_server(party)
    deadline = time.monotonic() + REJOIN_WINDOW_S
    while keystream_job(cluster, "0" * 32, 20000).returncode != 0:
        assert time.monotonic() < deadline, cluster.log_tail()
        time.sleep(0.2)
    assert_keystream(cluster, key_hex, 20000)
    # The old process's links went with it; the lanes into the new one are a worker's each.
    assert 1 <= established_links(data_port(cluster, party)) <= lanes_into(cluster, party)


def lanes_into(cluster: Cluster, party: int) -> int:
    """Lanes a server's previous party may open: the shell's, its workers' (one per core
    unless set) and the two Kerberos workers'."""
    config = (cluster.server_dir(party) / "server.toml").read_text()
    workers = re.search(r"(?m)^workers = (\d+)$", config)
    return 1 + (int(workers.group(1)) if workers else max(2, os.cpu_count() or 2)) + 2
