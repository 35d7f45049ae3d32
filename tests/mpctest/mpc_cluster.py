"""A local three-server mpc-kdc cluster driven through mpcctl, for the integration tests
and the benchmark.

Binaries come from $MPC_BUILD_DIR (default: build/ under the repository root). Every
call has a timeout; stop() always leaves no server behind.

The process that uses this module should call become_subreaper() first: servers started
by `mpcctl cluster start` outlive mpcctl, and where PID 1 does not reap orphans (some
containers) a stopped server would stay a zombie that still answers kill(pid, 0). As a
subreaper this process inherits them and reaps them itself.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

from mpctest import toml_files
from mpctest.loopback_ports import random_port

REPO = Path(__file__).resolve().parents[2]

PR_SET_CHILD_SUBREAPER = 36


def build_dir() -> Path:
    path = Path(os.environ.get("MPC_BUILD_DIR", "build"))
    return path if path.is_absolute() else REPO / path


def mpcctl_binary() -> Path:
    return build_dir() / "mpc-engine" / "tools" / "mpcctl"


def server_binary() -> Path:
    return build_dir() / "mpc-engine" / "daemon" / "mpc-server"


def faults_server_binary() -> Path:
    """The server with the deliberate deviations of common/fault_injection.hpp (tests only)."""
    return build_dir() / "mpc-engine" / "daemon" / "mpc-server-faults"


def dealer_binary() -> Path:
    return build_dir() / "mpc-engine" / "lut_dealer" / "mpc-lut-dealer"


def client_library() -> Path:
    return build_dir() / "mpc-engine" / "client" / "libmpcclient.so"


def become_subreaper() -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: orphans go to init, which reaps them


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


# `mpcctl cluster init --base-port` takes at most this, leaving room for every offset.
MAX_BASE_PORT = 65500


def pick_base_port(extra_offsets: tuple[int, ...] = ()) -> int:
    """A base port P with P+1..P+3 (clients), P+11..P+13 (peers) and P+21..P+23 (data links)
    free right now, and P+offset for each extra offset (P+20: a lookup-table dealer)."""
    offsets = (1, 2, 3, 11, 12, 13, 21, 22, 23, *extra_offsets)
    for _ in range(500):
        base = random_port(span=max(offsets))
        if base <= MAX_BASE_PORT and all(port_is_free(base + offset) for offset in offsets):
            return base
    raise RuntimeError("no free port range found")


def reap(pid: int) -> bool:
    """Reaps pid if it is our (exited) child; True if it is gone."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return True
    except ChildProcessError:
        pass
    return not pid_alive(pid)


