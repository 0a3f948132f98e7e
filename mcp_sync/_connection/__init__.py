"""The Connection layer: one connection's life over a session.

- ``options``: a client's options, declared once, and the frozen value a connection runs by.
- ``connection``: connect, negotiate, close, state; the request path
  (request -> recovery -> era -> session).
- ``negotiation``: agreeing on a protocol version, and so on an era.
- ``recovery``: which failures mean the connection is lost, and reconnecting once at a time.
- ``lifecycle``: what must work without the connection (finaliser, fork hook, shutdown steps).
- ``stateless``: what only the 2026-07-28 era does; ``cache``: its ttl cache of results.
- ``handlers``: the user's callables as server-request handlers.
- ``subscriptions``: resource subscriptions and ``listen``, in either era.
- ``hooks``: process-wide hooks on the request path, set by optional integrations.
- ``breaker``: circuit breakers for a ``ClientGroup``'s connections.
"""
