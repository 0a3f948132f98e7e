"""The test suite, a package: pytest puts the checkout first on ``sys.path`` (its default
``prepend`` import mode inserts the folder above the topmost ``__init__.py``), from any working
directory, so a test imports what it shares as ``tests.helpers.x`` (libraries) or
``tests.servers.x`` (a server it also starts), and two folders may hold modules of one name."""
