"""docs/operations.md "Rotate keys", the keys other than krbtgt's: a server's CurveZMQ key
pair and the KDC's client key pairs (compute and admin), each made anew by the playbook and
the old one refused afterwards, and the KDC's handle key."""

from __future__ import annotations

import re
from pathlib import Path

from .commands import (CLIENT_KEYS_MOVE_COMMAND, HANDLE_KEY_COMMAND, OLD_KEYS, OLD_KEYS_DELETE_COMMAND,
                       SERVER_KEY_MOVE_COMMAND, STATUS_COMMAND)
from .common import ENGINE_HOSTS, Failure, log, run
from .containers import Cluster, main_pid
from .core_checks import check_units
from .playbook import playbook
from .realm import check_kept_tgt, kdc_status, keep_tgt, wait_for_logins


def public_key(cluster: Cluster, name: str, path: str) -> str:
    found = re.search(r"public-key (\S{40})", cluster.ssh(name, f"cat {path}").stdout)
    if not found:
        raise Failure(f"{name}: no public-key line in {path}")
    return found.group(1)


def refused(cluster: Cluster, command: str, what: str, reason: str) -> None:
    """COMMAND on the KDC fails, saying REASON (the client's words for why)."""
    done = cluster.ssh("kdc", command, check=False, timeout=180)
    if done.returncode == 0 or reason not in done.stdout + done.stderr:
        raise Failure(f"{what}: {command} should fail with {reason!r}, exited {done.returncode}:\n"
                      f"{done.stdout}{done.stderr}")
    line = next(line for line in (done.stdout + done.stderr).splitlines() if reason in line)
    log(f"{what} refused (exit {done.returncode}): {line.strip()[:160]}")


def check_server_key_rotation(cluster: Cluster, build_dir: Path, inventory: Path, name: str) -> None:
    """docs/operations.md "Rotate keys", a server's CurveZMQ key pair: moved away on NAME, a
    new pair from the playbook, known to the peers and the KDC; the old one trusted no more."""
    old = public_key(cluster, name, "/etc/mpc-kdc/server.pub")
    cluster.ssh(name, SERVER_KEY_MOVE_COMMAND)
    playbook(build_dir, inventory, cluster.log_dir / "playbook-server-key.log")
    new = public_key(cluster, name, "/etc/mpc-kdc/server.pub")
    if new == old:
        raise Failure(f"{name}: the playbook did not make a new server key pair")
    check_units(cluster)
    wait_for_logins(cluster, f"after {name}'s server key was rotated")
    for host in [*ENGINE_HOSTS, "kdc"]:
        files = "/etc/mpc-kdc/cluster.toml /etc/mpc-kdc/cluster-admin.toml" if host == "kdc" else \
            "/etc/mpc-kdc/server.toml"
        if host == name:
            continue
        text = cluster.ssh(host, f"cat {files}").stdout
        if old in text or new not in text:
            raise Failure(f"{host}: {files} do not name {name}'s new public key alone")
    # A client that still trusts the old public key cannot talk to NAME.
    # (Written from here: Z85 holds characters that sed and the shell would interpret.)
    text = cluster.ssh("kdc", "cat /etc/mpc-kdc/cluster-admin.toml").stdout
    run(cluster.ssh_args("kdc") + ["umask 077 && cat > /root/old-server-key.toml"], input=text.replace(new, old))
    refused(cluster, f"{STATUS_COMMAND.split(' --cluster')[0]} --cluster /root/old-server-key.toml",
            f"a cluster configuration with {name}'s old public key", "the engine cannot be asked")
    cluster.ssh(name, OLD_KEYS_DELETE_COMMAND)
    cluster.ssh("kdc", "rm -f /root/old-server-key.toml")


def gcm_key(cluster: Cluster) -> tuple[str, int]:
    """Name and kvno of the newest AES-256-GCM engine key (the krbtgt ticket key)."""
    listing = cluster.ssh("kdc", "mpcctl key list --cluster /etc/mpc-kdc/cluster-admin.toml").stdout
    keys = [(fields[0], int(fields[1])) for fields in (line.split("\t") for line in listing.splitlines())
            if len(fields) >= 3 and fields[2] == "aes256-gcm"]
    if not keys:
        raise Failure(f"mpcctl key list shows no aes256-gcm key:\n{listing}")
    return max(keys, key=lambda key: key[1])


