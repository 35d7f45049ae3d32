"""Tools for the tests of data links (the servers' and the clients'): where a server's data
port is, which TCP sockets on a port are established (from /proc/net/tcp), a relay that records a
data link's stream and can flip one bit of it, the frames of a recorded stream, and a client
configuration with other data endpoints.
"""

from __future__ import annotations

import shutil
import struct
import threading
from pathlib import Path

from mpctest import toml_files
from mpctest.mpc_cluster import Cluster
from mpctest.tcp_relay import TcpRelay

HELLO_MAGIC = b"mpc-dlh1"
FRAME_HEADER, FRAME_TAG = 4, 16


def data_port(cluster: Cluster, party: int) -> int:
    return cluster.base_port + 20 + party


def established_sockets(port: int, far_end: bool = False) -> list[str]:
    """The inodes of ESTABLISHED TCP sockets whose local port (or with far_end, whose remote
    port) is `port`."""
    inodes = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if int(fields[2 if far_end else 1].split(":")[1], 16) == port and fields[3] == "01":
                inodes.append(fields[9])
    return inodes


class Relay(TcpRelay):
    """A TCP relay in front of a data port: records what the connecting side sends, one
    recording per connection, and can flip one bit of it on the way."""

    def __init__(self, upstream_port: int):
        self.lock = threading.Lock()
        self.recordings: list[bytearray] = []
        self.flip_after: int | None = None  # bytes still to pass before the flipped one
        self.flipped = False
        super().__init__(upstream_port, client_chunks=self._recorder)

    def flip_one_bit_soon(self, after: int = 64) -> None:
        with self.lock:
            self.flip_after = after
            self.flipped = False

    def _recorder(self):
        recording = bytearray()
        with self.lock:
            self.recordings.append(recording)

        def record(chunk: bytes) -> bytes:
            data = bytearray(chunk)
            with self.lock:
                if self.flip_after is not None and not self.flipped and len(recording) > 200:
                    if self.flip_after < len(data):
                        data[self.flip_after] ^= 0x10
                        self.flipped = True
                        self.flip_after = None
                    else:
                        self.flip_after -= len(data)
                recording.extend(data)
            return bytes(data)
        return record


def frames_of(recording: bytes) -> list[bytes]:
    """The ciphertexts of a data link's frames after its hello (and the whole stream parsed)."""
    assert recording[:len(HELLO_MAGIC)] == HELLO_MAGIC, "the link does not start with a data link hello"
    offset, frames = 8 + 32 + 32 + 4, []
    while offset + FRAME_HEADER <= len(recording):
        (length,) = struct.unpack_from(">I", recording, offset)
        end = offset + FRAME_HEADER + length + FRAME_TAG
        if end > len(recording):
            break
        frames.append(bytes(recording[offset + FRAME_HEADER:offset + FRAME_HEADER + length]))
        offset = end
    return frames


def client_config_with(cluster: Cluster, name: str, data_endpoints: dict[int, str | None],
                       key_file: str = "compute.key") -> Path:
    """The compute client's settings with server N's data_endpoint replaced (None: removed)."""
    config = cluster.dir / f"{name}.toml"
    shutil.copyfile(cluster.compute_config, config)
    with toml_files.editing(config) as document:
        document["secret_key_file"] = key_file
        for party, endpoint in data_endpoints.items():
            [server] = [server for server in document["servers"] if server["party"] == party]
            assert "data_endpoint" in server, server
            if endpoint:
                server["data_endpoint"] = endpoint
            else:
                del server["data_endpoint"]
    return config
