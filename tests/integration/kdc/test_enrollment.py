"""`mpcctl kdc protect | rotate | status`: a realm's krbtgt key moved into the engine.

Real processes only: throwaway realms (krb5_realm.Realm) whose database goes through
mpc_kdb.so over db2 (and klmdb where built), a three-server engine cluster started with
`mpcctl cluster`, the stock kdb5_util and kadmin.local, kdb_probe (the database as krb5kdc
or the admin tools see it) and the engine's C library (libmpcclient.so) through ctypes.

What is asserted:
- after `protect`, the database holds for krbtgt one marker key_data (the private enctype,
  the marker bytes under the master key) and `mpc-protected: true`; the old AES keys (read
  before with `ktadd -norandkey`) and the ticket key K appear in no file of the realm or of
  the engine servers, in raw or hex form; krb5kdc's view (KDC mode) is a handle for the
  marker; the engine holds K under the name handle.h defines;
- K is HMAC-SHA256(old AES-256 key, label): AES-256-GCM computed by the engine under the
  enrolled key equals Python's AESGCM under that K, both ways;
- dump/load and master-key rotation (add_mkey, use_mkey, update_princ_encryption,
  purge_mkeys) carry the marker; with iprop, protect and rotate are in the update log;
- rotate adds kvno + 1 with a fresh key and keeps older kvnos until no ticket can use them
  (lifetimes shortened to seconds), --retire-now drops them from database and engine;
- refusals (unknown principal, K/M, cross-realm, a user without --force, no AES-256 key,
  twice, engine unreachable, a concurrent change) say why and change neither the database
  nor the engine; status reports every inconsistency with exit status 3.
"""

from __future__ import annotations

import ctypes
import re
import secrets
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from kdc_formats import (AES128, AES256, PRIVATE_ENCTYPE, keystream_aad, engine_name,
                         expected_handle, ticket_key)
from krb5_realm import Realm, pick_ports
from mpc_cluster import Cluster, client_library, mpcctl_binary
from protected_kdc import probe_keys
from tcp_relay import TcpRelay

PRIVATE_ENCTYPE_SHOWN = "UNSUPPORTED:<Encryption type 0xffffb2b0>"   # kadmin's rendering
MARKER = b"mpc-kdc engine key, format 1" + bytes(4)                   # MPC_KDC_MARKER, 32 bytes
ATTRIBUTE = "mpc-protected"
INCONSISTENT_EXIT = 3
MPC_EBADTAG = -7

# ---- helpers ---------------------------------------------------------------------------


def unique_realm() -> str:
    """Realms of one module share the engine: distinct names keep their keys apart."""
    return f"E{secrets.token_hex(4).upper()}.TEST"


def tgs(realm: Realm) -> str:
    return f"krbtgt/{realm.realm}@{realm.realm}"


def kdc(realm: Realm, *args) -> subprocess.CompletedProcess:
    return realm.run([mpcctl_binary(), "kdc", *[str(a) for a in args]], timeout=60)


def protect(realm: Realm, cluster: Cluster, principal: str | None = None, *extra: str):
    res = kdc(realm, "protect", principal or f"krbtgt/{realm.realm}", "--cluster", cluster.admin_config,
              *extra)
    assert res.returncode == 0, res.output
    return res


def exported_keys(realm: Realm, principal: str, keytab: Path) -> dict[tuple[int, int], bytes]:
    """{(kvno, enctype): key} through `kadmin.local ktadd -norandkey` into a keytab outside the
    realm directory (deleted again). krbtgt is created with lockdown_keys, lifted meanwhile."""
    realm.kadmin_local(f"modprinc -lockdown_keys {principal}", check=True)
    try:
        realm.kadmin_local(f"ktadd -k {keytab} -norandkey {principal}", check=True)
        listing = realm.klist("-k", "-K", "-e", "-t", str(keytab))
        assert listing.returncode == 0, listing.output
    finally:
        keytab.unlink(missing_ok=True)
        realm.kadmin_local(f"modprinc +lockdown_keys {principal}", check=True)
    names = {"aes256-cts-hmac-sha1-96": AES256, "aes128-cts-hmac-sha1-96": AES128}
    keys = {}
    for line in listing.stdout.splitlines():
        m = re.match(r"\s*(\d+)\s+\S+\s+\S+\s+(\S+)\s+\((\S+)\)\s+\(0x([0-9a-f]+)\)", line)
        if m and m[2] == principal:
            keys[(int(m[1]), names[m[3]])] = bytes.fromhex(m[4])
    return keys


