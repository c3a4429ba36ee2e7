"""Reading UTF-8 text files with errors that name the file and the place of a bad byte.

A UTF-8 byte-order mark at the start of a file is accepted and dropped (editors on Windows write
one); any other byte sequence that is not UTF-8 raises :class:`~inferqa_utils.core.errors.DataFormatError`
naming the file, the line and the byte offset.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from .errors import DataFormatError

BOM = b"\xef\xbb\xbf"


def decode_utf8(path: str | Path, data: bytes, offset: int = 0, lineno: int | None = None) -> str:
    """``data`` decoded as UTF-8. ``offset`` is the position of ``data`` in the file and ``lineno``
    its line (computed from ``data`` when None) — both only for the error message."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = lineno if lineno is not None else data.count(b"\n", 0, e.start) + 1
        raise DataFormatError(path, f"not UTF-8 text: byte 0x{data[e.start]:02x} at byte offset "
                                    f"{offset + e.start} ({e.reason}); save the file as UTF-8",
                              record=f"line {line}") from None


def read_text(path: str | Path) -> str:
    """The whole file as text (a leading BOM dropped)."""
    data = Path(path).read_bytes()
    skip = len(BOM) if data.startswith(BOM) else 0
    return decode_utf8(path, data[skip:], offset=skip)


def iter_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` per line of a file, streamed; a BOM before line 1 is dropped."""
    offset = 0
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            start = len(BOM) if lineno == 1 and raw.startswith(BOM) else 0
            yield lineno, decode_utf8(path, raw[start:], offset + start, lineno)
            offset += len(raw)
