"""Kerberos garblings prepared ahead of time on a real two-server (gc2, security = "passive",
half-gates) cluster: two mpc-server processes over CurveZMQ, the client through libmpcclient.so. A login's three jobs on an
aes256-cts-hmac-sha1-96 key (the preauth decryption, the AS-REP encryption, the request's
checksum) run again and again; server 1 prepares garblings of their shapes in idle time, and
later jobs run on them. MIT libk5crypto is the outside truth for every result, before and while
prepared garblings are used, and after server 2 and then server 1 restart (each restart loses
garblings: the jobs run online until the servers have prepared new ones).

Which jobs ran on a prepared garbling, and when one was prepared, the servers' debug logs say
("Kerberos job" with a nonzero "prepared", "garbling prepared").
"""

from __future__ import annotations

import json
import secrets
import time
from pathlib import Path

import pytest

from mpctest.mpc_cluster import Cluster, pick_base_port
from mpctest.krb_client import ENCTYPES, wait_until_krb_serving
from mpctest.krb_client import Engine as KrbEngine
from mpctest.krb_client import k5  # noqa: F401  (the libk5crypto fixture)

ALGORITHM, _, ENCTYPE, CKSUMTYPE, KEY_BYTES = ENCTYPES["aes256"]
KEY_ID = ("krb/prepared@EXAMPLE.COM", 2, ALGORITHM)
# A login's jobs: a 28-byte timestamp (56 bytes encrypted), a 249-byte reply part (265 with
# its confounder), a 271-byte request.
TIMESTAMP_BYTES, REPLY_BYTES, REQUEST_BYTES = 28, 249, 271
SHAPES = 3
READY_PER_SHAPE = 2
# How the servers' logs name the login's shapes: circuit id and data length.
LOGIN_SHAPES = ("circuit 14 data 56 bytes", "circuit 12 data 265 bytes", "circuit 15 data 271 bytes")


def server_log(cluster: Cluster, party: int) -> list[dict]:
    records = []
    for line in (cluster.server_dir(party) / "server.log").read_text(errors="replace").splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records


def prepared_jobs(cluster: Cluster, party: int) -> int:
    """Kerberos jobs this server ran on a prepared garbling."""
    return sum(1 for r in server_log(cluster, party) if r.get("event") == "Kerberos job" and int(r.get("prepared", 0)))


def krb_jobs(cluster: Cluster, party: int) -> int:
    return sum(1 for r in server_log(cluster, party) if r.get("event") == "Kerberos job")


def preparations(cluster: Cluster) -> dict[str, int]:
    """Garblings server 1 prepared so far, per login shape."""
    counts = {shape: 0 for shape in LOGIN_SHAPES}
    for r in server_log(cluster, 1):
        if r.get("event") == "garbling prepared":
            for shape in LOGIN_SHAPES:
                if str(r.get("shape", "")).endswith(shape):
                    counts[shape] += 1
    return counts


def wait_for_preparations(cluster: Cluster, since: dict[str, int], per_shape: int, deadline_s: float = 60) -> None:
    """Waits until server 1 has prepared `per_shape` more garblings of every login shape."""
    deadline = time.monotonic() + deadline_s
    while any(preparations(cluster)[shape] < since[shape] + per_shape for shape in LOGIN_SHAPES):
        if time.monotonic() > deadline:
            raise AssertionError(f"garblings prepared after {deadline_s} s: {preparations(cluster)}, "
                                 f"expected {per_shape} more than {since}\n{cluster.log_tail(12)}")
        time.sleep(0.1)


def login_jobs(engine: KrbEngine, k5, key: bytes) -> None:
    """A login's three Kerberos jobs, each checked against libk5crypto."""
    timestamp = secrets.token_bytes(TIMESTAMP_BYTES)
    ciphertext = k5.encrypt(ENCTYPE, key, 1, timestamp)
    assert engine.decrypt(KEY_ID, 1, ciphertext) == timestamp
    reply = secrets.token_bytes(REPLY_BYTES)
    assert k5.decrypt(ENCTYPE, key, 3, engine.encrypt(KEY_ID, 3, reply)) == reply
    request = secrets.token_bytes(REQUEST_BYTES)
    assert engine.checksum(KEY_ID, 56, request) == k5.make_checksum(CKSUMTYPE, ENCTYPE, key, 56, request)


def debug_cluster(root: Path, protocol: str) -> Cluster:
    """A started cluster whose servers log at debug level (gc2: passive, whose garblings are
    prepared ahead; the active form's AND material is test_two_server_active.py's)."""
    cluster = None
    for attempt in range(3):  # a port taken between the probe and the bind: new ports
        cluster = Cluster(root / f"c{attempt}", base_port=pick_base_port(), protocol=protocol,
                          security="passive" if protocol == "gc2" else None)
        try:
            cluster.init()
            for party in cluster.parties:
                cluster.set_server_setting(party, "log_level", "debug")
            cluster.start()
            return cluster
        except Exception:
            cluster.stop()
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


