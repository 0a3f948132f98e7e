"""The device authorization grant (RFC 8628), added in front of fastmcp's authorization
server (ASGI), in the style of oauth_extensions: a scripted-but-RFC-faithful authorization
server. fastmcp's ``InMemoryOAuthProvider`` has no device grant; this middleware adds it and
issues tokens fastmcp's real MCP endpoint accepts (``provider.access_tokens``).

What it does as RFC 8628 says:

- its metadata (RFC 8414) advertises ``device_authorization_endpoint`` and the
  ``urn:ietf:params:oauth:grant-type:device_code`` grant type;
- ``POST /device_authorization`` (a known public client's ``client_id``) answers
  ``device_code``, ``user_code``, ``verification_uri``, ``verification_uri_complete``,
  ``expires_in`` and ``interval`` (section 3.2);
- ``POST /token`` with the device code grant answers ``authorization_pending`` until the user
  decides, ``slow_down`` (and adds 5 s to the code's interval) for a poll sooner than the
  interval, ``access_denied`` once denied, ``expired_token`` past the code's lifetime, and the
  tokens once approved (the code is then spent: ``invalid_grant``) (section 3.5);
- ``POST /device`` (``user_code``, ``decision`` = ``approve`` / ``deny``) is the verification
  page's form: what the user does on their phone.

What is scripted (``DeviceScript``): the lifetime and interval it issues (absurd ones too:
``1e12``, ``Infinity``), ``slow_down`` answers
forced on the first polls, a lifetime shorter than the one it advertises (a server whose clock
runs ahead), a user code or verification URI of the test's choosing (a hostile server's
escape sequences), an endpoint elsewhere, and not advertising the endpoint at all. Every poll is logged with the
server's own clock (``DeviceScript.polls``), so tests read the client's pace from here.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode

import requests
from mcp.server.auth.provider import AccessToken
from starlette.responses import JSONResponse, Response

from tests.helpers.oauth_extensions import _body, _error, _replay

DEVICE_CODE = "urn:ietf:params:oauth:grant-type:device_code"


@dataclass
class Poll:
    """One token request the server answered: when (its ``time.monotonic()``) and how."""

    at: float
    answer: str


@dataclass
class Pending:
    device_code: str
    user_code: str
    client_id: str
    scope: str
    expires_at: float
    interval: float
    last_poll: float | None = None
    decision: str | None = None  # "approve" / "deny"
    spent: bool = False


@dataclass
class DeviceScript:
    """How the device grant behaves (see the module docstring), and what it saw."""

    clients: tuple[str, ...] = ("device-client",)
    expires_in: float = 600
    #: The lifetime the server applies, when it differs from the one it advertises.
    lifetime: float | None = None
    interval: float = 1
    #: This many first polls are answered ``slow_down`` whatever their pace.
    slow_down: int = 0
    advertise: bool = True
    #: The device_authorization_endpoint advertised, when not this server's own.
    endpoint: str | None = None
    user_code: str | None = None
    verification_uri: str | None = None
    #: Whether ``verification_uri_complete`` is sent (optional in RFC 8628).
    complete: bool = True
    #: Called with each user code issued (a docs page's user, who approves it at once).
    on_issue: Callable[[str], None] | None = None
    polls: list[Poll] = field(default_factory=list)
    codes: dict[str, Pending] = field(default_factory=dict)
    issued: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answers(self) -> list[str]:
        with self.lock:
            return [poll.answer for poll in self.polls]


class DeviceGrant:
    """ASGI middleware in front of the fastmcp app (see the module docstring)."""

    def __init__(self, app: Any, server: Any, script: DeviceScript) -> None:
        self.app, self.server, self.script = app, server, script

    @property
    def base(self) -> str:
        return str(self.server.base_url).rstrip("/")

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path, method = scope["path"], scope["method"]
        if method == "GET" and path == "/.well-known/oauth-authorization-server":
            return await self.metadata(scope, receive, send)
        if method == "POST" and path in ("/device_authorization", "/device", "/token"):
            body = await _body(receive)
            form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
            if path == "/device_authorization":
                return await self.authorize(form)(scope, receive, send)
            if path == "/device":
                return await self.decide(form)(scope, receive, send)
            if form.get("grant_type") == DEVICE_CODE:
                return await self.poll(form)(scope, receive, send)
            return await self.app(scope, _replay(body), send)
        return await self.app(scope, receive, send)

    async def metadata(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        answer: dict[str, Any] = {}

        async def capture(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.body":
                answer["body"] = answer.get("body", b"") + message.get("body", b"")

        await self.app(scope, receive, capture)
        document = json.loads(answer["body"])
        if self.script.advertise:
            document["device_authorization_endpoint"] = (
                self.script.endpoint or self.base + "/device_authorization"
            )
            document["grant_types_supported"] = [
                *document.get("grant_types_supported", []),
                DEVICE_CODE,
            ]
        await JSONResponse(document)(scope, receive, send)

    def authorize(self, form: dict[str, str]) -> JSONResponse:
        script = self.script
        if not script.advertise:
            return _error(404, "not_found", "no device grant here")
        client_id = form.get("client_id", "")
        if client_id not in script.clients:
            return _error(401, "invalid_client", "unknown client")
        user_code = script.user_code or "-".join(
            "".join(secrets.choice("BCDFGHJKLMNPQRSTVWXZ") for _ in range(4)) for _ in range(2)
        )
        device_code = secrets.token_urlsafe(32)
        now = time.monotonic()
        lifetime = script.lifetime if script.lifetime is not None else script.expires_in
        with script.lock:
            script.codes[device_code] = Pending(
                device_code,
                user_code,
                client_id,
                form.get("scope", ""),
                now + lifetime,
                script.interval,
            )
        if script.on_issue is not None:
            script.on_issue(user_code)
        uri = script.verification_uri or self.base + "/device"
        body = {
            "device_code": device_code,
            "user_code": user_code,
            "verification_uri": uri,
            "expires_in": script.expires_in,
            "interval": script.interval,
        }
        if script.complete:
            body["verification_uri_complete"] = uri + "?" + urlencode({"user_code": user_code})
        # (json.dumps, not JSONResponse: a script's infinite lifetime is sent as Infinity)
        return Response(
            json.dumps(body), media_type="application/json", headers={"Cache-Control": "no-store"}
        )

    def decide(self, form: dict[str, str]) -> JSONResponse:
        with self.script.lock:
            for pending in self.script.codes.values():
                if pending.user_code == form.get("user_code") and pending.decision is None:
                    pending.decision = "approve" if form.get("decision") == "approve" else "deny"
                    return JSONResponse({"ok": True})
        return _error(400, "invalid_request", "no such user code waiting")

    def poll(self, form: dict[str, str]) -> JSONResponse:
        script = self.script
        now = time.monotonic()
        with script.lock:
            pending = script.codes.get(form.get("device_code", ""))
            answer = self.answer(pending, form, now)
            script.polls.append(Poll(now, answer))
            if pending is not None:
                pending.last_poll = now
        if answer != "ok":
            return _error(400, answer, f"device code: {answer}")
        assert pending is not None
        token = secrets.token_hex(32)
        scopes = pending.scope.split()
        self.server.provider.access_tokens[token] = AccessToken(
            token=token,
            client_id=pending.client_id,
            scopes=scopes,
            expires_at=int(time.time()) + 3600,
        )
        script.issued.append(token)
        return JSONResponse(
            {"access_token": token, "token_type": "Bearer", "expires_in": 3600},
            headers={"Cache-Control": "no-store"},
        )

    def answer(self, pending: Pending | None, form: dict[str, str], now: float) -> str:
        """The RFC 8628 section 3.5 answer to one poll (under the script's lock)."""
        if pending is None or pending.spent:
            return "invalid_grant"
        if form.get("client_id") != pending.client_id:
            return "invalid_client"
        if now >= pending.expires_at:
            return "expired_token"
        forced = sum(1 for poll in self.script.polls if poll.answer == "slow_down")
        too_soon = (
            pending.last_poll is not None and now - pending.last_poll < pending.interval - 0.05
        )
        if forced < self.script.slow_down or too_soon:
            pending.interval += 5
            return "slow_down"
        if pending.decision == "deny":
            return "access_denied"
        if pending.decision == "approve":
            pending.spent = True
            return "ok"
        return "authorization_pending"


def approve(base_url: str, user_code: str, decision: str = "approve") -> None:
    """What the user does on the verification page."""
    response = requests.post(
        base_url.rstrip("/") + "/device",
        data={"user_code": user_code, "decision": decision},
        timeout=10,
    )
    response.raise_for_status()
