"""One JSON-RPC message to and from one line of JSON text. Knows nothing of JSON-RPC's meaning.
Uses the json module's C scanner and encoder, each made once: every message of a proxy passes
here twice, and inside a WASI component the interpreter runs several times slower than natively,
so the Python-level set-up `json.loads` and `json.dumps` repeat on every call is most of a small
message's cost (a regular-expression match per decode, a JSONEncoder built per encode)."""

from __future__ import annotations

import json
import json.decoder
import json.encoder
import json.scanner
from typing import Any, Callable


def _unencodable(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _make_scan() -> Callable[[str, int], tuple[Any, int]] | None:
    make = getattr(json.scanner, "c_make_scanner", None)
    return make(json.decoder.JSONDecoder()) if make is not None else None


def _make_encode() -> Callable[[Any, int], Any] | None:
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None or json.encoder.c_encode_basestring is None:
        return None
    # (markers, default, encoder, indent, key separator, item separator, sort_keys, skipkeys,
    # allow_nan): what json.dumps(ensure_ascii=False, separators=(",", ":")) passes it. The
    # markers (containers being encoded, to refuse a cycle) are empty again after each call.
    return make({}, _unencodable, json.encoder.c_encode_basestring, None, ":", ",", False, False, True)


_SCAN = _make_scan()
_ENCODE = _make_encode()


def decode(line: bytes) -> Any:
    """The value of one line of JSON text; ValueError (json.JSONDecodeError) when it is not."""
    if _SCAN is not None:
        try:
            text = line.decode("utf-8")
            value, end = _SCAN(text, 0)
            if end == len(text) or text[end:].isspace():
                return value
        except (StopIteration, ValueError, RecursionError):
            pass
    # Anything unusual (leading blanks, trailing data, a BOM, invalid text) takes the standard
    # path, which gives the same value or the standard error message.
    return json.loads(line)


def encode(message: Any) -> bytes:
    """One line: compact JSON, UTF-8 (not escaped to ASCII), ending in a newline."""
    if _ENCODE is not None:
        return "".join(_ENCODE(message, 0)).encode("utf-8") + b"\n"
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