@pytest.fixture(scope="module")
def gc2(tmp_path_factory):
    """A gc2 cluster with debug logs and one aes256-cts-hmac-sha1-96 key."""
    cluster = debug_cluster(tmp_path_factory.mktemp("gc2-prepared"), "gc2")
    engines = []
    try:
        admin = KrbEngine(cluster.admin_config)
        engines.append(admin)
        engine = KrbEngine(cluster.compute_config)
        engines.append(engine)
        key = secrets.token_bytes(KEY_BYTES)
        admin.import_key(*KEY_ID, key)
        wait_until_krb_serving(engine, KEY_ID)
        yield {"cluster": cluster, "engine": engine, "key": key}
    finally:
        for opened in engines:
            opened.close()
        cluster.stop()


def rounds_on_prepared_garblings(gc2, k5, rounds: int) -> int:
    """Runs `rounds` logins, pausing between them (a KDC's idle time, in which the servers
    refill), and returns how many of their jobs ran on prepared garblings."""
    cluster, engine, key = gc2["cluster"], gc2["engine"], gc2["key"]
    before = prepared_jobs(cluster, 1)
    for _ in range(rounds):
        login_jobs(engine, k5, key)
        time.sleep(0.3)
    return prepared_jobs(cluster, 1) - before


@pytest.mark.timeout(180)
def test_jobs_run_on_prepared_garblings_and_agree_with_libk5crypto(gc2, k5):
    cluster, engine, key = gc2["cluster"], gc2["engine"], gc2["key"]
    since = preparations(cluster)
    login_jobs(engine, k5, key)  # online: the servers learn the three shapes
    wait_for_preparations(cluster, since, READY_PER_SHAPE)
    used = rounds_on_prepared_garblings(gc2, k5, 4)
    # Two garblings per shape were ready before the first login, and each used one is refilled.
    assert used >= SHAPES * READY_PER_SHAPE, f"{used} of {4 * SHAPES} jobs ran on prepared garblings"
    assert prepared_jobs(cluster, 2) == prepared_jobs(cluster, 1)


def events(cluster: Cluster, party: int, event: str) -> int:
    return sum(1 for r in server_log(cluster, party) if r.get("event") == event)


def restart(cluster: Cluster, party: int) -> None:
    """Starts the killed server again and waits until it serves. Its client port, just freed,
    is now and then refused for a moment ("refusing to serve"): it tries again."""
    deadline = time.monotonic() + 30
    for _ in range(5):
        serving, refused = events(cluster, party, "serving"), events(cluster, party, "refusing to serve")
        cluster.restart_server(party)
        while events(cluster, party, "serving") == serving:
            assert time.monotonic() < deadline, f"server {party} did not restart\n{cluster.log_tail(12)}"
            if events(cluster, party, "refusing to serve") > refused:
                break
            time.sleep(0.05)
        else:
            return
        time.sleep(0.5)
    raise AssertionError(f"server {party} refused to serve five times\n{cluster.log_tail(12)}")


def restart_and_check(gc2, k5, party: int) -> None:
    cluster, engine, key = gc2["cluster"], gc2["engine"], gc2["key"]
    cluster.kill_server(party)
    restart(cluster, party)
    # The client's links notice the old process is gone and reconnect; a request sent in the
    # instant before that would be lost with the dead connection.
    time.sleep(0.5)
    wait_until_krb_serving(engine, KEY_ID, deadline_s=30)
    # Right after the restart the garblings the other server holds no longer fit: the jobs run
    # online and stay correct.
    online_before = krb_jobs(cluster, 1) - prepared_jobs(cluster, 1)
    since = preparations(cluster)
    login_jobs(engine, k5, key)
    assert krb_jobs(cluster, 1) - prepared_jobs(cluster, 1) == online_before + SHAPES
    # Then the servers prepare anew, and the jobs use them.
    wait_for_preparations(cluster, since, 1)
    used = rounds_on_prepared_garblings(gc2, k5, 3)
    assert used >= SHAPES, f"{used} jobs ran on prepared garblings after server {party} restarted"


@pytest.mark.timeout(240)
def test_a_restarted_server_2_gets_new_garblings(gc2, k5):
    restart_and_check(gc2, k5, 2)


@pytest.mark.timeout(240)
def test_a_restarted_server_1_prepares_anew(gc2, k5):
    restart_and_check(gc2, k5, 1)


@pytest.mark.timeout(120)
def test_a_lut2_cluster_prepares_its_kerberos_garblings_too(tmp_path_factory, k5):
    """lut2 clusters run Kerberos jobs on a garbled-circuit engine of their own: the same."""
    cluster = debug_cluster(tmp_path_factory.mktemp("lut2-prepared"), "lut2")
    engines = []
    try:
        admin = KrbEngine(cluster.admin_config)
        engines.append(admin)
        engine = KrbEngine(cluster.compute_config)
        engines.append(engine)
        key = secrets.token_bytes(KEY_BYTES)
        admin.import_key(*KEY_ID, key)
        wait_until_krb_serving(engine, KEY_ID)
        since = preparations(cluster)
        login_jobs(engine, k5, key)
        wait_for_preparations(cluster, since, 1)
        before = prepared_jobs(cluster, 1)
        login_jobs(engine, k5, key)
        assert prepared_jobs(cluster, 1) - before == SHAPES
    finally:
        for opened in engines:
            opened.close()
        cluster.stop()
