"""An agent's MCP client on the official MCP Python SDK (PyPI `mcp`, pinned in
requirements-mcp.txt), for tests/tests/mcp_python.rs; run by the rmcp test agent's `python`
command.

Usage: mcp_python_client.py SERVER_JSON MODE TOOL ARGS_JSON...
SERVER_JSON is an entry of the session's `mcpServers` (stdio: command, args, env; http: url,
headers); MODE is the SDK's `mode=` ("auto" probes `server/discover` and speaks the stateless
2026-07-28 revision to a server that answers it; "legacy" makes the `initialize` handshake).
Lists the tools, then calls each TOOL with its ARGS_JSON; prints one line each:
`version V`, `tools a,b,c`, `result TOOL: TEXT` (with ` [isError]`) or `error TOOL: MESSAGE`.
The version is the revision the client negotiated.
"""

import asyncio
import json
import sys

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError


def server_of(entry):
    if entry.get("type") == "http":
        headers = {h["name"]: h["value"] for h in entry.get("headers", [])}
        http = httpx2.AsyncClient(headers=headers, timeout=30)
        return streamable_http_client(entry["url"], http_client=http)
    env = {e["name"]: e["value"] for e in entry.get("env", [])}
    return StdioServerParameters(command=entry["command"], args=entry.get("args", []), env=env)


def text_of(result):
    """The result's text blocks, on one line (newlines shown as ` | `)."""
    text = "".join(block.text for block in result.content if getattr(block, "type", "") == "text")
    return text.replace("\n", " | ")


async def main():
    entry = json.loads(sys.argv[1])
    mode = sys.argv[2]
    calls = sys.argv[3:]
    async with Client(server_of(entry), mode=mode) as client:
        print(f"version {client.protocol_version}", flush=True)
        listed = await client.list_tools()
        print("tools " + ",".join(tool.name for tool in listed.tools), flush=True)
        for tool, arguments in zip(calls[::2], calls[1::2]):
            try:
                result = await client.call_tool(tool, json.loads(arguments))
            except MCPError as e:
                print(f"error {tool}: {e}", flush=True)
                continue
            flag = " [isError]" if result.is_error else ""
            print(f"result {tool}: {text_of(result)}{flag}", flush=True)


asyncio.run(main())