def pid_alive(pid: int) -> bool:
    """True for a running process; a zombie counts as dead once every thread of it has exited
    (a killed process's main thread is a zombie while others still free their memory, and its
    sockets stay open until the last one is gone)."""
    if pid <= 1:
        return False
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except (FileNotFoundError, ProcessLookupError):
        return False
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/stat", "rb") as stat:
                state = stat.read().rsplit(b")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        if state not in (b"Z", b"X"):
            return True
    return False


class MpcctlError(AssertionError):
    pass


class Cluster:
    """One cluster directory: init, start, keys, computations, faults, stop."""

    def __init__(self, root: Path, base_port: int | None = None, protocol: str = "rss3",
                 lut_preprocessing: str | None = None, degraded_service: str = "off",
                 ticket_key_import: bool = True, security: str | None = None):
        """lut_preprocessing="dealer" (with protocol lut2): a lookup-table dealer process too.
        security (rss3, gc2): "active" or "passive"; None keeps the product's default, active.
        degraded_service (rss3): what the servers do with one of them down. The suites that
        assert what an outage does run with "off"; tests/integration/test_degraded.py runs the
        product's default, "two-party"."""
        self.dir = Path(root)
        self.protocol = protocol
        self.degraded_service = degraded_service
        self.security = security
        # The suites import GCM keys of known value to check the engine against; a deployment
        # (and test_key_generation.py) refuses them and generates its ticket keys.
        self.ticket_key_import = ticket_key_import
        self.parties = (1, 2, 3) if protocol == "rss3" else (1, 2)
        self.lut_preprocessing = lut_preprocessing
        self.has_dealer = lut_preprocessing == "dealer"
        self.base_port = base_port if base_port is not None else pick_base_port((20,) if self.has_dealer else ())
        self.admin_config = self.dir / "cluster.toml"
        self.compute_config = self.dir / "compute.toml"
        self.enrol_config = self.dir / "enrol.toml"
        self.restarted: dict[int, subprocess.Popen] = {}
        self._key_files = 0

    # -- mpcctl ------------------------------------------------------------------------

    def mpcctl(self, *args: str, timeout: float = 30, check: bool = True,
               input_text: str | None = None) -> subprocess.CompletedProcess:
        command = [str(mpcctl_binary()), *args]
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, input=input_text)
        except subprocess.TimeoutExpired as error:
            raise MpcctlError(f"mpcctl {' '.join(args)} hung for more than {timeout} s") from error
        if check and result.returncode != 0:
            raise MpcctlError(f"mpcctl {' '.join(args)} exited {result.returncode}: {result.stderr.strip()}\n"
                              f"{self.log_tail()}")
        return result

    def init(self) -> None:
        extra = ["--lut-preprocessing", self.lut_preprocessing] if self.lut_preprocessing else []
        if self.protocol == "rss3" and self.ticket_key_import:
            extra += ["--ticket-key-import", "allow"]
        if self.security:
            extra += ["--security", self.security]
        self.mpcctl("cluster", "init", "--dir", str(self.dir), "--base-port", str(self.base_port),
                    "--protocol", self.protocol, *extra)
        if self.protocol == "rss3":
            for party in self.parties:
                self.set_server_setting(party, "degraded_service", self.degraded_service)

    def set_server_setting(self, party: int, name: str, value: str | int | bool) -> None:
        """Sets a top-level key of a server's server.toml; the server reads it at its next start."""
        toml_files.set_value(self.server_dir(party) / "server.toml", name, value)

    def unset_server_setting(self, party: int, name: str) -> None:
        """Removes a top-level key from a server's server.toml, so that the server's own default
        rules at its next start."""
        toml_files.remove_value(self.server_dir(party) / "server.toml", name)

    def set_server_table_setting(self, party: int, table: str, name: str, value: str | int | bool) -> None:
        """Sets `name` in the [table] section of a server's server.toml; the server reads it at its
        next start."""
        toml_files.set_value(self.server_dir(party) / "server.toml", name, value, table)

    def add_compute_client(self, name: str) -> Path:
        """A further compute client key (another KDC's): its key pair and a configuration
        `name`.toml beside compute.toml, and its public key in every server's [clients] compute
        list. Between init and start: servers read their clients at start."""
        self.mpcctl("keygen", "--out", str(self.dir / name))
        for party in self.parties:
            with toml_files.editing(self.server_dir(party) / "server.toml") as config:
                config["clients"]["compute"].append(f"../{name}.pub")
        own = self.dir / f"{name}.toml"
        shutil.copyfile(self.compute_config, own)
        toml_files.set_value(own, "secret_key_file", f"{name}.key")
        return own

    def _status_lines(self) -> list[re.Match]:
        result = self.mpcctl("cluster", "status", "--cluster", str(self.admin_config), check=False)
        return [m for m in (re.match(r"server (\d):.*mode switches (\d+), mode (.*) since unix ms \d+, excluded", line)
                            for line in result.stdout.splitlines()) if m]

    def status_lines(self) -> dict[int, str]:
        """{server: its whole line} of `mpcctl cluster status` for the servers that answer."""
        out = self.mpcctl("cluster", "status", "--cluster", str(self.admin_config), check=False).stdout
        return {int(m[1]): line for line in out.splitlines() if (m := re.match(r"server (\d):", line))}

    def modes(self) -> dict[int, str]:
        """{server: mode} from `mpcctl cluster status` for the servers that answer."""
        return {int(m[1]): m[3] for m in self._status_lines()}

    def mode_switches(self) -> dict[int, int]:
        """{server: mode switches since its start} for the servers that answer."""
        return {int(m[1]): int(m[2]) for m in self._status_lines()}

    def verification_refusals(self) -> dict[int, int]:
        """{server: requests it refused for failed verification since its start}, from
        `mpcctl cluster status`; every server must answer."""
        out = {}
        status = self.mpcctl("cluster", "status", "--cluster", str(self.admin_config)).stdout
        for line in status.splitlines():
            server = re.match(r"server (\d):", line)
            refused = re.search(r"requests refused for failed verification (\d+)", line)
            if server and refused:
                out[int(server.group(1))] = int(refused.group(1))
        assert sorted(out) == list(self.parties), status
        return out

    def wait_for_modes(self, expected: dict[int, str], deadline_s: float = 15) -> None:
        deadline = time.monotonic() + deadline_s
        seen = {}
        while time.monotonic() < deadline:
            seen = self.modes()
            if seen == expected:
                return
            time.sleep(0.1)
        raise AssertionError(f"cluster modes {seen}, expected {expected}\n{self.log_tail()}")

    @staticmethod
    def copy_client_config(config: Path, path: Path, timeout_ms: int) -> Path:
        """A copy of a client configuration at `path` with another timeout_ms (beside the original,
        so that its relative key paths stay valid)."""
        shutil.copyfile(config, path)
        Cluster.set_client_timeout(path, timeout_ms)
        return path

    @staticmethod
    def set_client_timeout(config: Path, timeout_ms: int) -> None:
        """timeout_ms of a client configuration (compute.toml, cluster.toml, ...)."""
        toml_files.value(config, "timeout_ms")  # a client configuration sets it
        toml_files.set_value(config, "timeout_ms", timeout_ms)

    def start(self) -> None:
        extra = ["--dealer-binary", str(dealer_binary())] if self.has_dealer else []
        self.mpcctl("cluster", "start", "--dir", str(self.dir), "--server-binary", str(server_binary()),
                    *extra, timeout=60)

    def wait_until_serving(self, key: tuple[str, int, str], deadline_s: float = 10) -> None:
        """Polls a one-block keystream until the ring of servers computes (peers connected)."""
        name, kvno, alg = key
        deadline = time.monotonic() + deadline_s
        last = ""
        while time.monotonic() < deadline:
            result = self.mpcctl("aes", "keystream", "--cluster", str(self.admin_config),
                                 *self.key_args(name, kvno, alg), "--counter", "0" * 32,
                                 "--blocks", "1", check=False, timeout=15)
            if result.returncode == 0:
                return
            last = result.stderr.strip()
            time.sleep(0.1)
        raise MpcctlError(f"cluster does not compute after {deadline_s} s: {last}\n{self.log_tail()}")

    def stop(self) -> None:
        """mpcctl cluster stop, reaping servers while it runs; then kills whatever is left."""
        pids = [pid for pid in (self.server_pid(party) for party in self.parties) if pid]
        if self.has_dealer and self.dealer_pid():
            pids.append(self.dealer_pid())
        try:
            stopper = subprocess.Popen([str(mpcctl_binary()), "cluster", "stop", "--dir", str(self.dir)],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 20
            while stopper.poll() is None and time.monotonic() < deadline:
                for pid in pids:
                    reap(pid)
                for process in self.restarted.values():
                    process.poll()
                time.sleep(0.02)
            if stopper.poll() is None:
                stopper.kill()
                stopper.wait()
        except OSError:
            pass
        for party in self.parties:
            pid = self.server_pid(party)
            if pid:
                pids.append(pid)
        if self.has_dealer and self.dealer_pid():
            pids.append(self.dealer_pid())
        for pid in set(pids):
            if pid_alive(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            for _ in range(100):
                if reap(pid):
                    break
                time.sleep(0.02)
        for process in self.restarted.values():
            if process.poll() is None:
                process.kill()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass

    # -- servers -----------------------------------------------------------------------

    def server_dir(self, party: int) -> Path:
        return self.dir / f"server{party}"

    def server_pid(self, party: int) -> int:
        try:
            return int((self.server_dir(party) / "server.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return 0

    def server_alive(self, party: int) -> bool:
        return pid_alive(self.server_pid(party))

    def kill_server(self, party: int) -> None:
        pid = self.server_pid(party)
        os.kill(pid, signal.SIGKILL)
        for _ in range(250):
            if reap(pid):
                return
            time.sleep(0.02)
        raise AssertionError(f"server {party} (pid {pid}) survived SIGKILL")

    def restart_server(self, party: int, fault: str | None = None) -> int:
        """Starts one server again in the background; its pid goes to serverN/server.pid.
        fault: run the test server instead, deviating as MPC_FAULT = fault says."""
        log = open(self.server_dir(party) / "server.log", "ab")
        env = None
        if fault is not None:
            env = dict(os.environ, MPC_FAULT=fault)
        binary = faults_server_binary() if fault is not None else server_binary()
        process = subprocess.Popen([str(binary), "--config", str(self.server_dir(party) / "server.toml")],
                                   stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True, env=env)
        log.close()
        self.restarted[party] = process
        (self.server_dir(party) / "server.pid").write_text(f"{process.pid}\n")
        # Reap it promptly whenever it exits, so kill(pid, 0) never sees a zombie.
        threading.Thread(target=process.wait, daemon=True).start()
        return process.pid

    # -- the lookup-table dealer (lut_preprocessing="dealer") -----------------------------

    def dealer_dir(self) -> Path:
        return self.dir / "dealer"

    def dealer_pid(self) -> int:
        try:
            return int((self.dealer_dir() / "dealer.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return 0

    def kill_dealer(self) -> None:
        pid = self.dealer_pid()
        os.kill(pid, signal.SIGKILL)
        for _ in range(250):
            if reap(pid):
                return
            time.sleep(0.02)
        raise AssertionError(f"the dealer (pid {pid}) survived SIGKILL")

    def restart_dealer(self) -> int:
        """Starts the dealer again in the background; its pid goes to dealer/dealer.pid."""
        log = open(self.dealer_dir() / "dealer.log", "ab")
        process = subprocess.Popen([str(dealer_binary()), "--config", str(self.dealer_dir() / "dealer.toml")],
                                   stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True)
        log.close()
        self.restarted[0] = process  # key 0: the dealer (servers are keyed by party)
        (self.dealer_dir() / "dealer.pid").write_text(f"{process.pid}\n")
        threading.Thread(target=process.wait, daemon=True).start()
        return process.pid

    def log_events(self, party: int, event: str) -> list[dict]:
        """The JSON log lines of a server with this event."""
        events = []
        for raw in (self.server_dir(party) / "server.log").read_text(errors="replace").splitlines():
            try:
                entry = json.loads(raw)
            except ValueError:
                continue
            if isinstance(entry, dict) and entry.get("event") == event:
                events.append(entry)
        return events

    def wait_for_log_event(self, party: int, event: str, matches=lambda entry: True,
                           deadline_s: float = 5) -> list[dict]:
        """The matching log lines of a server, once there is one: a server may close a
        connection before its log line about it is written."""
        deadline = time.monotonic() + deadline_s
        while True:
            found = [entry for entry in self.log_events(party, event) if matches(entry)]
            if found or time.monotonic() > deadline:
                return found
            time.sleep(0.05)

    def log_tail(self, lines: int = 6) -> str:
        out = []
        for party in self.parties:
            path = self.server_dir(party) / "server.log"
            try:
                tail = path.read_text(errors="replace").splitlines()[-lines:]
            except OSError:
                continue
            out.append(f"--- server{party}/server.log\n" + "\n".join(tail))
        if self.has_dealer:
            try:
                tail = (self.dealer_dir() / "dealer.log").read_text(errors="replace").splitlines()[-lines:]
                out.append("--- dealer/dealer.log\n" + "\n".join(tail))
            except OSError:
                pass
        return "\n".join(out)

    # -- keys and computations --------------------------------------------------------

    @staticmethod
    def key_args(name: str, kvno: int, alg: str) -> list[str]:
        return ["--name", name, "--kvno", str(kvno), "--alg", alg]

    def write_key_file(self, key_hex: str) -> Path:
        self._key_files += 1
        path = self.dir / f"import-{self._key_files}.hex"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(key_hex + "\n")
        return path

    def import_key(self, name: str, kvno: int, alg: str, key_hex: str | None = None,
                   check: bool = True) -> tuple[str, subprocess.CompletedProcess]:
        if key_hex is None:
            key_hex = secrets.token_hex(16 if alg == "aes128" else 32)
        path = self.write_key_file(key_hex)
        try:
            result = self.mpcctl("key", "import", "--cluster", str(self.admin_config), *self.key_args(name, kvno, alg),
                                 "--key-file", str(path), check=check)
        finally:
            path.unlink(missing_ok=True)
        return key_hex, result

    def keystream(self, name: str, kvno: int, alg: str, counter_hex: str, blocks: int,
                  config: Path | None = None, timeout: float = 30) -> bytes:
        result = self.mpcctl("aes", "keystream", "--cluster", str(config or self.admin_config),
                             *self.key_args(name, kvno, alg), "--counter", counter_hex, "--blocks", str(blocks),
                             timeout=timeout)
        return parse_blocks(result.stdout)

    @staticmethod
    def keystream_of(result: subprocess.CompletedProcess) -> bytes:
        """The blocks a successful `mpcctl aes keystream` printed."""
        return parse_blocks(result.stdout)

    def ecb(self, direction: str, name: str, kvno: int, alg: str, data: bytes) -> bytes:
        result = self.mpcctl("aes", f"ecb-{direction}", "--cluster", str(self.admin_config),
                             *self.key_args(name, kvno, alg), "--in", data.hex())
        return parse_blocks(result.stdout)

    def list_keys(self, prefix: str = "") -> list[tuple[str, int, str, str]]:
        args = ["key", "list", "--cluster", str(self.admin_config)]
        if prefix:
            args += ["--prefix", prefix]
        rows = []
        for line in self.mpcctl(*args).stdout.splitlines():
            fields = line.split("\t")
            if len(fields) != 4:
                raise AssertionError(f"key list line {line!r} does not have 4 tab-separated fields")
            rows.append((fields[0], int(fields[1]), fields[2], fields[3]))
        return rows


def parse_blocks(text: str) -> bytes:
    data = b""
    for line in text.split():
        if len(line) != 32:
            raise AssertionError(f"output line {line!r} is not one 16-byte block in hex")
        data += bytes.fromhex(line)
    return data


# -- OpenSSL as the outside truth ------------------------------------------------------

def openssl(args: list[str], data: bytes) -> bytes:
    result = subprocess.run(["openssl", *args], input=data, capture_output=True, timeout=30)
    if result.returncode != 0:
        raise AssertionError(f"openssl {' '.join(args)} failed: {result.stderr.decode(errors='replace')}")
    return result.stdout


def openssl_ctr_keystream(alg: str, key_hex: str, counter_hex: str, blocks: int) -> bytes:
    bits = 128 if alg == "aes128" else 256
    return openssl([ "enc", f"-aes-{bits}-ctr", "-K", key_hex, "-iv", counter_hex, "-nosalt"], bytes(16 * blocks))


def openssl_ecb(alg: str, key_hex: str, data: bytes, decrypt: bool = False) -> bytes:
    bits = 128 if alg == "aes128" else 256
    args = ["enc", f"-aes-{bits}-ecb", "-K", key_hex, "-nopad", "-nosalt"]
    if decrypt:
        args.append("-d")
    return openssl(args, data)


def start_cluster(root: Path, protocol: str = "rss3", degraded_service: str = "off",
                  compute_clients: tuple[str, ...] = (), security: str | None = None) -> Cluster:
    """A cluster initialised and started under `root`, retried in new directories when a port
    was taken between the probe and the bind. compute_clients: names of further compute
    client keys (Cluster.add_compute_client), each with its configuration `name`.toml.
    security: as Cluster's."""
    cluster = Cluster(root, protocol=protocol, degraded_service=degraded_service, security=security)
    for attempt in range(3):
        try:
            cluster.init()
            for name in compute_clients:
                cluster.add_compute_client(name)
            cluster.start()
            if protocol == "lut2":
                # Jobs wait at most pool_wait_ms for lookup-table entries: let the first batch of
                # preprocessing finish before the tests time anything.
                cluster.import_key("pool-warm-up", 1, "aes128")
                cluster.wait_until_serving(("pool-warm-up", 1, "aes128"), deadline_s=30)
            return cluster
        except Exception:
            cluster.stop()
            if attempt == 2:
                raise
            # Most likely a port was taken between the probe and the bind: new dir, new ports.
            cluster = Cluster(root.parent / f"{root.name}-retry{attempt + 1}", protocol=protocol,
                              degraded_service=degraded_service, security=security)
    raise AssertionError("unreachable")
