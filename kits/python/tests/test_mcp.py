"""The Python kit's MCP server in both revisions it speaks: the classic `initialize` handshake
and stateless MCP 2026-07-28 (`server/discover`, `_meta` naming the revision, `resultType`,
caching hints), answered as the notes proxy answers them. Run with the kit's other tests."""

from __future__ import annotations

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acp_proxy_kit import Tool, ToolError  # noqa: E402
from acp_proxy_kit.mcp import LATEST, PROTOCOL_VERSIONS, STATELESS, SUPPORTED_VERSIONS, McpServers  # noqa: E402

VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
ALL_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]
ECHO = {"name": "echo", "description": "Says it back", "inputSchema": {"type": "object"}}


def stateless(params: dict) -> dict:
    """`params` with the `_meta` the conductor's bridge relays from a stateless client."""
    return {**params, "_meta": {VERSION_KEY: STATELESS, "io.modelcontextprotocol/clientCapabilities": {}}}


class Server:
    """An `echo` server declared for session `s-1`; `calls` counts the tool's runs."""

    def __init__(self, name: str = "echo") -> None:
        self.calls = 0

        def echo(peers, session, arguments):
            self.calls += 1
            if not arguments.get("text"):
                raise ToolError("`text` is required")
            return f"{session}: {arguments['text']}"

        self.servers = McpServers(name, [Tool("echo", "Says it back", {"type": "object"}, echo)])
        self.server_id = self.servers.declare({}, "s-1")

    def ask(self, method: str, params=None) -> dict:
        message = {"serverId": self.server_id, "requestId": "r", "method": method}
        if params is not None:
            message["params"] = params
        return self.servers.handle(None, message)  # type: ignore[arg-type]


class Revisions(unittest.TestCase):
    def test_the_revisions_are_the_notes_proxys(self):
        self.assertEqual(SUPPORTED_VERSIONS, ALL_VERSIONS)
        self.assertEqual(PROTOCOL_VERSIONS, ALL_VERSIONS[:4])
        self.assertEqual(LATEST, "2025-11-25")


class Classic(unittest.TestCase):
    def test_initialize_echoes_a_known_version_else_offers_the_latest(self):
        server = Server()
        for version in PROTOCOL_VERSIONS:
            answer = server.ask("initialize", {"protocolVersion": version, "capabilities": {}})
            self.assertEqual(answer, {"result": {"protocolVersion": version, "capabilities": {"tools": {}},
                                                 "serverInfo": {"name": "echo", "version": "1"}}})
        # The stateless revision has no handshake to offer; `_meta` is not read here.
        for params in [{"protocolVersion": "2099-01-01"}, {"protocolVersion": STATELESS}, {"protocolVersion": 5},
                       {}, None, {"_meta": {VERSION_KEY: "1999-01-01"}}]:
            self.assertEqual(server.ask("initialize", params)["result"]["protocolVersion"], LATEST, params)

    def test_ping_list_and_call_carry_no_stateless_members(self):
        server = Server()
        self.assertEqual(server.ask("ping"), {"result": {}})
        self.assertEqual(server.ask("tools/list", {"cursor": None}), {"result": {"tools": [ECHO]}})
        self.assertEqual(server.ask("tools/call", {"name": "echo", "arguments": {"text": "hi"}, "_meta": {"progressToken": 1}}),
                         {"result": {"content": [{"type": "text", "text": "s-1: hi"}]}})
        self.assertEqual(server.ask("tools/call", {"name": "echo"}),
                         {"result": {"content": [{"type": "text", "text": "`text` is required"}], "isError": True}})
        # A request naming an older revision is answered in it.
        old = {"_meta": {VERSION_KEY: "2025-06-18", "progressToken": 1}}
        self.assertEqual(server.ask("tools/list", old), {"result": {"tools": [ECHO]}})
        # `_meta` that is not an object names no revision.
        self.assertEqual(server.ask("tools/list", {"_meta": 7}), {"result": {"tools": [ECHO]}})


class Stateless(unittest.TestCase):
    def test_discover_tells_revisions_capabilities_and_server_info(self):
        expected = {"result": {
            "resultType": "complete",
            "supportedVersions": ALL_VERSIONS,
            "capabilities": {"tools": {}},
            "ttlMs": 0,
            "cacheScope": "private",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "echo", "version": "1"}},
        }}
        # As the bridge asks it, and bare (a client speaking MCP over ACP itself may).
        for params in [stateless({}), None]:
            self.assertEqual(Server().ask("server/discover", params), expected)
        named = Server("memo").ask("server/discover")
        self.assertEqual(named["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "memo")

    def test_results_get_a_result_type_and_the_list_its_caching_hints(self):
        server = Server()
        self.assertEqual(server.ask("tools/list", stateless({})),
                         {"result": {"tools": [ECHO], "resultType": "complete", "ttlMs": 0, "cacheScope": "private"}})
        self.assertEqual(server.ask("tools/call", stateless({"name": "echo", "arguments": {"text": "hi"}})),
                         {"result": {"content": [{"type": "text", "text": "s-1: hi"}], "resultType": "complete"}})
        self.assertEqual(server.ask("tools/call", stateless({"name": "echo", "arguments": {}})),
                         {"result": {"content": [{"type": "text", "text": "`text` is required"}], "isError": True,
                                     "resultType": "complete"}})
        self.assertEqual(server.ask("ping", stateless({})), {"result": {"resultType": "complete"}})

    def test_a_revision_this_server_does_not_speak_is_refused_before_the_tool_runs(self):
        server = Server()
        for requested in ["2099-01-01", 20260728, None]:
            params = {"name": "echo", "arguments": {"text": "x"}, "_meta": {VERSION_KEY: requested}}
            self.assertEqual(server.ask("tools/call", params), {"error": {
                "code": -32022, "message": "Unsupported protocol version",
                "data": {"requested": requested, "supported": ALL_VERSIONS}}})
        self.assertEqual(server.calls, 0)

    def test_protocol_errors_are_errors_in_either_revision(self):
        server = Server()
        for wrap in [lambda p: p, stateless]:
            self.assertEqual(server.ask("tools/call", wrap({"name": "erase", "arguments": {}})),
                             {"error": {"code": -32602, "message": "Unknown tool: `erase` (tools: echo)"}})
            self.assertEqual(server.ask("tools/call", wrap({"name": ["echo"]}))["error"]["code"], -32602)
            self.assertEqual(server.ask("resources/list", wrap({})), {"error": {
                "code": -32601, "message": "Method not found: `resources/list` (this server offers tools only)"}})
        self.assertEqual(server.calls, 0)


if __name__ == "__main__":
    unittest.main()
