"""A scripted fake HTTP proxy on 127.0.0.1 that only tunnels (``CONNECT host:port``).

Scripted fake: the tests need a proxy whose traffic they can see, on loopback, with no setup.
It answers ``CONNECT`` with 200 and copies bytes both ways until either side closes; anything
else gets 405. ``targets`` lists every ``host:port`` asked for.

    with ConnectProxy() as proxy:
        os.environ["HTTPS_PROXY"] = proxy.url
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading

__all__ = ["ConnectProxy"]


class ConnectProxy:
    def __init__(self) -> None:
        self.targets: list[str] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._stop = threading.Event()
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def __enter__(self) -> ConnectProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        self._thread.join(5)
        with self._lock:
            for sock in self._sockets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self._sockets.append(client)
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = client.recv(4096)
            if not chunk:
                return
            head += chunk
        line = head.split(b"\r\n", 1)[0].decode("latin-1").split()
        if len(line) < 2 or line[0] != "CONNECT":
            client.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
            return
        self.targets.append(line[1])
        host, _, port = line[1].rpartition(":")
        try:
            upstream = socket.create_connection((host, int(port)), timeout=5)
        except OSError:
            client.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
            return
        with self._lock:
            self._sockets.append(upstream)
        client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        rest = head.split(b"\r\n\r\n", 1)[1]
        if rest:
            upstream.sendall(rest)
        pair = {client: upstream, upstream: client}
        while not self._stop.is_set():
            ready, _, _ = select.select(list(pair), [], [], 0.2)
            for sock in ready:
                try:
                    data = sock.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    for s in pair:
                        with contextlib.suppress(OSError):
                            s.shutdown(socket.SHUT_RDWR)
                    return
                pair[sock].sendall(data)
