"""A scripted stand-in for the Gemini API on 127.0.0.1, for google-genai's own loop (the
client's ``http_options`` base URL points there): google-genai itself sends each request over
HTTP, parses the function calls, calls the tools and sends their answers back; only the model's
replies are scripted (nothing else can play the Gemini API without a network). No pytest here:
scripts in other virtualenvs use it too."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google import genai
from google.genai import types

__all__ = ["FakeGemini", "function_parts"]


class FakeGemini:
    """A generateContent endpoint answering from a script of turns; it records each request."""

    def __init__(self, *turns):
        self.turns = list(turns)
        self.requests = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append(body)
                turn = fake.turns.pop(0)
                if isinstance(turn, str):
                    parts = [{"text": turn}]
                else:
                    parts = [{"functionCall": {"name": n, "args": a}} for n, a in turn]
                reply = json.dumps(
                    {
                        "candidates": [
                            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}
                        ]
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        host, port = self.server.server_address
        return genai.Client(
            api_key="not-a-key", http_options=types.HttpOptions(base_url=f"http://{host}:{port}")
        )

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(10)


def function_parts(request, key):
    return [p[key] for c in request["contents"] for p in c.get("parts", []) if key in p]
