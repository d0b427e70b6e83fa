"""my-proxy: say here what this proxy does to the traffic between editor and agent.

Copy this directory, rename the file and the class, keep only the hooks you need. Run it under a
conductor natively (`command = "python3"`, `args = ["my_proxy.py"]`, `PYTHONPATH` naming
kits/python) while you develop; build the sandboxed component with
`kits/python/build-wasm my_proxy.py my-proxy.wasm`. Import every module here, at the top: inside
the component an import run later, inside a function, fails."""

from __future__ import annotations

import sys
from typing import Any

from acp_proxy_kit import Peers, PromptRequest, Proxy, SessionNotification, log, run


class MyProxy(Proxy):
    name = "my-proxy"

    def __init__(self, note: str) -> None:
        self.note = note

    def on_session_start(self, peers: Peers, session_id: str, cwd: str | None) -> None:
        log.info(f"session {session_id} started in {cwd}")

    def on_prompt(self, peers: Peers, params: PromptRequest) -> Any:
        # Put the note in front of every prompt; return None to pass a prompt on unchanged.
        note = {"type": "text", "text": self.note}
        return {**params, "prompt": [note, *params["prompt"]]}

    def on_update(self, peers: Peers, params: SessionNotification) -> Any:
        return None


def main() -> None:
    note = sys.argv[1] if len(sys.argv) > 1 else "Answer briefly."
    run(MyProxy(note))


if __name__ == "__main__":
    main()