def files_holding(roots: list[Path], needles: dict[str, bytes]) -> list[str]:
    """'label in path' for every file under roots holding a needle raw or as hex text."""
    found = []
    for root in roots:
        for path in sorted(Path(root).rglob("*")):
            if not path.is_file() or path.is_symlink():
                continue
            data = path.read_bytes()
            lowered = data.lower()
            for label, needle in needles.items():
                if needle in data or needle.hex().encode() in lowered:
                    found.append(f"{label} in {path}")
    return found


def dump(realm: Realm, name: str) -> str:
    path = realm.root / name
    realm.kdb5_util("dump", str(path), check=True)
    return path.read_text()


def dump_line(text: str, principal: str) -> str:
    lines = [line for line in text.splitlines() if f"\t{principal}\t" in line]
    assert len(lines) == 1, f"{principal} not in the dump"
    return lines[0]


def engine_keys(cluster: Cluster, principal: str) -> set[int]:
    name = engine_name(principal)
    return {kvno for key, kvno, alg, _ in cluster.list_keys(name) if key == name and alg == "aes256-gcm"}


def marker_kvnos(realm: Realm, probe: Path, principal: str) -> list[int]:
    keys = probe_keys(realm, probe, "admin", principal)
    assert all(k["enctype"] == PRIVATE_ENCTYPE and k["result"] == MARKER for k in keys), keys
    return [k["kvno"] for k in keys]


def config_copy(cluster: Cluster, name: str, *, timeout_ms: int | None = None, dead: bool = False,
                first_server_port: int | None = None) -> Path:
    """A copy of the admin configuration beside it (its key paths are relative): a longer
    call timeout, server 1 behind another port, or servers on ports where nothing listens."""
    text = cluster.admin_config.read_text()
    if first_server_port is not None or dead:
        # Every request must take the route the test controls: CurveZMQ alone.
        text = re.sub(r'(?m)^data_endpoint = .*\n', "", text)
    if timeout_ms is not None:
        text = re.sub(r"(?m)^timeout_ms = \d+$", f"timeout_ms = {timeout_ms}", text)
    if first_server_port is not None:
        text = text.replace(f"tcp://127.0.0.1:{cluster.base_port + 1}\"", f"tcp://127.0.0.1:{first_server_port}\"")
    if dead:
        ports = iter(range(cluster.base_port + 5, cluster.base_port + 8))
        text = re.sub(r"tcp://127\.0\.0\.1:\d+", lambda _: f"tcp://127.0.0.1:{next(ports)}", text)
    path = cluster.dir / name
    path.write_text(text)
    return path


class EngineGcm:
    """AES-256-GCM through the engine's C interface (mpc_client.h, interface version 2)."""

    def __init__(self, config: Path):
        lib = ctypes.CDLL(str(client_library()))
        u8p, vp = ctypes.c_char_p, ctypes.c_void_p
        lib.mpc_client_open.argtypes = [u8p, ctypes.POINTER(vp), u8p, ctypes.c_size_t]
        lib.mpc_client_close.argtypes = [vp]
        lib.mpc_client_last_error.argtypes = [vp]
        lib.mpc_client_last_error.restype = ctypes.c_char_p
        lib.mpc_client_gcm_prefetch.argtypes = [vp, u8p, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32,
                                                vp, vp]
        lib.mpc_client_gcm_tag.argtypes = [vp, u8p, ctypes.c_uint32, u8p, u8p, ctypes.c_size_t, u8p,
                                           ctypes.c_size_t, vp]
        lib.mpc_client_gcm_open.argtypes = [vp, u8p, ctypes.c_uint32, u8p, u8p, ctypes.c_size_t, u8p,
                                            ctypes.c_size_t, u8p, vp]
        self.lib = lib
        self.handle = vp()
        error = ctypes.create_string_buffer(512)
        rc = lib.mpc_client_open(str(config).encode(), ctypes.byref(self.handle), error, len(error))
        assert rc == 0, error.value.decode()

    def close(self) -> None:
        self.lib.mpc_client_close(self.handle)

    def error(self) -> str:
        return self.lib.mpc_client_last_error(self.handle).decode()

    def seal(self, name: str, kvno: int, aad: bytes, plaintext: bytes) -> tuple[bytes, bytes, bytes]:
        """(nonce, ciphertext, tag): keystream of a prefetched nonce, then the engine's tag."""
        blocks = (len(plaintext) + 15) // 16
        nonce = ctypes.create_string_buffer(12)
        keystream = ctypes.create_string_buffer(16 * blocks)
        rc = self.lib.mpc_client_gcm_prefetch(self.handle, name.encode(), kvno, 1, blocks, nonce, keystream)
        assert rc == 0, self.error()
        ciphertext = bytes(p ^ k for p, k in zip(plaintext, keystream.raw))
        tag = ctypes.create_string_buffer(16)
        rc = self.lib.mpc_client_gcm_tag(self.handle, name.encode(), kvno, nonce.raw, aad, len(aad), ciphertext,
                                         len(ciphertext), tag)
        assert rc == 0, self.error()
        return nonce.raw, ciphertext, tag.raw

    def open(self, name: str, kvno: int, nonce: bytes, aad: bytes, ciphertext: bytes,
             tag: bytes) -> tuple[int, bytes]:
        plaintext = ctypes.create_string_buffer(max(1, len(ciphertext)))
        rc = self.lib.mpc_client_gcm_open(self.handle, name.encode(), kvno, nonce, aad, len(aad), ciphertext,
                                          len(ciphertext), tag, plaintext)
        return rc, plaintext.raw[:len(ciphertext)]


