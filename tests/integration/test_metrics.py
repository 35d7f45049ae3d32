"""The servers' Prometheus endpoint (metrics_listen), scraped over HTTP from a running cluster:
job and batch counters that grow with the jobs run, an abort counted when a server deviates,
the cluster mode and the missing server after a kill, and nothing secret in any scrape."""
from __future__ import annotations

import re
import secrets
import time
import urllib.error
import urllib.request

import pytest

import mpc_cluster
from loopback_ports import random_port

KEY = ("metrics/aes", 1, "aes128")


def scrape(endpoint: str) -> dict[str, float]:
    """{'name{labels}': value} of one scrape."""
    with urllib.request.urlopen(f"http://{endpoint}/metrics", timeout=5) as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = response.read().decode()
    samples = {}
    for line in text.splitlines():
        if line.startswith("#") or not line:
            continue
        name, value = line.rsplit(" ", 1)
        samples[name] = float(value)
    return samples, text


@pytest.fixture
def metered(tmp_path):
    """A three-server cluster (two-party service when one is down) whose servers serve metrics."""
    cluster = mpc_cluster.Cluster(tmp_path / "c", degraded_service="two-party")
    endpoints = {}
    try:
        cluster.init()
        for party in (1, 2, 3):
            endpoints[party] = f"127.0.0.1:{random_port()}"
            config = cluster.server_dir(party) / "server.toml"
            config.write_text(f'metrics_listen = "{endpoints[party]}"\n' + config.read_text())
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
        assert samples["mpc_stored_keys"] == 1
        assert samples['mpc_cluster_mode{mode="three-party"}'] == 1

    for _ in range(5):
        cluster.keystream(*KEY, secrets.token_hex(16), 64)
    for party, endpoint in endpoints.items():
        samples, text = scrape(endpoint)
        assert samples["mpc_jobs_total"] >= before[party]["mpc_jobs_total"] + 5, party
        assert samples["mpc_batches_total"] > before[party]["mpc_batches_total"]
        assert samples["mpc_and_gates_total"] > before[party]["mpc_and_gates_total"]
        # Nothing that names a key, a client or a request: labels take a handful of values.
        assert KEY[0] not in text and key_hex not in text
        for pub in (cluster.dir / "compute.pub", cluster.dir / "admin.pub"):
            assert pub.read_text().strip() not in text
        assert all(re.fullmatch(r'[a-z_]+(\{[a-z_]+="[a-z0-9-]+"(,[a-z_]+="[a-z0-9-]+")*\})?', name)
                   for name in samples), samples

    # A server that flips an AND share is refused: every server counts the refusal.
    cluster.kill_server(2)
    cluster.restart_server(2, fault="and-share-bit=2")
    deadline = time.monotonic() + 30
    refused = False
    while time.monotonic() < deadline and not refused:
        try:
            cluster.keystream(*KEY, secrets.token_hex(16), 8, timeout=10)
        except mpc_cluster.MpcctlError as error:
            refused = "verification" in str(error)
        time.sleep(0.2)
    assert refused, "the deviating server's job was not refused"
    for party, endpoint in endpoints.items():
        assert scrape(endpoint)[0]["mpc_verification_failures_total"] >= 1, party

    # Server 3 gone: the two others say so.
    cluster.kill_server(3)
    cluster.wait_for_modes({1: "two-party without server 3", 2: "two-party without server 3"}, deadline_s=30)
    for party in (1, 2):
        samples, _ = scrape(endpoints[party])
        assert samples['mpc_cluster_mode{mode="two-party"}'] == 1
        assert samples['mpc_server_missing{server="3"}'] == 1
        assert samples['mpc_server_missing{server="1"}'] == 0
        assert samples["mpc_mode_switches_total"] >= 1


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
