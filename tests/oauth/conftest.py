import pytest

from tests.helpers.oauth_stub import Stub


@pytest.fixture
def stub():
    """A scripted authorization server (tests/helpers/oauth_stub.py), closed after the test."""
    server = Stub()
    yield server
    server.close()
