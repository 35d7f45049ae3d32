"""Fixtures for the integration tests: a real three-server cluster on loopback.

Run with `/usr/bin/python3 -m pytest tests/integration`; binaries come from
$MPC_BUILD_DIR (default build/). Every test runs under a hard timeout (SIGALRM,
default 60 s, `@pytest.mark.timeout(N)` to change it) and every subprocess call has its
own, so nothing hangs; every cluster is stopped whatever happens.
"""

from __future__ import annotations

import signal

import pytest
import zmq

from mpctest import mpc_cluster
from mpctest.mpc_cluster import Cluster
from mpctest.raw_frames import RAW_KEY_NAME

DEFAULT_TEST_TIMEOUT_S = 60


def pytest_configure(config):
    config.addinivalue_line("markers", "timeout(seconds): hard per-test time limit")
    config.addinivalue_line("markers", "long: the full form of a test whose short form runs in `make test` "
                                       "(`make test-long` runs these)")
    mpc_cluster.become_subreaper()


def pytest_sessionstart(session):
    missing = [str(path) for path in (mpc_cluster.mpcctl_binary(), mpc_cluster.server_binary())
               if not path.is_file()]
    if missing:
        raise pytest.UsageError("integration tests need built binaries (set MPC_BUILD_DIR): missing " +
                                ", ".join(missing))


class HardTimeout(Exception):
    pass


@pytest.fixture(autouse=True)
def hard_timeout(request):
    marker = request.node.get_closest_marker("timeout")
    seconds = int(marker.args[0]) if marker else DEFAULT_TEST_TIMEOUT_S

    def expire(signum, frame):
        raise HardTimeout(f"test exceeded its hard timeout of {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """One running three-server cluster shared by the tests of a module."""
    root = tmp_path_factory.mktemp("cluster") / "c"
    running = None
    try:
        running = mpc_cluster.start_cluster(root)
        yield running
    finally:
        if running is not None:
            running.stop()


@pytest.fixture
def fresh_cluster(tmp_path):
    """A cluster of this test's own (for tests that kill servers)."""
    running = None
    try:
        running = mpc_cluster.start_cluster(tmp_path / "c")
        yield running
    finally:
        if running is not None:
            running.stop()


def passive_gc2(protocol: str) -> str | None:
    """The security setting of the two-server suites' clusters: "passive" for gc2; lut2 has
    only that form."""
    return "passive" if protocol == "gc2" else None


@pytest.fixture(scope="module", params=["gc2", "lut2"])
def two_server_cluster(request, tmp_path_factory):
    """One running two-server cluster per protocol, shared by the tests of a module: gc2 of
    security = "passive" (half-gates; test_two_server_active.py runs the default, active)."""
    root = tmp_path_factory.mktemp(request.param) / "c"
    running = None
    try:
        running = mpc_cluster.start_cluster(root, request.param, security=passive_gc2(request.param))
        yield running
    finally:
        if running is not None:
            running.stop()


@pytest.fixture(params=["gc2", "lut2"])
def fresh_two_server_cluster(request, tmp_path):
    """A two-server cluster of this test's own, per protocol (for tests that kill servers); gc2
    of security = "passive", as two_server_cluster."""
    running = None
    try:
        running = mpc_cluster.start_cluster(tmp_path / "c", request.param, security=passive_gc2(request.param))
        yield running
    finally:
        if running is not None:
            running.stop()


@pytest.fixture(scope="module")
def context():
    """A ZeroMQ context for clients built by hand (raw_frames.py)."""
    ctx = zmq.Context()
    yield ctx
    ctx.term()


@pytest.fixture(scope="module")
def raw_key(cluster):
    """The AES-128 key of the raw-frame tests, imported into the module's cluster."""
    key_hex, _ = cluster.import_key(RAW_KEY_NAME, 1, "aes128")
    cluster.wait_until_serving((RAW_KEY_NAME, 1, "aes128"))
    return key_hex


@pytest.fixture
def degraded_cluster(tmp_path):
    """A cluster of this test's own with the product's default, two-party degraded service."""
    running = None
    try:
        running = mpc_cluster.start_cluster(tmp_path / "c", degraded_service="two-party")
        yield running
    finally:
        if running is not None:
            running.stop()
