"""The proxy-chain protocol, sans I/O: one line from the conductor in, the lines to write out.
Answers `proxy/initialize`, opens and builds `proxy/successor` envelopes, chooses the id of every
request it sends and routes each response back, rewrites cancellations, runs the hooks.

| arriving from the conductor               | hook                      | sent on as                        |
|-------------------------------------------|---------------------------|-----------------------------------|
| `proxy/initialize` / `_proxy/initialize`  | on_initialize             | `proxy/successor {initialize}`    |
| plain request / notification              | on_prompt, on_editor_*    | `proxy/successor {method,params}` |
| `proxy/successor` request / notification  | on_update, on_agent_*, .. | plain message                     |
| response to an id we chose                | on_client_result, then=   | response under the requester's id |
| `$/cancel_request` naming a forwarded one | none                      | plain, `requestId` rewritten      |
"""

from __future__ import annotations

from typing import Any

from . import codec, log
from .decisions import Deferred, Drop, Fail, Forward, Respond
from .mcp import McpServers
from .peers import AGENT, EDITOR, Peers, open_key
from .proxy import Proxy

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603

# How a response begins when its sender writes the members in the usual order; see
# Router._pass_response.
RESPONSE_HEAD = b'{"jsonrpc":"2.0","id":'

SESSION_SETUP = ("session/new", "session/load", "session/resume", "session/fork")


class Forwarded:
    """A request we passed on: its response goes back to `side` under `origin_id`."""

    __slots__ = ("side", "origin_id", "method", "params", "then")

    def __init__(self, side: str, origin_id: Any, method: str, params: Any, then: Any = None) -> None:
        self.side = side
        self.origin_id = origin_id
        self.method = method
        self.params = params
        self.then = then


def other(side: str) -> str:
    return AGENT if side == EDITOR else EDITOR