@pytest.fixture(scope="module")
def engine(cluster):
    """The module's cluster once its servers compute together (the ring is connected)."""
    cluster.import_key("enroll/ready", 1, "aes128")
    cluster.wait_until_serving(("enroll/ready", 1, "aes128"), deadline_s=20)
    return cluster


@pytest.fixture
def gcm(engine):
    client = EngineGcm(engine.compute_config)
    try:
        yield client
    finally:
        client.close()


# ---- protect ---------------------------------------------------------------------------


@pytest.mark.timeout(120)
def test_protect_moves_the_krbtgt_key_into_the_engine(make_realm, backend, engine, gcm, kdb_probe, tmp_path):
    realm = make_realm("realm", backend=backend, realm=unique_realm())
    realm.addprinc("alice", password="alice-pw")
    principal = tgs(realm)
    old = exported_keys(realm, principal, tmp_path / "old.keytab")
    assert set(old) == {(1, AES256), (1, AES128)}, old
    before = probe_keys(realm, kdb_probe, "admin", principal)
    assert {k["enctype"]: k["result"] for k in before} == {AES256: old[(1, AES256)], AES128: old[(1, AES128)]}

    res = protect(realm, engine)
    assert (f"protected {principal}: kvno 1 is engine key {engine_name(principal)} kvno 1 aes256-gcm; "
            "the database holds only its marker") in res.stdout

    # The database: one marker key_data and the attribute.
    shown = realm.getprinc(principal).stdout
    assert "Number of keys: 1" in shown and f"Key: vno 1, {PRIVATE_ENCTYPE_SHOWN}" in shown, shown
    assert f"{ATTRIBUTE}: true" in realm.kadmin_local(f"getstrs {principal}", check=True).stdout
    admin = probe_keys(realm, kdb_probe, "admin", principal)
    assert [(k["kvno"], k["enctype"], k["result"]) for k in admin] == [(1, PRIVATE_ENCTYPE, MARKER)]
    # krb5kdc's view: a handle for the marker, naming the private enctype.
    handle_key = realm.handle_key_path.read_bytes()
    kdc_view = probe_keys(realm, kdb_probe, "kdc", principal)
    assert [k["stored"] for k in kdc_view] == [expected_handle(handle_key, principal, 1, PRIVATE_ENCTYPE)]

    # The engine holds K = HMAC-SHA256(old AES-256 key, label): its GCM is Python's under K.
    assert engine_keys(engine, principal) == {1}
    k = ticket_key(old[(1, AES256)])
    name = engine_name(principal)
    aad, plaintext = keystream_aad(2), secrets.token_bytes(45)
    nonce, ciphertext, tag = gcm.seal(name, 1, aad, plaintext)
    assert AESGCM(k).encrypt(nonce, plaintext, aad) == ciphertext + tag
    nonce = secrets.token_bytes(12)
    sealed = AESGCM(k).encrypt(nonce, plaintext, aad)
    assert gcm.open(name, 1, nonce, aad, sealed[:-16], sealed[-16:]) == (0, plaintext)
    forged = bytes([sealed[-1] ^ 1])
    assert gcm.open(name, 1, nonce, aad, sealed[:-16], sealed[-16:-1] + forged)[0] == MPC_EBADTAG

    # No key is left anywhere on disk: database, dump, stash, logs, engine servers.
    text = dump(realm, "after.dump")
    assert str(PRIVATE_ENCTYPE) in dump_line(text, principal)
    for key in before:
        assert key["stored"].hex() not in text
    leaks = files_holding([realm.root, engine.dir], {"old aes256 key": old[(1, AES256)],
                                                     "old aes128 key": old[(1, AES128)], "ticket key K": k})
    assert not leaks, leaks

    res = kdc(realm, "status", "--cluster", engine.admin_config)
    assert res.returncode == 0, res.output
    assert f"{principal}: protected ({ATTRIBUTE} = true), engine key name {name}" in res.stdout
    assert "  kvno 1: marker ok, engine key on all three servers (created " in res.stdout
    assert "1 protected principal, 0 problems" in res.stdout


