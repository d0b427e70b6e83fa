"""The proxy's MCP server offered over ACP: declared in each session setup as an `acp` server,
answering the connectionless `mcp/message` requests for it. Knows MCP's tool methods only.

It speaks whichever MCP revision the client negotiates: the `initialize` handshake of the
classic revisions, or the stateless 2026-07-28 one (`server/discover`, a request `_meta` naming
the revision, `resultType` on every result and caching hints on `tools/list`)."""

from __future__ import annotations

from typing import Any, Optional

from . import log
from .peers import Peers
from .proxy import Tool, ToolError

#: The revisions with an `initialize` handshake, oldest first; a client asking another gets LATEST.
PROTOCOL_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
LATEST = "2025-11-25"
#: The stateless revision: no handshake; `server/discover`, and `_meta` on every request.
STATELESS = "2026-07-28"
#: Every revision this server speaks, as `server/discover` lists them.
SUPPORTED_VERSIONS = [*PROTOCOL_VERSIONS, STATELESS]
#: The request `_meta` key naming the revision of a stateless request.
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
#: The result `_meta` key under which revision 2026-07-28 puts `serverInfo`.
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"

METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
#: The request's `_meta` names a revision this server does not speak (MCP 2026-07-28).
UNSUPPORTED_PROTOCOL_VERSION = -32022


class McpServers:
    """Server id -> session; one declared server per session setup."""

    def __init__(self, name: str, tools: list[Tool]) -> None:
        self.name = name
        self.tools = {tool.name: tool for tool in tools}
        self.sessions: dict[str, Optional[str]] = {}
        self._next = 0

    def declare(self, params: dict[str, Any], session_id: Optional[str]) -> str:
        """Appends our server to `params["mcpServers"]`; returns its id."""
        self._next += 1
        server_id = f"{self.name}-{self._next}"
        self.sessions[server_id] = session_id
        servers = params.get("mcpServers")
        servers = list(servers) if isinstance(servers, list) else []
        servers.append({"type": "acp", "name": self.name, "serverId": server_id})
        params["mcpServers"] = servers
        return server_id

    def owns(self, params: Any) -> bool:
        return isinstance(params, dict) and params.get("serverId") in self.sessions

    def handle(self, peers: Peers, params: dict[str, Any]) -> dict[str, Any]:
        """The outer result of an `mcp/message` request: `{"result": ...}` or `{"error": ...}`."""
        method = params.get("method")
        inner = params.get("params")
        inner = inner if isinstance(inner, dict) else {}
        session = self.sessions.get(params["serverId"])
        revision, refusal = _requested_revision(method, inner)
        if refusal is not None:
            return {"error": refusal}
        answer = self._answer(peers, session, method, inner)
        # Revision 2026-07-28 requires `resultType` in every result, and caching hints on the
        # cacheable ones; older revisions know neither.
        result = answer.get("result")
        if revision == STATELESS and isinstance(result, dict):
            result["resultType"] = "complete"
            if method == "tools/list":
                result.update(_CACHE_HINTS)
        return answer

    def _answer(self, peers: Peers, session: Optional[str], method: Any, inner: dict[str, Any]) -> dict[str, Any]:
        if method == "server/discover":
            return {"result": {"resultType": "complete", "supportedVersions": SUPPORTED_VERSIONS,
                               "capabilities": {"tools": {}}, **_CACHE_HINTS,
                               "_meta": {SERVER_INFO_KEY: self._server_info()}}}
        if method == "initialize":
            asked = inner.get("protocolVersion")
            version = asked if asked in PROTOCOL_VERSIONS else LATEST
            return {"result": {"protocolVersion": version, "capabilities": {"tools": {}},
                               "serverInfo": self._server_info()}}
        if method == "ping":
            return {"result": {}}
        if method == "tools/list":
            return {"result": {"tools": [
                {"name": t.name, "description": t.description, "inputSchema": t.input_schema}
                for t in self.tools.values()]}}
        if method == "tools/call":
            return self._call(peers, session, inner)
        return {"error": {"code": METHOD_NOT_FOUND,
                          "message": f"Method not found: `{method}` (this server offers tools only)"}}

    def _call(self, peers: Peers, session: Optional[str], inner: dict[str, Any]) -> dict[str, Any]:
        tool = self.tools.get(inner.get("name")) if isinstance(inner.get("name"), str) else None
        if tool is None:
            names = ", ".join(self.tools)
            return {"error": {"code": INVALID_PARAMS,
                              "message": f"Unknown tool: `{inner.get('name')}` (tools: {names})"}}
        arguments = inner.get("arguments")
        arguments = arguments if isinstance(arguments, dict) else {}
        try:
            text = tool.call(peers, session, arguments)
            log.info(f"tool `{tool.name}` called for session {session}")
            return {"result": {"content": [{"type": "text", "text": text}]}}
        except ToolError as refused:
            return {"result": {"content": [{"type": "text", "text": str(refused)}], "isError": True}}

    def _server_info(self) -> dict[str, Any]:
        return {"name": self.name, "version": "1"}


#: The caching hints revision 2026-07-28 requires on cacheable results: nothing is worth
#: caching (`ttlMs` 0), and nothing is to be shared between callers (`private`).
_CACHE_HINTS = {"ttlMs": 0, "cacheScope": "private"}


def _requested_revision(method: Any, inner: dict[str, Any]) -> tuple[Optional[str], Optional[dict[str, Any]]]:
    """The revision a request names in `params._meta` (None if it names none), or the error
    refusing one this server does not speak. `initialize` negotiates in its own params instead,
    so its `_meta` is not read."""
    meta = inner.get("_meta")
    if method == "initialize" or not isinstance(meta, dict) or VERSION_KEY not in meta:
        return None, None
    requested = meta[VERSION_KEY]
    if isinstance(requested, str) and requested in SUPPORTED_VERSIONS:
        return requested, None
    return None, {"code": UNSUPPORTED_PROTOCOL_VERSION, "message": "Unsupported protocol version",
                  "data": {"requested": requested, "supported": SUPPORTED_VERSIONS}}
