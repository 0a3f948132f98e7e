"""A scriptable authorization server + protected MCP endpoint on 127.0.0.1 for refusal tests.

Each test sets the documents and behaviours it needs; every request is recorded.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

Handler = Callable[[dict[str, Any]], tuple[int, dict[str, str], Any]]


class Stub:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.routes: dict[tuple[str, str], Handler] = {}
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.url = f"{self.base}/mcp"
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(5)

    def route(self, method: str, path: str, handler: Handler | tuple[int, Any]) -> None:
        if isinstance(handler, tuple):
            status, body = handler
            self.routes[(method, path)] = lambda request: (status, {}, body)
        else:
            self.routes[(method, path)] = handler

    def hits(self, path: str) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["path"] == path]

    def standard(
        self,
        *,
        metadata: dict[str, Any] | None = None,
        tokens: list[dict] | None = None,
        iss: str | None = "issuer",
    ) -> None:
        """PRM + AS metadata + DCR + auto-approving /authorize + /token handing out ``tokens``."""
        self.route(
            "GET",
            "/.well-known/oauth-protected-resource/mcp",
            (200, {"resource": self.url, "authorization_servers": [self.base]}),
        )
        document = {
            "issuer": self.base,
            "authorization_endpoint": f"{self.base}/authorize",
            "token_endpoint": f"{self.base}/token",
            "registration_endpoint": f"{self.base}/register",
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": True,
        }
        document.update(metadata or {})
        document = {k: v for k, v in document.items() if v is not None}
        self.route("GET", "/.well-known/oauth-authorization-server", (200, document))
        self.route("POST", "/register", (201, {"client_id": "stub-client"}))

        def authorize(request: dict[str, Any]) -> tuple[int, dict[str, str], Any]:
            query = request["query"]
            params = {"code": "the-code", "state": query.get("state", "")}
            if iss == "issuer":
                params["iss"] = self.base
            elif iss is not None:
                params["iss"] = iss
            return 302, {"Location": f"{query['redirect_uri']}?{urlencode(params)}"}, None

        self.route("GET", "/authorize", authorize)
        queue = list(
            tokens
            or [
                {
                    "access_token": "at-1",
                    "token_type": "Bearer",
                    "expires_in": 3600,
                    "refresh_token": "rt-1",
                }
            ]
        )

        def token(request: dict[str, Any]) -> tuple[int, dict[str, str], Any]:
            answer = queue.pop(0) if len(queue) > 1 else queue[0]
            if callable(answer):
                return answer(request)
            return (answer.pop("_status", 200) if isinstance(answer, dict) else 200), {}, answer

        self.route("POST", "/token", token)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class H(BaseHTTPRequestHandler):
            def _serve(self, method: str) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                request = {
                    "method": method,
                    "path": parts.path,
                    "query": {k: v[0] for k, v in parse_qs(parts.query).items()},
                    "headers": dict(self.headers),
                    "raw": raw,
                    "form": {k: v[0] for k, v in parse_qs(raw.decode()).items()}
                    if self.headers.get("Content-Type", "").startswith("application/x-www-form")
                    else {},
                }
                stub.requests.append(request)
                handler = stub.routes.get((method, parts.path))
                if handler is None:
                    status, headers, body = 404, {}, {"error": "not_found"}
                else:
                    status, headers, body = handler(request)
                data = json.dumps(body).encode() if body is not None else b""
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._serve("GET")

            def do_POST(self) -> None:
                self._serve("POST")

            def log_message(self, *args: object) -> None:
                pass

        return H
