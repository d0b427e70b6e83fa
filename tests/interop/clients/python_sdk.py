"""An editor written with the official Python SDK (agent-client-protocol): starts the agent
command given after `--`, plays the interop scenario and prints one JSON line per step on
stdout, in the same form as ts-sdk.mjs. Knows the scenario's prompts, not what a conductor is.

    python python_sdk.py --cwd DIR -- COMMAND ARGS...

A step that raises prints {"step": NAME, "error": MESSAGE} and ends the run with exit status 1.
"""

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, Client, connect_to_agent, text_block
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AllowedOutcome,
    ClientCapabilities,
    FileSystemCapabilities,
    Implementation,
    ReadTextFileResponse,
    RequestPermissionResponse,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
)


def emit(step: str, **fields: Any) -> None:
    print(json.dumps({"step": step, **fields}), flush=True)


class ScenarioClient(Client):
    """Answers the agent's requests as the current step says, and keeps what each turn showed."""

    def __init__(self) -> None:
        self.answer = "reject"
        self.turn: dict[str, Any] = {}
        self.cancel_after: str | None = None
        self.on_text = asyncio.Event()

    def start_turn(self, answer: str, cancel_after: str | None) -> None:
        self.answer = answer
        self.cancel_after = cancel_after
        self.on_text = asyncio.Event()
        self.turn = {"text": "", "toolCalls": [], "plans": [], "permissions": [], "reads": []}

    async def request_permission(self, session_id: str, tool_call: Any, options: list, **kwargs: Any):
        self.turn["permissions"].append({"title": tool_call.title, "kind": tool_call.kind})
        option = next(o for o in options if o.kind.startswith(self.answer))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=option.option_id))

    async def read_text_file(self, session_id: str, path: str, line=None, limit=None, **kwargs: Any):
        self.turn["reads"].append(path)
        return ReadTextFileResponse(content=Path(path).read_text())

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if isinstance(update, AgentMessageChunk) and isinstance(update.content, TextContentBlock):
            self.turn["text"] += update.content.text
            if self.cancel_after and self.cancel_after in self.turn["text"]:
                self.on_text.set()
        elif isinstance(update, ToolCallStart):
            self.turn["toolCalls"].append({"id": update.tool_call_id, "title": update.title, "status": update.status})
        elif isinstance(update, ToolCallProgress):
            self.turn["toolCalls"].append({"id": update.tool_call_id, "status": update.status})
        elif isinstance(update, AgentPlanUpdate):
            self.turn["plans"].append([entry.status for entry in update.entries])


async def turn(conn, client: ScenarioClient, session_id: str, text: str, answer="reject", cancel_after=None):
    client.start_turn(answer, cancel_after)
    prompt = asyncio.ensure_future(conn.prompt(session_id=session_id, prompt=[text_block(text)]))
    if cancel_after:
        await asyncio.wait([prompt, asyncio.ensure_future(client.on_text.wait())], return_when=asyncio.FIRST_COMPLETED)
        await conn.cancel(session_id=session_id)
    response = await prompt
    return {**client.turn, "stopReason": response.stop_reason}


async def step(name: str, work) -> None:
    try:
        emit(name, **(await work))
    except Exception as error:
        emit(name, error=str(error))
        raise


async def main(argv: list[str]) -> int:
    separator = argv.index("--")
    flags = dict(zip(argv[:separator:2], argv[1:separator:2]))
    cwd = flags["--cwd"]
    command = argv[separator + 1 :]
    agent = await asyncio.create_subprocess_exec(
        *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    emit("started", pid=agent.pid)
    client = ScenarioClient()
    conn = connect_to_agent(client, agent.stdin, agent.stdout)
    failed = False
    try:
        init = await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True)),
            client_info=Implementation(name="interop-python-sdk", version="0.12.1"),
        )
        mcp = init.agent_capabilities.mcp_capabilities if init.agent_capabilities else None
        emit(
            "initialize",
            protocolVersion=init.protocol_version,
            agentName=init.agent_info.name if init.agent_info else None,
            mcpAcp=getattr(mcp, "acp", None) if mcp else None,
        )
        first = (await conn.new_session(cwd=cwd, mcp_servers=[])).session_id
        emit("session/new", sessionId=first)
        await step("hello", turn(conn, client, first, "Hello"))
        write = "Please write the release notes to a file"
        await step("write allowed", turn(conn, client, first, write, answer="allow"))
        await step("write denied", turn(conn, client, first, write, answer="reject"))
        await step("read", turn(conn, client, first, "Please read notes.txt"))
        await step("plan", turn(conn, client, first, "Plan the release notes"))
        await step("remember", turn(conn, client, first, "Remember that the release is on Friday"))
        await step("recall", turn(conn, client, first, "What do you recall?"))
        await step("cancel", turn(conn, client, first, "Go slow", cancel_after="tick 1"))
        second = (await conn.new_session(cwd=cwd, mcp_servers=[])).session_id
        emit("second session", sessionId=second)
        await step("second session recall", turn(conn, client, second, "What do you recall?"))
    except Exception:
        failed = True
    await conn.close()
    agent.stdin.close()
    code = await agent.wait()
    emit("agent exited", code=code if code >= 0 else None, signal=-code if code < 0 else None)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main(sys.argv[1:])))
