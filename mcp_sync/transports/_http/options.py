"""The TLS and proxy settings of an HTTP transport, as a value (no ``requests`` import: config
entries carry them). :mod:`.tls` applies them."""

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
    """TLS and proxy settings of an HTTP transport; each one given replaces the environment's
    (``REQUESTS_CA_BUNDLE``, ``HTTPS_PROXY``...)."""

    verify: Verify
    cert: ClientCert
    #: ``http://user:password@proxy:3128``: every request goes through it (``NO_PROXY`` aside).
    proxy: str
