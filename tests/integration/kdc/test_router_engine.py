"""The crypto router's engine paths against a real cluster: the protected krbtgt key's
tickets and checksums (kdc-plugin/router/gcm_jobs.c) through the real libk5crypto
entry points, checked against Python's `cryptography` AES-GCM; and protected users' and
services' keys of enctypes 17 and 18 (krb_jobs.c), checked against libk5crypto with
the real key (last section of this file).

A driver process (this file run as a script, `driver` mode) runs with
LD_PRELOAD=mpc_crypto_router.so and calls krb5_c_* / krb5_k_* through ctypes on the
process's global symbol scope, so every call goes through the router exactly as
krb5kdc's do (the driver checks with dladdr that krb5_c_encrypt is the router's). It
holds a keyblock whose contents are a handle (kdc-plugin/kdb/handle.h, computed here with
hashlib/hmac) of enctype MPC_KDC_ENCTYPE_AES256_GCM for krbtgt/MPC.TEST@MPC.TEST, kvno 1;
the cluster holds the AES-256-GCM key K under the engine key name of that handle
(kdc-plugin/kdb/protected_key.h: "kdc/" + hex name hash). The test talks to the driver
one JSON line per call.

What is asserted:
- krb5_c_encrypt gives nonce || C || tag with C || tag = AESGCM(K).encrypt(nonce, P,
  0x01 || u32be usage), enctype -19792, for plaintexts from empty to the engine's GHASH
  limit (the pool's 64-block entries and longer ones, prefetched for themselves); nonces
  never repeat; krb5_c_decrypt gives P back; a flipped byte anywhere, another usage, a
  truncated ciphertext or a too long plaintext fail with BAD_INTEGRITY / BAD_MSIZE and
  leave no plaintext behind;
- krb5_c_make_checksum (type 0 and the private type) and krb5_c_make_checksum_iov give
  nonce || GMAC with the tag = AESGCM(K).encrypt(nonce, b"", 0x02 || u32be usage ||
  data), data being the buffers libk5crypto checksums (HEADER, DATA, PADDING, SIGN_ONLY
  in order); verification accepts them and answers valid = false for any flipped byte;
- the krb5_key API gives the same;
- forked children (krb5kdc -w) each open their own engine connections and compute
  correctly at the same time;
- a restart of every server (the pooled nonces are forgotten: MPC_ENONCE) costs nothing
  but a retry, and an unreachable engine gives KRB5_CRYPTO_INTERNAL with the engine's
  message.
"""

from __future__ import annotations

import ctypes
import json
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

PRIVATE_ENCTYPE = -19792          # MPC_KDC_ENCTYPE_AES256_GCM
PRIVATE_CKSUMTYPE = -19792        # MPC_KDC_CKSUMTYPE_GMAC
ENCTYPE_UNKNOWN = 0x1ff
PRINCIPAL = "krbtgt/MPC.TEST@MPC.TEST"
KVNO = 1

# krb5 error codes (com_err table krb5, base -1765328384)
KRB5KRB_AP_ERR_BAD_INTEGRITY = -1765328353
KRB5_BAD_ENCTYPE = -1765328196
KRB5_BAD_MSIZE = -1765328194
KRB5_CRYPTO_INTERNAL = -1765328206

# krb5_cryptotype
IOV_HEADER, IOV_DATA, IOV_PADDING, IOV_TRAILER, IOV_CHECKSUM, IOV_SIGN_ONLY = 1, 2, 4, 5, 6, 3

# The engine authenticates at most 1024 GHASH blocks per call. A ticket's: the AAD (5 bytes
# and the ciphertext), the two blocks of the ticket key's text, one length block.
MAX_PLAINTEXT = (1024 - 3) * 16 - 5
# The earlier format's: one AAD block, the text, one length block.
EARLIER_MAX_PLAINTEXT = (1024 - 2) * 16
# The longest data a checksum could take while the engine authenticated the data itself.
MAX_CHECKSUM_DATA = 1023 * 16 - 5


# ---- the driver (runs in its own process, LD_PRELOADed with the router) -------------

class KData(ctypes.Structure):
    _fields_ = [("magic", ctypes.c_int32), ("length", ctypes.c_uint), ("data", ctypes.c_void_p)]


class KKeyblock(ctypes.Structure):
    _fields_ = [("magic", ctypes.c_int32), ("enctype", ctypes.c_int32), ("length", ctypes.c_uint),
                ("contents", ctypes.c_void_p)]


class KEncData(ctypes.Structure):
    _fields_ = [("magic", ctypes.c_int32), ("enctype", ctypes.c_int32), ("kvno", ctypes.c_uint),
                ("ciphertext", KData)]


class KChecksum(ctypes.Structure):
    _fields_ = [("magic", ctypes.c_int32), ("checksum_type", ctypes.c_int32),
                ("length", ctypes.c_uint), ("contents", ctypes.c_void_p)]


class KIov(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_int32), ("data", KData)]


class DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


