"""A kit for writing ACP proxies in Python: the author writes hooks, the kit runs the stdio loop
and the proxy-chain protocol. The same source runs under `python3` and as a WASI component.

Import everything a proxy needs at the top of its module: inside a componentize-py component the
standard library is snapshotted at build time, and an `import` run later inside a function
fails (the sandbox has no Python files to load it from)."""

from . import log
from .acp_types import (
    AvailableCommand,
    ContentBlock,
    EmbeddedResource,
    JsonObject,
    McpTool,
    PromptRequest,
    RequestPermissionRequest,
    ResourceLink,
    SessionNotification,
    TextContent,
)
from .decisions import DROP, Deferred, Drop, Fail, Forward, Respond
from .peers import AGENT, EDITOR, Peers
from .proxy import Proxy, Tool, ToolError
from .router import Router
from .stdio import run, serve

__all__ = [
    "AGENT", "DROP", "EDITOR", "AvailableCommand", "ContentBlock", "Deferred", "Drop",
    "EmbeddedResource", "Fail", "Forward", "JsonObject", "McpTool", "Peers", "PromptRequest",
    "Proxy", "RequestPermissionRequest", "ResourceLink", "Respond", "Router",
    "SessionNotification", "TextContent", "Tool", "ToolError", "log", "run", "serve",
]
