import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from oauth_stub import Stub


@pytest.fixture
def stub():
    """A scripted authorization server (tests/oauth/oauth_stub.py), closed after the test."""
    server = Stub()
    yield server
    server.close()
