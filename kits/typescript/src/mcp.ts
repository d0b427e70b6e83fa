// The proxy's MCP server offered over ACP: declared in each session setup as an `acp` server,
// answering the connectionless `mcp/message` requests for it. Knows MCP's tool methods only.

import type { Json } from "./decisions.js";
import * as log from "./log.js";
import type { Peers } from "./peers.js";
import { type Tool, ToolError } from "./proxy.js";

const PROTOCOL_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
const LATEST = "2025-11-25";
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;

type Obj = Record<string, Json>;
const isObj = (v: Json): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

export class McpServers {
  /** Server id -> its session, once known. */
  readonly sessions = new Map<string, string | null>();
  private readonly tools: Map<string, Tool>;
  private next = 0;

  constructor(
    private readonly name: string,
    tools: Tool[],
  ) {
    this.tools = new Map(tools.map((t) => [t.name, t]));
  }

  /** `params` with our server appended to `mcpServers`, and the server's id. */
  declare(params: Obj, sessionId: string | null): [Obj, string] {
    this.next += 1;
    const serverId = `${this.name}-${this.next}`;
    this.sessions.set(serverId, sessionId);
    const servers = Array.isArray(params.mcpServers) ? [...params.mcpServers] : [];
    servers.push({ type: "acp", name: this.name, serverId });
    return [{ ...params, mcpServers: servers }, serverId];
  }

  owns(params: Json): params is Obj {
    return isObj(params) && typeof params.serverId === "string" && this.sessions.has(params.serverId);
  }

  /** The outer result of an `mcp/message` request: `{result}` or `{error}`. */
  handle(peers: Peers, params: Obj): Obj {
    const method = params.method;
    const inner = isObj(params.params) ? params.params : {};
    const session = this.sessions.get(params.serverId as string) ?? null;
    switch (method) {
      case "initialize": {
        const asked = inner.protocolVersion;
        const version = typeof asked === "string" && PROTOCOL_VERSIONS.includes(asked) ? asked : LATEST;
        return {
          result: { protocolVersion: version, capabilities: { tools: {} }, serverInfo: { name: this.name, version: "1" } },
        };
      }
      case "ping":
        return { result: {} };
      case "tools/list":
        return {
          result: {
            tools: [...this.tools.values()].map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
          },
        };
      case "tools/call": {
        const tool = typeof inner.name === "string" ? this.tools.get(inner.name) : undefined;
        if (!tool) {
          const names = [...this.tools.keys()].join(", ");
          return { error: { code: INVALID_PARAMS, message: `Unknown tool: \`${String(inner.name)}\` (tools: ${names})` } };
        }
        const args = isObj(inner.arguments) ? inner.arguments : {};
        try {
          const text = tool.call(peers, session, args);
          log.info(`tool \`${tool.name}\` called for session ${session}`);
          return { result: { content: [{ type: "text", text }] } };
        } catch (e) {
          if (e instanceof ToolError) return { result: { content: [{ type: "text", text: e.message }], isError: true } };
          throw e;
        }
      }
      default:
        return { error: { code: METHOD_NOT_FOUND, message: `Method not found: \`${String(method)}\` (this server offers tools only)` } };
    }
  }
}
