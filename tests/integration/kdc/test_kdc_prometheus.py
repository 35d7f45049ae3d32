"""A real Prometheus server (Debian's `prometheus`) watching a protected KDC and its three
servers, as config/prometheus/prometheus.example.yml has it: the servers' metrics_listen
endpoints as job mpc-server, and the KDC host's node_exporter (Debian's
prometheus-node-exporter), whose textfile collector serves what `mpcctl kdc metrics --out`
writes from the router's counters file every second (the command mpc-kdc-metrics.timer runs).

During a short login storm, PromQL through Prometheus's HTTP API shows the logins the storm
made: the router's tags and opens by operation, their latency histogram, the nonce pools its
workers keep, and the servers' tag jobs by kind with their latency; a server stopped then
shows as the pair mode on the others and as MpcServerDown's target."""
from __future__ import annotations

import secrets
import subprocess
import threading
import urllib.request
from pathlib import Path

import pytest

from mpctest import mpc_cluster
from mpctest.loopback_ports import random_port
from mpctest.prometheus_server import Prometheus, serve_metrics
from mpctest.protected_kdc import ProtectedRealm

from mpctest import storm

PRINCIPALS = 10
LOGINS = 60
NODE_EXPORTER = "prometheus-node-exporter"


class TextfileWriter:
    """`mpcctl kdc metrics --file F --out DIR/mpc-kdc.prom` every second, as the timer runs it."""

    def __init__(self, counters: Path, directory: Path):
        self.counters = counters
        self.command = [str(mpc_cluster.mpcctl_binary()), "kdc", "metrics", "--file", str(counters),
                        "--out", str(directory / "mpc-kdc.prom")]
        self.stopping = threading.Event()
        self.failures: list[str] = []
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stopping.wait(1.0):
            if not self.counters.exists():  # as the unit's ConditionPathExists: no router call yet
                continue
            done = subprocess.run(self.command, capture_output=True, text=True, timeout=30)
            if done.returncode != 0:
                self.failures.append(done.stderr)

    def stop(self):
        self.stopping.set()
        self.thread.join(timeout=35)


