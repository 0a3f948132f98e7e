"""Keeping credentials out of text: the secrets the client holds, in one registry, and the
one function that takes them out of a text (:func:`redact`).

Every ``McpError`` message, the ``mcp_sync`` loggers' records, the CLI's output and the
notebook renderings of results go through it, so a token a server echoes shows as
``[redacted]``. Use it for text of your own, and mark a header value of your own secret::

    from mcp_sync.redaction import Secret, redact

    transport = StreamableHttpTransport(url, headers={"X-Tenant": Secret(tenant_key)})
    log.warning("upstream said: %s", redact(body))

A value becomes secret once, where it enters, under the object that holds it as its *owner*:

- a header given to a transport's ``headers=`` (so ``connect(headers=)``, a config entry's
  ``headers`` and the CLI's ``-H``) or to ``mcp_sync.extra_headers``, when its name looks
  secret (:func:`is_secret_name`) or it is marked :class:`Secret` (as ``mcp_sync.config``
  marks a value taken from the environment): :func:`hold_fields`;
- a URL's password (and the Basic credential made of it) and secret-named query parameters
  (``?api_key=``): :func:`hold_url`;
- a call's argument (a tool's, a prompt's) under a secret-looking name (``password``,
  ``token``...), at any depth: the connection holds it as it sends the request
  (:func:`secret_values`);
- a stdio server's environment variables named like credentials (``GITHUB_TOKEN``);
- a token: :class:`~mcp_sync.auth.BearerToken`'s, the ``Authorization`` value the HTTP
  transport sends whenever it changes, a session's cookies and proxy credentials, and what an
  OAuth provider holds (access and refresh tokens, client secrets, assertions, private keys),
  read when needed (:func:`watch`).

Every output redacts what the registry holds: an ``McpError``'s message (and the exceptions it
was raised from; a tracing span records that message), the reprs of transports, the
``mcp_sync`` loggers' records, a cassette's lines, the CLI's output.

Choices, and why:

- Owners are held weakly: a secret leaves the registry with the transport or provider that held
  it, and each owner keeps at most 16 values (a rotating token does not pile up). An
  exception is redacted when it is made, so one that outlives its client stays clean; so are
  the exceptions it was raised from (another library's error quoting a URL).
- On the hot path: a string comparison per request (has the ``Authorization`` value
  changed?) and a walk of a call's ``arguments`` for secret-looking names, looked up in a
  cache (about 4k instructions, 4% of a ``client.request``: ``python -m bench.instructions``).
  The work is at redaction time, which is errors, log records that are emitted, and CLI
  output: a scan of the text per form of a secret held (about 5 us an error with a few
  clients).
- A value shorter than :data:`MIN_LENGTH` (8) characters is never redacted: "Bearer", "none",
  a short test token would otherwise be cut out of every message. Real tokens, keys and
  client secrets are far longer.
- A value is also found in the forms it may come back in: the credential after its scheme
  (``Bearer xyz``), a Basic pair decoded, a cookie's value, URL-, JSON- and HTML-escaped.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import re
import threading
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import IO, Any

__all__ = ["MASK", "MIN_LENGTH", "RedactingWriter", "Secret", "hold", "redact"]

#: What a secret is replaced with.
MASK = "[redacted]"
#: The shortest value ever redacted.
MIN_LENGTH = 8
#: The most values one owner keeps (the oldest go first).
PER_OWNER = 16
#: Every logger mcp_sync logs on; each gets the redacting filter (a logger's filters do not
#: apply to its children's records, so each name is listed).
LOGGERS = (
    "mcp_sync",
    "mcp_sync.group",
    "mcp_sync.inprocess",
    "mcp_sync.oauth",
    "mcp_sync.pins",
    "mcp_sync.transport",
    "mcp_sync.transport.http",
    "mcp_sync.transport.sse",
    "mcp_sync.transport.stdio",
)

_SECRET_NAME = re.compile(
    r"auth|token|secret|passw|cookie|credential|api[-_]?key|(^|[-_])key$", re.IGNORECASE
)


class Secret(str):
    """A string marked secret: the HTTP transports hold it as one when they send it as a
    header value, and its ``repr`` hides it (so does a config entry's). ``parts`` are pieces of
    it that are secret on their own (the expanded variables of ``"Bearer ${TOKEN}"``)."""

    parts: tuple[str, ...] = ()

    def __new__(cls, value: str, parts: Iterable[str] = ()) -> Secret:
        secret = super().__new__(cls, value)
        secret.parts = tuple(parts)
        return secret

    def __repr__(self) -> str:
        return "<secret>"


class _Held:
    """One owner's secrets, each with its forms (worked out once: that is the slow part)."""

    __slots__ = ("source", "source_forms", "source_values", "values")

    def __init__(self) -> None:
        self.values: deque[tuple[str, tuple[str, ...]]] = deque(maxlen=PER_OWNER)
        self.source: Callable[[Any], Iterable[str | None]] | None = None
        self.source_values: tuple[str, ...] = ()
        self.source_forms: tuple[str, ...] = ()

    def ask(self, owner: object) -> tuple[str, ...] | None:
        """What the source holds now, if it changed (called without the lock: it is the
        owner's code)."""
        if self.source is None:
            return None
        values: list[str] = []
        # (a provider in the middle of a change: what it gave until then)
        with contextlib.suppress(Exception):
            values.extend(
                v for v in self.source(owner) if isinstance(v, str) and len(v) >= MIN_LENGTH
            )
        return tuple(values) if tuple(values) != self.source_values else None

    def forms(self) -> tuple[str, ...]:
        return tuple(form for _, forms in tuple(self.values) for form in forms) + (
            self.source_forms
        )


# Reentrant, and nothing is iterated in place under it: the collector may run a finaliser
# anywhere, even inside this lock, and a finaliser may log (which redacts).
_lock = threading.RLock()
#: id(owner) -> (a weak reference to it, its secrets). A plain dict: cheap to go through.
_owners: dict[int, tuple[weakref.ref[Any], _Held]] = {}
#: Owners gone since the last sweep: their callbacks, run wherever the collector runs, only
#: note it.
_dead: list[tuple[int, weakref.ref[Any]]] = []
#: Every form of every secret held, the longest first; None when something changed.
_all: list[str] | None = None


def _gone(key: int, ref: weakref.ref[Any]) -> None:
    global _all
    _dead.append((key, ref))
    _all = None


def _sweep() -> None:
    """Forget the owners that are gone (with the lock held)."""
    while _dead:
        key, ref = _dead.pop()
        entry = _owners.get(key)
        if entry is not None and entry[0] is ref:
            del _owners[key]


def _held(owner: object) -> _Held:
    """``owner``'s record, made if needed (with the lock held)."""
    _sweep()
    key = id(owner)
    entry = _owners.get(key)
    if entry is not None and entry[0]() is owner:
        return entry[1]
    held = _Held()
    _owners[key] = (weakref.ref(owner, functools.partial(_gone, key)), held)
    return held


def hold(owner: object, *values: str | None) -> None:
    """Register ``values`` as secrets for as long as ``owner`` lives (it must accept weak
    references). Values shorter than :data:`MIN_LENGTH` are ignored."""
    global _all
    kept = [str(v) for v in values if v and len(v) >= MIN_LENGTH]
    if not kept:
        return
    with _lock:
        new = [value for value in dict.fromkeys(kept) if not _holds(_held(owner), value)]
    if not new:  # (the same password sent with every call: nothing more to do)
        return
    forms = {value: tuple(_variants(value)) for value in new}  # (the slow part: unlocked)
    with _lock:
        held = _held(owner)
        for value in new:
            if not _holds(held, value):
                held.values.append((value, forms[value]))
                _all = None


def _holds(held: _Held, value: str) -> bool:
    return any(value == old for old, _ in tuple(held.values))


def watch(owner: object, source: Callable[[Any], Iterable[str | None]]) -> None:
    """Register ``source(owner)``, called at redaction time, as the secrets ``owner`` holds
    now (for an owner whose secrets change, like an OAuth provider's tokens). ``source`` must
    not refer to ``owner`` itself (a function, not a bound method), or the owner never goes."""
    global _all
    with _lock:
        _held(owner).source = source
        _all = None


def is_secret_name(name: str) -> bool:
    """True for a header, URL query parameter, environment variable or argument whose value is
    a credential by its name: ``Authorization``, ``Proxy-Authorization``, ``Cookie``,
    ``X-Api-Key``, any ``*-Token``, ``*Secret*``, ``api_key``, ``GITHUB_TOKEN``, ``password``..."""
    return _SECRET_NAME.search(name) is not None


#: Field names of the protocol's own that look secret by their name but never are.
_PROTOCOL_FIELDS = frozenset({"progressToken", "nextCursor", "cursor", "maxTokens"})
#: Field name -> :func:`is_secret_field`, for the walk of every request's parameters (a dict
#: lookup instead of a regex per name; emptied when full).
_FIELDS: dict[str, bool] = {}


def is_secret_field(name: object) -> bool:
    """True for a JSON field (a tool argument, a key of a request's parameters) whose string
    value is a credential by its name (:func:`is_secret_name`), but not the protocol's own
    ``progressToken`` or ``maxTokens``."""
    return isinstance(name, str) and name not in _PROTOCOL_FIELDS and is_secret_name(name)


def secret_values(value: Any) -> list[str]:
    """The non-empty strings of a JSON value held under a secret-looking field name
    (:func:`is_secret_field`), at any depth. On every call's path: kept lean."""
    found: list[str] = []
    fields = _FIELDS
    todo = [value]
    for node in todo:  # (todo grows as it is read)
        if isinstance(node, dict):
            for key, item in node.items():
                if isinstance(item, str):
                    secret = fields.get(key)
                    if secret is None:
                        if len(fields) >= 4096:
                            fields.clear()
                        secret = fields[key] = is_secret_field(key)
                    if secret and item:
                        found.append(item)
                elif isinstance(item, (dict, list)):
                    todo.append(item)
        elif isinstance(node, list):
            todo += [item for item in node if isinstance(item, (dict, list))]
    return found


def hold_fields(owner: object, fields: Mapping[str, Any]) -> None:
    """Hold the values of ``fields`` (headers, environment variables) that are secret by their
    name or marked :class:`Secret`."""
    for name, value in fields.items():
        if isinstance(value, Secret):
            hold(owner, value, *value.parts)
        elif isinstance(value, str) and is_secret_name(str(name)):
            hold(owner, value)


def basic_credential(user: str, password: str) -> str:
    """The ``Basic`` credential an HTTP library sends for a user and password (Latin-1)."""
    import base64

    pair = f"{user}:{password}".encode("latin-1", "replace")
    return "Basic " + base64.b64encode(pair).decode("ascii")


def url_secrets(url: str) -> list[str]:
    """What a URL carries that is secret: its password (as written and decoded), the
    ``Basic`` credential made of its user and password, and the values of its query
    parameters named like a credential (``?api_key=``)."""
    from urllib.parse import parse_qsl, unquote, urlsplit

    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:  # (a port that is not a number)
        return []
    found = [value for name, value in parse_qsl(parts.query) if is_secret_name(name)]
    if password:
        plain = unquote(password)
        found += [password, plain, basic_credential(unquote(parts.username or ""), plain)]
    return found


def hold_url(owner: object, url: str) -> None:
    """Hold what ``url`` carries that is secret (:func:`url_secrets`)."""
    hold(owner, *url_secrets(url))


def _variants(value: str) -> Iterator[str]:
    """``value`` and the forms it may come back in."""
    import base64
    import binascii
    import html
    import json
    from urllib.parse import quote, quote_plus, unquote_plus

    found = [value]
    scheme, _, credential = value.partition(" ")
    if credential and " " not in credential.strip():
        credential = credential.strip()
        found.append(credential)
        if scheme.lower() == "basic":
            try:
                pair = base64.b64decode(credential, validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                pair = ""
            _, _, password = pair.partition(":")
            found += [pair, password, unquote_plus(password)]
    if "=" in value:  # a Cookie header: each cookie, and its value
        for part in value.split(";"):
            part = part.strip()
            found += [part, part.partition("=")[2]]
    for item in list(found):
        found += [quote(item, safe=""), quote_plus(item), json.dumps(item)[1:-1], html.escape(item)]
    return (item for item in found if len(item) >= MIN_LENGTH)


def _secrets() -> list[str]:
    """Every secret held now, in all its forms, the longest first (so that a secret holding
    another is replaced whole)."""
    global _all
    with _lock:
        _sweep()
        entries = list(_owners.values())
    asked = []
    for ref, held in entries:
        owner = ref()
        if owner is not None and held.source is not None:
            now = held.ask(owner)
            if now is not None:
                asked.append((held, now, tuple(form for v in now for form in _variants(v))))
    with _lock:
        for held, now, forms in asked:
            held.source_forms, held.source_values = forms, now
        if asked or _all is None:
            _sweep()  # (and owners registered meanwhile count too)
            live = [held for ref, held in list(_owners.values()) if ref() is not None]
            _all = sorted({form for held in live for form in held.forms()}, key=len, reverse=True)
        return _all


def _apply(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def redact(text: str) -> str:
    """``text`` with every secret the client holds replaced by :data:`MASK`."""
    if not text or not _owners:
        return text
    return _apply(text, _secrets())


def scrub(error: BaseException | None) -> None:
    """Redact, in place, the messages of ``error`` and of the exceptions it holds or was
    raised from: another library's error under an ``McpError`` (``requests`` quoting a URL
    with its ``api_key``) shows in a traceback too."""
    if error is None or not _owners:
        return
    secrets = _secrets()
    seen: set[int] = set()
    stack = [error]
    while stack:
        current = stack.pop()
        if id(current) in seen or len(seen) > 32:
            continue
        seen.add(id(current))
        args = current.args
        clean = tuple(_apply(arg, secrets) if isinstance(arg, str) else arg for arg in args)
        if clean != args:
            with contextlib.suppress(Exception):  # (an exception class that forbids it)
                current.args = clean
        stack += [arg for arg in args if isinstance(arg, BaseException)]
        stack += [e for e in (current.__cause__, current.__context__) if e is not None]
        reason = getattr(current, "reason", None)  # urllib3's MaxRetryError
        if isinstance(reason, BaseException):
            stack.append(reason)


class _Filter(logging.Filter):
    """Redacts a record's message, its exception's text and its stack in place."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not _owners:
            return True
        secrets = _secrets()
        if not secrets:
            return True
        try:
            message = record.getMessage()
        except Exception:  # bad arguments: logging reports that itself when it formats
            return True
        clean = _apply(message, secrets)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info:
            scrub(record.exc_info[1])  # for a formatter of its own too
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = _apply(record.exc_text, secrets)
        if record.stack_info:
            record.stack_info = _apply(record.stack_info, secrets)
        return True


_FILTER = _Filter()
for _name in LOGGERS:
    logging.getLogger(_name).addFilter(_FILTER)


class RedactingWriter:
    """A text stream writing through to ``stream`` with every secret redacted (the CLI's
    stdout and stderr)."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(redact(text))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
