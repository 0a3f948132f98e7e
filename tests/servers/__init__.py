"""The servers and peers tests start as processes, by path (``python tests/servers/x.py``):
each runs from any working directory and imports only installed packages (or a server beside
it). A test may import one it starts, for what that server sends. Libraries are in
``tests/helpers/``."""
