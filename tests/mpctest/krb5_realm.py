"""A throwaway MIT Kerberos realm on loopback, run without root, for the KDC tests.

Everything lives in one directory: krb5.conf and kdc.conf (pointed to by KRB5_CONFIG and
KRB5_KDC_PROFILE), the database (`database_name`), the stash, the ACL, keytabs, the
credential cache (KRB5CCNAME), the replay caches and the logs. The KDC listens on a free
high port of 127.0.0.1 (UDP and TCP), kadmind and kpasswd on two more. Processes are the
stock Debian binaries: kdb5_util, kadmin.local, krb5kdc -n, kadmind -nofork, kinit, klist,
kvno, kadmin.

The database goes through `db_library` = db2 or klmdb directly, or through our KDB module
(mpc_module= path of mpc_kdb.so), which then wraps `backend`. Every command has a
timeout; stop() (also on `with` exit) terminates every process this realm started, whole
process groups included, whatever happened.

    with Realm(tmp_path / "r", backend="db2", mpc_module=path) as realm:
        realm.create()
        realm.addprinc("alice", password="pw")
        realm.start_kdc()
        assert realm.kinit("alice", password="pw").returncode == 0
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from mpctest.loopback_ports import random_port

DEFAULT_REALM = "MPC.TEST"
MASTER_PASSWORD = "master-password"
COMMAND_TIMEOUT_S = 30
START_TIMEOUT_S = 10
STOP_TIMEOUT_S = 5
ENCTYPES = "aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal"

def system_kdb_module_dir() -> Path:
    """Where the installed krb5 loads its own KDB modules from (db2.so; klmdb.so where
    built): LIBDIR/krb5/plugins/kdb, as kdc-plugin/CMakeLists.txt computes it."""
    try:
        libdir = subprocess.run(["pkg-config", "--variable=libdir", "krb5"], capture_output=True,
                                text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        libdir = ""
    return Path(libdir or "/usr/lib/x86_64-linux-gnu") / "krb5" / "plugins" / "kdb"


def find_kdb_module_dir(name: str, extra: Iterable[Path] = ()) -> Path | None:
    """The first directory holding `name`.so among extra and the system KDB module dir."""
    for directory in [*extra, system_kdb_module_dir()]:
        if directory and (Path(directory) / f"{name}.so").is_file():
            return Path(directory)
    return None


def _free(port: int) -> bool:
    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        with socket.socket(socket.AF_INET, kind) as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                return False
    return True


def pick_ports(count: int) -> list[int]:
    """count distinct ports, free for both TCP and UDP on 127.0.0.1 right now."""
    chosen: list[int] = []
    for _ in range(1000):
        port = random_port()
        if port not in chosen and _free(port):
            chosen.append(port)
            if len(chosen) == count:
                return chosen
    raise RuntimeError("no free loopback ports found")


@dataclass
class Result:
    """Exit code and output of one command."""
    args: list[str]
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def check(self) -> "Result":
        if self.returncode != 0:
            raise RealmError(f"{' '.join(self.args)} exited {self.returncode}:\n{self.output}")
        return self


class RealmError(AssertionError):
    pass


class Realm:
    """One realm directory; see the module docstring."""

    def __init__(self, root: Path, *, realm: str = DEFAULT_REALM, backend: str = "db2",
                 mpc_module: Path | None = None, module_dirs: Sequence[Path] = (),
                 handle_key: bool = True, clients_use_tcp: bool = False):
        if backend not in ("db2", "klmdb"):
            raise ValueError(f"backend must be db2 or klmdb, not {backend!r}")
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.realm = realm
        self.backend = backend
        self.mpc_module = Path(mpc_module) if mpc_module else None
        self.module_dirs = [Path(d) for d in module_dirs]
        self.clients_use_tcp = clients_use_tcp
        self.krb5_conf = self.root / "krb5.conf"
        self.kdc_conf = self.root / "kdc.conf"
        self.database = self.root / "db" / "principal"
        self.stash = self.root / "stash"
        self.acl = self.root / "kadm5.acl"
        self.ccache = self.root / "ccache"
        self.keytab = self.root / "server.keytab"
        self.kdc_log_path = self.root / "kdc.log"
        self.kadmind_log_path = self.root / "kadmind.log"
        self.handle_key_path = self.root / "handle.key" if (mpc_module and handle_key) else None
        self.kdc_port, self.kadmind_port, self.kpasswd_port = pick_ports(3)
        self._processes: dict[str, subprocess.Popen] = {}
        (self.root / "db").mkdir(exist_ok=True)
        (self.root / "rcache").mkdir(exist_ok=True)
        if self.handle_key_path is not None and not self.handle_key_path.exists():
            fd = os.open(self.handle_key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(secrets.token_bytes(32))
        self.acl.write_text(f"admin@{realm} *\n*/admin@{realm} *\n")
        self.write_config()

    # ---- configuration ---------------------------------------------------------

    @property
    def db_library(self) -> str:
        return "mpc_kdb" if self.mpc_module else self.backend

    def dbmodule_settings(self) -> dict[str, str]:
        settings = {"db_library": self.db_library, "database_name": str(self.database)}
        if self.mpc_module:
            settings["mpc_backend"] = self.backend
            if self.handle_key_path is not None:
                settings["mpc_handle_key_file"] = str(self.handle_key_path)
        return settings

    def write_config(self, extra_dbmodule: dict[str, str] | None = None) -> None:
        r = self.realm
        # MIT clients resend a UDP request after a second, and another krb5kdc worker then serves
        # it again: realms whose logins take longer send over TCP alone, as operators are told to.
        transport = "    udp_preference_limit = 1\n" if self.clients_use_tcp else ""
        self.krb5_conf.write_text(f"""[libdefaults]
    default_realm = {r}
    dns_lookup_kdc = false
    dns_lookup_realm = false
    dns_canonicalize_hostname = false
    rdns = false
    kdc_timeout = 5s
    max_retries = 2
{transport}
[realms]
    {r} = {{
        kdc = 127.0.0.1:{self.kdc_port}
        admin_server = 127.0.0.1:{self.kadmind_port}
        kpasswd_server = 127.0.0.1:{self.kpasswd_port}
    }}
