"""``client.listen()``: one call for change notifications in both protocol eras.

2026-07-28 has ``subscriptions/listen``: a long-lived request whose notifications carry its id
in ``_meta`` (stdio) or arrive on its response stream (HTTP). The handshake era has
``resources/subscribe`` and list_changed notifications on the connection. Users get the same
:class:`~mcp_sync.client.Subscription` either way.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ._session import PendingRequest
from .errors import McpError, ProtocolError, RequestTimeout, TransportError
from .protocol import stateless
from .protocol.jsonrpc import Notification

if TYPE_CHECKING:
    from .client import Client

__all__ = ["StatelessListen", "listen_filters"]

logger = logging.getLogger("mcp_sync")

NotificationCallback = Callable[[Notification], None]
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"


def listen_filters(
    tools: bool, prompts: bool, resources: bool, uris: Iterable[str]
) -> dict[str, Any]:
    """The ``notifications`` filter of a ``subscriptions/listen`` request."""
    filters: dict[str, Any] = {}
    if tools:
        filters["toolsListChanged"] = True
    if prompts:
        filters["promptsListChanged"] = True
    if resources:
        filters["resourcesListChanged"] = True
    uri_list = list(uris)
    if uri_list:
        filters["resourceSubscriptions"] = uri_list
    return filters


class StatelessListen:
    """One ``subscriptions/listen`` request, re-issued when its stream drops."""

    def __init__(self, client: Client, filters: dict[str, Any], callback: NotificationCallback):
        self._client = client
        self._filters = filters
        self._callback = callback
        self._pending: PendingRequest | None = None
        self._acknowledged = threading.Event()
        self._cancelled = False
        self.honoured: dict[str, Any] = {}

    def start(self, timeout: float) -> None:
        """Send the request and wait for the server's acknowledgement."""
        self._acknowledged.clear()
        session = self._client._connected_session()
        self._client._active_listens.add(self)
        params = stateless.with_meta(
            {"notifications": self._filters}, self._client._request_meta("subscriptions/listen")
        )
        pending = session.begin("subscriptions/listen", params)
        self._pending = pending
        self._client._listens[pending.id] = self
        pending.future.add_done_callback(lambda _f: self._ended(pending))
        if not self._acknowledged.wait(timeout) and not pending.future.done():
            self.cancel()
            raise RequestTimeout("subscriptions/listen", timeout)
        if pending.future.done() and not self._acknowledged.is_set():
            error = pending.future.exception()
            raise (
                error
                if error is not None
                else ProtocolError("subscriptions/listen ended before it was acknowledged")
            )

    def deliver(self, notification: Notification) -> None:
        """Route one notification of this subscription (reader thread for the ack)."""
        if notification.method == ACKNOWLEDGED:
            self.honoured = dict((notification.params or {}).get("notifications") or {})
            self._acknowledged.set()

    def notify_user(self, notification: Notification) -> None:
        """Hand a notification to the user's callback (dispatcher thread)."""
        if notification.method != ACKNOWLEDGED and not self._cancelled:
            self._callback(notification)

    def _ended(self, pending: PendingRequest) -> None:
        self._client._listens.pop(pending.id, None)
        if self._cancelled or self._client.state != "connected":
            return
        error = pending.future.exception()
        if not isinstance(error, TransportError):
            return  # cancelled by us, refused, or ended by the server with a result
        logger.debug("subscriptions/listen dropped (%s); listening again", error)
        dispatcher = self._client._dispatcher
        if dispatcher is not None:
            dispatcher.submit(self._restart)

    def restart(self) -> None:
        """Listen again (after the client reconnected): the server forgot the old request."""
        if not self._cancelled:
            self._restart()

    def _restart(self) -> None:
        try:
            self.start(self._client.request_timeout)
        except McpError as exc:
            logger.warning("could not listen again after a drop: %s", exc)

    def cancel(self) -> None:
        """End the subscription: ``notifications/cancelled`` on stdio, stream closed on HTTP."""
        self._cancelled = True
        self._client._active_listens.discard(self)
        pending, self._pending = self._pending, None
        session = self._client._session
        if pending is not None and session is not None and not session.closed:
            session.cancel(pending, "unsubscribed")
