"""Rules that every layer follows, each with one home.

- ``deadline``: the deadline of one user call, passed down to every wait.
- ``numbers``: the check of a number given as an option.
- ``values``: the check of a string, an environment or a callback given as an option.
- ``warn``: warnings that point at the user's line (the one home of ``stacklevel``), and
  deprecations (``deprecated``, ``REMOVED_IN``).
- ``causes``: walking an exception's causes.
"""
