"""The class a proxy author subclasses: one hook per kind of traffic, each passing its message
through unchanged by default. Says what a proxy may decide, not how it reaches the wire."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Optional

from .acp_types import JsonObject, PromptRequest, RequestPermissionRequest, SessionNotification

if TYPE_CHECKING:
    from .peers import Peers


@dataclass
class Tool:
    """An MCP tool the proxy offers the agent over ACP (an `acp` MCP server declared in every
    session setup). `call(peers, session_id, arguments)` returns the tool's text, or raises
    `ToolError` to report a failure to the agent."""

    name: str
    description: str
    input_schema: JsonObject
    call: Callable[["Peers", Optional[str], JsonObject], str]


class ToolError(Exception):
    """A tool's failure, reported to the agent as an `isError` result with this text."""


class Proxy:
    """Override the hooks for the traffic you care about; everything else passes through.

    A request hook returns None (pass on unchanged), a dict (pass on with these params),
    `Forward(params, then)`, `Respond(result)`, `Fail(code, message)` or the `Deferred` from
    `peers.defer()`. A notification hook returns None, a dict (new params) or `DROP`."""

    #: Names the proxy in logs and its MCP server (when it offers tools).
    name = "proxy"
    #: MCP tools offered to the agent over ACP; empty: no server is declared.
    tools: list[Tool] = []

    # Editor side -> agent side.
    def on_initialize(self, peers: "Peers", params: JsonObject) -> Any:
        return None

    def on_session_start(self, peers: "Peers", session_id: str, cwd: Optional[str]) -> None:
        """A session was created, loaded, resumed or forked (after the agent answered)."""

    def on_session_end(self, peers: "Peers", session_id: str) -> None:
        """The editor closed the session (`session/close`)."""

    def on_prompt(self, peers: "Peers", params: PromptRequest) -> Any:
        return None

    def on_editor_request(self, peers: "Peers", method: str, params: Any) -> Any:
        return None

    def on_editor_notification(self, peers: "Peers", method: str, params: Any) -> Any:
        return None

    # Agent side -> editor side.
    def on_update(self, peers: "Peers", params: SessionNotification) -> Any:
        """A `session/update` notification."""
        return None

    def on_permission_request(self, peers: "Peers", params: RequestPermissionRequest) -> Any:
        return None

    def on_agent_request(self, peers: "Peers", method: str, params: Any) -> Any:
        """Any other request of the agent (`fs/*`, `terminal/*`, extensions)."""
        return None

    def on_client_result(self, peers: "Peers", method: str, params: Any, result: Any) -> Any:
        """The editor's result for an agent request this proxy passed on, before the agent sees
        it: return a new result, or None to pass it back unchanged."""
        return None

    def on_agent_notification(self, peers: "Peers", method: str, params: Any) -> Any:
        return None
