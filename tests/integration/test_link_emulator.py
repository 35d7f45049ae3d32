"""mpc-link-emulator, the shaped links of `make bench-links` (tests/bench/links_bench.py).

A real process relaying real TCP connections on loopback. Only lower bounds are asserted (a
busy host can make a link slower, never faster): a round trip takes at least twice the delay,
a transfer at least its bytes over the rate, and two routes between the same two hosts share
one link; every byte arrives unchanged and in order, both ways.
"""
from __future__ import annotations

import hashlib
import os
import socket
import subprocess
import threading
import time

import pytest

from mpctest import mpc_cluster


def emulator_binary():
    return mpc_cluster.build_dir() / "tests" / "bench" / "tools" / "mpc-link-emulator"


class Sink:
    """Accepts connections and, for each, reads to the end: (bytes, digest, end time)."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.received: list[tuple[int, str, float]] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._read, args=(connection,), daemon=True).start()

    def _read(self, connection):
        digest, count = hashlib.sha256(), 0
        while chunk := connection.recv(1 << 20):
            digest.update(chunk)
            count += len(chunk)
        connection.close()
        self.received.append((count, digest.hexdigest(), time.monotonic()))


def echo_server():
    listener = socket.create_server(("127.0.0.1", 0))

    def serve():
        while True:
            connection, _ = listener.accept()

            def echo(c=connection):
                while data := c.recv(1 << 16):
                    c.sendall(data)
                c.close()
            threading.Thread(target=echo, daemon=True).start()
    threading.Thread(target=serve, daemon=True).start()
    return listener.getsockname()[1]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start(delay_us: int, rate_mbit: float, routes: list[tuple[str, int]]) -> tuple[subprocess.Popen, list[int]]:
    ports = [free_port() for _ in routes]
    args = [str(emulator_binary()), "--delay-us", str(delay_us), "--rate-mbit", str(rate_mbit)]
    for (link, target), port in zip(routes, ports):
        args += ["--route", f"{link}:{port}:{target}"]
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert '"listening"' in process.stdout.readline()
    return process, ports


def send(port: int, payload: bytes) -> float:
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port)) as connection:
        connection.sendall(payload)
    return started


@pytest.mark.timeout(60)
def test_a_round_trip_takes_twice_the_delay_and_echoes_the_bytes():
    process, (port,) = start(5000, 1000, [("a>b", echo_server())])
    try:
        with socket.create_connection(("127.0.0.1", port)) as connection:
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            for size in (1, 1000, 70000):
                message = os.urandom(size)
                started = time.monotonic()
                connection.sendall(message)
                echoed = b""
                while len(echoed) < size:
                    echoed += connection.recv(1 << 20)
                took = time.monotonic() - started
                assert echoed == message
                assert took >= 0.010, f"a {size}-byte round trip took {took * 1e3:.2f} ms, under 2 x 5 ms"
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.mark.timeout(60)
def test_a_transfer_takes_its_bytes_over_the_rate_and_two_routes_of_a_link_share_it():
    sink = Sink()
    # 40 Mbit/s: 2 MB take at least 0.4 s; two routes of one link from host a to host b carry
    # 4 MB in at least 0.8 s. A route from b to a takes the link the other way round.
    process, ports = start(0, 40, [("a>b", sink.port), ("a>b", sink.port), ("b>a", sink.port)])
    try:
        payload = os.urandom(2 << 20)
        started = send(ports[0], payload)
        deadline = time.monotonic() + 30
        while not sink.received and time.monotonic() < deadline:
            time.sleep(0.01)
        count, digest, ended = sink.received[0]
        assert (count, digest) == (len(payload), hashlib.sha256(payload).hexdigest())
        assert ended - started >= 0.4 * 0.95, f"2 MB at 40 Mbit/s in {ended - started:.3f} s"

        sink.received.clear()
        threads = [threading.Thread(target=send, args=(port, payload)) for port in ports[:2]]
        started = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        while len(sink.received) < 2 and time.monotonic() < deadline + 30:
            time.sleep(0.01)
        assert ended_last(sink) - started >= 0.8 * 0.95, "two routes of one link did not share its rate"
        sink.received.clear()
        started = send(ports[2], payload)
        while not sink.received and time.monotonic() < deadline + 60:
            time.sleep(0.01)
        assert sink.received[0][:2] == (len(payload), hashlib.sha256(payload).hexdigest())
    finally:
        process.terminate()
        process.wait(timeout=10)


def ended_last(sink: Sink) -> float:
    return max(ended for _, _, ended in sink.received)


def test_a_bad_route_is_refused_with_a_clear_error():
    result = subprocess.run([str(emulator_binary()), "--delay-us", "10", "--rate-mbit", "100", "--route", "a:70000:1"],
                            capture_output=True, text=True, timeout=10)
    assert result.returncode == 2 and "not a port: 70000" in result.stderr, result.stderr
    result = subprocess.run([str(emulator_binary()), "--delay-us", "10", "--route", "a:1:2"],
                            capture_output=True, text=True, timeout=10)
    assert result.returncode == 2 and "usage" in result.stderr, result.stderr
