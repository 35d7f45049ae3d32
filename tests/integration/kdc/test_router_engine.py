"""The crypto router's engine path (kdc-plugin/router/router_engine_gcm.c) against a real
cluster: the protected krbtgt key's tickets and checksums through the real libk5crypto
entry points, checked against Python's `cryptography` AES-GCM.

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

# The engine authenticates at most 1024 GHASH blocks per call: AAD (5 bytes: one block),
# text, one length block.
MAX_PLAINTEXT = (1024 - 2) * 16
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

    def init(self, handle: str) -> dict:
        raw = bytes.fromhex(handle)
        buf = self.buffer(raw)
        self.keep.append(buf)
        self.key = KKeyblock(0, PRIVATE_ENCTYPE, len(raw), ctypes.cast(buf, ctypes.c_void_p))
        ret = self.k.krb5_k_create_key(self.ctx, ctypes.byref(self.key), ctypes.byref(self.kkey))
        return {"ret": ret}

    def encrypt(self, usage: int, plain: str, api: str = "c") -> dict:
        p = bytes.fromhex(plain)
        length = ctypes.c_size_t()
        ret = self.k.krb5_c_encrypt_length(self.ctx, PRIVATE_ENCTYPE, ctypes.c_size_t(len(p)),
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

    def decrypt(self, usage: int, cipher: str, enctype: int = PRIVATE_ENCTYPE,
                api: str = "c") -> dict:
        c = bytes.fromhex(cipher)
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
from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # noqa: E402


from kdc_formats import (checksum_aad, encrypt_aad, engine_name as engine_key_name,  # noqa: E402
                         expected_handle as make_handle)


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
                 handle_key: bytes, handle: bytes, extra_conf: str = ""):
        root.mkdir(parents=True, exist_ok=True)
        key_file = root / "handle.key"
        fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(handle_key)
        conf = root / "router.conf"
        conf.write_text(f"handle_key_file = {key_file}\nengine_config = {cluster.compute_config}\n"
                        f"{extra_conf}")
        conf.chmod(0o600)
        self.stderr_path = root / "driver.stderr"
        env = dict(os.environ, LD_PRELOAD=str(router_so), MPC_ROUTER_CONFIG=str(conf))
        self.stderr = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "driver"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, env=env, text=True)
        assert "mpc_crypto_router" in self.call("which")["object"]
        assert self.call("init", handle=handle.hex())["ret"] == 0

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
    """The router's ciphertext against AESGCM; returns the nonce."""
    assert result["ret"] == 0, result["msg"]
    assert result["enctype"] == PRIVATE_ENCTYPE and result["kvno"] == 0
    cipher = bytes.fromhex(result["cipher"])
    assert len(cipher) == 12 + len(plain) + 16 == result["length"]
    nonce = cipher[:12]
    assert cipher[12:] == AESGCM(key).encrypt(nonce, plain, encrypt_aad(usage))
    return nonce


def check_checksum(key: bytes, usage: int, data: bytes, cksum: bytes) -> bytes:
    assert len(cksum) == 28
    nonce = cksum[:12]
    assert cksum[12:] == AESGCM(key).encrypt(nonce, b"", checksum_aad(usage, data))
    return nonce


SIZES = [0, 1, 15, 16, 17, 341, 479, 1023, 1024, 1025, 5000, MAX_PLAINTEXT]


@pytest.mark.timeout(120)
def test_encrypt_and_decrypt_match_aes_gcm(engine):
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
    # What Python seals, the router opens: the format is AES-GCM and nothing else.
    nonce, plain = secrets.token_bytes(12), b"sealed by AESGCM"
    theirs = nonce + AESGCM(key).encrypt(nonce, plain, encrypt_aad(2))
    opened = driver.call("decrypt", usage=2, cipher=theirs.hex())
    assert opened["ret"] == 0 and bytes.fromhex(opened["plain"]) == plain


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
        for size, cksumtype in ((0, 0), (1, PRIVATE_CKSUMTYPE), (600, 0), (5000, 0),
                                (MAX_CHECKSUM_DATA, 0)):
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
    too_long = driver.call("make_checksum", usage=17, data=bytes(MAX_CHECKSUM_DATA + 1).hex())
    assert too_long["ret"] == KRB5_BAD_MSIZE
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


@pytest.mark.timeout(180)
def test_server_restart_and_unreachable_engine(fresh_cluster, router_so, tmp_path):
    key, driver = set_up(fresh_cluster, tmp_path / "driver", router_so,
                         "pool_low = 4\npool_high = 16\n")
    try:
        plain = secrets.token_bytes(341)
        check_sealed(key, 2, plain, driver.call("encrypt", usage=2, plain=plain.hex()))
        made = driver.call("make_checksum", usage=17, data="aa")
        assert made["ret"] == 0
        time.sleep(2)   # the refill thread fills both pools meanwhile
        before = driver.call("encrypt", usage=2, plain=plain.hex())
        check_sealed(key, 2, plain, before)

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
