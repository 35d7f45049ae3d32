"""The Ansible side: the inventory of the hosts up now, site.yml run from the Ansible virtual
environment with each host's recap read back, and a run that must change nothing."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

from .common import (ENGINE_HOSTS, HOSTS, METRICS_PORT, REALM, REPLICA, SUBNET, TICKET_LIFETIME_S, Failure,
                     address, log, package_version)
from .containers import Cluster

# This package is packaging/rollout/ in the source tree.
SOURCE_DIR = Path(__file__).resolve().parents[2]
PLAYBOOK_TIMEOUT_S = 900


def write_inventory(cluster: Cluster, package_dir: Path) -> Path:
    version = package_version(package_dir)
    kdcs = {"hosts": {"kdc": {"ansible_host": address("kdc")}}}
    if REPLICA in HOSTS:
        kdcs["children"] = {"mpc_kdc_replicas": {"hosts": {REPLICA: {"ansible_host": address(REPLICA)}}}}
    engines = {name: {"ansible_host": address(name), "mpc_server_party": index + 1,
                      "mpc_server_metrics_listen": f"{address(name)}:{METRICS_PORT}"}
               for index, name in enumerate(ENGINE_HOSTS)}
    inventory = {
        "all": {
            "vars": {
                "ansible_user": "root",
                "ansible_ssh_private_key_file": str(cluster.key),
                "ansible_ssh_common_args": "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null",
                "mpc_realm": REALM,
                "mpc_client_port": 7101,
                "mpc_peer_port": 7201,
                "mpc_data_port": 7221,
                "mpc_protocol": "rss3",
                "mpc_client_timeout_ms": 5000,
                "mpc_package_dir": str(package_dir),
                "mpc_package_version": version,
                "mpc_kdc_max_life": f"{TICKET_LIFETIME_S}s",
                "mpc_kdc_max_renewable_life": f"{TICKET_LIFETIME_S}s",
                # The controller scrapes; the firewall admits it alone to the metrics ports.
                "mpc_monitoring_hosts": [f"{SUBNET}.1"],
                "mpc_kdc_node_exporter": True,
            },
            "children": {
                "mpc_servers": {"hosts": engines},
                "mpc_kdcs": kdcs,
            },
        }
    }
    path = cluster.run_dir / "inventory.yml"
    # JSON is YAML: no YAML library is needed on the controller to write it.
    path.write_text(json.dumps(inventory, indent=2) + "\n")
    return path


def ansible_venv(build_dir: Path) -> Path:
    return Path(os.environ.get("MPC_ANSIBLE_VENV", build_dir / "ansible-venv")).resolve()


def playbook(build_dir: Path, inventory: Path, log_name: Path, *options: str) -> dict[str, dict[str, int]]:
    venv_bin = ansible_venv(build_dir) / "bin"
    env = dict(os.environ, PATH=f"{venv_bin}:{os.environ['PATH']}",
               ANSIBLE_CONFIG=str(SOURCE_DIR / "ansible" / "ansible.cfg"),
               ANSIBLE_HOME=str(build_dir / "ansible-home"), ANSIBLE_FORCE_COLOR="0", ANSIBLE_NOCOLOR="1")
    started = time.monotonic()
    with open(log_name, "w") as out:
        done = subprocess.run([str(venv_bin / "ansible-playbook"), "-i", str(inventory), "site.yml", *options],
                              cwd=SOURCE_DIR / "ansible", env=env, stdout=out, stderr=subprocess.STDOUT,
                              timeout=PLAYBOOK_TIMEOUT_S)
    text = log_name.read_text()
    recap = {}
    for host, counts in re.findall(r"^(\S+)\s+:\s+(ok=.*)$", text, re.MULTILINE):
        recap[host] = {key: int(value) for key, value in re.findall(r"(\w+)=(\d+)", counts)}
    log(f"ansible-playbook exited {done.returncode} after {time.monotonic() - started:.0f} s: "
        + ", ".join(f"{host} changed={counts.get('changed')} failed={counts.get('failed')}"
                    for host, counts in recap.items()))
    if done.returncode != 0:
        raise Failure(f"ansible-playbook failed:\n{text[-6000:]}")
    if set(recap) != set(HOSTS):
        raise Failure(f"no recap for every host in {log_name}")
    return recap


def check_unchanged(build_dir: Path, inventory: Path, log_name: Path) -> None:
    recap = playbook(build_dir, inventory, log_name)
    changed = {host: counts.get("changed") for host, counts in recap.items() if counts.get("changed")}
    if changed:
        raise Failure(f"a run over an unchanged deployment changed something: {changed} (see {log_name})")
    log(f"playbook run {log_name.stem}: changed=0 on every host")
