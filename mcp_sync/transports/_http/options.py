"""The wire-level settings of an HTTP transport, as a value (no ``requests`` import: config
entries carry them). :mod:`.tls` applies TLS and the proxy, :mod:`.user_agent` the
``User-Agent``."""

from __future__ import annotations

from typing import TypedDict

__all__ = ["ClientCert", "HttpOptions", "Verify"]

Verify = bool | str
"""``True`` (certifi's bundle, or ``REQUESTS_CA_BUNDLE``), ``False`` (no check: tests only),
``"system"`` (the operating system's store), or the path of a CA bundle file or directory."""
ClientCert = str | tuple[str, str]
"""A client certificate for mTLS: one PEM file holding the certificate and its key, or
``(certificate file, key file)``. The key must not be encrypted (``requests`` cannot ask for
its passphrase)."""


class HttpOptions(TypedDict, total=False):
    """The settings of an HTTP transport that apply to every request it makes (its wire-level
    settings): TLS and proxy, each one given replacing the environment's (``REQUESTS_CA_BUNDLE``,
    ``HTTPS_PROXY``...), and the application's name in ``User-Agent``. ``connect()``, the
    transports, ``tls_session()`` and the pytest fixtures take them from here."""

    verify: Verify
    cert: ClientCert
    #: ``http://user:password@proxy:3128``: every request goes through it (``NO_PROXY`` aside).
    proxy: str
    #: The application's product token, ``"my-app/1.2"``, sent after mcp-sync's own in every
    #: request's ``User-Agent`` (``mcp-sync/0.1.0 python-requests/2.32.3 my-app/1.2``), unless
    #: ``headers=`` names an agent of its own.
    user_agent_suffix: str