class Driver:
    """krb5 calls on one handle keyblock, each answering a dict."""

    def __init__(self) -> None:
        ctypes.CDLL("libkrb5.so.3", mode=ctypes.RTLD_GLOBAL)
        # The global scope: the preloaded router comes before libk5crypto.
        self.k = ctypes.CDLL(None)
        self.ctx = ctypes.c_void_p()
        assert self.k.krb5_init_context(ctypes.byref(self.ctx)) == 0
        self.k.krb5_get_error_message.restype = ctypes.c_void_p
        self.keep: list = []
        self.key = None
        self.kkey = ctypes.c_void_p()
        self.enctype = PRIVATE_ENCTYPE

    @staticmethod
    def buffer(data: bytes, extra: int = 0):
        buf = ctypes.create_string_buffer(data + bytes(extra), len(data) + extra)
        return buf

    def message(self, ret: int) -> str:
        if ret == 0:
            return ""
        ptr = self.k.krb5_get_error_message(self.ctx, ret)
        text = ctypes.string_at(ptr).decode(errors="replace")
        self.k.krb5_free_error_message(self.ctx, ctypes.c_void_p(ptr))
        return text

    def which(self) -> dict:
        info = DlInfo()
        libdl = ctypes.CDLL(None)
        addr = ctypes.cast(self.k.krb5_c_encrypt, ctypes.c_void_p)
        libdl.dladdr(addr, ctypes.byref(info))
        return {"object": info.dli_fname.decode()}

    def init(self, handle: str, enctype: int = PRIVATE_ENCTYPE) -> dict:
        raw = bytes.fromhex(handle)
        buf = self.buffer(raw)
        self.keep.append(buf)
        self.enctype = enctype
        self.key = KKeyblock(0, enctype, len(raw), ctypes.cast(buf, ctypes.c_void_p))
        ret = self.k.krb5_k_create_key(self.ctx, ctypes.byref(self.key), ctypes.byref(self.kkey))
        return {"ret": ret}

    def encrypt(self, usage: int, plain: str, api: str = "c") -> dict:
        p = bytes.fromhex(plain)
        length = ctypes.c_size_t()
        ret = self.k.krb5_c_encrypt_length(self.ctx, self.enctype, ctypes.c_size_t(len(p)),
                                           ctypes.byref(length))
        if ret:
            return {"ret": ret, "msg": self.message(ret)}
        pin = self.buffer(p)
        inp = KData(0, len(p), ctypes.cast(pin, ctypes.c_void_p))
        out = self.buffer(b"", length.value)
        enc = KEncData(0, 0, 7, KData(0, length.value, ctypes.cast(out, ctypes.c_void_p)))
        if api == "c":
            ret = self.k.krb5_c_encrypt(self.ctx, ctypes.byref(self.key), usage, None,
                                        ctypes.byref(inp), ctypes.byref(enc))
        else:
            ret = self.k.krb5_k_encrypt(self.ctx, self.kkey, usage, None, ctypes.byref(inp),
                                        ctypes.byref(enc))
        return {"ret": ret, "msg": self.message(ret), "enctype": enc.enctype, "kvno": enc.kvno,
                "cipher": out.raw[:enc.ciphertext.length].hex() if ret == 0 else "",
                "length": enc.ciphertext.length}

    def decrypt(self, usage: int, cipher: str, enctype: int | None = None,
                api: str = "c") -> dict:
        c = bytes.fromhex(cipher)
        enctype = self.enctype if enctype is None else enctype
        cin = self.buffer(c)
        enc = KEncData(0, enctype, 0, KData(0, len(c), ctypes.cast(cin, ctypes.c_void_p)))
        # A buffer full of a marker, to see what a failed call leaves in it.
        out = self.buffer(b"\xa5" * max(len(c), 1))
        outd = KData(0, len(out), ctypes.cast(out, ctypes.c_void_p))
        if api == "c":
            ret = self.k.krb5_c_decrypt(self.ctx, ctypes.byref(self.key), usage, None,
                                        ctypes.byref(enc), ctypes.byref(outd))
        else:
            ret = self.k.krb5_k_decrypt(self.ctx, self.kkey, usage, None, ctypes.byref(enc),
                                        ctypes.byref(outd))
        plain_len = max(len(c) - 28, 0)
        return {"ret": ret, "msg": self.message(ret), "plain": out.raw[:outd.length].hex(),
                "left": out.raw[:plain_len].hex()}

    def make_checksum(self, usage: int, data: str, cksumtype: int = 0, api: str = "c") -> dict:
        d = bytes.fromhex(data)
        din = self.buffer(d)
        inp = KData(0, len(d), ctypes.cast(din, ctypes.c_void_p))
        ck = KChecksum()
        if api == "c":
            ret = self.k.krb5_c_make_checksum(self.ctx, cksumtype, ctypes.byref(self.key), usage,
                                              ctypes.byref(inp), ctypes.byref(ck))
        else:
            ret = self.k.krb5_k_make_checksum(self.ctx, cksumtype, self.kkey, usage,
                                              ctypes.byref(inp), ctypes.byref(ck))
        result = {"ret": ret, "msg": self.message(ret), "type": ck.checksum_type,
                  "cksum": ctypes.string_at(ck.contents, ck.length).hex() if ret == 0 else ""}
        if ret == 0:
            self.k.krb5_free_checksum_contents(self.ctx, ctypes.byref(ck))
        return result

    def verify_checksum(self, usage: int, data: str, cksumtype: int, cksum: str,
                        api: str = "c") -> dict:
        d, c = bytes.fromhex(data), bytes.fromhex(cksum)
        din, cin = self.buffer(d), self.buffer(c)
        inp = KData(0, len(d), ctypes.cast(din, ctypes.c_void_p))
        ck = KChecksum(0, cksumtype, len(c), ctypes.cast(cin, ctypes.c_void_p))
        valid = ctypes.c_uint(7)
        if api == "c":
            ret = self.k.krb5_c_verify_checksum(self.ctx, ctypes.byref(self.key), usage,
                                                ctypes.byref(inp), ctypes.byref(ck),
                                                ctypes.byref(valid))
        else:
            ret = self.k.krb5_k_verify_checksum(self.ctx, self.kkey, usage, ctypes.byref(inp),
                                                ctypes.byref(ck), ctypes.byref(valid))
        return {"ret": ret, "msg": self.message(ret), "valid": valid.value}

    def _iov(self, iov: list) -> tuple:
        arr = (KIov * len(iov))()
        for i, (flags, hexdata) in enumerate(iov):
            buf = self.buffer(bytes.fromhex(hexdata))
            self.keep.append(buf)
            arr[i].flags = flags
            arr[i].data = KData(0, len(buf), ctypes.cast(buf, ctypes.c_void_p))
        return arr, len(iov)

    def make_checksum_iov(self, usage: int, iov: list, cksumtype: int = 0) -> dict:
        arr, n = self._iov(iov)
        ret = self.k.krb5_c_make_checksum_iov(self.ctx, cksumtype, ctypes.byref(self.key), usage,
                                              arr, ctypes.c_size_t(n))
        out = ""
        for entry in arr:
            if entry.flags == IOV_CHECKSUM:
                out = ctypes.string_at(entry.data.data, entry.data.length).hex()
        return {"ret": ret, "msg": self.message(ret), "cksum": out}

    def verify_checksum_iov(self, usage: int, iov: list, cksumtype: int = 0) -> dict:
        arr, n = self._iov(iov)
        valid = ctypes.c_uint(7)
        ret = self.k.krb5_c_verify_checksum_iov(self.ctx, cksumtype, ctypes.byref(self.key),
                                                usage, arr, ctypes.c_size_t(n),
                                                ctypes.byref(valid))
        return {"ret": ret, "msg": self.message(ret), "valid": valid.value}

    def prf(self, data: str, api: str = "c", length: int = 16) -> dict:
        d = bytes.fromhex(data)
        din, out = self.buffer(d), self.buffer(b"", length)
        inp = KData(0, len(d), ctypes.cast(din, ctypes.c_void_p))
        outd = KData(0, length, ctypes.cast(out, ctypes.c_void_p))
        if api == "c":
            ret = self.k.krb5_c_prf(self.ctx, ctypes.byref(self.key), ctypes.byref(inp),
                                    ctypes.byref(outd))
        else:
            ret = self.k.krb5_k_prf(self.ctx, self.kkey, ctypes.byref(inp), ctypes.byref(outd))
        return {"ret": ret, "msg": self.message(ret), "out": out.raw.hex() if ret == 0 else ""}

    def prfplus(self, data: str, length: int) -> dict:
        d = bytes.fromhex(data)
        din, out = self.buffer(d), self.buffer(b"", length)
        inp = KData(0, len(d), ctypes.cast(din, ctypes.c_void_p))
        outd = KData(0, length, ctypes.cast(out, ctypes.c_void_p))
        ret = self.k.krb5_c_prfplus(self.ctx, ctypes.byref(self.key), ctypes.byref(inp),
                                    ctypes.byref(outd))
        return {"ret": ret, "msg": self.message(ret), "out": out.raw.hex() if ret == 0 else ""}

    def cf2_job(self, clear_enctype: int, clear: str, pepper1: str, pepper2: str, job: dict,
                handle_first: bool = False) -> dict:
        """krb5_c_fx_cf2_simple of a clear key and the handle (the clear key first, as the
        FAST armor and strengthen keys, unless handle_first), then one call of this driver
        (job: its op and arguments) under the key that comes back, as krb5kdc uses it."""
        raw = bytes.fromhex(clear)
        buf = self.buffer(raw)
        clear_key = KKeyblock(0, clear_enctype, len(raw), ctypes.cast(buf, ctypes.c_void_p))
        k1, k2 = (self.key, clear_key) if handle_first else (clear_key, self.key)
        out = ctypes.POINTER(KKeyblock)()
        ret = self.k.krb5_c_fx_cf2_simple(self.ctx, ctypes.byref(k1), pepper1.encode(),
                                          ctypes.byref(k2), pepper2.encode(), ctypes.byref(out))
        result = {"ret": ret, "msg": self.message(ret)}
        if ret != 0:
            return result
        result["enctype"] = out.contents.enctype
        result["contents"] = ctypes.string_at(out.contents.contents, out.contents.length).hex()
        saved = (self.key, self.enctype)
        self.key, self.enctype = out.contents, out.contents.enctype
        try:
            result["job"] = getattr(self, job["op"])(**{k: v for k, v in job.items() if k != "op"})
        finally:
            self.key, self.enctype = saved
            self.k.krb5_free_keyblock(self.ctx, out)
        return result

    def fork(self, children: int, ops: list) -> dict:
        """Runs ops in `children` forked processes at once; each reports its results and
        how many of its sockets it did not inherit."""
        inherited = sockets()
        pipes, pids = [], []
        for _ in range(children):
            read_end, write_end = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(read_end)
                try:
                    results = [self.call(op) for op in ops]
                    report = {"pid": os.getpid(), "results": results,
                              "own_sockets": len(sockets() - inherited)}
                except Exception as error:  # report, never raise out of a child
                    report = {"pid": os.getpid(), "error": repr(error)}
                with os.fdopen(write_end, "w") as out:
                    out.write(json.dumps(report))
                os._exit(0)
            os.close(write_end)
            pipes.append(read_end)
            pids.append(pid)
        reports = []
        for read_end, pid in zip(pipes, pids):
            with os.fdopen(read_end) as inp:
                reports.append(json.loads(inp.read() or "{}"))
            os.waitpid(pid, 0)
        return {"parent": os.getpid(), "children": reports}

    def call(self, op: dict) -> dict:
        name = op.pop("op")
        return getattr(self, name)(**op)


