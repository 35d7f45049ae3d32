"""The pair that serves while a server is down (degraded_service = "two-party") runs
authenticated garbling under security = "active", the default of a three-server cluster: each
member is held to its half of every key by the checks the third server dealt while all three
served (protocol/client_checks/pair_checks.hpp), and every output is padded for the client.

A pair member that feeds another half of a key (mpc-server-faults "share-bit"), another pad
("output-shift") or another share of a Kerberos record's mask ("krb-mask-bit") has its job
refused with MPC_EABORT, whichever member it is, for AES, GCM and Kerberos jobs alike; honest
jobs before and after are right. Under security = "passive" the same deviation changes the result
and nobody notices, so the refusals above are the checks' doing.
"""

from __future__ import annotations

import secrets
import time

import pytest

from mpctest import mpc_cluster
from mpctest.client_handle import settled
from mpctest.gcm_client import MPC_EABORT, MPC_EREFUSED, GcmError, ctr_keystream, import_gcm_key
from mpctest.gcm_client import Engine as GcmEngine
from mpctest.krb_client import ENCTYPES, Engine, KrbError, k5, wait_until_krb_serving  # noqa: F401
from mpctest.prometheus_server import scrape, serve_metrics, wait_for_pair_stock

PAIR = {1: "two-party without server 3", 2: "two-party without server 3"}
# Each deviation, the jobs it is made in, and what the refusal names.
SHARE_CHECK = "another key share than the one its checks were dealt for"
DEVIATIONS = {"share-bit": (("krb", "gcm", "aes"), SHARE_CHECK),
              "output-shift": (("gcm", "aes"), "computed with another pad than the client's"),
              "krb-mask-bit": (("krb",), "")}


def start(root, security: str, metrics: dict | None = None) -> mpc_cluster.Cluster:
    """A three-server cluster of `security`; with `metrics`, each server's metrics endpoint is
    put in it ({party: "HOST:PORT"})."""
    cluster = mpc_cluster.Cluster(root, protocol="rss3", degraded_service="two-party")
    cluster.init()
    for party in cluster.parties:
        cluster.set_server_setting(party, "security", security)
    if metrics is not None:
        metrics.update(serve_metrics(cluster))
    # mpcctl's AES jobs go through the admin configuration (timeout_ms 2 s): a pair member
    # started a moment ago makes the AND material of its first job as the job waits, which on
    # a loaded 2-core host takes longer than that, and the refusal then never reaches mpcctl.
    mpc_cluster.Cluster.set_client_timeout(cluster.admin_config, 30000)
    cluster.start()
    return cluster


def restart_pair_member(cluster, party: int, fault: str | None = None) -> None:
    """Pair member `party` started again (deviating as `fault` says), server 3 still down: the
    two form the pair again once they hear each other."""
    cluster.kill_server(party)
    cluster.restart_server(party, fault=fault)
    cluster.wait_for_modes(PAIR, deadline_s=30)


class Keys:
    """An aes128-cts-hmac-sha1-96 key for checksums, an AES-128 key and the GCM key, imported
    while all three serve (so that each server deals its pair checks), with their references."""

    def __init__(self, cluster, k5):
        self.admin = Engine(cluster.admin_config)
        self.krb = Engine(cluster.compute_config, timeout_ms=20000)
        self.gcm = GcmEngine(cluster.compute_config, timeout_ms=20000)
        algorithm, _, krb5_enctype, cksumtype, size = ENCTYPES["aes128"]
        protocol_key = secrets.token_bytes(size)
        self.krb_id = ("pair/aes128", 1, algorithm)
        self.admin.import_key(*self.krb_id, protocol_key)
        self.checksum_of = lambda data: k5.make_checksum(cksumtype, krb5_enctype, protocol_key, 17, data)
        self.aes_hex, _ = cluster.import_key("pair/aes", 1, "aes128")
        self.gcm_key = import_gcm_key(cluster)
        wait_until_krb_serving(self.krb, self.krb_id)

    def close(self) -> None:
        for handle in (self.gcm, self.krb, self.admin):
            handle.close()


def keystream(cluster, blocks: int = 2) -> bytes:
    return cluster.keystream("pair/aes", 1, "aes128", "00" * 16, blocks)


# Short form: server 1 (the pair's leader and garbler) deviating; long form: each member in turn.
@pytest.mark.timeout(600)
@pytest.mark.parametrize("deviating", [pytest.param((1,), id="leader"),
                                       pytest.param((1, 2), id="each-member", marks=pytest.mark.long)])
