"""The servers' Prometheus endpoint (metrics_listen), scraped over HTTP from a running cluster:
job and batch counters that grow with the jobs run, an abort counted when a server deviates,
the cluster mode and the missing server after a kill, and nothing secret in any scrape."""
from __future__ import annotations

import json
import re
import secrets
import shutil
import struct
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from mpctest import mpc_cluster, toml_files
from mpctest.prometheus_server import PROMETHEUS_DIR, Prometheus, scrape, serve_metrics

KEY = ("metrics/aes", 1, "aes128")


@pytest.fixture
def metered(tmp_path):
    """A three-server cluster (two-party service when one is down) whose servers serve metrics."""
    cluster = mpc_cluster.Cluster(tmp_path / "c", degraded_service="two-party")
    try:
        cluster.init()
        endpoints = serve_metrics(cluster)
        cluster.start()
        yield cluster, endpoints
    finally:
        cluster.stop()


@pytest.mark.timeout(180)
def test_metrics_follow_jobs_aborts_and_modes(metered):
    cluster, endpoints = metered
    key_hex, _ = cluster.import_key(*KEY)
    cluster.wait_until_serving(KEY)
    before = {party: scrape(endpoint)[0] for party, endpoint in endpoints.items()}
    for party, samples in before.items():
        assert samples[f'mpc_server_info{{server="{party}",protocol="rss3",security="active"}}'] == 1
        assert samples["mpc_client_data_links"] >= 0
        assert samples["mpc_stored_keys"] == 1
        assert samples['mpc_cluster_mode{mode="three-party"}'] == 1

    for _ in range(5):
        cluster.keystream(*KEY, secrets.token_hex(16), 64)
    for party, endpoint in endpoints.items():
        samples, text = scrape(endpoint)
        assert samples["mpc_jobs_total"] >= before[party]["mpc_jobs_total"] + 5, party
        assert samples["mpc_batches_total"] > before[party]["mpc_batches_total"]
        assert samples["mpc_and_gates_total"] > before[party]["mpc_and_gates_total"]
        kind = 'kind="ctr_keystream"'
        assert samples[f'mpc_jobs_by_kind_total{{{kind},status="ok"}}'] >= 5, party
        assert samples[f"mpc_job_seconds_count{{{kind}}}"] >= 5
        assert samples[f'mpc_job_seconds_bucket{{{kind},le="+Inf"}}'] == samples[f"mpc_job_seconds_count{{{kind}}}"]
        assert 0 < samples[f"mpc_job_seconds_sum{{{kind}}}"] < 60 * samples[f"mpc_job_seconds_count{{{kind}}}"]
        # The ring: batch payload goes to the next server and comes from the previous one.
        following, preceding = party % 3 + 1, (party + 1) % 3 + 1
        sent = f'mpc_batch_payload_bytes_total{{server="{following}",direction="sent"}}'
        received = f'mpc_batch_payload_bytes_total{{server="{preceding}",direction="received"}}'
        assert samples[sent] > before[party].get(sent, 0) and samples[received] > before[party].get(received, 0)
        assert samples['mpc_client_links_refused_total{reason="at_limit"}'] == 0
        # Every peer is heard (a heartbeat at least; a session re-established after start is
        # unheard until the peer's next frame): its age stays within seconds.
        ages = [f'mpc_peer_heard_age_seconds{{server="{peer}"}}' for peer in (1, 2, 3) if peer != party]
        deadline = time.monotonic() + 10
        while not all(samples.get(age, 1e9) < 5 for age in ages) and time.monotonic() < deadline:
            time.sleep(0.2)
            samples, _ = scrape(endpoint)
        assert all(samples.get(age, 1e9) < 5 for age in ages), samples
        assert samples['mpc_cpu_seconds_total{thread="mpc-server"}'] > 0, samples
        assert "mpc_gcm_nonces_held" in samples and "mpc_prepared_garblings" in samples
        # Nothing that names a key, a client or a request: labels take a handful of values.
        assert KEY[0] not in text and key_hex not in text
        for pub in (cluster.dir / "compute.pub", cluster.dir / "admin.pub"):
            assert pub.read_text().strip() not in text
        assert all(re.fullmatch(r'[a-z_]+(\{[a-z_]+="[a-zA-Z0-9 _-]+"(,[a-z_]+="([a-z0-9_.-]+|\+Inf)")*\})?', name)
                   for name in samples), samples

    # A client whose key no server admits: each server's ZAP handler refuses its handshake.
    cluster.mpcctl("keygen", "--out", str(cluster.dir / "stranger"))
    stranger = cluster.dir / "stranger.toml"
    shutil.copyfile(cluster.compute_config, stranger)
    toml_files.set_value(stranger, "secret_key_file", "stranger.key")
    refused = cluster.mpcctl("aes", "keystream", "--cluster", str(stranger), *cluster.key_args(*KEY),
                             "--counter", "0" * 32, "--blocks", "1", check=False)
    assert refused.returncode != 0
    for party, endpoint in endpoints.items():
        samples, _ = scrape(endpoint)
        assert samples['mpc_handshakes_refused_total{listener="clients"}'] >= 1, party
        assert samples['mpc_handshakes_refused_total{listener="peers"}'] == 0, party

    # A server that flips an AND share is refused, and an honest server that concludes the check
    # counts the refusal. The client library may send the refused job again to the pair that
    # serves from then on, so mpcctl's answer need not show it; the honest servers' counters do.
    # The other honest server may take up the disputes of the two that concluded first and give
    # the batch up for the new service (Regrouping) before its own conclusion: it then counts
    # nothing, and shows the pair it serves in.
    cluster.kill_server(2)
    cluster.restart_server(2, fault="and-share-bit=2")

    def counting() -> list[int]:
        return [party for party in (1, 3)
                if scrape(endpoints[party])[0].get("mpc_verification_failures_total", 0) >= 1]

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not counting():
        try:
            cluster.keystream(*KEY, secrets.token_hex(16), 8, timeout=10)
        except mpc_cluster.MpcctlError:
            pass
        time.sleep(0.2)
    counted = counting()
    assert counted, "the deviating server's job was not refused"
    # The honest servers that count it (the deviating one may have answered its copy
    # Regrouping: it too suspends three-party service on the abort) show the dispute or the
    # suspension.
    named = {}
    for party in (1, 3):
        samples, _ = scrape(endpoints[party])
        if party not in counted:
            assert samples['mpc_cluster_mode{mode="two-party"}'] == 1, (party, samples)
            continue
        assert samples['mpc_jobs_by_kind_total{kind="ctr_keystream",status="verification_failed"}'] >= 1, party
        assert samples["mpc_disputes_total"] >= 1 or samples["mpc_three_party_suspended"] == 1, party
        named[party] = {name: value for name, value in samples.items() if name.startswith("mpc_aborts_total")}
    # The AND check failed at a verifier of server 2's gates, which names it; the others heard
    # of the abort from a peer.
    assert any(found.get('mpc_aborts_total{check="and_check",server="2"}', 0) >= 1 for found in named.values()), named
    assert all(found for found in named.values()), named

    # Server 3 gone: the two others say so.
    cluster.kill_server(3)
    cluster.wait_for_modes({1: "two-party without server 3", 2: "two-party without server 3"}, deadline_s=30)
    for party in (1, 2):
        samples, _ = scrape(endpoints[party])
        assert samples['mpc_cluster_mode{mode="two-party"}'] == 1
        assert samples['mpc_server_missing{server="3"}'] == 1
        assert samples['mpc_server_missing{server="1"}'] == 0
        assert samples["mpc_mode_switches_total"] >= 1
        other = 2 if party == 1 else 1
        assert samples[f'mpc_peer_heard_age_seconds{{server="{other}"}}'] < 5, samples
        # Server 3: not heard since its session was lost, or heard long enough ago to be down.
        assert samples.get('mpc_peer_heard_age_seconds{server="3"}', 1e9) > 0.5, samples


