"""The proxy's MCP server offered over ACP: declared in each session setup as an `acp` server,
answering the connectionless `mcp/message` requests for it. Knows MCP's tool methods only."""

from __future__ import annotations

from typing import Any, Optional

from . import log
from .peers import Peers
from .proxy import Tool, ToolError

PROTOCOL_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
LATEST = "2025-11-25"
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602


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
        inner = params.get("params") or {}
        session = self.sessions.get(params["serverId"])
        if method == "initialize":
            asked = inner.get("protocolVersion")
            version = asked if asked in PROTOCOL_VERSIONS else LATEST
            return {"result": {"protocolVersion": version, "capabilities": {"tools": {}},
                               "serverInfo": {"name": self.name, "version": "1"}}}
        if method == "ping":
            return {"result": {}}
        if method == "tools/list":
            return {"result": {"tools": [
                {"name": t.name, "description": t.description, "inputSchema": t.input_schema}
                for t in self.tools.values()]}}
        if method == "tools/call":
            tool = self.tools.get(inner.get("name"))
            if tool is None:
                names = ", ".join(self.tools)
                return {"error": {"code": INVALID_PARAMS,
                                  "message": f"Unknown tool: `{inner.get('name')}` (tools: {names})"}}
            arguments = inner.get("arguments") or {}
            try:
                text = tool.call(peers, session, arguments)
                log.info(f"tool `{tool.name}` called for session {session}")
                return {"result": {"content": [{"type": "text", "text": text}]}}
            except ToolError as refused:
                return {"result": {"content": [{"type": "text", "text": str(refused)}],
                                   "isError": True}}
        return {"error": {"code": METHOD_NOT_FOUND,
                          "message": f"Method not found: `{method}` (this server offers tools only)"}}