def test_a_deviating_pair_member_is_refused_and_under_passive_changes_results_unnoticed(tmp_path, k5, deviating):
    cluster = start(tmp_path / "active", "active")
    keys = None
    try:
        keys = Keys(cluster, k5)
        expected_keystream = mpc_cluster.openssl_ctr_keystream("aes128", keys.aes_hex, "00" * 16, 2)
        cluster.wait_for_modes({p: "three-party" for p in cluster.parties})
        cluster.kill_server(3)
        cluster.wait_for_modes(PAIR, deadline_s=30)
        data = secrets.token_bytes(40)
        assert settled(lambda: keys.krb.checksum(keys.krb_id, 17, data)) == keys.checksum_of(data)
        for party in deviating:
            for fault, (kinds, caught_by) in DEVIATIONS.items():
                restart_pair_member(cluster, party, fault)
                calls = {"krb": (KrbError, lambda: keys.krb.checksum(keys.krb_id, 17, data)),
                         "gcm": (GcmError, lambda: keys.gcm.prefetch(1, 2))}
                for kind in kinds:
                    if kind == "aes":
                        refused = cluster.mpcctl("aes", "keystream", "--cluster", str(cluster.admin_config),
                                                 *cluster.key_args("pair/aes", 1, "aes128"), "--counter",
                                                 "00" * 16, "--blocks", "2", check=False, timeout=120)
                        assert refused.returncode != 0, (party, fault, "a deviating pair member's job was served")
                        assert caught_by in refused.stderr, (party, fault, refused.stderr)
                        continue
                    error, call = calls[kind]
                    with pytest.raises(error) as failure:
                        settled(call)
                    assert failure.value.code == MPC_EABORT, (party, fault, kind, failure.value)
                    assert caught_by in failure.value.message, (party, fault, kind, failure.value)
            restart_pair_member(cluster, party)
        assert settled(lambda: keys.krb.checksum(keys.krb_id, 17, data)) == keys.checksum_of(data)
        [(nonce, stream)] = settled(lambda: keys.gcm.prefetch(1, 2))
        assert stream == ctr_keystream(keys.gcm_key, nonce, 2, 2)
        assert keystream(cluster) == expected_keystream
    finally:
        if keys is not None:
            keys.close()
        cluster.stop()

    passive = start(tmp_path / "passive", "passive")
    keys = None
    try:
        keys = Keys(passive, k5)
        expected_keystream = mpc_cluster.openssl_ctr_keystream("aes128", keys.aes_hex, "00" * 16, 2)
        passive.kill_server(3)
        passive.wait_for_modes(PAIR, deadline_s=30)
        assert keystream(passive) == expected_keystream
        restart_pair_member(passive, 2, "share-bit")
        assert keystream(passive) != expected_keystream  # wrong, and served without a word
    finally:
        if keys is not None:
            keys.close()
        passive.stop()


@pytest.mark.timeout(300)
def test_each_pair_makes_its_preprocessing_before_it_is_needed(tmp_path, k5):
    """Each pair's leader reports the AND material its standing engine made ahead
    (mpc_pair_entries_ahead, up to half the pool) while all three serve; then a server goes
    down and its pair serves from that stock."""
    endpoints: dict = {}
    cluster = start(tmp_path / "ahead", "active", endpoints)
    keys = None
    try:
        keys = Keys(cluster, k5)
        deadline = time.monotonic() + 120
        for missing in (1, 2, 3):
            wait_for_pair_stock(endpoints, missing, 400_000, deadline)
            # Only a pair's leader makes the material's announcements, so only it counts them.
            follower = (missing + 1) % 3 + 1
            assert f'mpc_pair_entries_ahead{{without="{missing}"}}' not in scrape(endpoints[follower])[0]
        cluster.kill_server(3)
        data = secrets.token_bytes(40)
        assert settled(lambda: keys.krb.checksum(keys.krb_id, 17, data)) == keys.checksum_of(data)
        cluster.wait_for_modes(PAIR, deadline_s=30)
        assert scrape(endpoints[1])[0]['mpc_pair_entries_ahead{without="3"}'] > 0
        # The pair serves a seal's own prefetch (one nonce of 1 + 3 blocks) and refuses a
        # refill of many nonces, which would take the material of the logins waiting
        # meanwhile (the router's smallest refill is 16 nonces of 1 + 3 blocks): under "active"
        # degraded_max_job_blocks is 48.
        assert len(settled(lambda: keys.gcm.prefetch(1, 3))) == 1
        with pytest.raises(GcmError) as refused:
            keys.gcm.prefetch(16, 3)
        assert refused.value.code == MPC_EREFUSED and "exceeds max_job_blocks 48" in refused.value.message, refused.value
    finally:
        if keys is not None:
            keys.close()
        cluster.stop()
