"""One libmpcclient handle through ctypes: the library loaded once per kind of handle, the
calls every test makes (open, timeout, last error, close) and the failure of a call as an
exception that carries its code and message. The GCM and Kerberos tests subclass it with the
calls they make."""

from __future__ import annotations

import ctypes
import time
from pathlib import Path

import pytest

from mpctest.mpc_cluster import client_library

MPC_OK = 0
MPC_EUNREACHABLE, MPC_EREFUSED = -3, -4


class ClientCallError(AssertionError):
    def __init__(self, call: str, code: int, message: str):
        super().__init__(f"{call} returned {code}: {message}")
        self.code = code
        self.message = message


def settled(call, deadline_s: float = 60):
    """`call`'s result (a call of libmpcclient) once neither the pool of AND material of two
    servers of security = "active" is still filling (busy, refused) nor a server still starting
    or the servers regrouping, nor a restarted server 2 refusing the nonce epoch it computed
    under before (the leader takes a new one for the next prefetch)."""
    deadline = time.monotonic() + deadline_s
    while True:
        try:
            return call()
        except ClientCallError as failure:
            transient = failure.code in (MPC_EREFUSED, MPC_EUNREACHABLE) and any(
                word in failure.message for word in ("busy", "unreachable", "peer_failure", "no answer", "regrouping"))
            if not transient or time.monotonic() > deadline:
                raise
            time.sleep(0.3)


class ClientHandle:
    """A handle on a cluster configuration (admin or compute client key). SIGNATURES names
    the further calls a subclass makes (argument types; each returns an int status) and Error
    the exception its failures raise."""

    SIGNATURES: dict[str, list] = {}
    Error = ClientCallError

    @classmethod
    def library(cls):
        # Each subclass binds its own copy: the argument types are set on it.
        if cls.__dict__.get("_library") is None:
            path = client_library()
            if not path.exists():
                pytest.fail(f"{path} is not built")
            lib = ctypes.CDLL(str(path))
            p, s, u32, z = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint32, ctypes.c_size_t
            signatures = {"mpc_client_open": [s, ctypes.POINTER(p), s, z], "mpc_client_set_timeout": [p, u32],
                          **cls.SIGNATURES}
            for name, argtypes in signatures.items():
                function = getattr(lib, name)
                function.argtypes = argtypes
                function.restype = ctypes.c_int
            lib.mpc_client_close.argtypes = [p]
            lib.mpc_client_close.restype = None
            lib.mpc_client_last_error.argtypes = [p]
            lib.mpc_client_last_error.restype = ctypes.c_char_p
            cls._library = lib
        return cls._library

    def __init__(self, config: Path, timeout_ms: int = 20000):
        self.lib = self.library()
        handle = ctypes.c_void_p()
        error = ctypes.create_string_buffer(512)
        rc = self.lib.mpc_client_open(str(config).encode(), ctypes.byref(handle), error, len(error))
        assert rc == MPC_OK, f"mpc_client_open({config}) = {rc}: {error.value.decode(errors='replace')}"
        self.handle = handle
        self.set_timeout(timeout_ms)

    def set_timeout(self, timeout_ms: int) -> None:
        assert self.lib.mpc_client_set_timeout(self.handle, timeout_ms) == MPC_OK
        self.timeout_ms = timeout_ms

    def close(self) -> None:
        if self.handle:
            self.lib.mpc_client_close(self.handle)
            self.handle = None

    def error(self) -> str:
        return self.lib.mpc_client_last_error(self.handle).decode(errors="replace")

    def _check(self, call: str, rc: int) -> None:
        if rc != MPC_OK:
            raise self.Error(call, rc, self.error())