@pytest.mark.timeout(180)
def test_a_lut2_leader_shows_its_lookup_table_stock(tmp_path):
    """Two servers with lookup tables: the leader makes entries ahead of the jobs, and says how
    many; the other server keeps no count of them and shows none."""
    cluster = mpc_cluster.Cluster(tmp_path / "lut2", protocol="lut2")
    try:
        cluster.init()
        endpoints = serve_metrics(cluster)
        cluster.start()
        cluster.import_key("metrics/lut", 1, "aes128")
        cluster.keystream("metrics/lut", 1, "aes128", secrets.token_hex(16), 4, timeout=60)
        deadline = time.monotonic() + 60
        while scrape(endpoints[1])[0].get("mpc_lut_entries_ahead", 0) == 0:
            assert time.monotonic() < deadline, "the leader never showed lookup-table entries made ahead"
            time.sleep(0.5)
        assert "mpc_lut_entries_ahead" not in scrape(endpoints[2])[0]
        # lut2 is semi-honest (docs/two-server.md): the label says so.
        assert 'mpc_server_info{server="1",protocol="lut2",security="passive"}' in scrape(endpoints[1])[0]
    finally:
        cluster.stop()


@pytest.mark.timeout(120)
def test_an_active_two_server_cluster_says_so(tmp_path):
    """A gc2 cluster is of security = "active" (authenticated garbling) unless its servers say
    otherwise, and labels itself active."""
    cluster = mpc_cluster.Cluster(tmp_path / "gc2", protocol="gc2")
    try:
        cluster.init()
        for party in cluster.parties:
            cluster.unset_server_setting(party, "security")
        endpoints = serve_metrics(cluster)
        cluster.start()
        for party in cluster.parties:
            samples = scrape(endpoints[party])[0]
            assert samples[f'mpc_server_info{{server="{party}",protocol="gc2",security="active"}}'] == 1
    finally:
        cluster.stop()


def test_the_endpoint_serves_metrics_only(metered):
    _, endpoints = metered
    for path in ("/", "/keys", "/metrics/../status"):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"http://{endpoints[1]}{path}", timeout=5)
        assert refused.value.code == 404
    request = urllib.request.Request(f"http://{endpoints[1]}/metrics", data=b"x", method="POST")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=5)
    assert refused.value.code == 405


