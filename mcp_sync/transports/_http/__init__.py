"""HTTP plumbing shared by the Streamable HTTP and legacy HTTP+SSE transports, one job a module.

- :mod:`.exchange`: an HTTP exchange another thread can cut short, and the urllib3 connections
  that report their sockets to it.
- :mod:`.workers`: the worker pool and the in-order lane outgoing messages take.
- :mod:`.client`: the ``requests`` client: settings resolved once, then one layer per
  concern (auth challenges, redirects, the one safe resend after a reset, one exchange).
- :mod:`.errors`: the one place ``requests`` and urllib3 exceptions become typed errors that
  say whether the request provably never left.
- :mod:`.send`: sending one prepared request through the session's adapter without the
  per-request work of ``requests.Session.send`` that the session does not need.
- :mod:`.responses`: reading responses (content types, limited bodies, JSON-RPC
  error bodies).
- :mod:`.headers`: the headers of a Streamable HTTP request, in their order of precedence.
- :mod:`.delivery`: turning answers (JSON bodies, event streams, error statuses) into delivered
  messages and errors.
- :mod:`.streams`: the one SSE stream loop that reconnects, by one :class:`~mcp_sync.Backoff`.
- :mod:`.session_streams`: a handshake-era session's GET streams on that loop: the server-push
  stream and the resumption of a request's broken response stream.
- :mod:`.options` and :mod:`.tls`: whose certificates to trust (certifi's, a bundle, the
  operating system's store), the client certificate, the proxy.
- :mod:`.base`: what both transports are made of.

Nothing here knows MCP beyond what Streamable HTTP puts on the wire (its headers, JSON-RPC
bodies, event streams); not even a method name. What a message needs beyond its bytes (its
era, its extra headers, whether it starts or opens the session, whether it may be sent twice)
comes with it, as :class:`~mcp_sync.transports.base.MessageOptions`.
"""
