"""A TCP relay on loopback in front of a server's port, for the tests that need a link to be
late, stalled, recorded or altered on the way without touching either end."""

from __future__ import annotations

import socket
import threading
from typing import Callable

# Called once per accepted connection: what each chunk from the connecting side becomes on its
# way (it may block, holding the rest of that connection's bytes back).
ChunkHook = Callable[[], Callable[[bytes], bytes]]


class TcpRelay:
    """Accepts on an ephemeral loopback port (`port`) and relays each connection to
    `target_port`, after `delay_s` (None: never connects, so the connecting side waits as on a
    server still starting). Chunks from the connecting side pass through `client_chunks`'s
    function when one is given, and those from the server through `server_chunks`'s."""

    def __init__(self, target_port: int, delay_s: float | None = 0.0, client_chunks: ChunkHook | None = None,
                 server_chunks: ChunkHook | None = None):
        self.target_port = target_port
        self.delay_s = delay_s
        self.client_chunks = client_chunks
        self.server_chunks = server_chunks
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sockets: list[socket.socket] = []
        self.closed = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.closed.is_set():
            try:
                accepted, _ = self.listener.accept()
            except OSError:
                return
            self.sockets.append(accepted)
            threading.Thread(target=self._relay, args=(accepted,), daemon=True).start()

    def _relay(self, accepted: socket.socket) -> None:
        if self.delay_s is None or self.closed.wait(self.delay_s):
            return
        try:
            upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=10)
            upstream.settimeout(None)
        except OSError:
            accepted.close()
            return
        self.sockets.append(upstream)
        change = self.client_chunks() if self.client_chunks is not None else None
        back = self.server_chunks() if self.server_chunks is not None else None
        threading.Thread(target=self._pump, args=(accepted, upstream, change), daemon=True).start()
        threading.Thread(target=self._pump, args=(upstream, accepted, back), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket, change: Callable[[bytes], bytes] | None) -> None:
        try:
            while chunk := source.recv(65536):
                sink.sendall(change(chunk) if change is not None else chunk)
        except OSError:
            pass
        for end in (source, sink):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self) -> None:
        self.closed.set()
        for open_socket in [self.listener, *self.sockets]:
            open_socket.close()
