"""Agreeing with a server on a protocol version, and so on an era.

The 2026-07-28 era starts with ``server/discover``; the handshake era (2024-11-05 ..
2025-11-25) with ``initialize``. In ``"auto"`` mode the client probes with ``server/discover``
and falls back to ``initialize`` on the same connection when the answer is not a 2026 one
(docs/eras.md says what counts as one). The outcome is a :class:`ServerState`, which the
client core applies.

Over a transport whose old servers may ignore the probe (stdio), no answer within
``probe_timeout`` counts as not a 2026 one; that window starts once the server has read the
probe (``Transport.unread_by_peer``). A server that has not read it yet is still starting, not
ignoring it, so the era it gets does not depend on how fast it starts, and one that reads the
probe and ignores it waits no longer than before.
"""

from __future__ import annotations

import dataclasses
import logging
from concurrent import futures
from typing import Any

from .._rules.deadline import Deadline
from .._rules.warn import warn
from .._session.outgoing import Outgoing
from .._session.session import PendingRequest, Session
from ..abort import AbortSignal
from ..errors import (
    McpError,
    ProtocolError,
    RequestTimeout,
    RpcError,
    TransportError,
    UnsupportedProtocolVersion,
)
from ..protocol import stateless, versions
from ..protocol.types import DiscoverResult, Implementation, InitializeResult, ServerCapabilities
from ..protocol.validation import parse_result
from ..transports.base import MessageOptions

__all__ = ["Offer", "ServerState", "handshake", "negotiate"]

logger = logging.getLogger("mcp_sync")

#: How often the probe looks whether a server still starting has read it yet.
_READ_POLL = 0.05

#: ``initialize`` belongs to the session it opens, whatever the session sent before (a recovery
#: may find a stateless-era session), and goes at no version: its answer says which.
_IN_SESSION = MessageOptions()


@dataclasses.dataclass(frozen=True)
class ServerState:
    """What the server told us about itself, from ``initialize`` or ``server/discover``."""

    protocol_version: str
    capabilities: ServerCapabilities
    server_info: Implementation | None
    instructions: str | None
    discover: DiscoverResult | None = None
    #: The era of ``protocol_version`` (read on every call).
    era: versions.Era = dataclasses.field(init=False, compare=False)
    #: ``capabilities`` as on the wire.
    wire_capabilities: dict[str, Any] = dataclasses.field(init=False, repr=False, compare=False)
    #: The dotted path of every capability declared, for the per-call capability check.
    declared: frozenset[str] = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "era", versions.era_of(self.protocol_version))
        wire = self.capabilities.to_wire()
        object.__setattr__(self, "wire_capabilities", wire)
        object.__setattr__(self, "declared", frozenset(_declared_paths(wire)))

    def has(self, capability: str) -> bool:
        """True if the server advertised ``capability``, a dotted path like
        ``"resources.subscribe"`` (declared: present, and neither null nor false)."""
        return capability in self.declared

    def rediscovered(self, result: DiscoverResult) -> ServerState:
        """This state after a later ``server/discover`` (the version agreed stays)."""
        info = result.server_info or self.server_info
        return ServerState(
            self.protocol_version, result.capabilities, info, result.instructions, result
        )


def _declared_paths(capabilities: dict[str, Any]) -> list[str]:
    """The dotted path of each capability in ``capabilities`` whose value is neither null nor
    false, at any depth (a key holding a dot cannot be named by a path, and is left out)."""
    paths: list[str] = []
    todo: list[tuple[str, dict[str, Any]]] = [("", capabilities)]
    while todo:
        prefix, node = todo.pop()
        for key, value in node.items():
            if not isinstance(key, str) or "." in key or value in (None, False):
                continue
            paths.append(prefix + key)
            if isinstance(value, dict):
                todo.append((f"{prefix}{key}.", value))
    return paths


def choose_protocol(protocol: str, handshake_version: str) -> tuple[str, str]:
    """The ``protocol=`` and ``protocol_version=`` client options, checked: ``protocol``
    (``"auto"``, ``"handshake"`` or a version to pin) and the version ``initialize`` offers.

    Raises :class:`UnsupportedProtocolVersion` for a version this client does not speak.
    """
    if handshake_version not in versions.HANDSHAKE_VERSIONS:
        raise UnsupportedProtocolVersion(handshake_version, versions.HANDSHAKE_VERSIONS)
    if protocol == "legacy":
        warn(
            'protocol="legacy" is now protocol="handshake" (the old spelling goes in 0.2.0)',
            DeprecationWarning,
        )
        protocol = "handshake"
    if protocol not in ("auto", "handshake") and not versions.is_supported(protocol):
        raise UnsupportedProtocolVersion(protocol, versions.SUPPORTED)
    if protocol in versions.HANDSHAKE_VERSIONS:
        handshake_version = protocol
    return protocol, handshake_version