@pytest.mark.timeout(120)
def test_dump_load_and_master_key_rotation_carry_the_marker(make_realm, backend, engine, kdb_probe):
    realm = make_realm("realm", backend=backend, realm=unique_realm())
    principal = tgs(realm)
    protect(realm, engine)

    first = dump(realm, "first.dump")
    assert str(PRIVATE_ENCTYPE) in dump_line(first, principal)
    realm.kdb5_util("load", str(realm.root / "first.dump"), check=True)
    second = dump(realm, "second.dump")
    assert sorted(first.splitlines()) == sorted(second.splitlines())
    assert marker_kvnos(realm, kdb_probe, principal) == [1]

    # The dump and the stash make a second KDC database of the same realm (a replica).
    other = make_realm("replica", backend=backend, create=False, realm=realm.realm)
    other.kdb5_util("load", str(realm.root / "first.dump"), check=True)
    shutil.copy(realm.stash, other.stash)
    assert marker_kvnos(other, kdb_probe, principal) == [1]
    res = kdc(other, "status", "--cluster", engine.admin_config)
    assert res.returncode == 0 and "kvno 1: marker ok, engine key on all three servers" in res.stdout, res.output

    stored = probe_keys(realm, kdb_probe, "admin", principal)[0]["stored"]
    realm.run(["kdb5_util", "-r", realm.realm, "add_mkey", "-s"], input="new-master\nnew-master\n", check=True)
    realm.kdb5_util("use_mkey", "2", "now-1day", check=True)
    res = realm.kdb5_util("update_princ_encryption", "-f", check=True)
    assert "0 already current" in res.output, res.output
    realm.kdb5_util("purge_mkeys", "-f", check=True)
    assert "KVNO: 1," not in realm.kdb5_util("list_mkeys", check=True).stdout
    after = probe_keys(realm, kdb_probe, "admin", principal)
    assert [(k["kvno"], k["result"]) for k in after] == [(1, MARKER)]     # the same marker,
    assert after[0]["stored"] != stored                                     # under the new master key
    assert "MKey: vno 2" in realm.getprinc(principal).stdout
    res = kdc(realm, "status", "--cluster", engine.admin_config)
    assert res.returncode == 0 and "kvno 1: marker ok" in res.stdout, res.output
    # Rotation encrypts its new marker under the active master key and keeps working.
    res = kdc(realm, "rotate", f"krbtgt/{realm.realm}", "--cluster", engine.admin_config)
    assert res.returncode == 0, res.output
    assert marker_kvnos(realm, kdb_probe, principal) == [2, 1]


@pytest.mark.timeout(120)
def test_enrollment_reaches_the_iprop_update_log(make_realm, engine):
    """Replicas fed by iprop learn changes from the update log: enrollment must be in it."""
    realm = make_realm("realm", create=False, realm=unique_realm())
    principal = tgs(realm)
    iprop = (f"        iprop_enable = true\n        iprop_port = {pick_ports(1)[0]}\n"
             f"        iprop_logfile = {realm.root / 'db' / 'principal.ulog'}\n")
    realm.kdc_conf.write_text(realm.kdc_conf.read_text().replace("        max_life =", iprop + "        max_life =", 1))
    realm.create()
    protect(realm, engine)
    res = kdc(realm, "rotate", f"krbtgt/{realm.realm}", "--cluster", engine.admin_config)
    assert res.returncode == 0, res.output
    log = realm.run(["kproplog", "-v"], check=True).stdout
    updates = [entry for entry in log.split("Update Entry") if f"Update principal : {principal}" in entry]
    assert len(updates) == 2, log
    assert all("Key data" in entry and "TL data" in entry and "Update committed : True" in entry
               for entry in updates), log


# ---- rotate ----------------------------------------------------------------------------