def sockets() -> set:
    """Socket inodes of this process's descriptors."""
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:"):
            found.add(target)
    return found


def driver_main() -> None:
    driver = Driver()
    for line in sys.stdin:
        op = json.loads(line)
        if op.get("op") == "exit":
            break
        try:
            result = driver.call(op)
        except Exception as error:
            result = {"error": repr(error)}
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()


if __name__ == "__main__" and sys.argv[1:] == ["driver"]:
    driver_main()
    sys.exit(0)


# ---- the tests --------------------------------------------------------------------

import pytest  # noqa: E402  (the driver above needs no pytest)

import mpc_cluster  # noqa: E402
from cryptography.exceptions import InvalidTag  # noqa: E402
from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # noqa: E402


import local_masks  # noqa: E402
from kdc_formats import (EngineKey, checksum_aad, engine_name as engine_key_name,  # noqa: E402
                         expected_handle as make_handle, gmac_tag, keystream_aad, seal_ticket)


@pytest.fixture(scope="session")
def router_so() -> Path:
    path = Path(os.environ.get("MPC_ROUTER_SO", mpc_cluster.build_dir() / "kdc-plugin" /
                               "router" / "mpc_crypto_router.so"))
    if not path.is_file():
        pytest.fail(f"mpc_crypto_router.so not built: {path} "
                    "(build target mpc_crypto_router, or set MPC_ROUTER_SO)")
    return path


