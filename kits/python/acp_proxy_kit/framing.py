"""Line framing of the conductor's stdio channel: split bytes into lines, write whole lines.
Pure functions over bytes and file descriptors; knows nothing of JSON-RPC or ACP."""

from __future__ import annotations

import os
from typing import Callable

# A line longer than this is dropped (and reported), as the conductor bounds its own lines.
MAX_LINE = 64 * 1024 * 1024


class LineSplitter:
    """Collects chunks and hands back complete lines (without the newline), in order."""

    def __init__(self, max_line: int = MAX_LINE) -> None:
        self._pending = bytearray()
        self._max_line = max_line
        self._discarding = False
        self.dropped = 0

    def feed(self, chunk: bytes) -> list[bytes]:
        if not self._pending and not self._discarding and chunk.endswith(b"\n") and len(chunk) <= self._max_line:
            # The usual chunk: whole lines and nothing carried over, so no line can be too long.
            return [line.rstrip(b"\r") for line in chunk.split(b"\n") if line and not line.isspace()]
        lines: list[bytes] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                break
            piece = chunk[start:end]
            if self._discarding:
                self._discarding = False
            elif len(self._pending) + len(piece) > self._max_line:
                self._pending.clear()
                self.dropped += 1
            else:
                self._pending += piece
                line = bytes(self._pending).rstrip(b"\r")
                self._pending.clear()
                if line.strip():
                    lines.append(line)
            start = end + 1
        rest = chunk[start:]
        if not self._discarding:
            if len(self._pending) + len(rest) > self._max_line:
                self._pending.clear()
                self._discarding = True
                self.dropped += 1
            else:
                self._pending += rest
        return lines

    def finish(self) -> list[bytes]:
        """The last line, when the input ended without a newline."""
        line = bytes(self._pending).rstrip(b"\r")
        self._pending.clear()
        return [line] if line.strip() and not self._discarding else []


def write_all(fd: int, data: bytes, write: Callable[[int, memoryview], int] = os.write) -> None:
    """Writes every byte of `data`. A single `write` may take only part of it (under WASI a
    write to stdout takes at most 65,536 bytes and says so), so this loops until done."""
    if not data:
        return
    written = write(fd, data)
    if written == len(data):
        return
    view = memoryview(data)[written:]
    while view:
        written = write(fd, view)
        view = view[written:]