def shorten_lifetimes(realm: Realm, principal: str, life: int, renewable: int, skew: int) -> None:
    """Ticket lifetimes of seconds: kdc.conf, krb5.conf's clockskew and the principal."""
    kdc_conf = realm.kdc_conf.read_text()
    kdc_conf = re.sub(r"max_life = \S+", f"max_life = {life}s", kdc_conf)
    kdc_conf = re.sub(r"max_renewable_life = \S+", f"max_renewable_life = {renewable}s", kdc_conf)
    realm.kdc_conf.write_text(kdc_conf)
    krb5_conf = realm.krb5_conf.read_text().replace("[libdefaults]\n", f"[libdefaults]\n    clockskew = {skew}\n", 1)
    realm.krb5_conf.write_text(krb5_conf)
    realm.kadmin_local(f"modprinc -maxlife {life}s -maxrenewlife {renewable}s {principal}", check=True)


@pytest.mark.timeout(120)
def test_rotate_keeps_old_kvnos_until_no_ticket_can_use_them(make_realm, engine, gcm, kdb_probe, tmp_path):
    realm = make_realm("realm", realm=unique_realm())
    principal = tgs(realm)
    name = engine_name(principal)
    life, renewable, skew = 2, 3, 1
    shorten_lifetimes(realm, principal, life, renewable, skew)
    old = exported_keys(realm, principal, tmp_path / "old.keytab")
    protect(realm, engine)
    cluster_args = ("--cluster", engine.admin_config)

    res = kdc(realm, "rotate", f"krbtgt/{realm.realm}", *cluster_args)
    assert res.returncode == 0, res.output
    assert (f"rotated {principal}: kvno 2 is engine key {name} kvno 2 aes256-gcm; kept kvnos: 1; "
            "retired kvnos: none") in res.stdout
    assert marker_kvnos(realm, kdb_probe, principal) == [2, 1]
    assert engine_keys(engine, principal) == {1, 2}
    assert "Number of keys: 2" in realm.getprinc(principal).stdout
    # kvno 1 is still the derived key; kvno 2 is a fresh one that computes in the engine.
    aad, plaintext = keystream_aad(2), secrets.token_bytes(20)
    nonce, ciphertext, tag = gcm.seal(name, 1, aad, plaintext)
    assert AESGCM(ticket_key(old[(1, AES256)])).decrypt(nonce, ciphertext + tag, aad) == plaintext
    nonce, ciphertext, tag = gcm.seal(name, 2, aad, plaintext)
    assert gcm.open(name, 2, nonce, aad, ciphertext, tag) == (0, plaintext)
    with pytest.raises(InvalidTag):
        AESGCM(ticket_key(old[(1, AES256)])).decrypt(nonce, ciphertext + tag, aad)

    # kvno 1 retires once its successor, kvno 2, is older than the longest ticket + skew.
    time.sleep(renewable + skew + 2)
    res = kdc(realm, "rotate", f"krbtgt/{realm.realm}", *cluster_args)
    assert res.returncode == 0, res.output
    assert "kvno 3 is engine key" in res.stdout and "kept kvnos: 2; retired kvnos: 1" in res.stdout, res.stdout
    assert marker_kvnos(realm, kdb_probe, principal) == [3, 2]
    assert engine_keys(engine, principal) == {2, 3}

    res = kdc(realm, "rotate", f"krbtgt/{realm.realm}", *cluster_args, "--retire-now")
    assert res.returncode == 0, res.output
    assert "kvno 4 is engine key" in res.stdout and "kept kvnos: none; retired kvnos: 3 2" in res.stdout
    assert marker_kvnos(realm, kdb_probe, principal) == [4]
    assert engine_keys(engine, principal) == {4}
    res = kdc(realm, "status", *cluster_args)
    assert res.returncode == 0 and "kvno 4: marker ok, engine key on all three servers" in res.stdout, res.output


# ---- refusals --------------------------------------------------------------------------