# ---------------------------------------------------------------- Prometheus and the rules



def promtool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["promtool", *args], cwd=PROMETHEUS_DIR, capture_output=True, text=True, timeout=60)


def test_alert_rules_are_valid_and_fire_as_their_tests_say():
    checked = promtool("check", "rules", "mpc-kdc-rules.yml")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    tested = promtool("test", "rules", "mpc-kdc-rules-test.yml")
    assert tested.returncode == 0 and "SUCCESS" in tested.stdout, tested.stdout + tested.stderr
    # Every rule has a test that expects it to fire.
    rules = re.findall(r"- alert: (\w+)", (PROMETHEUS_DIR / "mpc-kdc-rules.yml").read_text())
    tests = (PROMETHEUS_DIR / "mpc-kdc-rules-test.yml").read_text()
    assert rules and all(f"alertname: {rule}" in tests for rule in rules), rules


def router_metric_names(tmp_path: Path) -> set[str]:
    """The names `mpcctl kdc metrics` writes, from a fresh counters file (router_metrics_layout.h:
    the magic, then 92 counters)."""
    page = tmp_path / "router.metrics"
    page.write_bytes(struct.pack("<Q", 0x4D50434B444D3032) + bytes(4096 - 8))
    result = subprocess.run([str(mpc_cluster.mpcctl_binary()), "kdc", "metrics", "--file", str(page)],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return set(re.findall(r"^# TYPE (\w+) ", result.stdout, re.M))


def test_the_dashboard_queries_only_metrics_the_servers_and_the_router_serve(metered, tmp_path):
    cluster, endpoints = metered
    _, text = scrape(endpoints[1])
    served = set(re.findall(r"^# TYPE (\w+) ", text, re.M)) | router_metric_names(tmp_path) | {"up"}
    dashboard = json.loads((PROMETHEUS_DIR / "grafana-dashboard.json").read_text())
    rules = (PROMETHEUS_DIR / "mpc-kdc-rules.yml").read_text()
    queried = set()
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            queried |= set(re.findall(r"\b(mpc_[a-z_]+|up)\b", target["expr"]))
    queried |= set(re.findall(r"expr: .*?\b(mpc_[a-z_]+|up)\b", rules))
    queried = {re.sub(r"_(bucket|sum|count)$", "", name) for name in queried}
    assert queried and queried <= served, queried - served
    assert {"mpc_kdc_engine_calls_total", "mpc_kdc_engine_call_seconds"} <= queried


@pytest.mark.timeout(240)
def test_prometheus_scrapes_the_cluster_and_fires_on_an_abort_and_a_pair(metered, tmp_path):
    cluster, endpoints = metered
    prometheus = Prometheus(tmp_path / "prometheus", {"mpc-server": list(endpoints.values())})
    try:
        prometheus.wait_for(lambda: len([v for v in prometheus.query('up{job="mpc-server"}').values() if v == 1]) == 3)
        cluster.import_key(*KEY)
        cluster.wait_until_serving(KEY)
        for _ in range(10):
            cluster.keystream(*KEY, secrets.token_hex(16), 16)
        jobs = prometheus.wait_for(lambda: (lambda seen: seen if len(seen) == 3 and min(seen.values()) >= 10 else None)(
            prometheus.query('mpc_jobs_total{job="mpc-server"}')))
        assert set(jobs) == set(endpoints.values()), jobs
        assert not prometheus.api("alerts")["alerts"], "an alert fired on an honest cluster"

        refused_before = cluster.verification_refusals()
        cluster.kill_server(3)
        cluster.restart_server(3, fault="and-share-bit=2")
        # Until a server refuses a job for failed verification. The client sends an aborted job
        # again, and the pair that serves once three-party service is suspended may serve it:
        # the refusal is then in the servers' counts, not in the client's error.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                cluster.keystream(*KEY, secrets.token_hex(16), 8, timeout=10)
            except mpc_cluster.MpcctlError as error:
                if "verification" in str(error):
                    break
            refused = cluster.verification_refusals()
            if any(refused[party] > refused_before[party] for party in (1, 2)) or refused[3] > 0:
                break
            time.sleep(0.2)
        firing = prometheus.wait_for(lambda: {a["labels"]["instance"] for a in prometheus.api("alerts")["alerts"]
                                              if a["labels"]["alertname"] == "MpcVerificationFailure"
                                              and a["state"] == "firing"})
        assert firing, firing

        cluster.kill_server(3)
        cluster.wait_for_modes({1: "two-party without server 3", 2: "two-party without server 3"}, deadline_s=30)
        pair = prometheus.wait_for(lambda: (lambda seen: seen if len(seen) == 2 else None)(
            prometheus.query('mpc_server_missing{job="mpc-server", server="3"} == 1')))
        assert set(pair) == {endpoints[1], endpoints[2]}, pair
        down = prometheus.wait_for(lambda: prometheus.query('up{job="mpc-server"} == 0'))
        assert set(down) == {endpoints[3]}, down
    finally:
        prometheus.stop()
