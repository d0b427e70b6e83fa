"""kit-echo (Python): a kit proxy offering one MCP tool over ACP, for the end-to-end test
tests/tests/kit_mcp.rs. `echo` answers `SESSION: TEXT`, and an `isError` result without `text`."""

from __future__ import annotations

from typing import Any, Optional

from acp_proxy_kit import Peers, Proxy, Tool, ToolError, run


def echo(peers: Peers, session_id: Optional[str], arguments: dict[str, Any]) -> str:
    text = arguments.get("text")
    if not isinstance(text, str) or not text:
        raise ToolError("`text` is required")
    return f"{session_id}: {text}"


class KitEcho(Proxy):
    name = "kit-echo"
    tools = [Tool("echo", "Says the text back, with the session it was said in",
                  {"type": "object", "properties": {"text": {"type": "string"}}}, echo)]


def main() -> None:
    run(KitEcho())


if __name__ == "__main__":
    main()