@pytest.mark.timeout(120)
def test_refusals_say_why_and_change_nothing(make_realm, engine):
    realm = make_realm("realm", realm=unique_realm())
    r = realm.realm
    realm.addprinc("alice", password="alice-pw")
    realm.kadmin_local("addprinc -randkey krbtgt/OTHER.TEST", check=True)
    realm.kadmin_local("addprinc -randkey -e aes128-cts-hmac-sha1-96:normal svc/aes128only", check=True)
    cluster = ("--cluster", str(engine.admin_config))
    dead = ("--cluster", str(config_copy(engine, "dead.toml", dead=True)))
    baseline = dump(realm, "baseline.dump")
    engine_before = set(engine.list_keys("kdc/"))

    cases = [
        (("protect", "nobody", "--force", *cluster), ["nobody@" + r, "is not in the database of realm " + r]),
        (("protect", "K/M", *cluster), ["K/M@" + r, "is the master key principal"]),
        (("protect", "krbtgt/OTHER.TEST", *cluster),
         [f"krbtgt/OTHER.TEST@{r} is a cross-realm key", "KDC of realm OTHER.TEST",
          f"only krbtgt/{r}@{r} can be protected"]),
        (("protect", f"krbtgt/{r}@OTHER.TEST", *cluster), [f"is not in realm {r}"]),
        (("protect", "alice", *cluster), [f"alice@{r} is not the realm's ticket-granting service", "--force"]),
        (("protect", "svc/aes128only", "--force", *cluster),
         ["has no aes256-cts-hmac-sha1-96 key at its newest kvno 1", "aes128-cts-hmac-sha1-96"]),
        (("rotate", f"krbtgt/{r}", *cluster), [f"krbtgt/{r}@{r} is not protected", "mpcctl kdc protect"]),
        (("protect", f"krbtgt/{r}", *dead), ["cannot store the ticket key in the engine", "unreachable",
                                              "the database is unchanged"]),
        (("protect", f"krbtgt/{r}", "--cluster", str(realm.root / "no-such.toml")), ["no-such.toml"]),
        (("protect", f"krbtgt/{r}", "alice", *cluster), ["expected one principal name"]),
        (("protect", f"krbtgt/{r}", "--retire-now", *cluster), ["unknown option --retire-now"]),
        (("protect", f"krbtgt/{r}"), ["missing option --cluster"]),
        (("status", "-r", "NO-SUCH.TEST"), ["cannot open the database of realm NO-SUCH.TEST"]),
    ]
    for args, fragments in cases:
        res = kdc(realm, *args)
        assert res.returncode == 1, f"{args}: {res.output}"
        for fragment in fragments:
            assert fragment in res.stderr, f"{args}: {fragment!r} not in {res.stderr!r}"
        assert res.stdout == "", f"{args}: {res.stdout}"
        assert dump(realm, "check.dump") == baseline, f"{args} changed the database"
        assert set(engine.list_keys("kdc/")) == engine_before, f"{args} changed the engine"

    protect(realm, engine)
    protected = dump(realm, "protected.dump")
    engine_after = set(engine.list_keys("kdc/"))
    res = kdc(realm, "protect", f"krbtgt/{r}", *cluster)
    assert res.returncode == 1 and f"krbtgt/{r}@{r} is already protected" in res.stderr, res.output
    assert "mpcctl kdc rotate" in res.stderr
    assert dump(realm, "check.dump") == protected
    assert set(engine.list_keys("kdc/")) == engine_after
    res = kdc(realm, "rotate", f"krbtgt/{r}", *dead)
    assert res.returncode == 1 and "cannot list the engine's keys" in res.stderr, res.output
    assert dump(realm, "check.dump") == protected


class HoldingProxy(TcpRelay):
    """A TCP relay in front of one engine server. It passes the connection set-up (the
    CurveZMQ handshake, well under SETUP_BYTES) and then holds every further byte from the
    client until release(): a request reaches the other servers at once and this one only
    when the test lets it, as over a stalled link."""

    SETUP_BYTES = 2048

    def __init__(self, target_port: int):
        self.holding = threading.Event()
        self.released = threading.Event()
        super().__init__(target_port, client_chunks=self._holder)

    def _holder(self):
        passed = 0

        def hold(chunk: bytes) -> bytes:
            nonlocal passed
            if passed + len(chunk) > self.SETUP_BYTES and not self.released.is_set():
                self.holding.set()
                self.released.wait()
            passed += len(chunk)
            return chunk
        return hold

    def release(self) -> None:
        self.released.set()

    def close(self) -> None:
        self.release()
        super().close()


