// The TypeScript kit's MCP server in both revisions it speaks: the classic `initialize` handshake
// and stateless MCP 2026-07-28 (`server/discover`, `_meta` naming the revision, `resultType`,
// caching hints), answered as the notes proxy answers them. Run with the kit's other tests.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import type { Json } from "../src/decisions.js";
import { LATEST, McpServers, PROTOCOL_VERSIONS, STATELESS, SUPPORTED_VERSIONS } from "../src/mcp.js";
import type { Peers } from "../src/peers.js";
import { ToolError } from "../src/index.js";

type Obj = Record<string, Json>;
const VERSION_KEY = "io.modelcontextprotocol/protocolVersion";
const ALL_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"];
const ECHO = { name: "echo", description: "Says it back", inputSchema: { type: "object" } };

/** `params` with the `_meta` the conductor's bridge relays from a stateless client. */
const stateless = (params: Obj): Obj => ({
  ...params,
  _meta: { [VERSION_KEY]: STATELESS, "io.modelcontextprotocol/clientCapabilities": {} },
});

/** An `echo` server declared for session `s-1`; `calls` counts the tool's runs. */
class Server {
  calls = 0;
  private readonly servers: McpServers;
  private readonly serverId: string;

  constructor(name = "echo") {
    this.servers = new McpServers(name, [
      {
        name: "echo",
        description: "Says it back",
        inputSchema: { type: "object" },
        call: (_peers, session, args) => {
          this.calls += 1;
          if (!args.text) throw new ToolError("`text` is required");
          return `${session}: ${String(args.text)}`;
        },
      },
    ]);
    this.serverId = this.servers.declare({}, "s-1")[1];
  }

  ask(method: string, params?: Json): Obj {
    const message: Obj = { serverId: this.serverId, requestId: "r", method };
    if (params !== undefined) message.params = params;
    return this.servers.handle(null as unknown as Peers, message);
  }
}

describe("MCP revisions", () => {
  it("are the notes proxy's", () => {
    assert.deepEqual(SUPPORTED_VERSIONS, ALL_VERSIONS);
    assert.deepEqual(PROTOCOL_VERSIONS, ALL_VERSIONS.slice(0, 4));
    assert.equal(LATEST, "2025-11-25");
  });
});

describe("classic MCP", () => {
  it("initialize echoes a known version, else offers the latest", () => {
    const server = new Server();
    for (const version of PROTOCOL_VERSIONS) {
      assert.deepEqual(server.ask("initialize", { protocolVersion: version, capabilities: {} }), {
        result: { protocolVersion: version, capabilities: { tools: {} }, serverInfo: { name: "echo", version: "1" } },
      });
    }
    // The stateless revision has no handshake to offer; `_meta` is not read here.
    const others: Json[] = [
      { protocolVersion: "2099-01-01" },
      { protocolVersion: STATELESS },
      { protocolVersion: 5 },
      {},
      null,
      { _meta: { [VERSION_KEY]: "1999-01-01" } },
    ];
    for (const params of others) {
      assert.equal((server.ask("initialize", params).result as Obj).protocolVersion, LATEST, JSON.stringify(params));
    }
  });

  it("ping, tools/list and tools/call carry no stateless members", () => {
    const server = new Server();
    assert.deepEqual(server.ask("ping"), { result: {} });
    assert.deepEqual(server.ask("tools/list", { cursor: null }), { result: { tools: [ECHO] } });
    assert.deepEqual(server.ask("tools/call", { name: "echo", arguments: { text: "hi" }, _meta: { progressToken: 1 } }), {
      result: { content: [{ type: "text", text: "s-1: hi" }] },
    });
    assert.deepEqual(server.ask("tools/call", { name: "echo" }), {
      result: { content: [{ type: "text", text: "`text` is required" }], isError: true },
    });
    // A request naming an older revision is answered in it.
    const old = { _meta: { [VERSION_KEY]: "2025-06-18", progressToken: 1 } };
    assert.deepEqual(server.ask("tools/list", old), { result: { tools: [ECHO] } });
    // `_meta` that is not an object names no revision.
    assert.deepEqual(server.ask("tools/list", { _meta: 7 }), { result: { tools: [ECHO] } });
  });
});

describe("stateless MCP 2026-07-28", () => {
  it("server/discover tells the revisions, capabilities and server info", () => {
    const expected = {
      result: {
        resultType: "complete",
        supportedVersions: ALL_VERSIONS,
        capabilities: { tools: {} },
        ttlMs: 0,
        cacheScope: "private",
        _meta: { "io.modelcontextprotocol/serverInfo": { name: "echo", version: "1" } },
      },
    };
    // As the bridge asks it, and bare (a client speaking MCP over ACP itself may).
    for (const params of [stateless({}), undefined]) assert.deepEqual(new Server().ask("server/discover", params), expected);
    const named = new Server("memo").ask("server/discover");
    assert.equal((((named.result as Obj)._meta as Obj)["io.modelcontextprotocol/serverInfo"] as Obj).name, "memo");
  });

  it("results get a resultType and tools/list its caching hints", () => {
    const server = new Server();
    assert.deepEqual(server.ask("tools/list", stateless({})), {
      result: { tools: [ECHO], resultType: "complete", ttlMs: 0, cacheScope: "private" },
    });
    assert.deepEqual(server.ask("tools/call", stateless({ name: "echo", arguments: { text: "hi" } })), {
      result: { content: [{ type: "text", text: "s-1: hi" }], resultType: "complete" },
    });
    assert.deepEqual(server.ask("tools/call", stateless({ name: "echo", arguments: {} })), {
      result: { content: [{ type: "text", text: "`text` is required" }], isError: true, resultType: "complete" },
    });
    assert.deepEqual(server.ask("ping", stateless({})), { result: { resultType: "complete" } });
  });

  it("a revision this server does not speak is refused before the tool runs", () => {
    const server = new Server();
    for (const requested of ["2099-01-01", 20260728, null]) {
      const params = { name: "echo", arguments: { text: "x" }, _meta: { [VERSION_KEY]: requested } };
      assert.deepEqual(server.ask("tools/call", params), {
        error: { code: -32022, message: "Unsupported protocol version", data: { requested, supported: ALL_VERSIONS } },
      });
    }
    assert.equal(server.calls, 0);
  });

  it("protocol errors are errors in either revision", () => {
    const server = new Server();
    for (const wrap of [(p: Obj): Obj => p, stateless]) {
      assert.deepEqual(server.ask("tools/call", wrap({ name: "erase", arguments: {} })), {
        error: { code: -32602, message: "Unknown tool: `erase` (tools: echo)" },
      });
      assert.equal((server.ask("tools/call", wrap({ name: ["echo"] })).error as Obj).code, -32602);
      assert.deepEqual(server.ask("resources/list", wrap({})), {
        error: { code: -32601, message: "Method not found: `resources/list` (this server offers tools only)" },
      });
    }
    assert.equal(server.calls, 0);
  });
});