""")
        dirs = ([self.mpc_module.parent] if self.mpc_module else []) + self.module_dirs
        dir_lines = "".join(f"    db_module_dir = {d}\n" for d in dirs)
        settings = {**self.dbmodule_settings(), **(extra_dbmodule or {})}
        setting_lines = "".join(f"        {k} = {v}\n" for k, v in settings.items())
        self.kdc_conf.write_text(f"""[kdcdefaults]
    kdc_listen = 127.0.0.1:{self.kdc_port}
    kdc_tcp_listen = 127.0.0.1:{self.kdc_port}

[realms]
    {r} = {{
        database_module = realmdb
        database_name = {self.database}
        key_stash_file = {self.stash}
        acl_file = {self.acl}
        kadmind_listen = 127.0.0.1:{self.kadmind_port}
        kpasswd_listen = 127.0.0.1:{self.kpasswd_port}
        master_key_type = aes256-cts-hmac-sha1-96
        supported_enctypes = {ENCTYPES}
        max_life = 10h
        max_renewable_life = 7d
    }}

[dbmodules]
{dir_lines}    realmdb = {{
{setting_lines}    }}

[logging]
    kdc = FILE:{self.kdc_log_path}
    admin_server = FILE:{self.kadmind_log_path}
    default = FILE:{self.root / "krb5lib.log"}