@pytest.fixture(scope="module")
def watched(tmp_path_factory):
    root = tmp_path_factory.mktemp("watched")
    cluster = mpc_cluster.Cluster(root / "cluster", degraded_service="two-party")
    realm = None
    exporter = writer = prometheus = None
    try:
        cluster.init()
        endpoints = serve_metrics(cluster)
        cluster.start()

        counters = root / "router.metrics"
        realm = ProtectedRealm(root / "realm", cluster, realm=f"P{secrets.token_hex(4).upper()}.TEST")
        realm.router_conf.write_text(realm.router_conf.read_text() + f"metrics_file = {counters}\n")
        realm.create()
        storm.add_principals(realm, PRINCIPALS)
        realm.protect()
        keytab = storm.make_keytab(realm, root / "storm.keytab", PRINCIPALS)
        realm.start_kdc(workers=2)

        textfiles = root / "textfile"
        textfiles.mkdir()
        exporter_address = f"127.0.0.1:{random_port()}"
        exporter_log = open(root / "node-exporter.log", "wb")
        exporter = subprocess.Popen(
            [NODE_EXPORTER, f"--web.listen-address={exporter_address}", "--collector.disable-defaults",
             "--collector.textfile", f"--collector.textfile.directory={textfiles}"],
            stdout=exporter_log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        writer = TextfileWriter(counters, textfiles)
        prometheus = Prometheus(root / "prometheus",
                                {"mpc-server": list(endpoints.values()), "mpc-kdc": [exporter_address]})
        yield {"cluster": cluster, "realm": realm, "keytab": keytab, "endpoints": endpoints,
               "exporter": exporter_address, "prometheus": prometheus, "writer": writer}
    finally:
        for stop in (lambda: prometheus and prometheus.stop(), lambda: writer and writer.stop(),
                     lambda: exporter and (exporter.terminate(), exporter.wait(timeout=10)),
                     lambda: realm and realm.stop(), cluster.stop):
            stop()


def total(prometheus: Prometheus, expr: str) -> float:
    return sum(prometheus.query(expr).values())


@pytest.mark.timeout(300)
def test_prometheus_sees_a_protected_kdc_storm_and_a_server_stop(watched):
    prometheus, realm = watched["prometheus"], watched["realm"]
    exporter, endpoints = watched["exporter"], watched["endpoints"]
    prometheus.wait_for(lambda: len(prometheus.query("up == 1")) == 4)
    # The router's counters file comes with the workers' first engine call: none yet.
    tags = 'sum(mpc_kdc_engine_calls_total{job="mpc-kdc", operation=~"gcm_tag|gcm_tag_chained", result="ok"})'
    assert total(prometheus, tags) == 0
    jobs_before = prometheus.query(
        'sum by (instance) (mpc_jobs_by_kind_total{job="mpc-server", kind="gcm_tag", status="ok"})')

    target = storm.Target("protected", realm, watched["cluster"])
    summary = target.storm(watched["keytab"], ["--concurrency", "4", "--count", str(LOGINS), "--tgs",
                                               realm.principal(storm.SERVICE)])
    assert summary["failed"] == 0 and summary["ok"] == LOGINS, summary["first_errors"]

    # Each login's TGT is tagged once; its TGS exchange opens it.
    prometheus.wait_for(lambda: total(prometheus, tags) >= LOGINS)
    opens = 'sum(mpc_kdc_engine_calls_total{job="mpc-kdc", operation="gcm_open", result="ok"})'
    assert total(prometheus, opens) >= LOGINS
    assert total(prometheus, 'sum(mpc_kdc_engine_calls_total{job="mpc-kdc", result=~"aborted|unreachable"})') == 0
    # The histogram counts every tag call (a TGT's tag is chained with its PAC checksum's); its
    # median lies within the buckets.
    tag_calls = '{job="mpc-kdc", operation=~"gcm_tag|gcm_tag_chained"}'
    count = total(prometheus, f"sum(mpc_kdc_engine_call_seconds_count{tag_calls})")
    assert count == total(prometheus, f"sum(mpc_kdc_engine_calls_total{tag_calls})") >= LOGINS
    p50 = total(prometheus, f"histogram_quantile(0.5, sum by (le) (mpc_kdc_engine_call_seconds_bucket{tag_calls}))")
    assert 0 < p50 <= 5
    # The workers that sealed keep pools of nonces, refilled in the background.
    prometheus.wait_for(lambda: total(prometheus, 'sum(mpc_kdc_nonces_pooled{job="mpc-kdc", pool="ticket"})') > 0)
    assert 1 <= total(prometheus, 'mpc_kdc_router_workers{job="mpc-kdc"}') <= 2

    # Every server answered each tag: its jobs by kind grew by the logins, and were timed.
    def servers_tagged():
        now = prometheus.query('sum by (instance) (mpc_jobs_by_kind_total{job="mpc-server", kind="gcm_tag", '
                               'status="ok"})')
        return len(now) == 3 and all(now[i] >= jobs_before.get(i, 0) + LOGINS for i in now)
    prometheus.wait_for(servers_tagged)
    timed = prometheus.query('mpc_job_seconds_count{job="mpc-server", kind="gcm_tag"}')
    assert set(timed) == set(endpoints.values()) and min(timed.values()) >= LOGINS, timed
    assert not [a for a in prometheus.api("alerts")["alerts"] if a["state"] == "firing"], "an alert fired"

    # A server stopped: the other two serve as a pair, logins go on, and Prometheus sees both.
    watched["cluster"].kill_server(3)
    watched["cluster"].wait_for_modes({1: "two-party without server 3", 2: "two-party without server 3"},
                                      deadline_s=30)
    summary = target.storm(watched["keytab"], ["--concurrency", "2", "--count", "10"])
    assert summary["failed"] == 0 and summary["ok"] == 10, summary["first_errors"]
    pair = prometheus.wait_for(lambda: (lambda seen: seen if len(seen) == 2 else None)(
        prometheus.query('mpc_server_missing{job="mpc-server", server="3"} == 1')))
    assert set(pair) == {endpoints[1], endpoints[2]}, pair
    down = prometheus.wait_for(lambda: prometheus.query('up == 0'))
    assert set(down) == {endpoints[3]}, down
    assert prometheus.query(f'up{{instance="{exporter}"}}') == {exporter: 1.0}
    assert not watched["writer"].failures, watched["writer"].failures
    # What the KDC's exporter serves names no principal, realm or key.
    with urllib.request.urlopen(f"http://{exporter}/metrics", timeout=5) as response:
        text = response.read().decode()
    assert "mpc_kdc_engine_calls_total" in text
    assert realm.realm not in text and storm.PREFIX not in text and "krbtgt" not in text
