"""A realm whose krbtgt key is protected: an engine cluster, the KDB module, the crypto
router preloaded into krb5kdc, and `mpcctl kdc protect` run on the realm's database.

Used by the TGT-protection tests and the KDC benchmark. Everything is a real process: the
three mpc-server processes (mpc_cluster.Cluster), the stock Debian krb5kdc and clients.
"""

from __future__ import annotations

import os
import re
import struct
import subprocess
from pathlib import Path

from mpctest import mpc_cluster
from mpctest.memory_scan import assert_scan_finds, memory_contains  # noqa: F401  (re-exported)
from mpctest.kdc_formats import AES256, PRIVATE_ENCTYPE, ticket_key  # noqa: F401  (re-exported)
from mpctest.kdc_formats import engine_name, ghash_key, round_key_needles
from mpctest import local_masks
from mpctest.share_store_reader import stored_shares
from mpctest.krb5_realm import Realm


def router_library() -> Path:
    return Path(os.environ.get("MPC_ROUTER_SO", mpc_cluster.build_dir() / "kdc-plugin" / "router" /
                               "mpc_crypto_router.so"))


def kdb_module() -> Path:
    return Path(os.environ.get("MPC_KDB_MODULE", mpc_cluster.build_dir() / "kdc-plugin" / "kdb" /
                               "mpc_kdb.so"))


def read_keytab(path: Path) -> list[tuple[str, int, int, bytes]]:
    """(principal, kvno, enctype, key bytes) of every entry of a version 0x0502 keytab."""
    data = Path(path).read_bytes()
    if data[:2] != b"\x05\x02":
        raise ValueError(f"{path}: not a version 0x0502 keytab")
    entries, offset = [], 2
    while offset + 4 <= len(data):
        (size,) = struct.unpack_from(">i", data, offset)
        offset += 4
        if size <= 0:
            offset += -size
            continue
        entry, offset = data[offset:offset + size], offset + size
        pos = 0

        def counted() -> bytes:
            nonlocal pos
            (length,) = struct.unpack_from(">H", entry, pos)
            pos += 2
            value = entry[pos:pos + length]
            pos += length
            return value

        (components,) = struct.unpack_from(">H", entry, pos)
        pos += 2
        realm = counted().decode()
        name = "/".join(counted().decode() for _ in range(components))
        pos += 4 + 4  # name type, timestamp
        kvno = entry[pos]
        pos += 1
        enctype, key_length = struct.unpack_from(">HH", entry, pos)
        pos += 4
        key = entry[pos:pos + key_length]
        pos += key_length
        if pos + 4 <= len(entry):
            (kvno,) = struct.unpack_from(">I", entry, pos)
        entries.append((f"{name}@{realm}", kvno, enctype, key))
    return entries


