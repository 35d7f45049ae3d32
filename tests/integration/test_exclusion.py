"""An operator's exclusion of one server of three (`mpcctl cluster exclude N`): the other two serve
as a pair, actively secure, however well the excluded server is heard; it computes nothing, keys
cannot change meanwhile, a restart of any server keeps the exclusion, and only `mpcctl cluster
readmit N` brings it back. A server that missed the word while down follows both of its peers.

Results are checked against OpenSSL and libk5crypto; the excluded server's job count shows it
computed nothing."""

from __future__ import annotations

import secrets

import pytest

from mpctest.krb_client import KrbError, k5  # noqa: F401 (k5: a fixture)
from mpctest.service_checks import ALL_THREE, jobs_of, keys_enrolled, served, status_lines


@pytest.mark.timeout(300)
def test_an_excluded_server_stays_out_until_an_operator_readmits_it(degraded_cluster, k5):
    cluster = degraded_cluster
    with keys_enrolled(cluster) as (admin, engine, aes_key, krb):
        served(cluster, k5, aes_key, engine, krb)

        # Only an admin key excludes; a reason is needed.
        refused = cluster.mpcctl("cluster", "exclude", "3", "--cluster", str(cluster.compute_config), "--reason", "x",
                                 check=False)
        assert refused.returncode != 0 and "admin client key" in refused.stdout + refused.stderr, refused
        result = cluster.mpcctl("cluster", "exclude", "3", "--cluster", str(cluster.admin_config), "--reason",
                                "host under investigation")
        assert "server 3 excluded" in result.stdout, result.stdout
        cluster.wait_for_modes({1: "two-party without server 3", 2: "two-party without server 3", 3: "three-party"})
        for party, line in status_lines(cluster).items():
            assert "excluded server 3 since unix ms" in line and "(operator: host under investigation)" in line, line
            assert ", exclusions 1, disputes 0 (with none)" in line, line

        # The pair serves; the excluded server computes nothing however long it is heard.
        jobs_before = jobs_of(cluster, 3)
        for _ in range(3):
            served(cluster, k5, aes_key, engine, krb)
        assert jobs_of(cluster, 3) == jobs_before
        assert cluster.log_events(3, "server excluded from service until an operator readmits it")

        # One exclusion at a time; keys do not change meanwhile, nothing is left behind.
        other = cluster.mpcctl("cluster", "exclude", "2", "--cluster", str(cluster.admin_config), "--reason", "y",
                               check=False)
        assert other.returncode != 0 and "server 3 is excluded already" in other.stdout, other.stdout
        with pytest.raises(KrbError) as failure:
            admin.import_key("excl/new", 1, krb["id"][2], secrets.token_bytes(16))
        assert "excluded" in str(failure.value), failure.value
        assert {entry[0] for entry in cluster.list_keys("excl/")} == {"excl/aes", "excl/krb"}

        # Restarts bring nobody back: a pair member's, then the excluded server's own.
        for party in (1, 3):
            cluster.kill_server(party)
            cluster.restart_server(party)
            cluster.wait_for_modes({1: "two-party without server 3", 2: "two-party without server 3",
                                    3: "three-party"}, deadline_s=30)
            served(cluster, k5, aes_key, engine, krb)
            assert "excluded server 3" in status_lines(cluster)[party]
        assert jobs_of(cluster, 3) == 0

        result = cluster.mpcctl("cluster", "readmit", "3", "--cluster", str(cluster.admin_config))
        assert "server 3 readmitted" in result.stdout, result.stdout
        cluster.wait_for_modes(ALL_THREE, deadline_s=30)
        served(cluster, k5, aes_key, engine, krb)
        assert jobs_of(cluster, 3) > 0
        assert all("excluded none" in line for line in status_lines(cluster).values())
        admin.import_key("excl/new", 1, krb["id"][2], secrets.token_bytes(16))


@pytest.mark.timeout(300)
def test_a_server_that_missed_the_word_follows_both_peers(degraded_cluster, k5):
    cluster = degraded_cluster
    with keys_enrolled(cluster) as (admin, engine, aes_key, krb):

        # Server 1 is down when the operator excludes server 2: mpcctl says it is not done, but
        # server 3 and server 2 itself took it. Server 1, started again, follows both.
        cluster.kill_server(1)
        partial = cluster.mpcctl("cluster", "exclude", "2", "--cluster", str(cluster.admin_config), "--reason",
                                 "rebuild", check=False)
        assert partial.returncode != 0 and "both other servers must take it" in partial.stderr, partial
        cluster.restart_server(1)
        cluster.wait_for_modes({1: "two-party without server 2", 3: "two-party without server 2", 2: "three-party"},
                               deadline_s=30)
        assert cluster.log_events(1, "exclusion taken from both peers")
        served(cluster, k5, aes_key, engine, krb)

        # Server 3 is down when the operator readmits server 2: mpcctl says it is not done, but
        # servers 1 and 2 took it, and server 3, started again, follows both.
        cluster.kill_server(3)
        partial = cluster.mpcctl("cluster", "readmit", "2", "--cluster", str(cluster.admin_config), check=False)
        assert partial.returncode != 0 and "both other servers must take it" in partial.stderr, partial
        cluster.restart_server(3)
        cluster.wait_for_modes(ALL_THREE, deadline_s=30)
        assert cluster.log_events(3, "readmission taken from both peers")
        served(cluster, k5, aes_key, engine, krb)
