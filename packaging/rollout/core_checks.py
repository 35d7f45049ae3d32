"""The checks of the short form, which the full form runs too: every unit active (the
replica's as well), logins with the krbtgt key protected, the metrics endpoints and their
firewall, the replica's protected key with the cross check, and an engine server stopped in
the middle of a stream of logins, then started again ("Replace a failed server", case 1)."""

from __future__ import annotations

import re
import threading
import time
import urllib.request

from .common import ENGINE_HOSTS, HOSTS, METRICS_PORT, NODE_EXPORTER_PORT, REPLICA, Failure, address, log
from .containers import Cluster
from .realm import TGS, cross_check, kdc_status, login, wait_for_logins


def check_units(cluster: Cluster) -> None:
    for name in ENGINE_HOSTS:
        state = cluster.ssh(name, "systemctl is-active mpc-server.service", check=False).stdout.strip()
        if state != "active":
            raise Failure(f"{name}: mpc-server.service is {state}")
    state = cluster.ssh("kdc", "systemctl is-active krb5-kdc.service", check=False).stdout.strip()
    if state != "active":
        raise Failure(f"kdc: krb5-kdc.service is {state}")
    log(f"mpc-server active on {', '.join(ENGINE_HOSTS)}; krb5-kdc active on kdc")
    if REPLICA in HOSTS:
        check_replica_units(cluster)


def check_replica_units(cluster: Cluster) -> None:
    """The replica serves (krb5-kdc) and listens for the primary (krb5-kpropd), without kadmind;
    the primary's propagation timer runs."""
    states = {unit: cluster.ssh(REPLICA, f"systemctl is-active {unit}", check=False).stdout.strip()
              for unit in ("krb5-kdc.service", "krb5-kpropd.service", "krb5-admin-server.service")}
    if states != {"krb5-kdc.service": "active", "krb5-kpropd.service": "active",
                  "krb5-admin-server.service": "inactive"}:
        raise Failure(f"{REPLICA}: {states}")
    timer = cluster.ssh("kdc", "systemctl is-active mpc-kprop.timer", check=False).stdout.strip()
    if timer != "active":
        raise Failure(f"kdc: mpc-kprop.timer is {timer}")
    log(f"replica KDC active on {REPLICA}: krb5-kdc and krb5-kpropd (krb5-admin-server inactive); "
        "mpc-kprop.timer active on kdc")


def check_replica(cluster: Cluster) -> None:
    """The replica holds the protected krbtgt key (its markers came in the dump) and serves it
    with its own compute key; each KDC accepts the other's TGTs."""
    status = kdc_status(cluster, REPLICA)
    if not any(re.match(re.escape(TGS) + r": protected\b", line) for line in status.splitlines()):
        raise Failure(f"{REPLICA}: krbtgt key not protected:\n{status}")
    log(f"{REPLICA}: mpcctl kdc status: {status.splitlines()[0]}")
    cross_check(cluster, "after the rollout")


def check_logins(cluster: Cluster) -> None:
    done, seconds = login(cluster)
    if done.returncode != 0:
        raise Failure(f"kinit/kvno failed: {done.stdout}{done.stderr}")
    log(f"kinit and kvno succeed ({seconds:.2f} s): {done.stdout.strip()}")
    status = kdc_status(cluster)
    if not any(re.match(re.escape(TGS) + r": protected\b", line) for line in status.splitlines()):
        raise Failure(f"krbtgt key not protected:\n{status}")
    log(f"mpcctl kdc status: {status.strip()}")


