"""The Session layer: JSON-RPC over one transport.

- ``session``: ids, pending requests, deadlines, progress, cancellation, inbound routing.
- ``pending``: one request awaiting its answer.
- ``server_requests``: answering the server's requests, and the writer for what the reader owes.
- ``dispatch``: the dispatcher thread that runs user code in arrival order.
- ``outgoing``: one request on its way down, as one value, and the one function that makes
  what a message tells its transport (``MessageOptions``).
- ``extra_headers``: the headers a block of code adds to its requests (``extra_headers()``).
"""
