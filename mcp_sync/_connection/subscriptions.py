"""Resource subscriptions and ``listen`` in either era, and the :class:`Subscription` handle
they return.

In the handshake era a client asks ``resources/subscribe`` once per URI, however many
callbacks want it, and the server sends ``notifications/resources/updated`` on the
connection; a reconnected session has forgotten them, so they are asked again. In the
stateless era both are a ``subscriptions/listen`` request (:mod:`mcp_sync._connection.stateless`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection, Sequence

from .._rules.deadline import Deadline, call_deadline, under
from ..abort import AbortSignal
from ..errors import McpError
from ..protocol.jsonrpc import Notification
from .connection import Connection, RestoreSend
from .lifecycle import weak_callback
from .stateless import listen_filters

__all__ = ["ResourceSubscriptions", "Subscription"]

logger = logging.getLogger("mcp_sync")


class Subscription:
    """A live subscription; ``cancel()`` ends it (idempotent). Also a context manager."""

    def __init__(self, cancel: Callable[[], None]) -> None:
        self._cancel: Callable[[], None] | None = cancel

    def cancel(self) -> None:
        """End the subscription."""
        cancel, self._cancel = self._cancel, None
        if cancel is not None:
            cancel()

    @property
    def active(self) -> bool:
        return self._cancel is not None

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.cancel()


class ResourceSubscriptions:
    """The resource subscriptions of one connection (by URI, in the handshake era), and its
    listens."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._callbacks: dict[str, list[Callable[[str], None]]] = {}
        self._lock = threading.Lock()
        # Weak: the session's threads reach these, and must not keep the client alive.
        connection.on_notification(
            "notifications/resources/updated", weak_callback(self._on_updated)
        )
        connection.on_reconnect(weak_callback(self._resubscribe))

    def subscribe(
        self,
        uri: str,
        callback: Callable[[str], None],
        timeout: float | None,
        signal: AbortSignal | None,
    ) -> Subscription:
        """Call ``callback(uri)`` on each update of ``uri``; the server is asked once (in
        the stateless era, a ``subscriptions/listen`` of its own)."""
        if self._connection.is_stateless:
            return self.listen(
                [],
                [uri],
                lambda n: callback(str((n.params or {}).get("uri", uri))),
                timeout,
            )
        self._connection.require("resources/subscribe", "resources.subscribe")
        with self._lock:
            callbacks = self._callbacks.setdefault(uri, [])
            first = not callbacks
            callbacks.append(callback)
        if first:
            try:
                self._connection.request(
                    "resources/subscribe", {"uri": uri}, timeout=timeout, signal=signal
                )
            except BaseException:
                with self._lock:
                    self._callbacks.pop(uri, None)
                raise

        def cancel() -> None:
            with self._lock:
                current = self._callbacks.get(uri, [])
                if callback in current:
                    current.remove(callback)
                last = not current
            if last:
                self.unsubscribe(uri, None, None)

        return Subscription(cancel)

    def listen(
        self,
        kinds: Collection[str],
        uris: Sequence[str],
        callback: Callable[[Notification], None],
        timeout: float | None,
    ) -> Subscription:
        """``Client.listen``: the ``list_changed`` notifications of ``kinds`` (``"tools"``,
        ``"prompts"``, ``"resources"``) and the updates of ``uris``, all to ``callback``. In
        the stateless era one ``subscriptions/listen`` request; in the handshake era the
        notifications on the connection, and ``resources/subscribe`` for each URI."""
        connection = self._connection
        deadline = call_deadline(
            timeout,
            connection.max_total_timeout,
            what="listen",
            default=connection.request_timeout,
        )
        with under(deadline):  # (the resources/subscribe of each URI: one deadline for all)
            return self._listen(kinds, uris, callback, deadline)

    def _listen(
        self,
        kinds: Collection[str],
        uris: Sequence[str],
        callback: Callable[[Notification], None],
        deadline: Deadline,
    ) -> Subscription:
        connection = self._connection
        if connection.is_stateless:
            filters = listen_filters(
                "tools" in kinds, "prompts" in kinds, "resources" in kinds, uris
            )
            return Subscription(connection.stateless.listen(filters, callback, deadline).cancel)
        stops = [
            connection.on_notification(f"notifications/{kind}/list_changed", callback)
            for kind in kinds
        ]

        def updated(uri: str) -> None:
            callback(Notification("notifications/resources/updated", {"uri": uri}))

        def stop_all() -> None:
            for stop in stops:
                stop()

        try:
            for uri in uris:
                stops.append(self.subscribe(uri, updated, None, None).cancel)
        except BaseException:
            stop_all()
            raise
        return Subscription(stop_all)

    def unsubscribe(self, uri: str, timeout: float | None, signal: AbortSignal | None) -> None:
        """Drop every callback of ``uri`` and tell the server (when connected)."""
        with self._lock:
            self._callbacks.pop(uri, None)
        if self._connection.state == "connected":
            self._connection.request(
                "resources/unsubscribe", {"uri": uri}, timeout=timeout, signal=signal
            )

    def _on_updated(self, notification: Notification) -> None:
        uri = (notification.params or {}).get("uri")
        if not isinstance(uri, str):
            return
        with self._lock:
            callbacks = list(self._callbacks.get(uri, ()))
        for callback in callbacks:
            try:
                callback(uri)
            except Exception:
                logger.exception("resource update callback for %s raised", uri)

    def _resubscribe(self, send: RestoreSend) -> None:
        """After a reconnection: the new session has none of the old one's subscriptions."""
        with self._lock:
            uris = list(self._callbacks)
        for uri in uris:
            try:
                send("resources/subscribe", {"uri": uri})
            except McpError as exc:
                logger.warning("after reconnecting, resources/subscribe failed: %s", exc)
