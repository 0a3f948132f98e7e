"""Recorded sessions ("cassettes") for tests, the way vcrpy records HTTP.

A :class:`Cassette` is a transport. Recording, it wraps a real one and writes every message
that crosses it to a JSONL file, one a line with its direction, secrets filtered out first.
Replaying, the file is the server: no process, no network::

    from mcp_sync import Client, Cassette, connect
    from mcp_sync.transports import StdioTransport

    with connect(Cassette("tests/cassettes/time.jsonl",
                          lambda: StdioTransport("mcp-server-time"))) as client:
        client.call_tool("get_current_time", {"timezone": "UTC"})

The first run (``mode="once"``, the file missing) records; later runs replay. Choices, and why:

- A request is answered as the recorded request of the same method and parameters was,
  whatever its id (``_meta`` is not compared: it holds the progress token, and in the
  2026-07-28 era the client's version and capabilities). ``match(recorded, live)`` can accept
  more. Recorded requests are used in file order; once all of a kind are used, the last one
  answers again (a test that lists the tools twice against a recording of one list still
  replays). A request with no answer raises :class:`~mcp_sync.errors.CassetteMismatch`, with
  a diff against the nearest recorded request.
- What the server sent in a request's wake (progress, log messages, its own sampling,
  elicitation and roots requests) is replayed in the recorded order before the answer; after a
  server request, the rest waits for the client's answer to it. So concurrent calls from
  several threads replay correctly: each is matched by content, not by order of arrival.
- Modes: ``"once"`` records when the file is missing, else replays; ``"none"`` replays only;
  ``"all"`` always records (the file is rewritten); ``"new_episodes"`` replays what is
  recorded and sends the rest to the real server (started then, and opened with the recorded
  ``initialize``), appending it to the file.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import queue
import re
import threading
from collections.abc import Callable
from typing import IO, Any, Literal

from ..abort import AbortSignal
from ..errors import CassetteError, CassetteMismatch, ConnectionClosed, RequestTimeout
from ..protocol import jsonrpc, methods
from ..protocol.meta import PROTOCOL_VERSION
from ..redaction import MASK, is_secret_name
from ..transports.base import MessageOptions, Transport
from . import _file as fmt

__all__ = ["Cassette", "Mode"]

Mode = Literal["once", "none", "new_episodes", "all"]
_MODES = ("once", "none", "new_episodes", "all")
#: How long ``new_episodes`` waits for the real server to answer the recorded ``initialize``.
HANDSHAKE_TIMEOUT = 30.0
_STOP = object()


class Cassette(Transport):
    """A transport that records a session to ``path`` or replays it from there.

    ``transport``: the real transport (or a function making one), needed to record; never
    started when replaying. ``mode``: ``"once"``, ``"none"``, ``"new_episodes"`` or ``"all"``
    (see the module docstring). ``match(recorded, live)``: accept a live request the default
    matching refuses (both as matched: method and params without ``_meta``). ``filter(line)``:
    called on each line before it is written (``{"direction": ..., "message": ...}``, secrets
    already redacted) and on each live request before it is matched; return it, changed or
    not, or None to drop it.
    """

    kind = "cassette"

    def __init__(
        self,
        path: str | os.PathLike[str],
        transport: Transport | Callable[[], Transport] | None = None,
        *,
        mode: Mode = "once",
        match: fmt.Matcher | None = None,
        filter: fmt.Filter | None = None,
    ) -> None:
        super().__init__()
        if mode not in _MODES:
            raise ValueError(f"Cassette mode must be one of {', '.join(_MODES)}, not {mode!r}")
        self.path = os.fspath(path)
        self.mode: Mode = mode
        self._source = transport
        self._match = match
        self._filter = filter
        self._inner: Transport | None = None
        self._file: IO[str] | None = None
        self._write_lock = threading.Lock()
        self._lock = threading.Lock()
        self._episodes: list[fmt.Episode] = []
        self._live_ids: dict[Any, Any] = {}
        self._waiting: dict[Any, tuple[fmt.Episode, int, Any]] = {}  # server request id ->
        self._live_server_requests: set[Any] = set()
        self._outbox: queue.Queue[Any] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._handshake = threading.Event()
        self._live_version: str | None = None  # what the live server's ``initialize`` chose
        self._closing = False
        #: True when this run records (known once started).
        self.recording = False

    # -- the transport -----------------------------------------------------------------

    def start(self) -> None:
        exists = os.path.exists(self.path)
        self.recording = self.mode == "all" or (self.mode == "once" and not exists)
        if not self.recording:
            if not exists:
                raise CassetteError(
                    f"cassette {self.path} does not exist (mode {self.mode!r} replays only; "
                    "record it with mode 'once' or 'all')",
                    path=self.path,
                )
            header, lines = fmt.load(self.path)
            self._episodes = fmt.episodes(lines)
            for name in ("answers_every_request", "cancels_by_closing_stream"):
                setattr(self, name, bool(header.get(name, False)))
            self._thread = threading.Thread(
                target=self._replay_loop, name="mcp-sync-cassette-reader", daemon=True
            )
            self._thread.start()
            return
        self._open_inner(append=False)

    def _open_inner(self, *, append: bool) -> None:
        if self._source is None:
            raise CassetteError(
                f"cassette {self.path}: recording needs the real transport "
                "(Cassette(path, transport))",
                path=self.path,
            )
        inner = self._source if isinstance(self._source, Transport) else self._source()
        headers = getattr(inner, "headers", None)
        inner.on_message(self._from_server)
        inner.on_error(self._report)
        inner.on_close(self._inner_closed)
        if not append:
            for name in ("answers_every_request", "cancels_by_closing_stream"):
                setattr(self, name, bool(getattr(inner, name, False)))
        self._inner = inner
        # Started first: a server that cannot be started leaves the old recording as it was.
        # (No server speaks before the client, so nothing is lost meanwhile.)
        inner.start()
        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        with self._write_lock:
            self._file = open(self.path, "a" if append else "w", encoding="utf-8")  # noqa: SIM115
        if not append:
            self._write_raw(self._header(inner, headers))

    def _header(self, inner: Transport, headers: Any) -> dict[str, Any]:
        header: dict[str, Any] = {
            "cassette": fmt.FORMAT,
            "recorded": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "transport": inner.kind,
            "answers_every_request": bool(getattr(inner, "answers_every_request", False)),
            "cancels_by_closing_stream": bool(getattr(inner, "cancels_by_closing_stream", False)),
        }
        url = getattr(inner, "url", None)
        if isinstance(url, str):
            header["url"] = url
        if isinstance(headers, dict) and headers:
            header["headers"] = {
                str(k): MASK if is_secret_name(str(k)) else str(v) for k, v in headers.items()
            }
        clean = fmt.filtered(header, None)
        assert clean is not None
        return clean

    def send(
        self,
        message: dict[str, Any],
        *,
        deadline: float = math.inf,
        signal: AbortSignal | None = None,
        options: MessageOptions | None = None,
    ) -> None:
        if signal is not None and signal.aborted:
            return
        if self._closing:
            raise ConnectionClosed(f"cassette {self.path} is closed")
        # What no transport could send (a lone surrogate in an argument) is refused as the real
        # one would refuse it, UnencodableValue, before it is recorded or matched.
        jsonrpc.encode(message)
        if self.recording:
            self._write(fmt.CLIENT, message)
            assert self._inner is not None
            self._inner.send(message, deadline=deadline, signal=signal, options=options)
            return
        self._replay_send(message, signal, options)

    def close(self) -> None:
        with self._lock:
            if self._closing:
                return
            self._closing = True
        if self._inner is not None:
            self._inner.close()
        self._outbox.put(_STOP)
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        with self._write_lock:
            if self._file is not None:
                self._file.close()
        self._fire_close(None)

    # -- recording ---------------------------------------------------------------------

    def _write(self, direction: str, message: dict[str, Any]) -> None:
        line = fmt.filtered({"direction": direction, "message": message}, self._filter)
        if line is not None:
            self._write_raw(line)

    def _write_raw(self, line: dict[str, Any]) -> None:
        text = json.dumps(line, ensure_ascii=False, separators=(",", ":"))
        if _LONE_SURROGATE.search(text):
            # A server may send one (as the JSON escape "\ud800"), and UTF-8 has no bytes for
            # it: the line keeps the escapes, else the write would fail inside the delivery.
            text = json.dumps(line, separators=(",", ":"))
        with self._write_lock:
            if self._file is not None and not self._file.closed:
                self._file.write(text + "\n")
                self._file.flush()  # a crash leaves every line so far readable

    def _from_server(self, message: Any) -> None:
        if not isinstance(message, dict):  # a batch: one line each
            for item in message if isinstance(message, list) else ():
                self._from_server(item)
            return
        if message.get("id") == _HANDSHAKE_ID:
            result = message.get("result")
            version = result.get("protocolVersion") if isinstance(result, dict) else None
            self._live_version = version if isinstance(version, str) else None
            self._handshake.set()
            return
        self._write(fmt.SERVER, message)
        if "method" in message and "id" in message:
            self._live_server_requests.add(message["id"])
        self._deliver(message)

    def _inner_closed(self, cause: BaseException | None) -> None:
        if not self._closing:
            self._fire_close(cause)

    # -- replaying ---------------------------------------------------------------------

    def _replay_send(
        self, message: dict[str, Any], signal: AbortSignal | None, options: MessageOptions | None
    ) -> None:
        if "method" not in message:  # the client's answer to a server request
            message_id = message.get("id")
            if message_id in self._live_server_requests and self._inner is not None:
                self._write(fmt.CLIENT, message)
                self._inner.send(message, signal=signal, options=options)
                return
            with self._lock:
                waiting = self._waiting.pop(message_id, None)
            if waiting is not None:
                self._play(*waiting)
            return
        line = fmt.filtered({"direction": fmt.CLIENT, "message": message}, self._filter)
        if line is None:
            if "id" not in message:
                return  # a notification the filter drops: it was never recorded either
            raise CassetteMismatch(
                f"cassette {self.path}: the filter drops {message.get('method')} requests, so "
                "the recording holds no answer to one",
                path=self.path,
                request=fmt.normalized(message),
            )
        key = fmt.normalized(line["message"])
        is_request = "id" in message
        with self._lock:
            episode = unanswered = self._find(key, is_request=is_request)
            if episode is not None and is_request and not _answered(episode):
                episode = None  # the recording stopped, or the call ended, before an answer
            if episode is not None:
                episode.used += 1
                if is_request:
                    self._live_ids[episode.trigger["id"]] = message["id"]
        if episode is not None:
            self._play(episode, 0, message.get("id"))
            return
        if not is_request:
            return  # a notification nobody recorded (a cancellation): the server ignores it
        if self.mode == "new_episodes" and self._source is not None:
            self._go_live(message, signal, options)
            return
        if unanswered is not None:
            raise CassetteMismatch(
                f"cassette {self.path}, line {unanswered.line}: the recorded "
                f"{key['method']} request has no recorded answer (the recording ended, or the "
                "call timed out or was cancelled, before the server answered)",
                path=self.path,
                request=key,
                nearest=unanswered.key,
                line=unanswered.line,
            )
        raise self._mismatch(key)

    def _find(self, key: dict[str, Any], *, is_request: bool) -> fmt.Episode | None:
        same = [
            e for e in self._episodes if e.is_request == is_request and e.method == key["method"]
        ]
        fits = [e for e in same if e.key == key]
        if not fits and self._match is not None:
            fits = [e for e in same if self._match(e.key, key)]
        fits = [e for e in fits if _answered(e)] or fits  # (a later recording may answer it)
        unused = [e for e in fits if e.used == 0]
        if unused:
            return unused[0]
        return fits[-1] if fits else None

    def _mismatch(self, key: dict[str, Any]) -> CassetteMismatch:
        candidates = [e for e in self._episodes if e.is_request and e.method == key["method"]]
        candidates = candidates or [e for e in self._episodes if e.is_request]
        if not candidates:
            return CassetteMismatch(
                f"cassette {self.path} has no recorded requests; {key['method']} was sent",
                path=self.path,
                request=key,
            )
        diffs = [(fmt.diff(e.key, key), e) for e in candidates]
        text, nearest = min(diffs, key=lambda pair: len(pair[0].splitlines()))
        return CassetteMismatch(
            f"cassette {self.path} has no recorded {key['method']} request like this one; "
            f"the nearest is line {nearest.line}:\n{text}",
            path=self.path,
            request=key,
            nearest=nearest.key,
            diff=text,
            line=nearest.line,
        )

    def _play(self, episode: fmt.Episode, start: int, live_id: Any) -> None:
        """Queue the episode's server messages from ``start`` up to and including the next
        server request (the rest waits for the client's answer to it)."""
        batch = []
        for index in range(start, len(episode.steps)):
            step = episode.steps[index]
            with self._lock:
                batch.append(fmt.rewrite(step, self._live_ids, live_id))
                if "method" in step and "id" in step:
                    self._waiting[step["id"]] = (episode, index + 1, live_id)
                    break
        self._outbox.put(batch)

    def _replay_loop(self) -> None:
        while True:
            batch = self._outbox.get()
            if batch is _STOP:
                return
            for message in batch:
                self._deliver(message)

    def _go_live(
        self, message: dict[str, Any], signal: AbortSignal | None, options: MessageOptions | None
    ) -> None:
        with self._lock:
            first = self._inner is None
            if first:
                self._open_inner(append=True)
        if first:
            self._open_live_session(message)
        self._write(fmt.CLIENT, message)
        assert self._inner is not None
        self._inner.send(message, signal=signal, options=options)

    def _open_live_session(self, first: dict[str, Any]) -> None:
        """The real server hears the recorded handshake first (the client's was replayed)."""
        assert self._inner is not None
        meta = (first.get("params") or {}).get("_meta")
        if isinstance(meta, dict) and PROTOCOL_VERSION in meta:
            return  # the 2026 era: every request stands alone
        recorded = next((e for e in self._episodes if e.method == "initialize"), None)
        if recorded is None:
            return
        request = {**recorded.trigger, "id": _HANDSHAKE_ID}
        self._inner.send(request)
        if not self._handshake.wait(HANDSHAKE_TIMEOUT):
            raise RequestTimeout("initialize", HANDSHAKE_TIMEOUT)
        self._inner.send(
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            options=MessageOptions(version=self._live_version),
        )


_HANDSHAKE_ID = "mcp-sync-cassette-initialize"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _answered(episode: fmt.Episode) -> bool:
    """The recording holds the answer to the episode's request, or none is due: a request
    that stays open until the client ends it (``subscriptions/listen``)."""
    return episode.answered or methods.method(episode.method).open_ended