class ProtectedRealm(Realm):
    """A Realm over mpc_kdb whose krb5kdc runs with the crypto router preloaded.

    enrol_users=True sets mpc_cluster_config (the cluster's enrol configuration, whose
    client key may change Kerberos user and service keys only) in the realm's dbmodules
    section: the admin tools then enrol the keys of users marked mpc-protected in the engine
    when they are stored."""

    def __init__(self, root: Path, cluster: mpc_cluster.Cluster, enrol_users: bool = False,
                 compute_config: Path | None = None, **kwargs):
        kwargs.setdefault("mpc_module", kdb_module())
        self._cluster_config = cluster.enrol_config if enrol_users else None
        super().__init__(root, **kwargs)
        self.cluster = cluster
        self.router_conf = self.root / "router.conf"
        self.router_conf.write_text(f"handle_key_file = {self.handle_key_path}\n"
                                    f"engine_config = {compute_config or cluster.compute_config}\n")
        self.router_conf.chmod(0o600)
        self.old_krbtgt_keys: list[tuple[int, int, bytes]] = []
        self._kdc_starting = False
        self.router_enabled = True

    def dbmodule_settings(self) -> dict[str, str]:
        settings = super().dbmodule_settings()
        if getattr(self, "_cluster_config", None) is not None:
            settings["mpc_cluster_config"] = str(self._cluster_config)
        return settings

    @property
    def tgs(self) -> str:
        return f"krbtgt/{self.realm}@{self.realm}"

    @property
    def env(self) -> dict[str, str]:
        env = super().env
        env.pop("LD_PRELOAD", None)
        if self._kdc_starting and self.router_enabled:
            env["LD_PRELOAD"] = str(router_library())
            env["MPC_ROUTER_CONFIG"] = str(self.router_conf)
        return env

    def start_kdc(self, workers: int | None = None):
        self._kdc_starting = True
        try:
            return super().start_kdc(workers)
        finally:
            self._kdc_starting = False

    def remember_krbtgt_keys(self) -> None:
        """Reads the current krbtgt keys once (the test knows them from before protection)
        through a keytab that is deleted at once."""
        keytab = self.root / "krbtgt-before.keytab"
        self.ktadd([self.tgs], keytab, norandkey=True)
        try:
            self.old_krbtgt_keys = [(kvno, enctype, key) for _, kvno, enctype, key in read_keytab(keytab)]
        finally:
            keytab.unlink()
        if not any(enctype == AES256 for _, enctype, _ in self.old_krbtgt_keys):
            raise AssertionError(f"krbtgt has no aes256 key: {self.old_krbtgt_keys}")

    def secrets(self) -> dict[str, bytes]:
        """Every krbtgt secret that must never reach the KDC's files or memory: the old keys
        and their round keys; the engine's ticket keys K (derived from an old key where two
        servers imported it, read back from the three servers' stores where they generated it),
        their round keys and their GHASH keys H."""
        found = {}
        if len(self.cluster.parties) == 3:
            for kvno, key in engine_ticket_keys(self.cluster, engine_name(self.tgs)).items():
                found[f"generated ticket key kvno {kvno}"] = key
                found.update(round_key_needles(f"generated ticket key kvno {kvno}", key))
                found[f"GHASH key H of the generated ticket key kvno {kvno}"] = ghash_key(key)
        for kvno, enctype, key in self.old_krbtgt_keys:
            found[f"krbtgt kvno {kvno} enctype {enctype}"] = key
            if len(key) in (16, 32):
                found.update(round_key_needles(f"krbtgt kvno {kvno} enctype {enctype}", key))
            if enctype == AES256:
                engine_key = ticket_key(key)
                found[f"engine ticket key from kvno {kvno}"] = engine_key
                found.update(round_key_needles(f"engine ticket key from kvno {kvno}", engine_key))
                found[f"GHASH key H of the ticket key from kvno {kvno}"] = ghash_key(engine_key)
        return found

    def mpcctl_kdc(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        command = [str(mpc_cluster.mpcctl_binary()), "kdc", *args]
        result = subprocess.run(command, env=self.env, cwd=self.root, capture_output=True, text=True,
                                timeout=60)
        if check and result.returncode != 0:
            raise AssertionError(f"mpcctl kdc {' '.join(args)} exited {result.returncode}:\n"
                                 f"{result.stdout}{result.stderr}")
        return result

    def protect(self) -> subprocess.CompletedProcess:
        return self.mpcctl_kdc("protect", self.tgs, "--cluster", str(self.cluster.admin_config))


def engine_ticket_keys(cluster: mpc_cluster.Cluster, name: str) -> dict[int, bytes]:
    """{kvno: K} of the aes256-gcm engine keys stored under `name`, put together from the three
    servers' stores (local_masks.components: one additive component each): what no process
    of the product ever holds, for tests to compute and look for."""
    dirs = [cluster.server_dir(party) for party in cluster.parties]
    kvnos = {version for (stored, version, algorithm) in stored_shares(dirs[0])
             if stored == name and algorithm == local_masks.ALGORITHM_AES256_GCM}
    keys = {}
    for kvno in sorted(kvnos):
        parts = local_masks.components(dirs, (name, kvno, "aes256-gcm"))
        keys[kvno] = bytes(a ^ b ^ c for a, b, c in zip(*parts))
    return keys


def probe_keys(realm: Realm, probe: Path, mode: str, principal: str) -> list[dict]:
    """[{kvno, enctype, stored, result | error}] per key_data of `principal` (its full name), as
    krb5kdc (mode "kdc") or kadmin (mode "admin") reads it through kdb_probe."""
    res = realm.run([probe, realm.stash, mode, "keys", principal])
    assert res.returncode == 0, res.output
    keys = []
    for line in res.stdout.splitlines():
        m = re.match(r"key kvno=(\d+) enctype=(-?\d+) stored=([0-9a-f]*) (?:result=([0-9a-f]*)|error=(.*))$",
                     line)
        assert m, line
        keys.append({"kvno": int(m[1]), "enctype": int(m[2]), "stored": bytes.fromhex(m[3]),
                     "result": bytes.fromhex(m[4]) if m[4] is not None else None, "error": m[5]})
    return keys


def kdc_pids(kdc_pid: int) -> list[int]:
    """krb5kdc and its worker processes (-w N): the process and its children."""
    pids = [kdc_pid]
    children = Path(f"/proc/{kdc_pid}/task/{kdc_pid}/children")
    if children.exists():
        pids += [int(p) for p in children.read_text().split()]
    return pids


def files_containing(root: Path, needles: dict[str, bytes]) -> list[str]:
    hits = []
    for path in Path(root).rglob("*"):
        if not path.is_file():
            continue
        try:
            data = path.read_bytes()
        except OSError:
            continue
        for name, needle in needles.items():
            if needle in data or needle.hex().encode() in data.lower():
                hits.append(f"{path.name}: {name}")
    return hits
