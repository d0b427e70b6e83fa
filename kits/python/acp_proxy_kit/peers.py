"""A hook's handle on the proxy's two neighbours: send notifications and requests either way,
answer deferred requests, read what the handshake told us. Queues lines; knows nothing of stdio."""

from __future__ import annotations

import json
from typing import Any, Callable, Optional

from . import log
from .codec import encode
from .decisions import Deferred, Fail

EDITOR = "editor"
AGENT = "agent"

# Called with (result, error): exactly one of them is None.
ResponseCallback = Callable[[Any, Optional[dict]], None]


def open_key(side: str, id: Any) -> tuple:
    """How a request received is known while it is open: by side and id, 1 and "1" apart."""
    if type(id) is int or type(id) is str:
        return (side, id)
    return (side, None, json.dumps(id))


class Peers:
    def __init__(self) -> None:
        self.out: list[bytes] = []
        self.successor_method = "proxy/successor"
        #: `clientCapabilities` of the editor's `initialize`, once seen.
        self.client_capabilities: dict[str, Any] = {}
        #: `agentCapabilities` of the agent's `initialize` result, once seen.
        self.agent_capabilities: dict[str, Any] = {}
        #: Session id -> its working directory, from the session setup requests.
        self.session_cwds: dict[str, Optional[str]] = {}
        self._next_id = 0
        # Our id -> where its response goes (see router.py).
        self.in_flight: dict[int, Any] = {}
        # Requests a hook deferred and has not answered yet, by `open_key`.
        self.open: set[tuple] = set()
        # The request the hook running now was shown, as (side, id, method) (set by the
        # router), and its handle once the hook asked for one.
        self._deciding: Optional[tuple[str, Any, str]] = None
        self._current: Optional[Deferred] = None

    def new_id(self, route: Any) -> int:
        ours = self._next_id
        self._next_id += 1
        self.in_flight[ours] = route
        return ours

    def send_call(self, to: str, id: Optional[int], method: str, params: Any) -> None:
        """A request (`id` given) or notification: wrapped in `proxy/successor` toward the agent
        side, plain toward the editor side."""
        message: dict[str, Any] = {"jsonrpc": "2.0"}
        if id is not None:
            message["id"] = id
        if to == AGENT:
            inner: dict[str, Any] = {"method": method}
            if params is not None:
                inner["params"] = params
            message["method"] = self.successor_method
            message["params"] = inner
        else:
            message["method"] = method
            if params is not None:
                message["params"] = params
        self.out.append(encode(message))

    def send_result(self, id: Any, result: Any) -> None:
        self.out.append(encode({"jsonrpc": "2.0", "id": id, "result": result}))

    def send_error(self, id: Any, error: dict[str, Any]) -> None:
        self.out.append(encode({"jsonrpc": "2.0", "id": id, "error": error}))

    # What hooks call.
    def notify_agent(self, method: str, params: Any) -> None:
        self.send_call(AGENT, None, method, params)

    def notify_editor(self, method: str, params: Any) -> None:
        self.send_call(EDITOR, None, method, params)

    def request_agent(self, method: str, params: Any, on_response: ResponseCallback) -> None:
        self.send_call(AGENT, self.new_id(on_response), method, params)

    def request_editor(self, method: str, params: Any, on_response: ResponseCallback) -> None:
        self.send_call(EDITOR, self.new_id(on_response), method, params)

    def defer(self) -> Deferred:
        """Keeps the request being decided open; return the handle from the hook and answer
        later with `respond` or `fail`."""
        if self._current is None:
            if self._deciding is None:
                raise RuntimeError("defer() outside a request hook")
            side, id, method = self._deciding
            self._current = Deferred(side, id, method)
            self.open.add(open_key(side, id))
        return self._current

    def respond(self, handle: Deferred, result: Any) -> None:
        if self._close(handle):
            self.send_result(handle.id, result)

    def fail(self, handle: Deferred, failure: Fail) -> None:
        if self._close(handle):
            self.send_error(handle.id, failure.error_object())

    def _close(self, handle: Deferred) -> bool:
        key = open_key(handle.side, handle.id)
        if handle.answered or key not in self.open:
            log.error(f"request {handle.id} `{handle.method}` was already answered; answer dropped")
            return False
        handle.answered = True
        self.open.discard(key)
        return True
