"""A remote ``mcp.json`` entry's TLS and proxy keys: ``verify``, ``clientCert``,
``clientKey`` and ``proxy`` (our own keys: none of the config formats we read has any).

A relative path is in the workspace folder (the config file's project), as ``envFile``'s is.
``proxy`` may hold a password (``http://user:${PROXY_PASSWORD}@proxy:3128``): it is redacted
from errors and logs like any credential the transport holds.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from ..errors import ConfigError
from ..redaction import Secret
from ..transports._http.options import HttpOptions

__all__ = ["http_options"]


def http_options(
    entry: Mapping[str, Any],
    text: Callable[[str], str | None],
    workspace: str | None,
    fail: Callable[[str], ConfigError],
) -> HttpOptions:
    """The :class:`HttpOptions` of an entry (``text`` reads a key with variables expanded)."""

    def path(value: str) -> str:
        return str(Path(workspace or os.getcwd(), os.path.expanduser(value)))

    options: HttpOptions = {}
    verify = entry.get("verify")
    if isinstance(verify, bool):
        options["verify"] = verify
    elif verify is not None:
        given = text("verify")
        assert given is not None
        if not given:
            raise fail('"verify" must be true, false, "system" or the path of a CA bundle')
        options["verify"] = given if given == "system" else path(given)
    cert, key = text("clientCert"), text("clientKey")
    if key is not None and cert is None:
        raise fail('"clientKey" needs "clientCert" (the certificate it belongs to)')
    if cert is not None:
        options["cert"] = (path(cert), path(key)) if key is not None else path(cert)
    proxy = text("proxy")
    if proxy is not None:
        if not proxy.startswith(("http://", "https://")):
            raise fail('"proxy" must be an http:// or https:// URL')
        password = urlsplit(proxy).password
        # (its repr hides it, as a secret header's: a config entry is printed and logged)
        options["proxy"] = Secret(proxy, [unquote(password)]) if password else proxy
    return options