def check_client_key_rotation(cluster: Cluster, build_dir: Path, inventory: Path) -> None:
    """docs/operations.md "Rotate keys", the KDC's client keys: both pairs moved away, new
    ones from the playbook; the servers refuse the old ones."""
    old_compute = public_key(cluster, "kdc", "/etc/mpc-kdc/kdc-compute.pub")
    old_admin = public_key(cluster, "kdc", "/etc/mpc-kdc/kdc-admin.pub")
    cluster.ssh("kdc", CLIENT_KEYS_MOVE_COMMAND)
    playbook(build_dir, inventory, cluster.log_dir / "playbook-client-keys.log")
    new_compute = public_key(cluster, "kdc", "/etc/mpc-kdc/kdc-compute.pub")
    new_admin = public_key(cluster, "kdc", "/etc/mpc-kdc/kdc-admin.pub")
    if new_compute == old_compute or new_admin == old_admin:
        raise Failure("the playbook did not make new client key pairs on the KDC")
    check_units(cluster)
    wait_for_logins(cluster, "after the KDC's client keys were rotated")
    for host in ENGINE_HOSTS:
        text = cluster.ssh(host, "cat /etc/mpc-kdc/server.toml").stdout
        if old_compute in text or old_admin in text or new_compute not in text or new_admin not in text:
            raise Failure(f"{host}: server.toml does not list the KDC's new client keys alone")
    kdc_status(cluster)
    name, kvno = gcm_key(cluster)
    prefetch = f"mpcctl aes gcm-prefetch --name {name} --kvno {kvno} --cluster"
    cluster.ssh("kdc", f"{prefetch} /etc/mpc-kdc/cluster.toml >/dev/null")
    log(f"the new compute key runs a job (gcm-prefetch of {name} kvno {kvno})")
    cluster.ssh("kdc", f"sed 's|^secret_key_file = .*|secret_key_file = \"{OLD_KEYS}/kdc-admin.key\"|' "
                       f"/etc/mpc-kdc/cluster-admin.toml > /root/old-admin.toml && "
                       f"sed 's|^secret_key_file = .*|secret_key_file = \"{OLD_KEYS}/kdc-compute.key\"|' "
                       f"/etc/mpc-kdc/cluster.toml > /root/old-compute.toml")
    refused(cluster, f"{STATUS_COMMAND.split(' --cluster')[0]} --cluster /root/old-admin.toml", "the old admin key",
            "server refused our key")
    refused(cluster, f"{prefetch} /root/old-compute.toml", "the old compute key", "server refused our key")
    cluster.ssh("kdc", f"{OLD_KEYS_DELETE_COMMAND} && rm -f /root/old-admin.toml /root/old-compute.toml")


def check_handle_key_rotation(cluster: Cluster) -> None:
    """docs/operations.md "Rotate keys", the handle key: a new file, krb5-kdc restarted;
    nothing stored depends on it, so tickets from before still work."""
    before = cluster.ssh("kdc", "sha256sum /etc/krb5kdc/mpc-handle.key").stdout.split()[0]
    keep_tgt(cluster)
    kdc_pid = main_pid(cluster, "kdc", "krb5-kdc.service")
    cluster.ssh("kdc", HANDLE_KEY_COMMAND)
    after = cluster.ssh("kdc", "sha256sum /etc/krb5kdc/mpc-handle.key").stdout.split()[0]
    mode = cluster.ssh("kdc", "stat -c '%a %U' /etc/krb5kdc/mpc-handle.key").stdout.strip()
    size = cluster.ssh("kdc", "stat -c %s /etc/krb5kdc/mpc-handle.key").stdout.strip()
    if after == before or mode != "600 root" or size != "32":
        raise Failure(f"the handle key was not replaced by 32 private bytes: {mode}, {size} bytes")
    if main_pid(cluster, "kdc", "krb5-kdc.service") in ("0", kdc_pid):
        raise Failure("krb5-kdc was not restarted")
    check_units(cluster)
    wait_for_logins(cluster, "after the handle key was replaced")
    check_kept_tgt(cluster, "the handle key rotation")
