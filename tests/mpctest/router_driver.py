"""The crypto router's test driver. This file run as a script (`driver` mode) with
LD_PRELOAD=mpc_crypto_router.so calls krb5_c_* / krb5_k_* through ctypes on the process's global
symbol scope, so every call goes through the router exactly as krb5kdc's do (the driver checks
with dladdr that krb5_c_encrypt is the router's). It holds a keyblock whose contents are a
handle (kdc-plugin/kdb/handle.h) of a protected key; the test talks to it one JSON line per call
through DriverProcess. The krb5 constants and limits the router tests check are here too.
Used by test_router_engine.py (the protected krbtgt key) and test_router_user_keys.py (users'
and services' keys).
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mpctest.mpc_cluster import Cluster

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


class DriverProcess:
    """The driver, preloaded with the router and configured for one cluster."""

    def __init__(self, root: Path, router_so: Path, cluster: Cluster,
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


if __name__ == "__main__" and sys.argv[1:] == ["driver"]:
    driver_main()
    sys.exit(0)