@pytest.mark.timeout(120)
def test_a_change_during_enrollment_withdraws_the_engine_key(make_realm, engine, kdb_probe):
    """protect reads the key, stores K in the engine, and writes only if the principal is
    still as it read it. Server 1 is reached through a relay that holds the import while
    kadmin.local changes the key: protect must delete the engine key again and write nothing."""
    realm = make_realm("realm", realm=unique_realm())
    principal = tgs(realm)
    imported = f'"event":"key imported","key":"{engine_name(principal)} kvno 1 aes256-gcm"'
    server2_log = engine.server_dir(2) / "server.log"
    proxy = HoldingProxy(engine.base_port + 1)
    proc = None
    try:
        held = config_copy(engine, "held.toml", timeout_ms=30000, first_server_port=proxy.port)
        proc = subprocess.Popen([str(mpcctl_binary()), "kdc", "protect", f"krbtgt/{realm.realm}", "--cluster",
                                 str(held)], env=realm.env, cwd=realm.root, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 20
        while not (proxy.holding.is_set() and imported in Realm.read(server2_log)):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the import never reached server 2"
            time.sleep(0.02)
        realm.kadmin_local(f"cpw -randkey -keepold {principal}", check=True)
        proxy.release()
        out, err = proc.communicate(timeout=60)
    finally:
        proxy.close()
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1, out + err
    assert f"{principal} changed in the database while it was being protected" in err, err
    assert "was deleted again; nothing changed" in err, err
    assert engine_keys(engine, principal) == set()
    keys = probe_keys(realm, kdb_probe, "admin", principal)
    assert sorted((k["kvno"], k["enctype"]) for k in keys) == [(1, AES128), (1, AES256), (2, AES128), (2, AES256)]
    assert ATTRIBUTE not in realm.kadmin_local(f"getstrs {principal}", check=True).stdout
    res = protect(realm, engine)   # run again: the newest kvno is enrolled
    assert "kvno 2 is engine key" in res.stdout
    assert marker_kvnos(realm, kdb_probe, principal) == [2]


# ---- status ----------------------------------------------------------------------------


@pytest.mark.timeout(120)
def test_status_reports_every_inconsistency(make_realm, engine):
    realm = make_realm("realm", realm=unique_realm())
    r = realm.realm
    principal = tgs(realm)
    cluster = ("--cluster", str(engine.admin_config))
    res = kdc(realm, "status", *cluster)
    assert res.returncode == 0 and "0 protected principals, 0 problems" in res.stdout, res.output

    protect(realm, engine)
    realm.addprinc("svc/forced")
    res = protect(realm, engine, "svc/forced", "--force")
    assert f"protected svc/forced@{r}: kvno 1" in res.stdout
    res = kdc(realm, "status", *cluster)
    assert res.returncode == 0 and "2 protected principals, 0 problems" in res.stdout, res.output
    res = kdc(realm, "status")
    assert res.returncode == 0, res.output
    assert "kvno 1: marker ok, engine key not checked" in res.stdout
    assert "(engine not checked: no --cluster)" in res.stdout

    # A marker whose engine key is gone.
    forced = f"svc/forced@{r}"
    engine.mpcctl("key", "delete", "--cluster", str(engine.admin_config), "--name", engine_name(forced),
                  "--kvno", "1", "--alg", "aes256-gcm")
    res = kdc(realm, "status", *cluster)
    assert res.returncode == INCONSISTENT_EXIT, res.output
    assert f"{forced}: protected" in res.stdout and "kvno 1: marker ok, engine key MISSING" in res.stdout
    assert f"INCONSISTENT: kvno 1: no engine key {engine_name(forced)} kvno 1 aes256-gcm" in res.stdout

    # Marked, but with real keys; markers without the mark.
    realm.addprinc("alice", password="alice-pw")
    realm.setstr("alice", ATTRIBUTE, "true")
    realm.delstr(principal, ATTRIBUTE)
    res = kdc(realm, "status", *cluster)
    assert res.returncode == INCONSISTENT_EXIT, res.output
    assert (f"alice@{r}: protected ({ATTRIBUTE} = true)" in res.stdout and
            "INCONSISTENT: marked mpc-protected but holds real keys: aes256-cts-hmac-sha1-96 kvno 1" in res.stdout)
    assert f"{principal}: not protected ({ATTRIBUTE} = unset)" in res.stdout
    assert "INCONSISTENT: has marker keys but is not marked mpc-protected" in res.stdout
    res = kdc(realm, "rotate", "alice", *cluster)
    assert res.returncode == 1 and "holds real keys" in res.stderr and "nothing changed" in res.stderr

    # An engine that cannot be asked is a problem too.
    dead = config_copy(engine, "dead-status.toml", dead=True)
    res = kdc(realm, "status", "--cluster", dead)
    assert res.returncode == INCONSISTENT_EXIT and "INCONSISTENT: the engine cannot be asked" in res.stdout


@pytest.mark.timeout(120)
def test_protect_never_reuses_an_engine_key_id_a_failed_attempt_left(make_realm, engine, gcm, tmp_path):
    # A protect whose import timed out on one server can leave that server's share behind
    # (it stores it after the others were withdrawn). That id is spent: a ticket key's id is
    # never imported twice (a deleted one keeps a tombstone), so protect asks for a new kvno,
    # withdraws the leftover and changes nothing; with the new kvno it goes through.
    realm = make_realm("stale", realm=unique_realm())
    principal = tgs(realm)
    name = engine_name(principal)
    engine.import_key(name, 1, "aes256-gcm")            # the leftover, under another key
    assert engine_keys(engine, principal) == {1}

    res = kdc(realm, "protect", principal, "--cluster", engine.admin_config)
    assert res.returncode == 1, res.output
    assert "was used by an earlier attempt that failed" in res.stderr and "cpw -randkey -keepold" in res.stderr
    assert "the database is unchanged" in res.stderr
    assert engine_keys(engine, principal) == set()
    _, again = engine.import_key(name, 1, "aes256-gcm", check=False)
    assert again.returncode != 0 and "never imported again" in again.stderr, again.stderr

    realm.kadmin_local(f"cpw -randkey -keepold -e aes256-cts-hmac-sha1-96:normal {principal}", check=True)
    new = exported_keys(realm, principal, tmp_path / "new.keytab")
    protect(realm, engine)
    assert engine_keys(engine, principal) == {2}
    k = ticket_key(new[(2, AES256)])
    aad, plaintext = keystream_aad(2), secrets.token_bytes(20)
    nonce, ciphertext, tag = gcm.seal(name, 2, aad, plaintext)
    assert AESGCM(k).encrypt(nonce, plaintext, aad) == ciphertext + tag


@pytest.mark.timeout(120)
def test_rotate_moves_past_kvnos_that_failed_attempts_spent(make_realm, engine, kdb_probe):
    # Earlier rotations that failed halfway left ticket keys at kvnos 2 and 3 (one stored, one
    # deleted for good): neither id is used again; rotation takes kvno 4 and withdraws the
    # leftover.
    realm = make_realm("spent", realm=unique_realm())
    principal = tgs(realm)
    name = engine_name(principal)
    protect(realm, engine)
    engine.import_key(name, 2, "aes256-gcm")
    engine.import_key(name, 3, "aes256-gcm")
    engine.mpcctl("key", "delete", "--cluster", str(engine.admin_config), *engine.key_args(name, 3, "aes256-gcm"))
    res = kdc(realm, "rotate", principal, "--cluster", engine.admin_config)
    assert res.returncode == 0, res.output
    assert res.stderr.count("was used by an earlier attempt that failed; trying the next kvno") == 2, res.stderr
    assert marker_kvnos(realm, kdb_probe, principal) == [4, 1]
    assert engine_keys(engine, principal) == {1, 4}
    res = kdc(realm, "status", "--cluster", engine.admin_config)
    assert res.returncode == 0 and "kvno 4: marker ok" in res.stdout, res.output


@pytest.mark.timeout(120)
def test_rotate_retire_now_after_a_server_lost_its_shares(make_realm, fresh_cluster, kdb_probe):
    # A server replaced without a backup comes back empty; rotating with --retire-now gives
    # the realm a key every server holds and retires the kvno that server lost.
    fresh_cluster.import_key("enroll/ready", 1, "aes128")
    fresh_cluster.wait_until_serving(("enroll/ready", 1, "aes128"), deadline_s=20)
    realm = make_realm("lost", realm=unique_realm())
    principal = tgs(realm)
    protect(realm, fresh_cluster)
    fresh_cluster.kill_server(3)
    shutil.rmtree(fresh_cluster.server_dir(3) / "data")
    fresh_cluster.restart_server(3)
    # An import sent while server 3 is still starting may find it gone and be rolled back:
    # the import is for a cluster whose three servers answer.
    fresh_cluster.wait_for_modes({1: "three-party", 2: "three-party", 3: "three-party"}, deadline_s=30)
    fresh_cluster.import_key("enroll/ready", 2, "aes128")
    fresh_cluster.wait_until_serving(("enroll/ready", 2, "aes128"), deadline_s=20)
    assert engine_keys(fresh_cluster, principal) == set()   # no longer on all three

    res = kdc(realm, "rotate", principal, "--cluster", fresh_cluster.admin_config, "--retire-now")
    assert res.returncode == 0, res.output
    assert "retired kvnos: 1" in res.stdout, res.stdout
    assert marker_kvnos(realm, kdb_probe, principal) == [2]
    assert engine_keys(fresh_cluster, principal) == {2}
    # kvno 1 is gone from the two servers that still had it, too: servers 1 and 2 hold
    # enroll/ready 1 and 2 and the new kvno; server 3 lost enroll/ready 1 with its store.
    stored = {int(m[1]): int(m[2]) for m in re.finditer(
        r"server (\d):.*stored keys (\d+)",
        fresh_cluster.mpcctl("cluster", "status", "--cluster", str(fresh_cluster.admin_config)).stdout)}
    assert stored == {1: 3, 2: 3, 3: 2}, stored
    status = kdc(realm, "status", "--cluster", fresh_cluster.admin_config)
    assert status.returncode == 0, status.output
