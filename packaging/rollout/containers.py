"""The containers: each host booted with systemd-nspawn from the image on an overlay of its
own, with its own machine-id, SSH host keys, address and cgroup, on a private bridge. The
Cluster class holds them (lock, leftovers of a killed run, boot, reboot, destroy, SSH,
journals, teardown); the helpers below it write a file on a host and ask one for a unit's
main PID or a package's version."""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import time
import uuid
from pathlib import Path

from .common import (BRIDGE, DOMAIN, HOST_ALIASES, HOSTS, SUBNET, Failure, address, log, remove_tree, run,
                     unmount_under)

BOOT_TIMEOUT_S = 90


def cgroup_roots() -> tuple[Path, ...]:
    """Where each container gets a cgroup of its own: both hierarchies of a hybrid layout
    (systemd's named v1 one and the v2 one), or the single v2 hierarchy of a unified layout."""
    if Path("/sys/fs/cgroup/cgroup.controllers").is_file():
        return (Path("/sys/fs/cgroup"),)
    return tuple(root for root in (Path("/sys/fs/cgroup/systemd"), Path("/sys/fs/cgroup/unified"))
                 if root.is_dir())


CGROUP_ROOTS = cgroup_roots()
# Per bridge name, like the lock: a run removes leftovers of its own name only, never the
# containers of a run beside it on another bridge.
CGROUP_PREFIX = f"mpc-rollout-{BRIDGE}-"
LOCK_FILE = Path(f"/run/lock/mpc-rollout-{BRIDGE}.lock")


def remove_cgroup(group: Path) -> None:
    """GROUP and the sub-cgroups the container's systemd made, bottom-up; a process still in
    one (a container whose nspawn was killed outright) is killed first. Sub-cgroups may vanish
    meanwhile (the dying container's systemd removes its own)."""
    def subgroups() -> list[Path]:
        found = []
        for directory, names, _ in os.walk(group):
            found += [Path(directory) / name for name in names]
        return sorted(found, key=lambda p: -len(p.parts)) + [group]

    for _ in range(100):
        if not group.is_dir():
            return
        pids = set()
        for each in subgroups():
            try:
                pids |= {int(pid) for pid in (each / "cgroup.procs").read_text().split()}
            except FileNotFoundError:
                pass
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if not pids:
            try:
                for each in subgroups():
                    try:
                        each.rmdir()
                    except FileNotFoundError:
                        pass
                return
            except OSError:
                pass  # busy: a process entered or had not left yet; look again
        time.sleep(0.1)
    raise Failure(f"cannot remove the cgroup {group}: processes keep running in it")


