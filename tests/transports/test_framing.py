"""The stdio line buffer (mcp_sync.transports._framing), without any process: every chunking of
a stream gives the same lines, CRLF and over-long lines included."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_sync.transports._framing import EDGE_BYTES, LineBuffer, Overlong, OverlongEnd

Item = bytes | Overlong


def feed_all(
    buffer: LineBuffer, chunks: list[bytes], ends: list[OverlongEnd] | None = None
) -> list[Item]:
    """Every item the chunks produce, lines as ``bytes`` (a bytearray line is the caller's);
    the end markers of over-long lines go to ``ends``."""
    out: list[Item] = []
    for chunk in chunks:
        for item in buffer.feed(chunk):
            if isinstance(item, OverlongEnd):
                if ends is not None:
                    ends.append(item)
            else:
                out.append(item if isinstance(item, Overlong) else bytes(item))
    return out


def expected(stream: bytes, limit: int) -> list[bytes | None]:
    """What a line buffer must produce for a whole stream: each complete line with its
    terminator, or None for one longer than ``limit`` without its "\\n" / "\\r\\n". An
    unfinished last line is reported as soon as it cannot fit even if a "\\r\\n" ends it."""
    *complete, unfinished = stream.split(b"\n")
    out: list[bytes | None] = []
    for line in complete:
        body = line[:-1] if line.endswith(b"\r") else line
        out.append(None if len(body) > limit else line + b"\n")
    if len(unfinished) > limit + 1:
        out.append(None)
    return out


def split_at(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({0, len(data), *(cut % (len(data) + 1) for cut in cuts)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


def shape(items: list[Item]) -> list[bytes | None]:
    return [None if isinstance(item, Overlong) else item for item in items]


lines = st.lists(
    st.tuples(
        st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"x")),
        st.sampled_from([b"\n", b"\r\n"]),
    ),
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(lines, st.binary(max_size=30).map(lambda b: b.replace(b"\n", b"")), st.data())
def test_any_chunking_gives_the_same_lines(
    parts: list[tuple[bytes, bytes]], tail: bytes, data: st.DataObject
) -> None:
    stream = b"".join(body + end for body, end in parts) + tail
    limit = data.draw(st.integers(min_value=1, max_value=45))
    cuts = data.draw(st.lists(st.integers(min_value=0, max_value=len(stream)), max_size=20))
    buffer = LineBuffer(limit)
    items = feed_all(buffer, split_at(stream, cuts))
    assert shape(items) == expected(stream, limit)
    # what is left is the unfinished tail, unless that tail is itself already over-long
    assert len(buffer) in (len(tail), 0)
    if len(tail) <= limit:
        assert len(buffer) == len(tail)


def test_a_chunk_that_is_one_line_comes_back_without_a_copy() -> None:
    chunk = b'{"jsonrpc":"2.0","id":1,"result":{}}\n'
    (line,) = LineBuffer(1024).feed(chunk)
    assert line is chunk


def test_an_empty_chunk_gives_nothing() -> None:
    buffer = LineBuffer(10)
    assert buffer.feed(b"") == []
    buffer.feed(b"ab")
    assert buffer.feed(b"") == [] and len(buffer) == 2


def test_several_lines_in_one_chunk_and_blank_lines() -> None:
    buffer = LineBuffer(100)
    assert buffer.feed(b"a\n\nb\r\n\r\nc") == [b"a\n", b"\n", b"b\r\n", b"\r\n"]
    assert len(buffer) == 1
    assert buffer.feed(b"\n") == [b"c\n"]
    assert len(buffer) == 0


def test_crlf_split_across_chunks() -> None:
    buffer = LineBuffer(7)
    assert buffer.feed(b'{"a":1}\r') == []
    assert buffer.feed(b'\n{"b":2}\r') == [b'{"a":1}\r\n']
    assert buffer.feed(b"\n") == [b'{"b":2}\r\n']


def test_a_held_line_is_handed_to_the_caller() -> None:
    buffer = LineBuffer(100)
    buffer.feed(b"hel")
    (line,) = buffer.feed(b"lo\nwor")
    assert isinstance(line, bytearray) and line == b"hello\n"
    line.clear()  # the caller may free it: the buffer no longer uses it
    assert buffer.feed(b"ld\n") == [b"world\n"]


@pytest.mark.parametrize(
    ("line", "fits"),
    [
        (b"x" * 8 + b"\n", True),
        (b"x" * 8 + b"\r\n", True),  # the "\r" of a CRLF line does not count
        (b"x" * 9 + b"\n", False),
        (b"x" * 8 + b"\r\r\n", False),
    ],
)
def test_the_limit_is_on_the_line_without_its_terminator(line: bytes, fits: bool) -> None:
    whole = feed_all(LineBuffer(8), [line])
    bytewise = feed_all(LineBuffer(8), [line[i : i + 1] for i in range(len(line))])
    for items in (whole, bytewise):
        assert len(items) == 1
        assert (items[0] == line) if fits else isinstance(items[0], Overlong)


def test_an_overlong_line_is_reported_once_and_the_next_line_is_read() -> None:
    buffer = LineBuffer(10)
    items = feed_all(buffer, [b"y" * 7, b"y" * 7, b"y" * 7, b"yy\nok\n"])
    assert shape(items) == [None, b"ok\n"]
    assert isinstance(items[0], Overlong) and items[0].size == 14


def test_a_64_mib_line_is_skipped_without_being_buffered() -> None:
    limit = 16 * 1024 * 1024
    chunk = b"z" * 65536
    buffer = LineBuffer(limit)
    markers = 0
    held_most = 0
    for _ in range(64 * 1024 * 1024 // len(chunk)):
        items = buffer.feed(chunk)
        markers += sum(isinstance(item, Overlong) for item in items)
        assert all(isinstance(item, Overlong) for item in items)
        held_most = max(held_most, len(buffer))
    assert markers == 1
    assert held_most <= limit + 1
    assert len(buffer) == 0  # nothing of the line is kept once it is known to be too long
    end, line = buffer.feed(b'zzz\n{"id":1}\n')
    assert isinstance(end, OverlongEnd) and end.size == 64 * 1024 * 1024 + 3
    assert line == b'{"id":1}\n'


def test_an_overlong_line_inside_one_chunk_is_not_copied_out() -> None:
    buffer = LineBuffer(4)
    items = feed_all(buffer, [b"a\n" + b"b" * 100 + b"\nc\n"])
    assert shape(items) == [b"a\n", None, b"c\n"]
    assert isinstance(items[1], Overlong) and items[1].size == 100


@settings(max_examples=200, deadline=None)
@given(
    st.integers(min_value=EDGE_BYTES, max_value=3 * EDGE_BYTES),
    st.sampled_from([b"\n", b"\r\n"]),
    st.lists(st.integers(min_value=0, max_value=2_000), max_size=12),
)
def test_an_overlong_line_keeps_its_first_and_last_bytes_for_any_chunking(
    middle: int, end: bytes, cuts: list[int]
) -> None:
    # What tells which request a too-large answer was for (mcp_sync.protocol.salvage).
    line = b'{"jsonrpc":"2.0","id":7,"result":"' + b"m" * middle + b'","id":8}' + end
    limit = EDGE_BYTES  # (a smaller limit keeps less: what came before the line was too long)
    ends: list[OverlongEnd] = []
    items = feed_all(LineBuffer(limit), [b"ok\n", *split_at(line, cuts), b"next\n"], ends)
    assert shape(items) == [b"ok\n", None, b"next\n"]
    body = line[:-1]  # the "\r" of a CRLF line is kept, as in a line that fits
    assert items[1].head == body[:EDGE_BYTES]  # type: ignore[union-attr]
    (last,) = ends
    assert last.size == len(body)
    assert last.tail == body[-EDGE_BYTES:]


def test_max_line_bytes_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_line_bytes"):
        LineBuffer(0)
