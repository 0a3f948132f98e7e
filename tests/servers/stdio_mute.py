"""A scripted fake stdio "server" that starts and never says a word: it reads stdin until EOF
and answers nothing, not even ``initialize``.

Scripted fake: a real server cannot be made to hang in its handshake on demand. The recovery
tests (tests/reliability/test_recovery_pressure.py) start it in place of a server that died,
to catch the client in the middle of a recovery handshake; the deadline tests
(tests/reliability/test_one_deadline.py) connect to it, and recover to it.
"""

import sys

for _line in sys.stdin.buffer:
    pass
