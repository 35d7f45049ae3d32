"""A rolling upgrade across a change of the peer protocol (wire::kPeerProtocolVersion).

Servers of an older release run as the test server with MPC_FAULT=peer-protocol=1: it writes
version 1 where this release writes its own, reads only version 1, and, as releases did before
versions were compared, hears every frame from a peer and goes on sending to it. A server of
this release must leave such a peer out as if it were down, so that the two servers of one
release serve in two-party service at every step of an upgrade one server at a time, and take
it back once it runs this release.
"""

from __future__ import annotations

import secrets
import time

import pytest

from mpctest import mpc_cluster

KEY = ("upgrade/aes", 1, "aes128")
ALL_THREE = {1: "three-party", 2: "three-party", 3: "three-party"}
OLDER = "peer-protocol=1"
THIS_PROTOCOL = 10  # wire::kPeerProtocolVersion


@pytest.fixture
def cluster(degraded_cluster):
    return degraded_cluster


def wait_for_modes_of(cluster, expected: dict[int, str], deadline_s: float = 30) -> None:
    """The servers named reach these modes; a server left out alone answers Status in a mode
    of its own, which says nothing of the upgrade."""
    deadline = time.monotonic() + deadline_s
    seen = {}
    while time.monotonic() < deadline:
        seen = cluster.modes()
        if all(seen.get(party) == mode for party, mode in expected.items()):
            return
        time.sleep(0.1)
    raise AssertionError(f"cluster modes {seen}, expected {expected}\n{cluster.log_tail()}")


def served_like_openssl(cluster, key_hex: str) -> None:
    counter = secrets.token_hex(16)
    assert cluster.keystream(*KEY, counter, 5) == mpc_cluster.openssl_ctr_keystream(KEY[2], key_hex, counter, 5)


def left_out(cluster, party: int, other: int) -> list[dict]:
    return [entry for entry in cluster.log_events(party, "peer speaks another peer protocol: left out until both "
                                                         "run the same release")
            if entry.get("party") == other and entry.get("its_protocol") == 1
            and entry.get("this_protocol") == THIS_PROTOCOL]


@pytest.mark.timeout(300)
def test_servers_of_two_releases_serve_two_by_two_through_an_upgrade(cluster):
    key_hex, _ = cluster.import_key(*KEY)
    cluster.wait_until_serving(KEY, deadline_s=30)
    cluster.wait_for_modes(ALL_THREE, deadline_s=30)

    # Before the upgrade: servers 2 and 3 run the older release, server 1 this one. The older
    # pair hears server 1 only until server 1 has heard them and stops sending to them.
    for party in (2, 3):
        cluster.kill_server(party)
        cluster.restart_server(party, fault=OLDER)
    wait_for_modes_of(cluster, {2: "two-party without server 1", 3: "two-party without server 1"})
    served_like_openssl(cluster, key_hex)
    assert left_out(cluster, 1, 2) and left_out(cluster, 1, 3), cluster.log_tail()

    # Server 2 upgraded: servers 1 and 2 serve; server 3, alone on the older release, is left out.
    cluster.kill_server(2)
    cluster.restart_server(2)
    wait_for_modes_of(cluster, {1: "two-party without server 3", 2: "two-party without server 3"})
    served_like_openssl(cluster, key_hex)
    assert left_out(cluster, 2, 3), cluster.log_tail()
    assert not left_out(cluster, 2, 1), cluster.log_tail()

    # Server 3 upgraded: all three serve again, and say so.
    cluster.kill_server(3)
    cluster.restart_server(3)
    cluster.wait_for_modes(ALL_THREE, deadline_s=30)
    served_like_openssl(cluster, key_hex)
    for party, other in ((1, 3), (2, 3)):
        assert [entry for entry in cluster.log_events(party, "peer speaks this server's peer protocol again")
                if entry.get("party") == other], (party, cluster.log_tail())
