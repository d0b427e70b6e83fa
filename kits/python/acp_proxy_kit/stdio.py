"""The proxy's main loop on stdin/stdout: read chunks, hand whole lines to the router, write
everything it produced before reading again. The same code runs under CPython and as a WASI
component (componentize-py), where reads and writes go through wasi:cli's streams."""

from __future__ import annotations

import os

from . import log
from .framing import LineSplitter, write_all
from .proxy import Proxy
from .router import Router

READ_CHUNK = 64 * 1024


def serve(proxy: Proxy, input_fd: int = 0, output_fd: int = 1) -> Router:
    """Runs `proxy` until `input_fd` ends; returns the router so tests can look inside."""
    router = Router(proxy)
    splitter = LineSplitter()
    while True:
        chunk = os.read(input_fd, READ_CHUNK)
        if not chunk:
            break
        for line in splitter.feed(chunk):
            router.on_line(line)
        if splitter.dropped:
            log.error(f"{splitter.dropped} line(s) over the size limit dropped")
            splitter.dropped = 0
        write_all(output_fd, router.take_output())
    for line in splitter.finish():
        router.on_line(line)
    write_all(output_fd, router.take_output())
    if router.peers.open:
        log.warn(f"input ended with {len(router.peers.open)} request(s) never answered")
    return router


def run(proxy: Proxy) -> None:
    """`serve` on stdin/stdout, with logs named after the proxy."""
    log.init(proxy.name)
    serve(proxy)
