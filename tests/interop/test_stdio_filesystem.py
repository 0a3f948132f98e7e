"""@modelcontextprotocol/server-filesystem, driven only by the client's roots."""

from __future__ import annotations

from tests.helpers.support import wait_until


def test_roots_decide_what_the_server_may_touch(filesystem_cmd, tmp_path, mcp_client):
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    (first / "a.txt").write_text("from the first root")
    (second / "b.txt").write_text("from the second root")
    # the project's own pytest plugin: connected now, closed when the test ends
    client = mcp_client(filesystem_cmd, roots=[first], request_timeout=20)

    def allowed() -> str:
        return client.call_tool("list_allowed_directories").text

    wait_until(lambda: str(first.resolve()) in allowed(), timeout=20)
    text = client.call_tool("read_text_file", {"path": str(first / "a.txt")})
    assert "from the first root" in text.text
    denied = client.call_tool("read_text_file", {"path": str(second / "b.txt")})
    assert denied.is_error

    client.set_roots([second])
    wait_until(lambda: str(second.resolve()) in allowed(), timeout=20)
    assert (
        "from the second root"
        in client.call_tool("read_text_file", {"path": str(second / "b.txt")}).text
    )
