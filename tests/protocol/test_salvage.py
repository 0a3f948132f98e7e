"""Reading which request an unusable answer was for from the ends of its text
(mcp_sync.protocol.salvage): pure, no process."""

from __future__ import annotations

import pytest

from mcp_sync.protocol.salvage import answered_id, head_says

BIG = b"QUJD" * 200  # a value that runs past the head


@pytest.mark.parametrize(
    ("head", "tail", "expected"),
    [
        (b'{"jsonrpc":"2.0","id":7,"result":{"content":[{"text":"' + BIG, None, 7),
        (b'  {"jsonrpc": "2.0", "id": "a-1", "error": {"code": -1', None, "a-1"),
        (b'{"result":{"content":[{"data":"' + BIG, b'"}]},"jsonrpc":"2.0","id":7}\r', 7),
        (b'{"result":{"content":[{"data":"' + BIG, b'"}]},"jsonrpc":"2.0","id":"x"}', "x"),
        # no id where one can be read
        (b'{"result":{"content":[{"data":"' + BIG, b'"}]},"id":7,"jsonrpc":"2.0"}', None),
        (b'{"result":{"content":[{"data":"' + BIG, None, None),
        # a server's request is not an answer to ours, whatever its id
        (b'{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{' + BIG, None, None),
        (b'{"method":"x","params":{"data":"' + BIG, b'"},"jsonrpc":"2.0","id":7}', None),
        # ids that are no ids, and texts that are no objects
        (b'{"jsonrpc":"2.0","id":true,"result":1}', None, None),
        (b'{"jsonrpc":"2.0","id":7.5,"result":1}', None, None),
        (b"[1,2,3]", None, None),
        (b"not json at all", None, None),
        (b"", b"", None),
    ],
)
def test_the_id_of_an_answer_is_read_from_either_end(
    head: bytes, tail: bytes | None, expected: object
) -> None:
    assert answered_id(head, tail) == expected


def test_a_head_says_what_kind_of_message_it_starts() -> None:
    assert head_says(b'{"jsonrpc":"2.0","id":3,"result":{"x":"' + BIG) == ("response", 3)
    assert head_says(b'{"jsonrpc":"2.0","method":"notifications/message","params":{') == (
        "other",
        None,
    )
    assert head_says(b'{"jsonrpc":"2.0","id":3,"params":{"x":"' + BIG) == ("unknown", None)
    assert head_says(b'{"x":' + b"[" * 600) == ("unknown", None)  # too deep for the head