@dataclasses.dataclass(frozen=True)
class Offer:
    """What the client brings to the negotiation."""

    #: ``"auto"``, ``"handshake"`` or a version to pin.
    protocol: str
    #: The version ``initialize`` offers.
    handshake_version: str
    client_info: dict[str, Any]
    #: Capabilities declared in ``initialize``.
    capabilities: dict[str, Any]
    probe_timeout: float


class _HandshakeServer(Exception):
    """The ``server/discover`` probe says: not a 2026-era server (``late``: it said nothing
    in time, and its answer may still come; ``server_versions``: it answered, listing only
    versions this client does not speak)."""

    def __init__(
        self,
        reason: object,
        version: str,
        late: PendingRequest | None = None,
        server_versions: list[str] | None = None,
    ):
        super().__init__(str(reason))
        self.version = version
        self.late = late
        self.server_versions = server_versions


def _client_versions(offer: Offer) -> tuple[str, ...]:
    """The versions this client would speak under ``offer``: a pinned one, or all."""
    return versions.SUPPORTED if offer.protocol == "auto" else (offer.protocol,)


def _no_common_version(offer: Offer, server_versions: Any) -> UnsupportedProtocolVersion:
    listed = [str(v) for v in server_versions] if isinstance(server_versions, list) else []
    return UnsupportedProtocolVersion(None, _client_versions(offer), server_versions=listed)


def negotiate(
    session: Session, offer: Offer, deadline: Deadline, signal: AbortSignal | None = None
) -> ServerState:
    """Agree on a version with the server at the other end of ``session``, all of it (the
    probe, the handshake, a late answer) by ``deadline``, the connecting call's (``signal``:
    stop, with :class:`~mcp_sync.errors.Aborted`, as a recovery's caller or ``close()`` asks)."""
    mode = offer.protocol
    if mode == "handshake" or (mode != "auto" and versions.era_of(mode) == "handshake"):
        return handshake(session, offer, deadline, signal)
    if mode != "auto":
        return _discover(session, offer, mode, deadline, probe=False, signal=signal)
    # The probe window is for transports whose old servers may ignore the probe (stdio);
    # over Streamable HTTP every server answers, and a slow one is still a 2026 one.
    window = None if session.transport.answers_every_request else offer.probe_timeout
    try:
        version = versions.STATELESS_VERSIONS[0]
        return _discover(session, offer, version, deadline, True, signal, window)
    except _HandshakeServer as refusal:
        logger.debug("server/discover probe: %s; trying the handshake era", refusal)
        try:
            state = handshake(session, offer, deadline, signal)
        except McpError as refused:
            if refusal.server_versions is not None:
                # It answered server/discover as a 2026 server does, with versions this
                # client does not speak; that, not the refused initialize, is what failed.
                raise _no_common_version(offer, refusal.server_versions) from refused
            if refusal.late is None:
                raise
            # Refused, for whatever reason (-32601, a 2026 error, an HTTP status, a 2026
            # version in the answer): a 2026-era server too slow for the probe window (a cold
            # start, a busy machine) may be the one refusing, and its answer to the probe may
            # still come. Wait for it as long as the connect timeout allows.
            return _late_discover(session, offer, refusal, refused, deadline)
        if refusal.late is not None:
            session.forget(refusal.late)
        return state


def _late_discover(
    session: Session,
    offer: Offer,
    refusal: _HandshakeServer,
    refused: McpError,
    deadline: Deadline,
) -> ServerState:
    """The state from a ``server/discover`` answer that came after the probe window, else the
    handshake's refusal (``refused``)."""
    assert refusal.late is not None
    try:
        try:
            raw = session.result(refusal.late, deadline)
        except RpcError as exc:
            # A 2026 server that wants another 2026 version: go on as _discover would.
            data = exc.data if isinstance(exc.data, dict) else {}
            chosen = stateless.choose_version(data.get("supported") or [])
            if exc.code != stateless.UNSUPPORTED_VERSION or chosen is None:
                raise
            return _discover(session, offer, chosen, deadline, probe=False)
        result = parse_result("server/discover", DiscoverResult, raw)
        return _adopt(offer, refusal.version, result, probe=False)
    except McpError as late_error:
        session.forget(refusal.late)
        logger.debug("no late server/discover answer either: %s", late_error)
        if isinstance(refused, UnsupportedProtocolVersion) and refused.offered in (
            versions.STATELESS_VERSIONS
        ):
            # Never "the client does not speak 2026-07-28": it does; the server's discover
            # answer did not come in time.
            raise ProtocolError(
                f"the server answered initialize with {refused.offered!r}, a version this "
                f"client speaks through server/discover, but it did not answer server/discover "
                f"in time ({late_error})"
            ) from refused
        raise refused from late_error