class Router:
    def __init__(self, proxy: Proxy) -> None:
        self.proxy = proxy
        self.peers = Peers()
        self.mcp = McpServers(proxy.name, list(proxy.tools)) if proxy.tools else None
        # Session-start hooks, run once the setup's answer is on its way to the editor.
        self._started_sessions: list[Any] = []

    def take_output(self) -> bytes:
        data = b"".join(self.peers.out)
        self.peers.out.clear()
        return data

    def on_line(self, line: bytes) -> None:
        if line.startswith(RESPONSE_HEAD) and self._pass_response(line):
            return
        try:
            message = codec.decode(line)
        except ValueError as e:
            log.warn(f"line that is not JSON dropped: {e}")
            self.peers.send_error(None, {"code": PARSE_ERROR, "message": f"Parse error: {e}"})
            return
        if not isinstance(message, dict):
            self.peers.send_error(None, {"code": INVALID_REQUEST, "message": "not a JSON-RPC object"})
            return
        method = message.get("method")
        if isinstance(method, str):
            if "id" in message:
                self._on_request(message["id"], method, message.get("params"))
            else:
                self._on_notification(method, message.get("params"))
        elif "id" in message:
            self._on_response(message)
        else:
            self.peers.send_error(None, {"code": INVALID_REQUEST, "message": "neither a call nor a response"})

    # Requests.
    def _on_request(self, id: Any, method: str, params: Any) -> None:
        if method in ("proxy/successor", "_proxy/successor"):
            if not isinstance(params, dict) or not isinstance(params.get("method"), str):
                self.peers.send_error(id, {"code": INVALID_PARAMS, "message": f"malformed {method}"})
                return
            self._request_from(AGENT, id, params["method"], params.get("params"))
            return
        if method in ("proxy/initialize", "_proxy/initialize"):
            self.peers.successor_method = method.replace("initialize", "successor")
            method = "initialize"
        elif method == "initialize":
            log.error("received `initialize`: a proxy must be started by a conductor")
            self.peers.send_error(id, {"code": INVALID_REQUEST, "message":
                                       "this program is an ACP proxy: run it from a conductor, "
                                       "which sends `proxy/initialize`"})
            return
        self._request_from(EDITOR, id, method, params)

    def _request_from(self, side: str, id: Any, method: str, params: Any) -> None:
        peers = self.peers
        peers._deciding = (side, id, method)
        try:
            decision = self._decide(side, method, params)
        except Exception as e:  # a hook's bug answers its request instead of stopping the proxy
            log.error(f"hook for `{method}` failed: {e!r}")
            decision = Fail(INTERNAL_ERROR, f"proxy {self.proxy.name} failed on `{method}`: {e}")
        handle, peers._deciding, peers._current = peers._current, None, None
        if isinstance(decision, Deferred):
            return
        if handle is not None:  # deferred, then decided otherwise after all
            peers.open.discard(open_key(side, id))
        if decision is None:
            sent, then = params, None
        elif isinstance(decision, dict):
            sent, then = decision, None
        elif isinstance(decision, Forward):
            sent = params if decision.params is None else decision.params
            then = decision.then
            if then is not None and not getattr(then, "kit_hook", False):
                user_then = then
                then = lambda result, _sent: user_then(result)  # noqa: E731
        elif isinstance(decision, Respond):
            peers.send_result(id, decision.result)
            return
        elif isinstance(decision, Fail):
            peers.send_error(id, decision.error_object())
            return
        else:
            raise TypeError(f"a request hook returned {decision!r}")
        route = Forwarded(side, id, method, sent, then)
        peers.send_call(other(side), peers.new_id(route), method, sent)

    def _decide(self, side: str, method: str, params: Any) -> Any:
        proxy, peers = self.proxy, self.peers
        if side == EDITOR:
            if method == "initialize":
                if isinstance(params, dict):
                    peers.client_capabilities = params.get("clientCapabilities") or {}
                return self._then(proxy.on_initialize(peers, params), self._initialized)
            if method in SESSION_SETUP and isinstance(params, dict):
                return self._session_setup(method, params)
            if method == "session/close" and isinstance(params, dict):
                session_id = params.get("sessionId")
                if isinstance(session_id, str):
                    proxy.on_session_end(peers, session_id)
                    peers.session_cwds.pop(session_id, None)
                return proxy.on_editor_request(peers, method, params)
            if method == "session/prompt" and isinstance(params, dict):
                return proxy.on_prompt(peers, params)
            return proxy.on_editor_request(peers, method, params)
        if method == "mcp/message" and self.mcp and self.mcp.owns(params):
            return Respond(self.mcp.handle(peers, params))
        if method in ("mcp/connect", "mcp/disconnect") and self.mcp:
            return Fail(METHOD_NOT_FOUND, f"Method not found: `{method}` (the {proxy.name} MCP "
                        "servers speak connectionless `mcp/message`)")
        if method == "session/request_permission" and isinstance(params, dict):
            decision = proxy.on_permission_request(peers, params)
        else:
            decision = proxy.on_agent_request(peers, method, params)
        return self._then(decision, lambda result, sent: proxy.on_client_result(peers, method, sent, result))

    def _then(self, decision: Any, hook: Any) -> Any:
        """Adds `hook(result, params sent)` to a decision that passes the request on."""
        if decision is None:
            decision = Forward()
        elif isinstance(decision, dict):
            decision = Forward(decision)
        if not isinstance(decision, Forward):
            return decision
        own = decision.then

        def then(result: Any, sent: Any) -> Any:
            changed = hook(result, sent)
            result = result if changed is None else changed
            if own is not None and not isinstance(result, Fail):
                changed = own(result)
                result = result if changed is None else changed
            return result

        then.kit_hook = True  # type: ignore[attr-defined]
        return Forward(decision.params, then)

    def _initialized(self, result: Any, sent: Any) -> Any:
        if isinstance(result, dict):
            self.peers.agent_capabilities = result.get("agentCapabilities") or {}
        return None

    def _session_setup(self, method: str, params: dict) -> Any:
        cwd = params.get("cwd")
        known = params.get("sessionId") if method in ("session/load", "session/resume") else None
        server_id = None
        if self.mcp is not None:
            params = dict(params)
            server_id = self.mcp.declare(params, known)
        decision = self.proxy.on_editor_request(self.peers, method, params)
        if decision is None and server_id is not None:
            decision = params

        def started(result: Any, sent: Any) -> Any:
            session_id = known
            if session_id is None and isinstance(result, dict):
                session_id = result.get("sessionId")
            if isinstance(session_id, str):
                if server_id is not None and self.mcp is not None:
                    self.mcp.sessions[server_id] = session_id
                self.peers.session_cwds[session_id] = cwd
                self._started_sessions.append(lambda: self.proxy.on_session_start(self.peers, session_id, cwd))
            return None

        return self._then(decision, started)

    # Notifications.
    def _on_notification(self, method: str, params: Any) -> None:
        side = EDITOR
        if method in ("proxy/successor", "_proxy/successor"):
            if not isinstance(params, dict) or not isinstance(params.get("method"), str):
                log.warn(f"malformed {method} notification dropped")
                return
            side, method, params = AGENT, params["method"], params.get("params")
        if method == "$/cancel_request":
            self._pass_on_cancel(side, params)
            return
        proxy, peers = self.proxy, self.peers
        try:
            if side == AGENT and method == "session/update" and isinstance(params, dict):
                decision = proxy.on_update(peers, params)
            elif side == AGENT and method == "mcp/message" and self.mcp and self.mcp.owns(params):
                decision = Drop()
            elif side == AGENT:
                decision = proxy.on_agent_notification(peers, method, params)
            else:
                decision = proxy.on_editor_notification(peers, method, params)
        except Exception as e:
            log.error(f"hook for `{method}` failed: {e!r}; passed on unchanged")
            decision = None
        if isinstance(decision, Drop):
            log.debug(f"`{method}` from the {side} side dropped")
            return
        if decision is not None and not isinstance(decision, dict):
            raise TypeError(f"a notification hook returned {decision!r}")
        peers.send_call(other(side), None, method, params if decision is None else decision)

    def _pass_on_cancel(self, side: str, params: Any) -> None:
        """Cancellation names a request on this hop: we cancel ours, plain, never wrapped."""
        if not isinstance(params, dict) or "requestId" not in params:
            return
        wanted = params["requestId"]
        for ours, route in self.peers.in_flight.items():
            if isinstance(route, Forwarded) and route.origin_id == wanted and type(route.origin_id) is type(wanted):
                self.peers.send_call(EDITOR, None, "$/cancel_request", {**params, "requestId": ours})
                return
        log.debug(f"$/cancel_request for {wanted!r}, not a request we passed on: nothing to pass on")

    # Responses.
    def _pass_response(self, line: bytes) -> bool:
        """A response, written `{"jsonrpc":"2.0","id":N,"result"|"error":...`, to a request we
        passed on with nothing to run on its result: sent back under the requester's id with
        the rest of its bytes as they came, never decoded. False: the full path decides."""
        comma = line.find(b",", len(RESPONSE_HEAD))
        digits = line[len(RESPONSE_HEAD):comma]
        if comma < 0 or not digits.isdigit():
            return False
        ours = int(digits)
        route = self.peers.in_flight.get(ours)
        if type(route) is not Forwarded or route.then is not None:
            return False
        rest = line[comma:]
        if not (rest.startswith(b',"result":') or rest.startswith(b',"error":')):
            return False
        del self.peers.in_flight[ours]
        self.peers.out.append(RESPONSE_HEAD + codec.encode(route.origin_id)[:-1] + rest + b"\n")
        return True

    def _on_response(self, message: dict) -> None:
        id = message["id"]
        route = self.peers.in_flight.pop(id, None) if isinstance(id, int) and not isinstance(id, bool) else None
        if route is None:
            log.warn(f"response to id {id!r} that we are not waiting for; dropped")
            return
        error = message.get("error")
        result = message.get("result")
        if not isinstance(route, Forwarded):
            route(result, error)
            return
        if error is None and route.then is not None:
            try:
                changed = route.then(result, route.params)
            except Exception as e:
                log.error(f"result hook for `{route.method}` failed: {e!r}")
                changed = Fail(INTERNAL_ERROR, f"proxy {self.proxy.name} failed on the result of `{route.method}`")
            if isinstance(changed, Fail):
                self.peers.send_error(route.origin_id, changed.error_object())
                return
            result = result if changed is None else changed
        if error is not None:
            self.peers.send_error(route.origin_id, error)
            return
        self.peers.send_result(route.origin_id, result)
        if self._started_sessions:
            started, self._started_sessions = self._started_sessions, []
            for start in started:
                start()
