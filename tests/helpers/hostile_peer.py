"""A scripted hostile HTTP peer on 127.0.0.1: bodies no real server sends on purpose.

A real authorization server cannot be made to answer with an endless body, a gzip bomb or a
body that drips one byte at a time; a hostile MCP server can point a client at such a URL
(its ``WWW-Authenticate`` names the metadata URL). Each path records how many bytes it got
out before the client went away.

- ``/endless``: a JSON-looking body without Content-Length that never ends;
- ``/bomb``: ``Content-Encoding: gzip``, about 64 KiB on the wire, 64 MiB inflated;
- ``/drip``: headers, then one byte every 0.1 s until the client hangs up.

A POST (to a token or revocation endpoint) gets the same answers.
"""

from __future__ import annotations

import functools
import gzip
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@functools.cache
def bomb() -> bytes:
    return gzip.compress(b"{" + b" " * (64 << 20), compresslevel=9)


class HostilePeer:
    def __init__(self) -> None:
        self.sent: dict[str, int] = {}
        bomb()  # built now, outside any memory measurement of the client
        self.hung_up = threading.Event()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(5)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        peer = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # the body ends when the connection does

            def do_GET(self) -> None:
                sent = 0
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if self.path == "/bomb":
                    self.send_header("Content-Encoding", "gzip")
                    self.send_header("Content-Length", str(len(bomb())))
                self.end_headers()
                try:
                    if self.path == "/bomb":
                        self.wfile.write(bomb())
                        sent = len(bomb())
                    elif self.path == "/endless":
                        self.wfile.write(b'{"resource": "')
                        block = b"x" * 65536
                        while sent < (4 << 30):
                            self.wfile.write(block)
                            sent += len(block)
                    elif self.path == "/drip":
                        while sent < 10_000:
                            self.wfile.write(b" ")
                            self.wfile.flush()
                            sent += 1
                            time.sleep(0.1)  # the hostile pace itself, not a wait
                except OSError:
                    peer.hung_up.set()
                finally:
                    peer.sent[self.path] = sent

            def do_POST(self) -> None:  # (a token or revocation endpoint): the same answers
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.do_GET()

            def log_message(self, *args: object) -> None:
                pass

        return H