""")

    @property
    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("KRB5")}
        env.update({
            "KRB5_CONFIG": str(self.krb5_conf),
            "KRB5_KDC_PROFILE": str(self.kdc_conf),
            "KRB5CCNAME": f"FILE:{self.ccache}",
            "KRB5_KTNAME": f"FILE:{self.keytab}",
            "KRB5_CLIENT_KTNAME": f"FILE:{self.root / 'client.keytab'}",
            "KRB5RCACHEDIR": str(self.root / "rcache"),
            "LC_ALL": "C",
            "LANG": "C",
        })
        if os.environ.get("MPC_KRB5_TRACE"):
            env["KRB5_TRACE"] = str(self.root / "trace.log")
        return env

    def principal(self, name: str) -> str:
        return name if "@" in name else f"{name}@{self.realm}"

    # ---- commands --------------------------------------------------------------

    def run(self, args: Sequence[str], *, input: str | None = None,
            timeout: float = COMMAND_TIMEOUT_S, check: bool = False) -> Result:
        args = [str(a) for a in args]
        try:
            done = subprocess.run(args, input=input if input is not None else "", env=self.env,
                                  cwd=self.root, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            raise RealmError(f"{' '.join(args)} did not finish within {timeout} s") from exc
        result = Result(args, done.returncode, done.stdout, done.stderr)
        return result.check() if check else result

    def create(self) -> Result:
        """kdb5_util create -s: the database, its master key and the stash."""
        return self.run(["kdb5_util", "-r", self.realm, "create", "-s", "-P", MASTER_PASSWORD],
                        check=True)

    def kdb5_util(self, *args: str, check: bool = False) -> Result:
        return self.run(["kdb5_util", "-r", self.realm, *args], check=check)

    def kadmin_local(self, query: str, check: bool = False) -> Result:
        result = self.run(["kadmin.local", "-r", self.realm, "-q", query])
        # kadmin.local exits 0 even when the query fails; failures go to stderr.
        if check and (result.returncode != 0 or _kadmin_failed(result)):
            raise RealmError(f"kadmin.local -q {query!r} failed:\n{result.output}")
        return result

    def addprinc(self, name: str, password: str | None = None, options: str = "") -> Result:
        how = f"-pw {password}" if password is not None else "-randkey"
        return self.kadmin_local(f"addprinc {options} {how} {self.principal(name)}", check=True)

    def ktadd(self, names: Iterable[str], keytab: Path | None = None,
              norandkey: bool = False) -> Path:
        keytab = Path(keytab) if keytab else self.keytab
        flag = "-norandkey " if norandkey else ""
        for name in names:
            self.kadmin_local(f"ktadd -k {keytab} {flag}{self.principal(name)}", check=True)
        return keytab

    def setstr(self, name: str, key: str, value: str) -> Result:
        return self.kadmin_local(f"setstr {self.principal(name)} {key} {value}", check=True)

    def delstr(self, name: str, key: str) -> Result:
        return self.kadmin_local(f"delstr {self.principal(name)} {key}", check=True)

    def getprinc(self, name: str) -> Result:
        return self.kadmin_local(f"getprinc {self.principal(name)}")

    def kinit(self, name: str, password: str | None = None, keytab: Path | None = None,
              args: Sequence[str] = ()) -> Result:
        if keytab is not None:
            return self.run(["kinit", *args, "-k", "-t", keytab, self.principal(name)])
        return self.run(["kinit", *args, self.principal(name)], input=f"{password}\n")

    def klist(self, *args: str) -> Result:
        return self.run(["klist", *args])

    def kvno(self, *services: str) -> Result:
        return self.run(["kvno", *[self.principal(s) for s in services]])

    def kadmin(self, principal: str, password: str, query: str) -> Result:
        """The network kadmin client against this realm's kadmind."""
        return self.run(["kadmin", "-r", self.realm, "-p", self.principal(principal), "-w", password,
                         "-q", query])

    # ---- daemons ---------------------------------------------------------------

    def start_kdc(self, workers: int | None = None) -> subprocess.Popen:
        args = ["krb5kdc", "-n", "-r", self.realm] + (["-w", str(workers)] if workers else [])
        return self._start("krb5kdc", args, self.kdc_port, self.kdc_log_path,
                           "commencing operation")

    def start_kadmind(self) -> subprocess.Popen:
        return self._start("kadmind", ["kadmind", "-nofork", "-r", self.realm], self.kadmind_port,
                           self.kadmind_log_path, "starting")

    def _start(self, name: str, args: list[str], port: int, log: Path, ready: str
               ) -> subprocess.Popen:
        if name in self._processes:
            raise RealmError(f"{name} already started")
        before = log.read_text(errors="replace") if log.exists() else ""
        stderr = open(self.root / f"{name}.stderr", "ab")
        try:
            proc = subprocess.Popen(args, env=self.env, cwd=self.root, stdin=subprocess.DEVNULL,
                                    stdout=stderr, stderr=stderr, start_new_session=True)
        finally:
            stderr.close()
        self._processes[name] = proc
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                self._processes.pop(name, None)
                raise RealmError(f"{name} exited {proc.returncode} while starting:\n"
                                 f"{self.read(log)[len(before):]}"
                                 f"{self.read(self.root / f'{name}.stderr')}")
            text = self.read(log)[len(before):]
            if ready in text and accepts(port):
                return proc
            time.sleep(0.05)
        self._stop(name)
        raise RealmError(f"{name} did not start within {START_TIMEOUT_S} s:\n{self.read(log)}")

    def kdc_pid(self) -> int:
        return self._processes["krb5kdc"].pid

    def kadmind_pid(self) -> int:
        return self._processes["kadmind"].pid

    def kdc_running(self) -> bool:
        proc = self._processes.get("krb5kdc")
        return proc is not None and proc.poll() is None

    def stop_kdc(self) -> int | None:
        return self._stop("krb5kdc")

    def stop_kadmind(self) -> int | None:
        return self._stop("kadmind")

    def _stop(self, name: str) -> int | None:
        proc = self._processes.pop(name, None)
        if proc is None:
            return None
        if proc.poll() is None:
            _signal_group(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                _signal_group(proc.pid, signal.SIGKILL)
                proc.wait(timeout=STOP_TIMEOUT_S)
        # Workers (krb5kdc -w) share the group; make sure none outlives its parent.
        _signal_group(proc.pid, signal.SIGKILL)
        return proc.returncode

    def stop(self) -> None:
        for name in list(self._processes):
            try:
                self._stop(name)
            except Exception:  # keep stopping the others
                pass

    def __enter__(self) -> "Realm":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # ---- logs ------------------------------------------------------------------

    @staticmethod
    def read(path: Path) -> str:
        try:
            return Path(path).read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def kdc_log(self) -> str:
        return self.read(self.kdc_log_path)

    def kadmind_log(self) -> str:
        return self.read(self.kadmind_log_path)

    def destroy(self) -> None:
        """Stops everything and removes the realm directory."""
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


def _kadmin_failed(result: Result) -> bool:
    lowered = result.stderr.lower()
    return any(word in lowered for word in ("error", "failed", "cannot", "unable", "not found",
                                            "no such", "invalid"))


def accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
