"""kit-probe (Python): the Python kit's template with two additions, for the end-to-end tests
(tests/tests/wasm_kits.rs): every agent message chunk is tagged, and editor requests
`kitprobe/read` (a file), `kitprobe/environment` (variable names), `kitprobe/net` (a TCP
connection) and `kitprobe/big` (a result of `size` bytes) are answered here, to show what the
sandbox lets a Python proxy do and that a large line is written whole."""

from __future__ import annotations

import os
import sys
from typing import Any

from acp_proxy_kit import Peers, PromptRequest, Proxy, Respond, SessionNotification, log, run

try:
    import socket
except ImportError:  # a sandbox without the module is a sandbox without sockets
    socket = None  # type: ignore[assignment]


def outcome(attempt: Any) -> dict[str, Any]:
    try:
        return {"ok": True, "value": attempt()}
    except Exception as e:  # the probe reports any failure; which one is the sandbox's business
        return {"ok": False, "error": type(e).__name__}


def connect(host: str, port: int) -> str:
    if socket is None:
        raise OSError("no socket module")
    with socket.create_connection((host, port), timeout=5):
        return "connected"


def read(path: str) -> str:
    with open(path, encoding="utf-8") as file:
        return file.read()


class KitProbe(Proxy):
    name = "kit-probe"

    def __init__(self, note: str) -> None:
        self.note = note

    def on_session_start(self, peers: Peers, session_id: str, cwd: str | None) -> None:
        log.info(f"session {session_id} started in {cwd}")

    def on_prompt(self, peers: Peers, params: PromptRequest) -> Any:
        note = {"type": "text", "text": self.note}
        return {**params, "prompt": [note, *params["prompt"]]}

    def on_update(self, peers: Peers, params: SessionNotification) -> Any:
        update = params["update"]
        content = update.get("content")
        if update.get("sessionUpdate") == "agent_message_chunk" and isinstance(content, dict) and "text" in content:
            return {**params, "update": {**update, "content": {**content, "text": content["text"] + " [kit-probe]"}}}
        return None

    def on_editor_request(self, peers: Peers, method: str, params: Any) -> Any:
        if method == "kitprobe/read":
            return Respond(outcome(lambda: read(params["path"])))
        if method == "kitprobe/environment":
            return Respond({"names": sorted(os.environ)})
        if method == "kitprobe/net":
            return Respond(outcome(lambda: connect(params["host"], params["port"])))
        if method == "kitprobe/big":
            return Respond({"text": "x" * params["size"]})
        return None


def main() -> None:
    note = sys.argv[1] if len(sys.argv) > 1 else "Answer briefly."
    run(KitProbe(note))


if __name__ == "__main__":
    main()
