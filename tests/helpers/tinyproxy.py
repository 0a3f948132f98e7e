"""A real authenticating HTTP proxy for the tests: Debian's ``tinyproxy`` (``make services``
installs it), run in the foreground on a free 127.0.0.1 port with its own config and log in a
test's folder, requiring ``BasicAuth``.

    with Tinyproxy(tmp_path, "alice", "s3cret") as proxy:
        proxy.url()                 # http://alice:s3cret@127.0.0.1:PORT
        proxy.requests()            # ["CONNECT localhost:8443 HTTP/1.1", "POST http://...", ...]

tinyproxy answers wrong credentials with ``401`` and ``WWW-Authenticate`` (RFC 9110 says
``407`` and ``Proxy-Authenticate``); a ``CONNECT`` refused either way fails as a tunnel error.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import quote

from tests.helpers.support import free_port, wait_listening

__all__ = ["Tinyproxy"]


class Tinyproxy:
    def __init__(self, folder: Path, user: str, password: str) -> None:
        self.user, self.password = user, password
        self.port = free_port()
        self.log = folder / "tinyproxy.log"
        self.config = folder / "tinyproxy.conf"
        self.config.write_text(
            f"Port {self.port}\n"
            "Listen 127.0.0.1\n"
            "Timeout 60\n"
            f'LogFile "{self.log}"\n'
            "LogLevel Connect\n"
            "MaxClients 64\n"
            "Allow 127.0.0.1\n"
            f"BasicAuth {user} {password}\n"
            "DisableViaHeader Yes\n",
            encoding="utf-8",
        )
        self.process: subprocess.Popen[bytes] | None = None

    def url(self, user: str | None = None, password: str | None = None) -> str:
        """The proxy's URL with credentials (its own by default)."""
        user = self.user if user is None else user
        password = self.password if password is None else password
        return f"http://{quote(user, safe='')}:{quote(password, safe='')}@127.0.0.1:{self.port}"

    def requests(self) -> list[str]:
        """The request lines the proxy was asked (``CONNECT host:port ...``, ``POST http://...``)."""
        if not self.log.exists():
            return []
        text = self.log.read_text(encoding="utf-8", errors="replace")
        return re.findall(r"Request \(file descriptor \d+\): (.+)", text)

    def __enter__(self) -> Tinyproxy:
        binary = shutil.which("tinyproxy") or "/usr/bin/tinyproxy"
        self.process = subprocess.Popen(
            [binary, "-d", "-c", str(self.config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        wait_listening(self.process, self.port, timeout=20)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