class Cluster:
    def __init__(self, build_dir: Path, image: Path):
        self.build_dir = build_dir
        self.image = image
        self.run_dir = build_dir / "rollout-run"
        self.log_dir = self.run_dir / "logs"
        self.key = self.run_dir / "id_ed25519"
        self.processes: dict[str, subprocess.Popen] = {}
        self.mounted: list[Path] = []
        self.cgroups: list[Path] = []
        self.bridge = False

    def cgroup_name(self, name: str) -> str:
        return f"{CGROUP_PREFIX}{name}"

    def lock(self) -> None:
        """One run per bridge name; holding the lock also proves that whatever an earlier run
        left behind belongs to no running test."""
        LOCK_FILE.parent.mkdir(parents=True, exist_ok=True)
        self.lock_file = open(LOCK_FILE, "w")
        try:
            fcntl.flock(self.lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise Failure(f"another rollout test holds {LOCK_FILE} (or set MPC_ROLLOUT_BRIDGE)") from None

    def remove_leftovers(self) -> None:
        """What a killed earlier run left: container processes and cgroups, overlays, bridge."""
        for hierarchy in CGROUP_ROOTS:
            for group in hierarchy.glob(CGROUP_PREFIX + "*"):
                log(f"removing the leftover cgroup {group}")
                remove_cgroup(group)
        unmount_under(self.run_dir)
        if run(["ip", "link", "show", BRIDGE], check=False).returncode == 0:
            log(f"removing the leftover bridge {BRIDGE}")
            run(["ip", "link", "del", BRIDGE])
        remove_tree(self.run_dir)

    def prepare(self) -> None:
        self.lock()
        self.remove_leftovers()
        self.log_dir.mkdir(parents=True)
        run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "rollout-test", "-f", self.key])
        run(["ip", "link", "add", BRIDGE, "type", "bridge"])
        self.bridge = True
        run(["ip", "addr", "add", f"{SUBNET}.1/24", "dev", BRIDGE])
        run(["ip", "link", "set", BRIDGE, "up"])

    def write_identity(self, name: str, root: Path) -> None:
        (root / "etc/machine-id").write_text(uuid.uuid4().hex + "\n")
        (root / "etc/hostname").write_text(f"{name}\n")
        hosts = ["127.0.0.1 localhost", f"127.0.1.1 {name}.{DOMAIN} {name}"]
        hosts += [f"{address(other)} {other}.{DOMAIN} {other}" for other in HOSTS if other != name]
        hosts += [f"{address(other)} {alias}" for other, alias in HOST_ALIASES.items() if other in HOSTS]
        (root / "etc/hosts").write_text("\n".join(hosts) + "\n")
        network = root / "etc/systemd/network"
        network.mkdir(parents=True, exist_ok=True)
        # Same name as systemd's DHCP default for host0, which this one replaces.
        (network / "80-container-host0.network").write_text(
            f"[Match]\nVirtualization=container\nName=host0\n\n[Network]\nAddress={address(name)}/24\n"
            "LinkLocalAddressing=no\nIPv6AcceptRA=no\n")
        ssh_dir = root / "root/.ssh"
        ssh_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        authorized = ssh_dir / "authorized_keys"
        shutil.copy(f"{self.key}.pub", authorized)
        authorized.chmod(0o600)
        run(["ssh-keygen", "-A", "-f", root])

    def start(self, name: str) -> None:
        base = self.run_dir / name
        upper, work, root = base / "upper", base / "work", base / "root"
        for path in (upper, work, root):
            path.mkdir(parents=True)
        run(["mount", "-t", "overlay", "overlay", "-o",
             f"lowerdir={self.image},upperdir={upper},workdir={work}", root])
        self.mounted.append(root)
        self.write_identity(name, root)
        self.boot(name)

    def destroy(self, name: str) -> None:
        """NAME gone for good, as a failed host is: shut down, overlay (its whole disk) and
        cgroup removed. Each piece leaves the teardown's lists once it is gone."""
        process = self.processes[name]
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        root = self.run_dir / name / "root"
        run(["umount", root])
        self.mounted.remove(root)
        for hierarchy in CGROUP_ROOTS:
            group = hierarchy / self.cgroup_name(name)
            remove_cgroup(group)
            if group in self.cgroups:
                self.cgroups.remove(group)
        shutil.rmtree(self.run_dir / name)
        del self.processes[name]
        log(f"{name} destroyed: container stopped, overlay and cgroup removed")

    def boot(self, name: str) -> None:
        """Boots NAME's prepared root; a rebooted container boots again from the same one."""
        root = self.run_dir / name / "root"
        # Without a systemd on the controller nothing hands each container a cgroup of its
        # own: sharing one, the containers' systemds would take each other's processes.
        groups = []
        for hierarchy in CGROUP_ROOTS:
            group = hierarchy / self.cgroup_name(name)
            group.mkdir(exist_ok=True)
            if group not in self.cgroups:
                self.cgroups.append(group)
            groups.append(group / "cgroup.procs")

        def enter_cgroups() -> None:
            for procs in groups:
                with open(procs, "w") as out:
                    out.write(str(os.getpid()))

        console = open(self.log_dir / f"{name}.console", "a")
        self.processes[name] = subprocess.Popen(
            ["systemd-nspawn", "--boot", "--register=no", "--keep-unit", "--console=passive", f"--machine={name}",
             f"--hostname={name}", f"--directory={root}", f"--network-bridge={BRIDGE}"],
            stdin=subprocess.DEVNULL, stdout=console, stderr=subprocess.STDOUT,
            preexec_fn=enter_cgroups, start_new_session=True)
        console.close()

    def ssh_args(self, name: str) -> list[str]:
        return ["ssh", "-i", str(self.key), "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no",
                "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR", "-o", "ConnectTimeout=3",
                f"root@{address(name)}"]

    def ssh(self, name: str, command: str, check=True, timeout=120) -> subprocess.CompletedProcess:
        return run(self.ssh_args(name) + [command], check=check, timeout=timeout)

    def wait_booted(self, names: tuple[str, ...] | None = None) -> None:
        deadline = time.monotonic() + BOOT_TIMEOUT_S
        for name in names if names is not None else tuple(HOSTS):
            while True:
                process = self.processes[name]
                if process.poll() is not None:
                    raise Failure(f"{name}: systemd-nspawn exited {process.returncode} "
                                  f"(see {self.log_dir / (name + '.console')})")
                done = self.ssh(name, "systemctl is-system-running --wait", check=False, timeout=BOOT_TIMEOUT_S)
                # "degraded" is a booted system too: units the roles configure fail until then.
                if done.stdout.strip() in ("running", "degraded"):
                    break
                if time.monotonic() > deadline:
                    raise Failure(f"{name} did not boot within {BOOT_TIMEOUT_S} s: {done.stdout}{done.stderr}")
                time.sleep(1)

    def collect_logs(self) -> None:
        for name in self.processes:
            try:
                done = self.ssh(name, "journalctl -b --no-pager", check=False, timeout=30)
            except subprocess.TimeoutExpired:
                log(f"{name}: no journal within 30 s")
                continue
            (self.log_dir / f"{name}.journal").write_text(done.stdout + done.stderr)

    def stop(self) -> None:
        """Every step is tried even when an earlier one fails, so one stuck piece does not
        leave the others behind; what could not be removed is named."""
        problems = []

        def attempt(what: str, step) -> None:
            try:
                step()
            except Exception as error:  # noqa: BLE001 - reported, and the teardown goes on
                problems.append(f"{what}: {error}")

        # SIGTERM makes nspawn shut a booted container down in order; SIGKILL is the fallback.
        for process in self.processes.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for name, process in self.processes.items():
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                log(f"{name} did not shut down, killing it")
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        for root in reversed(self.mounted):
            if subprocess.run(["umount", str(root)], capture_output=True).returncode != 0:
                attempt(f"unmount {root}", lambda root=root: run(["umount", "-l", root]))

        for group in self.cgroups:
            attempt(f"remove cgroup {group}", lambda group=group: remove_cgroup(group))
        if self.bridge:
            attempt(f"remove bridge {BRIDGE}", lambda: run(["ip", "link", "del", BRIDGE]))
        for name in self.processes:
            attempt(f"remove {self.run_dir / name}", lambda name=name: shutil.rmtree(self.run_dir / name))
        for problem in problems:
            log(f"teardown: {problem}")
        if problems:
            raise Failure("teardown incomplete")


def put_file(cluster: Cluster, name: str, path: str, text: str) -> None:
    """Writes TEXT to PATH on NAME (through stdin: public keys in Z85 hold shell characters)."""
    run(cluster.ssh_args(name) + [f"cat > {path}"], input=text)


def main_pid(cluster: Cluster, name: str, unit: str) -> str:
    return cluster.ssh(name, f"systemctl show -p MainPID --value {unit}").stdout.strip()


def installed_version(cluster: Cluster, name: str, package: str) -> str:
    return cluster.ssh(name, f"dpkg-query -W -f '${{Version}}' {package}").stdout.strip()
