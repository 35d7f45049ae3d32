"""Logins through engine outages, short form of `make soak`: the stock krb5kdc with the
protected krbtgt key and protected users' keys, three mpc-server processes with the default
degraded_service = "two-party", and kdc-storm offering logins open loop while an engine server
(the long form: each of two in turn) is killed and started again. Not one login may fail: the other two
servers serve through each outage, and the KDC's log counts every ticket the generator saw.

The pair that serves is actively secure and garbles every job, and makes AND material for it
at about 200,000 entries a second on two cores with AVX2 (a login takes about half a
million): with the KDC, the generator and a returning server on the same two cores it serves
a login every few seconds, the first from the material it made ahead while all three served.
Logins are offered at about that rate, so that some wait for the third server's return and
none waits past the client's 10 s. Each server goes down once its pair holds a login's worth
of material, as on a cluster that has run a while (mpc_pair_entries_ahead), and while it is
down one more login is asked for and must be served by the pair alone.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import time
from pathlib import Path

import pytest

from mpctest import mpc_cluster
from mpctest.prometheus_server import serve_metrics, wait_for_pair_stock
from mpctest.protected_kdc import ProtectedRealm

from mpctest import storm

PRINCIPALS = 20
RATE = 0.2
SECONDS = 50
OUTAGES = (1, 3)  # servers killed in turn, each for OUTAGE_S
OUTAGE_S = 8.0
READY_ENTRIES = 500_000  # a pair standing by makes half its pool ahead: 524,288 entries
AFTER_LAST_S = 3.0  # logins offered after the last restart


def one_login(realm: ProtectedRealm, keytab: Path, down: int) -> float:
    """Seconds one login took, asked for while server `down` is down (it stays down until the
    login ends, so the pair served it)."""
    started = time.monotonic()
    result = subprocess.run([str(storm.storm_binary()), "run", "--keytab", str(keytab), "--quiet",
                             "--concurrency", "1", "--count", "1", "--transport", "tcp", "--timeout", "10"],
                            env=realm.env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, f"a login while server {down} was down: {result.stdout}{result.stderr}"
    return time.monotonic() - started


# Short form: server 1 (the leader) down once within 30 s of logins; long form: servers 1 and 3
# in turn within 50 s.
@pytest.mark.timeout(300)
@pytest.mark.parametrize("outages,seconds", [pytest.param((1,), 30, id="server-1"),
                                             pytest.param(OUTAGES, SECONDS, id="servers-1-and-3",
                                                          marks=pytest.mark.long)])
def test_no_login_fails_while_engine_servers_go_down_in_turn(tmp_path, outages, seconds):
    cluster = mpc_cluster.Cluster(tmp_path / "c", degraded_service="two-party")
    cluster.init()
    endpoints = serve_metrics(cluster)
    cluster.start()
    # Two servers garble every job: on a busy 2-core test host a GCM prefetch queued behind
    # Kerberos jobs may need more than the default 2 s, and one call over it makes the router
    # refuse for unreachable_retry_ms. Operators size timeout_ms to their hosts the same way.
    cluster.set_client_timeout(cluster.compute_config, 5000)
    # The pair's logins take over a second: clients send over TCP alone, as operators are told
    # to, or each resent UDP request would be served again by the KDC's other worker.
    realm = ProtectedRealm(tmp_path / "realm", cluster, enrol_users=True, clients_use_tcp=True,
                           realm=f"D{secrets.token_hex(4).upper()}.TEST")
    try:
        realm.create()
        storm.add_principals(realm, PRINCIPALS)
        realm.protect()
        realm.mpcctl_kdc("protect", "--all-users")
        keytab = storm.make_keytab(realm, tmp_path / "storm.keytab", PRINCIPALS)
        realm.start_kdc(workers=2)
        warm = subprocess.run([str(storm.storm_binary()), "run", "--keytab", str(keytab), "--quiet",
                               "--concurrency", "4", "--duration", "1", "--transport", "tcp"],
                              env=realm.env, capture_output=True, text=True, timeout=60)
        assert warm.returncode == 0, warm.stdout + warm.stderr
        log_before = len(realm.kdc_log())
        logins = subprocess.Popen([str(storm.storm_binary()), "run", "--keytab", str(keytab), "--quiet",
                                   "--rate", str(RATE), "--duration", str(seconds), "--transport", "tcp",
                                   "--timeout", "10", "--seed", "7"],
                                  env=realm.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        started = time.monotonic()
        switches = {}
        served_alone = []  # seconds each login asked for during an outage took
        try:
            last_kill = started + seconds - AFTER_LAST_S - OUTAGE_S
            for party in outages:
                wait_for_pair_stock(endpoints, party, READY_ENTRIES, last_kill)
                cluster.kill_server(party)
                killed = time.monotonic()
                served_alone.append(one_login(realm, keytab, party))
                time.sleep(max(0.0, OUTAGE_S - (time.monotonic() - killed)))
                for server, count in cluster.mode_switches().items():
                    switches[server] = max(switches.get(server, 0), count)
                cluster.restart_server(party)
            stdout, stderr = logins.communicate(timeout=seconds + 60)
        finally:
            if logins.poll() is None:
                logins.kill()
                logins.wait()
        summary = json.loads(stdout)
        assert summary["failed"] == 0 and summary["unstarted"] == 0, (summary["first_errors"], stderr[-2000:])
        assert summary["ok"] == summary["offered"] > RATE * seconds / 2, summary
        assert storm.issued(realm.kdc_log()[log_before:]) >= summary["ok"]
        print(f"logins served by a pair alone: {', '.join(f'{s:.1f} s' for s in served_alone)}")
        # Servers 2 and 3 saw server 1 leave (two switches: out, and back once it rejoined);
        # servers 1 and 2 saw server 3 leave.
        for party in outages:
            assert all(switches.get(other, 0) >= 1 for other in (1, 2, 3) if other != party), switches
    finally:
        realm.stop()
        cluster.stop()
