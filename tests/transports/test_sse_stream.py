"""SseStream: the SSE framing around sseclient-py, fed chunk by chunk like ``read1``."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pytest

from mcp_sync.transports._sse import EventTooLarge, SseEvent, SseStream


def feed(chunks: Iterable[bytes]) -> Callable[[], bytes]:
    items = list(chunks)

    def read() -> bytes:
        return items.pop(0) if items else b""

    return read


def events(chunks: Iterable[bytes], limit: int = 1 << 20, **kw: object) -> list:
    return list(SseStream(feed(chunks), limit, **kw))  # type: ignore[arg-type]


def split_every(data: bytes, n: int) -> list[bytes]:
    return [data[i : i + n] for i in range(0, len(data), n)]


BODY = (
    b": a comment\r\n"
    b"event: message\r\n"
    b"id: 7\r\n"
    b'data: {"a":\r\n'
    b"data: 1}\r\n"
    b"\r\n"
    b"data: second\r\r"
    b"data:third\n\n"
)


@pytest.mark.parametrize("size", [1, 2, 3, 5, 1000])
def test_crlf_cr_lf_comments_multiline_any_chunking(size: int) -> None:
    got = events(split_every(BODY, size))
    assert got == [
        SseEvent("message", '{"a":\n1}', "7"),
        SseEvent("message", "second", "7"),
        SseEvent("message", "third", "7"),
    ]


def test_crlf_split_between_reads_is_one_line_ending() -> None:
    got = events([b"data: a\r", b"\n\r", b"\ndata: b\r\n\r\n"])
    assert [e.data for e in got] == ["a", "b"]


def test_event_dispatches_as_soon_as_its_blank_line_arrives() -> None:
    chunks = [b"data: one\n\n", b"data: two\n"]
    stream = SseStream(lambda: chunks.pop(0) if chunks else b"", 1000)
    iterator = iter(stream)
    assert next(iterator).data == "one"  # type: ignore[union-attr]
    assert chunks == [b"data: two\n"]  # the second chunk was not read to deliver the first


def test_id_only_and_retry_only_events_are_tracked() -> None:
    stream = SseStream(feed([b"id: 41\n\n", b"retry: 2500\n\n", b"retry: 1x\n\n"]), 1000)
    assert list(stream) == []
    assert stream.last_event_id == "41"
    assert stream.retry == 2.5
    assert stream.events_seen == 3


def test_priming_event_with_empty_data_arrives() -> None:
    stream = SseStream(feed([b"id: p1\nretry: 100\ndata:\n\n"]), 1000)
    assert list(stream) == [SseEvent("message", "", "p1")]
    assert stream.retry == 0.1


def test_last_event_id_persists_and_starts_from_given() -> None:
    got = events([b"data: a\n\n", b"id: 9\ndata: b\n\n", b"data: c\n\n"], last_event_id="3")
    assert [e.id for e in got] == ["3", "9", "9"]


def test_id_with_nul_is_ignored() -> None:
    stream = SseStream(feed([b"id: 1\x002\ndata: x\n\n"]), 1000)
    assert next(iter(stream)).id is None  # type: ignore[union-attr]


def test_event_type_and_unfinished_event_at_eof() -> None:
    got = events([b"event: endpoint\ndata: /messages?s=1\n\ndata: cut"])
    assert got == [SseEvent("endpoint", "/messages?s=1", None)]


def test_bom_and_invalid_utf8() -> None:
    got = events([b"\xef\xbb\xbfdata: caf\xc3\xa9 \xff\n\n"])
    assert got[0].data == "café \ufffd"  # type: ignore[union-attr]


def test_oversize_event_is_skipped_without_being_kept() -> None:
    big = b"data: " + b"x" * 5000 + b"\n\n"
    reads: list[int] = []
    chunks = split_every(b"data: small\n\n" + big + b"data: after\n\n", 256)

    def read() -> bytes:
        reads.append(1)
        return chunks.pop(0) if chunks else b""

    stream = SseStream(read, 1000)
    got = []
    for item in stream:
        got.append(item)
        assert len(stream._buf) <= 1000 + 256
    assert got[0] == SseEvent("message", "small", None)
    assert got[1] == EventTooLarge(1000)
    assert got[2] == SseEvent("message", "after", None)


def test_read_errors_propagate() -> None:
    def read() -> bytes:
        raise ConnectionResetError("boom")

    with pytest.raises(ConnectionResetError):
        list(SseStream(read, 100))