class DriverProcess:
    """The driver, preloaded with the router and configured for one cluster."""

    def __init__(self, root: Path, router_so: Path, cluster: mpc_cluster.Cluster,
                 handle_key: bytes, handle: bytes, extra_conf: str = "",
                 enctype: int = PRIVATE_ENCTYPE, engine_config: Path | None = None):
        root.mkdir(parents=True, exist_ok=True)
        self.handle_key, self.handle = handle_key, handle
        key_file = root / "handle.key"
        fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(handle_key)
        conf = root / "router.conf"
        engine_config = engine_config or cluster.compute_config
        conf.write_text(f"handle_key_file = {key_file}\nengine_config = {engine_config}\n"
                        f"{extra_conf}")
        conf.chmod(0o600)
        self.stderr_path = root / "driver.stderr"
        env = dict(os.environ, LD_PRELOAD=str(router_so), MPC_ROUTER_CONFIG=str(conf))
        self.stderr = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "driver"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, env=env, text=True)
        assert "mpc_crypto_router" in self.call("which")["object"]
        assert self.call("init", handle=handle.hex(), enctype=enctype)["ret"] == 0

    def call(self, op: str, **args) -> dict:
        self.proc.stdin.write(json.dumps({"op": op, **args}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, f"driver died: {self.log()}"
        result = json.loads(line)
        assert "error" not in result, f"{result['error']}\n{self.log()}"
        return result

    def log(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(json.dumps({"op": "exit"}) + "\n")
                self.proc.stdin.close()
                self.proc.wait(timeout=15)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        self.stderr.close()


def wait_for_gcm_key(cluster: mpc_cluster.Cluster, name: str, deadline_s: float = 15) -> None:
    """Polls a one-nonce prefetch until the servers compute (peers connected)."""
    deadline = time.monotonic() + deadline_s
    last = ""
    while time.monotonic() < deadline:
        result = cluster.mpcctl("aes", "gcm-prefetch", "--cluster", str(cluster.compute_config),
                                "--name", name, "--kvno", str(KVNO), "--count", "1",
                                check=False, timeout=15)
        if result.returncode == 0:
            return
        last = result.stderr.strip()
        time.sleep(0.1)
    raise AssertionError(f"the cluster does not prefetch after {deadline_s} s: {last}\n"
                         f"{cluster.log_tail()}")


def set_up(cluster: mpc_cluster.Cluster, root: Path, router_so: Path, extra_conf: str = ""):
    key = secrets.token_bytes(32)
    name = engine_key_name(PRINCIPAL)
    if not any(row[0] == name and row[1] == KVNO for row in cluster.list_keys("kdc/")):
        cluster.import_key(name, KVNO, "aes256-gcm", key.hex())
    else:
        raise AssertionError(f"{name} already imported in this cluster")
    wait_for_gcm_key(cluster, name)
    # The router asks for local masks (gcm_masks = local, the default): their reference needs
    # the components the servers store.
    parts = local_masks.components([cluster.server_dir(party) for party in cluster.parties], (name, KVNO, "aes256-gcm"))
    key = EngineKey(key, (name, KVNO, "aes256-gcm"), parts)
    handle_key = secrets.token_bytes(32)
    handle = make_handle(handle_key, PRINCIPAL, KVNO, PRIVATE_ENCTYPE)
    return key, DriverProcess(root, router_so, cluster, handle_key, handle, extra_conf)


@pytest.fixture(scope="module")
def engine(cluster, router_so, tmp_path_factory):
    """(K, driver) on the module's cluster; small pools so that refills happen."""
    key, driver = set_up(cluster, tmp_path_factory.mktemp("router-engine"), router_so,
                         "pool_low = 4\npool_high = 16\n")
    try:
        yield key, driver
    finally:
        driver.close()


def check_sealed(key: bytes, usage: int, plain: bytes, result: dict) -> bytes:
    """The router's ciphertext against the format computed here; returns the nonce."""
    assert result["ret"] == 0, result["msg"]
    assert result["enctype"] == PRIVATE_ENCTYPE and result["kvno"] == 0
    cipher = bytes.fromhex(result["cipher"])
    assert len(cipher) == 12 + len(plain) + 16 == result["length"]
    nonce = cipher[:12]
    assert cipher == seal_ticket(key, nonce, usage, plain)
    return nonce


def check_checksum(key: bytes, usage: int, data: bytes, cksum: bytes) -> bytes:
    assert len(cksum) == 28
    nonce = cksum[:12]
    assert cksum[12:] == gmac_tag(key, nonce, checksum_aad(usage, data))
    return nonce


SIZES = [0, 1, 15, 16, 17, 341, 479, 1023, 1024, 1025, 5000, MAX_PLAINTEXT]


@pytest.mark.timeout(120)
def test_encrypt_and_decrypt_match_the_ticket_format(engine):
    key, driver = engine
    nonces = set()
    for api in ("c", "k"):
        for size in SIZES:
            plain = secrets.token_bytes(size)
            usage = 2 if size % 2 else 3
            sealed = driver.call("encrypt", usage=usage, plain=plain.hex(), api=api)
            nonce = check_sealed(key, usage, plain, sealed)
            assert nonce not in nonces, f"nonce reused at size {size}"
            nonces.add(nonce)
            opened = driver.call("decrypt", usage=usage, cipher=sealed["cipher"], api=api)
            assert opened["ret"] == 0, opened["msg"]
            assert bytes.fromhex(opened["plain"]) == plain
            # ENCTYPE_UNKNOWN on the ciphertext is accepted, as by libk5crypto.
            opened = driver.call("decrypt", usage=usage, cipher=sealed["cipher"],
                                 enctype=ENCTYPE_UNKNOWN)
            assert opened["ret"] == 0 and bytes.fromhex(opened["plain"]) == plain
    # What Python seals, the router opens: the format is the one computed here and nothing else.
    nonce, plain = secrets.token_bytes(12), b"sealed by Python"
    opened = driver.call("decrypt", usage=2, cipher=seal_ticket(key, nonce, 2, plain).hex())
    assert opened["ret"] == 0 and bytes.fromhex(opened["plain"]) == plain


@pytest.mark.timeout(120)
def test_new_tickets_take_local_masks_unless_gcm_masks_is_aes(engine, fresh_cluster, router_so, tmp_path):
    """By default every ticket and checksum the router makes has a nonce with local masks;
    with gcm_masks = aes, one of AES_K's (the ticket is then AES-GCM's under K, as
    seal_ticket computes it). A router opens both kinds whatever its setting: the nonce's
    mark says which. A bad gcm_masks makes the configuration invalid."""
    key, driver = engine
    plain = secrets.token_bytes(100)
    assert local_masks.is_local(check_sealed(key, 2, plain, driver.call("encrypt", usage=2, plain=plain.hex())))
    made = driver.call("make_checksum", usage=17, data="aa")
    assert local_masks.is_local(check_checksum(key, 17, b"\xaa", bytes.fromhex(made["cksum"])))

    aes_key, aes_driver = set_up(fresh_cluster, tmp_path / "aes", router_so, "gcm_masks = aes\n")
    local_driver = DriverProcess(tmp_path / "local", router_so, fresh_cluster, aes_driver.handle_key,
                                 aes_driver.handle)
    try:
        aes_ticket = aes_driver.call("encrypt", usage=2, plain=plain.hex())
        assert not local_masks.is_local(check_sealed(aes_key, 2, plain, aes_ticket))
        local_ticket = local_driver.call("encrypt", usage=2, plain=plain.hex())
        assert local_masks.is_local(check_sealed(aes_key, 2, plain, local_ticket))
        for opener in (aes_driver, local_driver):
            for ticket in (aes_ticket, local_ticket):
                opened = opener.call("decrypt", usage=2, cipher=ticket["cipher"])
                assert opened["ret"] == 0 and bytes.fromhex(opened["plain"]) == plain
    finally:
        local_driver.close()
        aes_driver.close()
    for number, bad in enumerate(("gcm_masks = both\n", "gcm_masks = aes\ngcm_masks = local\n")):
        refused = DriverProcess(tmp_path / f"bad{number}", router_so, fresh_cluster, aes_driver.handle_key,
                                aes_driver.handle, bad)
        try:
            result = refused.call("encrypt", usage=2, plain=plain.hex())
            assert result["ret"] != 0
            assert "gcm_masks" in refused.log(), refused.log()
        finally:
            refused.close()


@pytest.mark.timeout(120)
def test_tickets_of_the_earlier_format_still_open(engine):
    """Tickets issued before the ticket key (GCM's keystream over the whole text, AAD 0x01 ||
    usage) open as before, and only with their own usage and intact."""
    key, driver = engine
    for size in (EARLIER_MAX_PLAINTEXT, 0, 1, 341, 1024, MAX_PLAINTEXT):
        nonce, plain = secrets.token_bytes(12), secrets.token_bytes(size)
        earlier = nonce + AESGCM(key).encrypt(nonce, plain, keystream_aad(2))
        opened = driver.call("decrypt", usage=2, cipher=earlier.hex())
        assert opened["ret"] == 0, (size, opened["msg"])
        assert bytes.fromhex(opened["plain"]) == plain
    too_long = nonce + bytes(EARLIER_MAX_PLAINTEXT + 1) + bytes(16)
    result = driver.call("decrypt", usage=2, cipher=too_long.hex())
    assert result["ret"] == KRB5_BAD_MSIZE and "GHASH" in result["msg"], result
    assert driver.call("decrypt", usage=3, cipher=earlier.hex())["ret"] == KRB5KRB_AP_ERR_BAD_INTEGRITY
    for position in (0, 12, len(earlier) - 1):
        bad = bytearray(earlier)
        bad[position] ^= 0x80
        result = driver.call("decrypt", usage=2, cipher=bytes(bad).hex())
        assert result["ret"] == KRB5KRB_AP_ERR_BAD_INTEGRITY, (position, result)
        assert set(bytes.fromhex(result["left"])) <= {0}, "plaintext left after a bad tag"
    # A ticket of this format is never read as one of the earlier: its tag covers the AAD byte.
    sealed = bytes.fromhex(driver.call("encrypt", usage=2, plain=plain[:100].hex())["cipher"])
    with pytest.raises(InvalidTag):
        AESGCM(key).decrypt(sealed[:12], sealed[12:], keystream_aad(2))


@pytest.mark.timeout(120)
def test_tampered_ciphertexts_fail_integrity(engine):
    key, driver = engine
    plain = secrets.token_bytes(341)
    sealed = bytes.fromhex(driver.call("encrypt", usage=2, plain=plain.hex())["cipher"])
    for position in (0, 11, 12, 12 + 170, 12 + 340, len(sealed) - 16, len(sealed) - 1):
        bad = bytearray(sealed)
        bad[position] ^= 0x01
        result = driver.call("decrypt", usage=2, cipher=bytes(bad).hex())
        assert result["ret"] == KRB5KRB_AP_ERR_BAD_INTEGRITY, (position, result)
        assert "integrity check failed" in result["msg"]
        assert set(bytes.fromhex(result["left"])) <= {0}, "plaintext left after a bad tag"
    for usage in (3, 17, 0x01000002):
        result = driver.call("decrypt", usage=usage, cipher=sealed.hex())
        assert result["ret"] == KRB5KRB_AP_ERR_BAD_INTEGRITY, (usage, result)
    # One byte short: the tag boundary moves.
    result = driver.call("decrypt", usage=2, cipher=(sealed[:-1]).hex())
    assert result["ret"] == KRB5KRB_AP_ERR_BAD_INTEGRITY
    for length in (0, 1, 27):
        result = driver.call("decrypt", usage=2, cipher=sealed[:length].hex())
        assert result["ret"] == KRB5_BAD_MSIZE, (length, result)
    for enctype in (18, 0):
        result = driver.call("decrypt", usage=2, cipher=sealed.hex(), enctype=enctype)
        assert result["ret"] == KRB5_BAD_ENCTYPE, (enctype, result)
    too_long = driver.call("encrypt", usage=2, plain=bytes(MAX_PLAINTEXT + 1).hex())
    assert too_long["ret"] == KRB5_BAD_MSIZE and "GHASH" in too_long["msg"]
    forged = secrets.token_bytes(12 + 64 + 16)
    result = driver.call("decrypt", usage=2, cipher=forged.hex())
    assert result["ret"] == KRB5KRB_AP_ERR_BAD_INTEGRITY


@pytest.mark.timeout(120)
def test_checksums_are_gmac_and_verify(engine):
    key, driver = engine
    nonces = set()
    for api in ("c", "k"):
        # Any length: the servers authenticate the data's digest (and 28 bytes, one checksum's,
        # as they are: a PAC's KDC checksum over its server checksum).
        for size, cksumtype in ((0, 0), (1, PRIVATE_CKSUMTYPE), (28, 0), (600, 0), (5000, 0),
                                (MAX_CHECKSUM_DATA, 0), (MAX_CHECKSUM_DATA + 1, 0), (65536, 0)):
            data = secrets.token_bytes(size)
            made = driver.call("make_checksum", usage=17, data=data.hex(), cksumtype=cksumtype,
                               api=api)
            assert made["ret"] == 0, made["msg"]
            assert made["type"] == PRIVATE_CKSUMTYPE
            cksum = bytes.fromhex(made["cksum"])
            nonce = check_checksum(key, 17, data, cksum)
            assert nonce not in nonces
            nonces.add(nonce)
            for checked_type in (0, PRIVATE_CKSUMTYPE):
                verdict = driver.call("verify_checksum", usage=17, data=data.hex(),
                                      cksumtype=checked_type, cksum=cksum.hex(), api=api)
                assert verdict["ret"] == 0 and verdict["valid"] == 1, verdict
            for position in (0, 12, 27):
                bad = bytearray(cksum)
                bad[position] ^= 0x80
                verdict = driver.call("verify_checksum", usage=17, data=data.hex(),
                                      cksumtype=0, cksum=bytes(bad).hex(), api=api)
                assert verdict["ret"] == 0 and verdict["valid"] == 0, (position, verdict)
            if size:
                other = bytes([data[0] ^ 1]) + data[1:]
                verdict = driver.call("verify_checksum", usage=17, data=other.hex(),
                                      cksumtype=0, cksum=cksum.hex(), api=api)
                assert verdict["ret"] == 0 and verdict["valid"] == 0
            verdict = driver.call("verify_checksum", usage=64, data=data.hex(), cksumtype=0,
                                  cksum=cksum.hex(), api=api)
            assert verdict["ret"] == 0 and verdict["valid"] == 0
    made = driver.call("make_checksum", usage=17, data="00", cksumtype=16)
    assert made["ret"] == KRB5_BAD_ENCTYPE
    # A ticket's tag is no checksum: the first AAD byte separates the two uses.
    sealed = bytes.fromhex(driver.call("encrypt", usage=17, plain="")["cipher"])
    verdict = driver.call("verify_checksum", usage=17, data="", cksumtype=0, cksum=sealed.hex())
    assert verdict["ret"] == 0 and verdict["valid"] == 0


@pytest.mark.timeout(60)
def test_checksum_iov_covers_libk5crypto_sign_buffers(engine):
    key, driver = engine
    parts = {IOV_HEADER: b"hdr", IOV_DATA: b"the pac", IOV_PADDING: b"pd", IOV_SIGN_ONLY: b"signed"}
    iov = [[IOV_HEADER, parts[IOV_HEADER].hex()], [IOV_DATA, parts[IOV_DATA].hex()],
           [IOV_CHECKSUM, bytes(32).hex()], [IOV_PADDING, parts[IOV_PADDING].hex()],
           [IOV_TRAILER, b"not signed".hex()], [IOV_SIGN_ONLY, parts[IOV_SIGN_ONLY].hex()]]
    made = driver.call("make_checksum_iov", usage=17, iov=iov)
    assert made["ret"] == 0, made["msg"]
    cksum = bytes.fromhex(made["cksum"])
    check_checksum(key, 17, b"hdr" + b"the pac" + b"pd" + b"signed", cksum)
    # The same data in one buffer gives a checksum krb5_c_verify_checksum accepts.
    verdict = driver.call("verify_checksum", usage=17, data=b"hdrthe pacpdsigned".hex(),
                          cksumtype=PRIVATE_CKSUMTYPE, cksum=cksum.hex())
    assert verdict["valid"] == 1
    iov[2] = [IOV_CHECKSUM, cksum.hex()]
    verdict = driver.call("verify_checksum_iov", usage=17, iov=iov)
    assert verdict["ret"] == 0 and verdict["valid"] == 1
    iov[1] = [IOV_DATA, b"the pad".hex()]
    verdict = driver.call("verify_checksum_iov", usage=17, iov=iov)
    assert verdict["ret"] == 0 and verdict["valid"] == 0
    iov[2] = [IOV_CHECKSUM, cksum[:27].hex()]
    verdict = driver.call("verify_checksum_iov", usage=17, iov=iov)
    assert verdict["ret"] == KRB5_BAD_MSIZE


@pytest.mark.timeout(120)
def test_forked_children_use_their_own_connections(engine):
    key, driver = engine
    plain = secrets.token_bytes(341)
    data = secrets.token_bytes(700)
    sealed = driver.call("encrypt", usage=2, plain=plain.hex())
    check_sealed(key, 2, plain, sealed)
    ops = [{"op": "encrypt", "usage": 2, "plain": plain.hex()},
           {"op": "decrypt", "usage": 2, "cipher": sealed["cipher"]},
           {"op": "make_checksum", "usage": 17, "data": data.hex()},
           {"op": "encrypt", "usage": 2, "plain": plain.hex()}]
    report = driver.call("fork", children=3, ops=ops)
    nonces = set()
    assert len(report["children"]) == 3
    for child in report["children"]:
        assert "error" not in child, child
        assert child["pid"] != report["parent"]
        assert child["own_sockets"] > 0, "a child used only its parent's sockets"
        first, opened, made, second = child["results"]
        for result in (first, second):
            nonce = check_sealed(key, 2, plain, result)
            assert nonce not in nonces
            nonces.add(nonce)
        assert opened["ret"] == 0 and bytes.fromhex(opened["plain"]) == plain
        assert made["ret"] == 0
        nonce = check_checksum(key, 17, data, bytes.fromhex(made["cksum"]))
        assert nonce not in nonces
        nonces.add(nonce)
    # The parent's engine still works after its children came and went.
    check_sealed(key, 2, plain, driver.call("encrypt", usage=2, plain=plain.hex()))


def router_counter(metrics_file: Path, name: str) -> float:
    """One sample of `mpcctl kdc metrics` over the router's counters file."""
    result = subprocess.run([str(mpc_cluster.mpcctl_binary()), "kdc", "metrics", "--file", str(metrics_file)],
                            capture_output=True, text=True, timeout=30, check=True)
    for line in result.stdout.splitlines():
        if line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name} not in the router's metrics:\n{result.stdout}")


@pytest.mark.timeout(180)
def test_server_restart_and_unreachable_engine(fresh_cluster, router_so, tmp_path):
    metrics_file = tmp_path / "router.metrics"
    key, driver = set_up(fresh_cluster, tmp_path / "driver", router_so,
                         f"pool_low = 4\npool_high = 16\nmetrics_file = {metrics_file}\n")
    try:
        plain = secrets.token_bytes(341)
        check_sealed(key, 2, plain, driver.call("encrypt", usage=2, plain=plain.hex()))
        made = driver.call("make_checksum", usage=17, data="aa")
        assert made["ret"] == 0
        time.sleep(2)   # the refill thread fills both pools meanwhile
        before = driver.call("encrypt", usage=2, plain=plain.hex())
        check_sealed(key, 2, plain, before)
        assert router_counter(metrics_file, 'mpc_kdc_nonces_pooled{pool="ticket"}') > 0
        assert router_counter(metrics_file, 'mpc_kdc_nonces_pooled{pool="checksum"}') > 0
        assert router_counter(metrics_file, "mpc_kdc_reseals_total") == 0

        # Every server restarts: the pooled nonces are gone from the servers. The next
        # seal takes one, gets MPC_ENONCE, drops the pool and prefetches for itself.
        fresh_cluster.stop()
        fresh_cluster.start()
        wait_for_gcm_key(fresh_cluster, engine_key_name(PRINCIPAL))
        for _ in range(3):
            check_sealed(key, 2, plain, driver.call("encrypt", usage=2, plain=plain.hex()))
            made = driver.call("make_checksum", usage=17, data="aa")
            assert made["ret"] == 0, made["msg"]
            check_checksum(key, 17, b"\xaa", bytes.fromhex(made["cksum"]))
        log = driver.log()
        assert "ticket nonce pool for" in log and "checksum nonce pool for" in log, log
        assert "dropped" in log and "the servers no longer know its nonces" in log, log
        # Each pool's first seal after the restart was tried again under a fresh nonce.
        assert router_counter(metrics_file, "mpc_kdc_reseals_total") >= 2
        # Tickets sealed before the restart still open (their keystream is recomputed).
        opened = driver.call("decrypt", usage=2, cipher=before["cipher"])
        assert opened["ret"] == 0 and bytes.fromhex(opened["plain"]) == plain

        fresh_cluster.stop()
        # Nonces may still be pooled: they seal nothing without a tag from the servers.
        for _ in range(2):
            result = driver.call("encrypt", usage=2, plain=plain.hex())
            assert result["ret"] == KRB5_CRYPTO_INTERNAL, result
            assert "engine unreachable" in result["msg"], result["msg"]
        result = driver.call("decrypt", usage=2, cipher=before["cipher"])
        assert result["ret"] == KRB5_CRYPTO_INTERNAL and "engine unreachable" in result["msg"]
        assert set(bytes.fromhex(result["left"])) <= {0}
        result = driver.call("verify_checksum", usage=17, data="aa", cksumtype=0,
                             cksum=made["cksum"])
        assert result["ret"] == KRB5_CRYPTO_INTERNAL and "engine unreachable" in result["msg"]
    finally:
        driver.close()


# ---- protected users' and services' keys: enctypes 17 and 18 ------------------------
#
# The engine holds a Kerberos protocol key (imported with `mpcctl key import`, as the
# enrollment does) under the engine key name of a handle of enctype 17 or 18; the driver
# holds that handle. Whatever the router computes through the engine's Kerberos jobs must
# be what libk5crypto computes with the real key (called here, in the test process, which
# is not preloaded with the router).

USER_KVNO = 3
USER_ENCTYPES = {17: ("aes128-cts-hmac-sha1-96", 16, 15), 18: ("aes256-cts-hmac-sha1-96", 32, 16)}
SERVED_USAGES = (1, 2, 3, 17, 56)
# confounder + plaintext of one engine call (mpc_client.h MPC_KRB_MAX_DATA_BYTES)
KRB_MAX_PLAINTEXT = 4096 - 16


class K5:
    """MIT libk5crypto on a clear key, the outside truth."""

    def __init__(self) -> None:
        self.k5 = ctypes.CDLL("libk5crypto.so.3")
        self.krb5 = ctypes.CDLL("libkrb5.so.3")
        self.ctx = ctypes.c_void_p()
        assert self.krb5.krb5_init_context(ctypes.byref(self.ctx)) == 0

    @staticmethod
    def _key(enctype: int, key: bytes):
        buf = ctypes.create_string_buffer(key, len(key))
        return KKeyblock(0, enctype, len(key), ctypes.cast(buf, ctypes.c_void_p)), buf

    @staticmethod
    def _data(data: bytes, extra: int = 0):
        buf = ctypes.create_string_buffer(data + bytes(extra), max(1, len(data) + extra))
        return KData(0, len(data) + extra, ctypes.cast(buf, ctypes.c_void_p)), buf

    def encrypt_length(self, enctype: int, length: int) -> int:
        out = ctypes.c_size_t()
        assert self.k5.krb5_c_encrypt_length(self.ctx, enctype, ctypes.c_size_t(length),
                                             ctypes.byref(out)) == 0
        return out.value

    def encrypt(self, enctype: int, key: bytes, usage: int, plain: bytes) -> bytes:
        kb, _k = self._key(enctype, key)
        inp, _i = self._data(plain)
        total = self.encrypt_length(enctype, len(plain))
        outd, out = self._data(b"", total)
        enc = KEncData(0, 0, 0, outd)
        assert self.k5.krb5_c_encrypt(self.ctx, ctypes.byref(kb), usage, None, ctypes.byref(inp),
                                      ctypes.byref(enc)) == 0
        return out.raw[:enc.ciphertext.length]

    def decrypt(self, enctype: int, key: bytes, usage: int, cipher: bytes) -> bytes | None:
        kb, _k = self._key(enctype, key)
        ind, _i = self._data(cipher)
        enc = KEncData(0, enctype, 0, ind)
        outd, out = self._data(b"", len(cipher))
        ret = self.k5.krb5_c_decrypt(self.ctx, ctypes.byref(kb), usage, None, ctypes.byref(enc),
                                     ctypes.byref(outd))
        return out.raw[:outd.length] if ret == 0 else None

    def checksum(self, enctype: int, key: bytes, usage: int, data: bytes) -> tuple[int, bytes]:
        kb, _k = self._key(enctype, key)
        inp, _i = self._data(data)
        ck = KChecksum()
        assert self.k5.krb5_c_make_checksum(self.ctx, 0, ctypes.byref(kb), usage,
                                            ctypes.byref(inp), ctypes.byref(ck)) == 0
        result = ck.checksum_type, ctypes.string_at(ck.contents, ck.length)
        self.krb5.krb5_free_checksum_contents(self.ctx, ctypes.byref(ck))
        return result

    def prfplus(self, enctype: int, key: bytes, data: bytes, length: int,
                plus: bool = True) -> bytes:
        kb, _k = self._key(enctype, key)
        inp, _i = self._data(data)
        outd, out = self._data(b"", length)
        fn = self.k5.krb5_c_prfplus if plus else self.k5.krb5_c_prf
        assert fn(self.ctx, ctypes.byref(kb), ctypes.byref(inp), ctypes.byref(outd)) == 0
        return out.raw[:length]

    def cf2(self, e1: int, k1: bytes, pepper1: str, e2: int, k2: bytes, pepper2: str):
        kb1, _a = self._key(e1, k1)
        kb2, _b = self._key(e2, k2)
        out = ctypes.POINTER(KKeyblock)()
        assert self.k5.krb5_c_fx_cf2_simple(self.ctx, ctypes.byref(kb1), pepper1.encode(),
                                            ctypes.byref(kb2), pepper2.encode(),
                                            ctypes.byref(out)) == 0
        result = out.contents.enctype, ctypes.string_at(out.contents.contents,
                                                        out.contents.length)
        self.krb5.krb5_free_keyblock(self.ctx, out)
        return result


def wait_for_krb_key(cluster: mpc_cluster.Cluster, name: str, alg: str,
                     deadline_s: float = 20) -> None:
    """Polls a checksum until the servers compute with the key (peers connected)."""
    deadline = time.monotonic() + deadline_s
    last = ""
    while time.monotonic() < deadline:
        result = cluster.mpcctl("krb", "checksum", "--cluster", str(cluster.compute_config),
                                "--name", name, "--kvno", str(USER_KVNO), "--alg", alg,
                                "--usage", "17", "--in", "00", check=False, timeout=15)
        if result.returncode == 0:
            return
        last = result.stderr.strip()
        time.sleep(0.2)
    raise AssertionError(f"the cluster does not serve Kerberos jobs after {deadline_s} s: "
                         f"{last}\n{cluster.log_tail()}")


@pytest.fixture(scope="module")
def k5():
    return K5()


def patient_config(cluster: mpc_cluster.Cluster) -> Path:
    """The compute configuration with a long timeout: the servers compile a Kerberos circuit
    on the first job of each data length, which takes seconds on a loaded test machine (a
    KDC sees the same few lengths over and over)."""
    path = cluster.compute_config.with_name("compute-patient.toml")
    text = cluster.compute_config.read_text()
    assert "timeout_ms = " in text
    path.write_text("\n".join("timeout_ms = 60000" if line.startswith("timeout_ms = ") else line
                              for line in text.splitlines()) + "\n")
    return path


@pytest.fixture(scope="module")
def user_keys(cluster, router_so, tmp_path_factory):
    """enctype -> (protocol key, driver holding a handle of it), one user per enctype."""
    drivers = {}
    engine_config = patient_config(cluster)
    try:
        for enctype, (alg, size, _) in USER_ENCTYPES.items():
            principal = f"user{enctype}@MPC.TEST"
            key = secrets.token_bytes(size)
            name = engine_key_name(principal)
            cluster.import_key(name, USER_KVNO, alg, key.hex())
            wait_for_krb_key(cluster, name, alg)
            handle_key = secrets.token_bytes(32)
            handle = make_handle(handle_key, principal, USER_KVNO, enctype)
            driver = DriverProcess(tmp_path_factory.mktemp(f"router-krb-{enctype}"), router_so,
                                   cluster, handle_key, handle, enctype=enctype,
                                   engine_config=engine_config)
            drivers[enctype] = (key, driver)
        yield drivers
    finally:
        for _, driver in drivers.values():
            driver.close()


@pytest.fixture(params=sorted(USER_ENCTYPES), ids=[f"enctype{e}" for e in sorted(USER_ENCTYPES)])
def user(request, user_keys):
    key, driver = user_keys[request.param]
    return request.param, key, driver


# Up to a large AS-REP. Every new data length makes the servers compile a circuit; lengths up
# to the engine's limit (KRB_MAX_PLAINTEXT) are the engine's own tests' business
# (tests/integration/test_krb_jobs.py), the limit itself is checked below.
KRB_SIZES = [0, 1, 15, 16, 17, 33, 309]


@pytest.mark.timeout(300)
def test_user_key_encryption_is_libk5cryptos(user, k5):
    enctype, key, driver = user
    # krb5kdc encrypts tickets (2) and AS-REPs (3) and decrypts tickets and preauth
    # timestamps (1); the engine serves exactly those directions.
    for i, size in enumerate(KRB_SIZES):
        usage = (2, 3)[i % 2]
        api = "k" if i % 4 == 3 else "c"
        plain = secrets.token_bytes(size)
        sealed = driver.call("encrypt", usage=usage, plain=plain.hex(), api=api)
        assert sealed["ret"] == 0, sealed["msg"]
        assert sealed["enctype"] == enctype and sealed["kvno"] == 0
        cipher = bytes.fromhex(sealed["cipher"])
        assert len(cipher) == sealed["length"] == k5.encrypt_length(enctype, size)
        # What the router encrypts, libk5crypto decrypts with the real key ...
        assert k5.decrypt(enctype, key, usage, cipher) == plain, size
        # ... under this usage only.
        assert k5.decrypt(enctype, key, 5 - usage, cipher) is None
        # What libk5crypto encrypts, the router decrypts.
        usage = (1, 2)[i % 2]
        theirs = k5.encrypt(enctype, key, usage, plain)
        opened = driver.call("decrypt", usage=usage, cipher=theirs.hex(), api=api)
        assert opened["ret"] == 0, opened["msg"]
        assert bytes.fromhex(opened["plain"]) == plain
    # The confounder is fresh random: the same plaintext never encrypts twice the same.
    plain = b"ticket"
    first, second = (bytes.fromhex(driver.call("encrypt", usage=2, plain=plain.hex())["cipher"])
                     for _ in range(2))
    assert first != second and first[:16] != second[:16]
    # ENCTYPE_UNKNOWN on the ciphertext is accepted, as by libk5crypto.
    opened = driver.call("decrypt", usage=2, cipher=first.hex(), enctype=ENCTYPE_UNKNOWN)
    assert opened["ret"] == 0 and bytes.fromhex(opened["plain"]) == plain
    # A preauth timestamp under the client's key is the client's to make, an AS-REP the
    # client's to read: refused, fail closed.
    refused = driver.call("encrypt", usage=1, plain=plain.hex())
    assert refused["ret"] == KRB5_CRYPTO_INTERNAL and "usage 1" in refused["msg"], refused
    refused = driver.call("decrypt", usage=3, cipher=k5.encrypt(enctype, key, 3, plain).hex())
    assert refused["ret"] == KRB5_CRYPTO_INTERNAL and "usage 3" in refused["msg"], refused


@pytest.mark.timeout(120)
def test_user_key_damaged_ciphertexts_fail_integrity(user, k5):
    enctype, key, driver = user
    plain = secrets.token_bytes(52)                    # a preauth timestamp's size
    cipher = k5.encrypt(enctype, key, 1, plain)
    for position in (0, 15, 16, 16 + 26, len(cipher) - 13, len(cipher) - 12, len(cipher) - 1):
        bad = bytearray(cipher)
        bad[position] ^= 0x01
        result = driver.call("decrypt", usage=1, cipher=bytes(bad).hex())
        assert result["ret"] == KRB5KRB_AP_ERR_BAD_INTEGRITY, (position, result)
        assert "integrity check failed" in result["msg"], result["msg"]
        assert set(bytes.fromhex(result["left"])) <= {0}, "plaintext left after a bad HMAC"
    # Another served usage, or another key's ciphertext (a wrong password): BAD_INTEGRITY.
    result = driver.call("decrypt", usage=2, cipher=cipher.hex())
    assert result["ret"] == KRB5KRB_AP_ERR_BAD_INTEGRITY, result
    other = k5.encrypt(enctype, secrets.token_bytes(len(key)), 1, plain)
    result = driver.call("decrypt", usage=1, cipher=other.hex())
    assert result["ret"] == KRB5KRB_AP_ERR_BAD_INTEGRITY, result
    result = driver.call("decrypt", usage=1, cipher=cipher[:-1].hex())
    assert result["ret"] == KRB5KRB_AP_ERR_BAD_INTEGRITY, result
    for length in (0, 1, 27):
        result = driver.call("decrypt", usage=1, cipher=cipher[:length].hex())
        assert result["ret"] == KRB5_BAD_MSIZE, (length, result)
    result = driver.call("decrypt", usage=1, cipher=cipher.hex(), enctype=35 - enctype)
    assert result["ret"] == KRB5_BAD_ENCTYPE, result
    too_long = driver.call("encrypt", usage=3, plain=bytes(KRB_MAX_PLAINTEXT + 1).hex())
    assert too_long["ret"] == KRB5_BAD_MSIZE, too_long


@pytest.mark.timeout(120)
def test_user_key_checksums_are_libk5cryptos(user, k5):
    enctype, key, driver = user
    cksumtype = USER_ENCTYPES[enctype][2]
    for usage, size, api in ((17, 0, "c"), (56, 1, "c"), (17, 300, "k"), (56, 1000, "c")):
        data = secrets.token_bytes(size)
        theirs_type, theirs = k5.checksum(enctype, key, usage, data)
        for requested in (0, cksumtype):
            made = driver.call("make_checksum", usage=usage, data=data.hex(),
                               cksumtype=requested, api=api)
            assert made["ret"] == 0, made["msg"]
            assert made["type"] == theirs_type == cksumtype
            assert bytes.fromhex(made["cksum"]) == theirs, (usage, size)
        verdict = driver.call("verify_checksum", usage=usage, data=data.hex(),
                              cksumtype=cksumtype, cksum=theirs.hex(), api=api)
        assert verdict["ret"] == 0 and verdict["valid"] == 1, verdict
        for position in (0, 11):
            bad = bytearray(theirs)
            bad[position] ^= 0x80
            verdict = driver.call("verify_checksum", usage=usage, data=data.hex(),
                                  cksumtype=cksumtype, cksum=bytes(bad).hex(), api=api)
            assert verdict["ret"] == 0 and verdict["valid"] == 0, (position, verdict)
        other_usage = 56 if usage == 17 else 17
        verdict = driver.call("verify_checksum", usage=other_usage, data=data.hex(),
                              cksumtype=cksumtype, cksum=theirs.hex())
        assert verdict["ret"] == 0 and verdict["valid"] == 0
    # The PAC server checksum goes through the _iov call: libk5crypto signs HEADER, DATA,
    # PADDING and SIGN_ONLY in order.
    iov = [[IOV_SIGN_ONLY, b"so".hex()], [IOV_DATA, b"the pac".hex()],
           [IOV_CHECKSUM, bytes(16).hex()], [IOV_TRAILER, b"not signed".hex()],
           [IOV_PADDING, b"pd".hex()]]
    made = driver.call("make_checksum_iov", usage=17, iov=iov)
    assert made["ret"] == 0, made["msg"]
    assert bytes.fromhex(made["cksum"]) == k5.checksum(enctype, key, 17, b"sothe pacpd")[1]
    iov[2] = [IOV_CHECKSUM, made["cksum"]]
    verdict = driver.call("verify_checksum_iov", usage=17, iov=iov)
    assert verdict["ret"] == 0 and verdict["valid"] == 1
    iov[1] = [IOV_DATA, b"the pad".hex()]
    verdict = driver.call("verify_checksum_iov", usage=17, iov=iov)
    assert verdict["ret"] == 0 and verdict["valid"] == 0
    wrong = driver.call("make_checksum", usage=17, data="00", cksumtype=31 - cksumtype)
    assert wrong["ret"] == KRB5_CRYPTO_INTERNAL and "checksum type" in wrong["msg"], wrong
    too_long = driver.call("make_checksum", usage=17, data=bytes(4097).hex())
    assert too_long["ret"] == KRB5_BAD_MSIZE, too_long


@pytest.mark.timeout(300)
def test_user_key_prf_is_never_opened_and_cf2_stays_in_the_engine(user, k5):
    """krb5kdc's FAST uses of a protected key: the combined key it gets back from
    krb5_c_fx_cf2_simple is a handle (not the key libk5crypto computes), and the encrypted
    challenge, the KDC's challenge and the strengthened reply key's AS-REP encryption and
    checksum under it are libk5crypto's."""
    enctype, key, driver = user
    if enctype == 17:
        pytest.skip("one user enctype is enough here: the circuits are checked per enctype pair elsewhere")
    for api in ("c", "k"):
        result = driver.call("prf", data="00", api=api)
        assert result["ret"] == KRB5_CRYPTO_INTERNAL and "never opened" in result["msg"], result
    result = driver.call("prfplus", data=b"pepper".hex(), length=32)
    assert result["ret"] == KRB5_CRYPTO_INTERNAL and "never opened" in result["msg"], result
    # The armor key of the other AES size.
    for armor_enctype, armor_size in ((17, 16),) if enctype == 18 else ((18, 32),):
        armor = secrets.token_bytes(armor_size)

        def combined_job(pepper1: str, pepper2: str, job: dict) -> dict:
            result = driver.call("cf2_job", clear_enctype=armor_enctype, clear=armor.hex(), pepper1=pepper1,
                                 pepper2=pepper2, job=job)
            assert result["ret"] == 0, result["msg"]
            assert result["enctype"] == armor_enctype
            _, combined = k5.cf2(armor_enctype, armor, pepper1, enctype, key, pepper2)
            assert len(bytes.fromhex(result["contents"])) == 136
            assert combined.hex() not in result["contents"], "the combined key reached krb5kdc"
            assert result["job"]["ret"] == 0, result["job"]["msg"]
            return result["job"]

        _, challenge_key = k5.cf2(armor_enctype, armor, "clientchallengearmor", enctype, key, "challengelongterm")
        timestamp = secrets.token_bytes(26)
        challenge = k5.encrypt(armor_enctype, challenge_key, 54, timestamp)
        job = combined_job("clientchallengearmor", "challengelongterm",
                           {"op": "decrypt", "usage": 54, "cipher": challenge.hex()})
        assert bytes.fromhex(job["plain"]) == timestamp
        _, kdc_key = k5.cf2(armor_enctype, armor, "kdcchallengearmor", enctype, key, "challengelongterm")
        job = combined_job("kdcchallengearmor", "challengelongterm", {"op": "encrypt", "usage": 55, "plain": "00" * 21})
        assert k5.decrypt(armor_enctype, kdc_key, 55, bytes.fromhex(job["cipher"])) == bytes(21)
        _, reply_key = k5.cf2(armor_enctype, armor, "strengthenkey", enctype, key, "replykey")
        as_rep = secrets.token_bytes(265)
        job = combined_job("strengthenkey", "replykey", {"op": "encrypt", "usage": 3, "plain": as_rep.hex()})
        assert k5.decrypt(armor_enctype, reply_key, 3, bytes.fromhex(job["cipher"])) == as_rep
        request = secrets.token_bytes(271)
        job = combined_job("strengthenkey", "replykey", {"op": "make_checksum", "usage": 56, "data": request.hex()})
        assert bytes.fromhex(job["cksum"]) == k5.checksum(armor_enctype, reply_key, 56, request)[1]
    # Uses krb5kdc never makes of a combined key are refused: the client's own challenge
    # (it would forge one), another usage, a pepper of the armor's side.
    refused = driver.call("cf2_job", clear_enctype=18, clear=bytes(32).hex(), pepper1="clientchallengearmor",
                          pepper2="challengelongterm", job={"op": "encrypt", "usage": 54, "plain": "00"})
    assert refused["ret"] == 0 and refused["job"]["ret"] == KRB5_CRYPTO_INTERNAL, refused
    refused = driver.call("cf2_job", clear_enctype=18, clear=bytes(32).hex(), pepper1="strengthenkey",
                          pepper2="replykey", job={"op": "encrypt", "usage": 2, "plain": "00"})
    assert refused["job"]["ret"] == KRB5_CRYPTO_INTERNAL and "usage 2 is not served" in refused["job"]["msg"], refused
    refused = driver.call("cf2_job", clear_enctype=18, clear=bytes(32).hex(), pepper1="kdcchallengearmor",
                          pepper2="challengelongterm", handle_first=True,
                          job={"op": "encrypt", "usage": 55, "plain": "00"})
    assert refused["job"]["ret"] == KRB5_CRYPTO_INTERNAL and "pepper" in refused["job"]["msg"], refused


@pytest.mark.timeout(60)
def test_user_key_refuses_other_usages_and_entry_points(user):
    enctype, key, driver = user
    name = engine_key_name(f"user{enctype}@MPC.TEST")
    alg = USER_ENCTYPES[enctype][0]
    for usage in (0, 4, 7, 54, 64, 514):
        assert usage not in SERVED_USAGES
        result = driver.call("encrypt", usage=usage, plain="00")
        assert result["ret"] == KRB5_CRYPTO_INTERNAL, result
        assert (f"krb5_c_encrypt: encrypt with the protected key {name} kvno {USER_KVNO} "
                f"({alg}) refused: usage {usage} is not served") in result["msg"], result["msg"]
        result = driver.call("make_checksum", usage=usage, data="00")
        assert result["ret"] == KRB5_CRYPTO_INTERNAL and f"usage {usage}" in result["msg"]
        result = driver.call("decrypt", usage=usage, cipher=bytes(40).hex())
        assert result["ret"] == KRB5_CRYPTO_INTERNAL and f"usage {usage}" in result["msg"]
    # The first refusal by each function in the process leaves a line in the router's log
    # naming the call, usage and key (krb5_c_make_checksum's first may have been an earlier
    # test's refused checksum type: it names the key too).
    lines = [line for line in driver.log().splitlines() if line.startswith("mpc_crypto_router[")]
    for fn in ("krb5_c_encrypt", "krb5_c_decrypt", "krb5_c_make_checksum"):
        assert any(f"]: {fn}: " in line and name in line for line in lines), (fn, lines)
    for fn in ("krb5_c_encrypt", "krb5_c_decrypt"):
        assert any(f"]: {fn}: " in line and "usage" in line and name in line for line in lines), (fn, lines)


@pytest.mark.timeout(180)
def test_user_key_in_forked_children(user_keys, k5):
    """krb5kdc -w: each worker opens its own engine connection for users' keys too."""
    key, driver = user_keys[18]
    plain = secrets.token_bytes(52)
    cipher = k5.encrypt(18, key, 1, plain)
    ops = [{"op": "decrypt", "usage": 1, "cipher": cipher.hex()},
           {"op": "encrypt", "usage": 3, "plain": plain.hex()},
           {"op": "make_checksum", "usage": 56, "data": "00"}]
    report = driver.call("fork", children=2, ops=ops)
    assert len(report["children"]) == 2
    for child in report["children"]:
        assert "error" not in child, child
        assert child["own_sockets"] > 0, "a child used only its parent's sockets"
        opened, sealed, checksum = child["results"]
        assert opened["ret"] == 0 and bytes.fromhex(opened["plain"]) == plain, opened
        assert sealed["ret"] == 0, sealed["msg"]
        assert k5.decrypt(18, key, 3, bytes.fromhex(sealed["cipher"])) == plain
        assert bytes.fromhex(checksum["cksum"]) == k5.checksum(18, key, 56, b"\x00")[1]
    opened = driver.call("decrypt", usage=1, cipher=cipher.hex())
    assert opened["ret"] == 0 and bytes.fromhex(opened["plain"]) == plain