def handshake(
    session: Session, offer: Offer, deadline: Deadline, signal: AbortSignal | None = None
) -> ServerState:
    """``initialize`` and ``notifications/initialized`` (the handshake era), by ``deadline``."""
    params = {
        "protocolVersion": offer.handshake_version,
        "capabilities": offer.capabilities,
        "clientInfo": offer.client_info,
    }
    raw = session.request(Outgoing("initialize", params, deadline, signal, at=_IN_SESSION))
    result = parse_result("initialize", InitializeResult, raw)
    if result.protocol_version not in versions.HANDSHAKE_VERSIONS:
        raise UnsupportedProtocolVersion(result.protocol_version, versions.HANDSHAKE_VERSIONS)
    # From here on every message says the version: an answer to a server request sent before
    # the client has adopted the state included.
    session.message_options = MessageOptions(version=result.protocol_version)
    session.notify("notifications/initialized", timeout=deadline.left(), opens_session=True)
    return ServerState(
        result.protocol_version, result.capabilities, result.server_info, result.instructions
    )


def _discover(
    session: Session,
    offer: Offer,
    version: str,
    deadline: Deadline,
    probe: bool,
    signal: AbortSignal | None = None,
    window: float | None = None,
) -> ServerState:
    """Run ``server/discover`` by ``deadline``; with ``probe`` a non-2026 answer, or none
    within ``window`` seconds (None: the deadline), raises _HandshakeServer."""
    for attempt in range(2):
        meta = stateless.request_meta(version, {}, offer.client_info)
        discover = Outgoing(
            "server/discover",
            {"_meta": meta},
            # A transport may read the answer in send(), holding the caller by the deadline
            # it is given: one waited for only a window is given none. (Only transports
            # whose servers may ignore the probe have a window: stdio, which signs in
            # nowhere.)
            deadline if window is None else Deadline(None),
            signal,
            at=MessageOptions(version=version, standalone=True),
        )
        pending = session.begin(discover)
        try:
            if window is not None:
                _wait_until_read(session, pending, deadline)
            raw = session.result(pending, deadline, window)
            result = parse_result("server/discover", DiscoverResult, raw)
        except RpcError as exc:
            if exc.code == stateless.UNSUPPORTED_VERSION:
                data = exc.data if isinstance(exc.data, dict) else {}
                offered = data.get("supported") or []
                chosen = stateless.choose_version(offered)
                if chosen is not None and attempt == 0:
                    version = chosen
                    continue
                if probe and any(v in versions.HANDSHAKE_VERSIONS for v in offered):
                    raise _HandshakeServer(exc, version) from None
                raise _no_common_version(offer, offered) from None
            if probe and exc.code not in stateless.STATELESS_ERROR_CODES:
                raise _HandshakeServer(exc, version) from None
            raise
        except RequestTimeout as exc:
            # Past the probe window, keep listening: a slow stateless-era server may still
            # answer. Past the deadline, the connect timed out: nothing is left to try.
            if probe and not deadline.passed():
                raise _HandshakeServer(exc, version, late=pending) from None
            session.forget(pending)
            raise
        except (TransportError, ProtocolError) as exc:
            if probe:
                raise _HandshakeServer(exc, version) from None
            raise
        return _adopt(offer, version, result, probe)
    raise AssertionError("unreachable")  # pragma: no cover


def _wait_until_read(session: Session, pending: PendingRequest, deadline: Deadline) -> None:
    """Return once the server has read the probe (or answered it); raise a timeout if it
    has not by the deadline: it never finished starting."""
    while session.transport.unread_by_peer() and not pending.future.done():
        if deadline.passed():
            raise deadline.expired(pending.method, "the server never read it (still starting)")
        futures.wait([pending.future], deadline.within(_READ_POLL))


def _adopt(offer: Offer, version: str, result: DiscoverResult, probe: bool) -> ServerState:
    """The 2026-era state a ``server/discover`` result gives."""
    chosen = (
        version
        if version in result.supported_versions
        else stateless.choose_version(result.supported_versions)
    )
    if chosen is None:
        if probe:
            raise _HandshakeServer(
                f"no shared 2026-era version in {result.supported_versions}",
                version,
                server_versions=list(result.supported_versions),
            )
        raise _no_common_version(offer, list(result.supported_versions))
    return ServerState(chosen, result.capabilities, result.server_info, result.instructions, result)
