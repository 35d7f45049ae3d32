"""A real Prometheus server (Debian's `prometheus`) for the tests: config/prometheus/'s scrape
configuration and alert rules, scraping and evaluating every second, with the targets of each
job the test names; queries through its HTTP API. Also one scrape of a server's own endpoint."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from mpctest.loopback_ports import random_port

PROMETHEUS_DIR = Path(__file__).resolve().parents[2] / "config" / "prometheus"


def serve_metrics(cluster) -> dict[int, str]:
    """Gives each server of an initialised, not yet started mpc_cluster.Cluster a metrics
    endpoint on a loopback port: {party: "HOST:PORT"}."""
    endpoints = {}
    for party in cluster.parties:
        port = random_port()
        while f"127.0.0.1:{port}" in endpoints.values():  # two draws of one port: both servers would bind it
            port = random_port()
        endpoints[party] = f"127.0.0.1:{port}"
        config = cluster.server_dir(party) / "server.toml"
        config.write_text(f'metrics_listen = "{endpoints[party]}"\n' + config.read_text())
    return endpoints


def scrape(endpoint: str) -> tuple[dict[str, float], str]:
    """({'name{labels}': value}, the text) of one scrape of a server's metrics endpoint."""
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


def wait_for_pair_stock(endpoints: dict[int, str], missing: int, entries: float, deadline: float) -> None:
    """Until the leader of the pair of a three-server cluster that serves without server
    `missing` holds `entries` of AND material made ahead (mpc_pair_entries_ahead), or
    AssertionError once time.monotonic() passes `deadline`."""
    name = f'mpc_pair_entries_ahead{{without="{missing}"}}'
    leader = missing % 3 + 1
    while True:
        try:
            if scrape(endpoints[leader])[0].get(name, 0) >= entries:
                return
        except OSError:  # the leader was started again and does not listen yet
            pass
        assert time.monotonic() < deadline, f"the pair without server {missing} made too little ahead in time"
        time.sleep(0.2)


class Prometheus:
    """A real Prometheus server scraping the given targets every second, with the alert rules."""

    def __init__(self, root: Path, jobs: dict[str, list[str]]):
        self.port = random_port()
        root.mkdir(parents=True, exist_ok=True)
        shutil.copy(PROMETHEUS_DIR / "mpc-kdc-rules.yml", root / "mpc-kdc-rules.yml")
        config = (PROMETHEUS_DIR / "prometheus.example.yml").read_text()
        config = config.replace("scrape_interval: 15s", "scrape_interval: 1s")
        config = config.replace("evaluation_interval: 15s", "evaluation_interval: 1s")
        for job in re.findall(r"- job_name: ([\w-]+)", config):
            targets = ", ".join(f'"{t}"' for t in jobs.get(job, []))
            config = re.sub(rf"(- job_name: {job}\n\s+static_configs:\n\s+- targets: )\[.*\]", rf"\g<1>[{targets}]",
                            config)
        (root / "prometheus.yml").write_text(config)
        self.log = open(root / "prometheus.log", "wb")
        self.process = subprocess.Popen(
            ["prometheus", f"--config.file={root / 'prometheus.yml'}", f"--storage.tsdb.path={root / 'data'}",
             f"--web.listen-address=127.0.0.1:{self.port}"],
            stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def api(self, path: str, **params: str):
        url = f"http://127.0.0.1:{self.port}/api/v1/{path}?" + urllib.parse.urlencode(params)
        with urllib.request.urlopen(url, timeout=5) as response:
            body = json.loads(response.read())
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expr: str) -> dict[str, float]:
        """{instance: value} of an instant query."""
        return {item["metric"].get("instance", ""): float(item["value"][1])
                for item in self.api("query", query=expr)["result"]}

    def wait_for(self, what, deadline_s: float = 30):
        deadline = time.monotonic() + deadline_s
        last = None
        while time.monotonic() < deadline:
            try:
                last = what()
                if last:
                    return last
            except (OSError, urllib.error.URLError, AssertionError) as error:
                last = error
            time.sleep(0.5)
        raise AssertionError(f"Prometheus never saw it: {last}")

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()
