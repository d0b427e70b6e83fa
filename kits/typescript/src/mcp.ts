// The proxy's MCP server offered over ACP: declared in each session setup as an `acp` server,
// answering the connectionless `mcp/message` requests for it. Knows MCP's tool methods only.
//
// It speaks whichever MCP revision the client negotiates: the `initialize` handshake of the
// classic revisions, or the stateless 2026-07-28 one (`server/discover`, a request `_meta` naming
// the revision, `resultType` on every result and caching hints on `tools/list`).

import type { Json } from "./decisions.js";
import * as log from "./log.js";
import type { Peers } from "./peers.js";
import { type Tool, ToolError } from "./proxy.js";

/** The revisions with an `initialize` handshake, oldest first; a client asking another gets LATEST. */
export const PROTOCOL_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
export const LATEST = "2025-11-25";
/** The stateless revision: no handshake; `server/discover`, and `_meta` on every request. */
export const STATELESS = "2026-07-28";
/** Every revision this server speaks, as `server/discover` lists them. */
export const SUPPORTED_VERSIONS = [...PROTOCOL_VERSIONS, STATELESS];
/** The request `_meta` key naming the revision of a stateless request. */
export const VERSION_KEY = "io.modelcontextprotocol/protocolVersion";
/** The result `_meta` key under which revision 2026-07-28 puts `serverInfo`. */
export const SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo";

const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
/** The request's `_meta` names a revision this server does not speak (MCP 2026-07-28). */
const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** The caching hints revision 2026-07-28 requires on cacheable results: nothing is worth
 * caching (`ttlMs` 0), and nothing is to be shared between callers (`private`). */
const cacheHints = (): Obj => ({ ttlMs: 0, cacheScope: "private" });

type Obj = Record<string, Json>;
const isObj = (v: Json | undefined): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** The revision a request names in `params._meta` (null if it names none), or the error refusing
 * one this server does not speak. `initialize` negotiates in its own params instead, so its
 * `_meta` is not read. */
function requestedRevision(method: Json | undefined, inner: Obj): { revision: string | null } | { refusal: Obj } {
  const meta = inner._meta;
  if (method === "initialize" || !isObj(meta) || !(VERSION_KEY in meta)) return { revision: null };
  const requested = meta[VERSION_KEY];
  if (typeof requested === "string" && SUPPORTED_VERSIONS.includes(requested)) return { revision: requested };
  return {
    refusal: {
      code: UNSUPPORTED_PROTOCOL_VERSION,
      message: "Unsupported protocol version",
      data: { requested: requested ?? null, supported: SUPPORTED_VERSIONS },
    },
  };
}

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
    const asked = requestedRevision(method, inner);
    if ("refusal" in asked) return { error: asked.refusal };
    const answer = this.answer(peers, session, method, inner);
    // Revision 2026-07-28 requires `resultType` in every result, and caching hints on the
    // cacheable ones; older revisions know neither.
    const result = answer.result;
    if (asked.revision === STATELESS && isObj(result)) {
      result.resultType = "complete";
      if (method === "tools/list") Object.assign(result, cacheHints());
    }
    return answer;
  }

  private answer(peers: Peers, session: string | null, method: Json | undefined, inner: Obj): Obj {
    switch (method) {
      case "server/discover":
        return {
          result: {
            resultType: "complete",
            supportedVersions: SUPPORTED_VERSIONS,
            capabilities: { tools: {} },
            ...cacheHints(),
            _meta: { [SERVER_INFO_KEY]: this.serverInfo() },
          },
        };
      case "initialize": {
        const asked = inner.protocolVersion;
        const version = typeof asked === "string" && PROTOCOL_VERSIONS.includes(asked) ? asked : LATEST;
        return { result: { protocolVersion: version, capabilities: { tools: {} }, serverInfo: this.serverInfo() } };
      }
      case "ping":
        return { result: {} };
      case "tools/list":
        return {
          result: {
            tools: [...this.tools.values()].map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
          },
        };
      case "tools/call":
        return this.call(peers, session, inner);
      default:
        return { error: { code: METHOD_NOT_FOUND, message: `Method not found: \`${String(method)}\` (this server offers tools only)` } };
    }
  }

  private call(peers: Peers, session: string | null, inner: Obj): Obj {
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

  private serverInfo(): Obj {
    return { name: this.name, version: "1" };
  }
}
