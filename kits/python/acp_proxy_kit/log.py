"""Logging to stderr, the only place a proxy may write anything but protocol.
Knows the proxy's name and the level; nothing about the protocol."""

from __future__ import annotations

import os
import sys

LEVELS = {"error": 0, "warn": 1, "info": 2, "debug": 3, "trace": 4}

_state = {"name": "proxy", "level": LEVELS["info"]}


def init(name: str, level: str | None = None) -> None:
    """Names the proxy in every log line; `level` (or `ACP_PROXY_LOG`, when the sandbox grants
    that variable) picks how much is written, `info` by default."""
    _state["name"] = name
    chosen = level or os.environ.get("ACP_PROXY_LOG") or "info"
    _state["level"] = LEVELS.get(chosen.lower(), LEVELS["info"])


def enabled(level: str) -> bool:
    return LEVELS[level] <= _state["level"]


def _write(level: str, message: str) -> None:
    if enabled(level):
        sys.stderr.write(f"{level.upper():5} {_state['name']}: {message}\n")
        sys.stderr.flush()


def error(message: str) -> None:
    _write("error", message)


def warn(message: str) -> None:
    _write("warn", message)


def info(message: str) -> None:
    _write("info", message)


def debug(message: str) -> None:
    _write("debug", message)