def scrape(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read().decode()
    except OSError as error:
        raise Failure(f"{url}: {error}") from error


def check_metrics(cluster: Cluster) -> None:
    """Each server's Prometheus endpoint, scraped once from the controller after the logins,
    counts jobs; the KDC's router counted its engine calls in /run/mpc-kdc/router.metrics,
    and its node_exporter serves them; a host other than the monitoring host reaches neither."""
    for name in ENGINE_HOSTS:
        url = f"http://{address(name)}:{METRICS_PORT}/metrics"
        text = scrape(url)
        jobs = re.search(r"^mpc_jobs_total (\d+)$", text, re.M)
        if not jobs or int(jobs.group(1)) == 0 or 'mpc_cluster_mode{mode="three-party"} 1' not in text:
            raise Failure(f"{url} does not show the logins' jobs in three-party service:\n{text}")
    # The realm protects its krbtgt key: a login's TGT is tagged (gcm_tag, or chained with the PAC's).
    done = cluster.ssh("kdc", "mpcctl kdc metrics --file /run/mpc-kdc/router.metrics", check=False)
    tags = sum(int(n) for n in re.findall(r'^mpc_kdc_engine_calls_total\{operation="gcm_tag(?:_chained)?",'
                                          r'result="ok"\} (\d+)$', done.stdout, re.M))
    if done.returncode != 0 or tags == 0:
        raise Failure(f"the KDC's router counted no ticket tagged:\n{done.stdout}{done.stderr}")
    cluster.ssh("kdc", "systemctl start mpc-kdc-metrics.service")
    exported = scrape(f"http://{address('kdc')}:{NODE_EXPORTER_PORT}/metrics")
    if not re.search(r'^mpc_kdc_engine_calls_total\{operation="gcm_tag(?:_chained)?",result="ok"\} [1-9]', exported,
                     re.M):
        raise Failure(f"the KDC's node_exporter does not serve the router's counters:\n{exported[-3000:]}")
    # The firewall drops what any other host sends to those ports: neither the KDC nor an engine
    # server is a monitoring host.
    exporter_probe = ("kdc", REPLICA) if REPLICA in HOSTS else (ENGINE_HOSTS[0], "kdc")
    for prober, name, port in (("kdc", ENGINE_HOSTS[0], METRICS_PORT), (*exporter_probe, NODE_EXPORTER_PORT)):
        probe = cluster.ssh(prober, f"python3 -c \"import socket; socket.create_connection(('{address(name)}', "
                                    f"{port}), timeout=3)\"", check=False)
        if probe.returncode == 0:
            raise Failure(f"{prober} reached {name}:{port}: the metrics firewall admits more than the monitoring "
                          "host")
    log(f"metrics: every server's endpoint counts jobs; the KDC's router counted {tags} tickets tagged, its "
        "node_exporter serves them; other hosts are kept off the metrics ports")


def check_engine_outage(cluster: Cluster) -> None:
    """mpc-server stopped on one engine host in the middle of a stream of logins: the other two
    serve every one of them (two-party service), and say so in mpcctl cluster status."""
    results = []
    stop = threading.Event()

    def logins() -> None:
        while not stop.is_set():
            done, seconds = login(cluster, timeout=60)
            results.append((time.monotonic(), done.returncode, seconds, (done.stdout + done.stderr).strip()))

    loop = threading.Thread(target=logins)
    loop.start()
    try:
        time.sleep(2)
        cluster.ssh("mpc2", "systemctl stop mpc-server.service")
        stopped = time.monotonic()
        time.sleep(5)
        status = cluster.ssh("kdc", "mpcctl cluster status --cluster /etc/mpc-kdc/cluster-admin.toml", check=False)
        if REPLICA in HOSTS:
            cross_check(cluster, "with mpc-server stopped on mpc2")
        time.sleep(1)
    finally:
        stop.set()
        loop.join(timeout=120)
    during = [r for r in results if r[0] > stopped]
    failed = [r for r in results if r[1] != 0]
    slowest = max((r[2] for r in during), default=0.0)
    log(f"with mpc-server stopped on mpc2: {len(during)} logins during the outage, {len(failed)} of "
        f"{len(results)} failed, slowest {slowest:.2f} s")
    if failed:
        raise Failure(f"{len(failed)} logins failed with one engine server stopped; first: {failed[0][3]}")
    if not during:
        raise Failure("no login ran while the engine server was stopped")
    if status.stdout.count("mode two-party without server 2") != 2:
        raise Failure(f"mpcctl cluster status does not show two-party service without server 2:\n"
                      f"{status.stdout}{status.stderr}")
    state = cluster.ssh("kdc", "systemctl is-active krb5-kdc.service", check=False).stdout.strip()
    if state != "active":
        raise Failure(f"krb5-kdc is {state} after the outage")

    # "Replace a failed server", case 1: the service fixed, then restarted.
    cluster.ssh("mpc2", "systemctl status mpc-server", check=False)
    cluster.ssh("mpc2", "journalctl -u mpc-server --no-pager -n 20")
    cluster.ssh("mpc2", "systemctl restart mpc-server")
    wait_for_logins(cluster, "after mpc-server started on mpc2")
