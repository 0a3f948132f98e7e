"""A scripted fake server that breaks the stdio framing, for the transport fault tests.

Real servers cannot be made to write broken frames on demand. ``argv[1]`` picks the fault;
each mode writes its fault, then (unless it exits) ``{"jsonrpc":"2.0","method":"ok"}``, then
waits for EOF on stdin:

- ``garbage``: a line that is not JSON
- ``utf8``: a line with invalid UTF-8 inside a JSON string
- ``huge N``: a line of N bytes (a JSON string, sent in pieces), no message inside
- ``partial``: half a message without a newline, then exit with status 7
- ``stderr-flood N``: N bytes on stderr ending in ``THE-END``, then the ok line
- ``blank``: blank and whitespace-only lines (with CR) around the ok line
- ``scalar``: a JSON value that is no message (``42``)
- ``split``: one message written a few bytes at a time
- ``close-stdout``: after the ok line, wait for a line on stdin, then close stdout and keep
  running until killed
"""

import os
import sys
import time

OK = b'{"jsonrpc":"2.0","method":"ok"}\n'


def write(data: bytes) -> None:
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def main() -> None:
    mode = sys.argv[1]
    if mode == "garbage":
        write(b"this is not json {\n")
    elif mode == "utf8":
        write(b'{"jsonrpc":"2.0","method":"bad\xff\xfe"}\n')
    elif mode == "huge":
        size = int(sys.argv[2])
        piece = b'{"jsonrpc":"2.0","method":"inside"}' * 1000  # never a message: no newline
        write(b'{"x":"')
        left = size - 6
        while left > 0:
            write(piece[:left])
            left -= len(piece)
        write(b'"}\n')
    elif mode == "partial":
        write(b'{"jsonrpc":"2.0","met')
        sys.stderr.write("dying half-way\n")
        sys.stderr.flush()
        os._exit(7)
    elif mode == "stderr-flood":
        size = int(sys.argv[2])
        block = b"e" * 65535 + b"\n"
        left = size - len(b"THE-END\n")
        while left > 0:
            sys.stderr.buffer.write(block[:left])
            left -= len(block)
        sys.stderr.buffer.write(b"THE-END\n")
        sys.stderr.flush()
    elif mode == "blank":
        write(b"\n\r\n   \n")
    elif mode == "scalar":
        write(b"42\n")
    if mode == "split":
        for i in range(0, len(OK), 5):
            write(OK[i : i + 5])
            time.sleep(0.002)
    else:
        write(OK)
    if mode == "close-stdout":
        sys.stdin.buffer.readline()  # (the test reads the pid first: it is None once stopped)
        os.close(1)
        while True:
            time.sleep(3600)
    sys.stdin.buffer.read()


main()
