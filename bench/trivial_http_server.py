"""A near-zero-cost Streamable HTTP MCP server, so that a client's own cost shows.

    python -m bench.trivial_http_server PORT [--sse]

A raw socket server (a thread per connection, HTTP/1.1 keep-alive, ``TCP_NODELAY``, each
response written with one ``sendall``). POST answers requests with ``application/json`` or,
with ``--sse``, with a one-event ``text/event-stream`` body in chunked encoding (as real servers
send it); notifications get 202. GET answers 405 (no server-push stream), DELETE 200. It
prints ``ready`` once listening.
"""

from __future__ import annotations

import socket
import sys
import threading

from .trivial_stdio_server import answer

SESSION = b"bench-session-1"


def serve_connection(conn: socket.socket, sse: bool) -> None:
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    buf = b""
    try:
        while True:
            while b"\r\n\r\n" not in buf:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                buf += chunk
            head, _, buf = buf.partition(b"\r\n\r\n")
            lines = head.split(b"\r\n")
            method = lines[0].split(b" ", 1)[0]
            length = 0
            for line in lines[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            while len(buf) < length:
                chunk = conn.recv(max(65536, length - len(buf)))
                if not chunk:
                    return
                buf += chunk
            body, buf = buf[:length], buf[length:]
            conn.sendall(respond(method, body, sse))
    except OSError:
        pass
    finally:
        conn.close()


def respond(method: bytes, body: bytes, sse: bool) -> bytes:
    if method == b"DELETE":
        return b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
    if method != b"POST":
        return b"HTTP/1.1 405 Method Not Allowed\r\nAllow: POST\r\nContent-Length: 0\r\n\r\n"
    data = answer(body)
    if data is None:
        return b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"
    session = b"Mcp-Session-Id: " + SESSION + b"\r\n"
    if not sse:
        return (
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            + session
            + b"Content-Length: %d\r\n\r\n" % len(data)
            + data
        )
    event = b"event: message\r\ndata: " + data.rstrip(b"\n") + b"\r\n\r\n"
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
        + session
        + b"Transfer-Encoding: chunked\r\n\r\n"
        + b"%x\r\n" % len(event)
        + event
        + b"\r\n0\r\n\r\n"
    )


def main() -> None:
    port = int(sys.argv[1])
    sse = "--sse" in sys.argv
    listener = socket.create_server(("127.0.0.1", port), backlog=128)
    print("ready", flush=True)
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=serve_connection, args=(conn, sse), daemon=True).start()


if __name__ == "__main__":
    main()
