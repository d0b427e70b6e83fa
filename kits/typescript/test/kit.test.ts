// The TypeScript kit's own tests: the proxy-chain protocol line by line (the router, sans I/O),
// the framing under every chunking and writes bounded under 4,096 bytes.
// Run: `node kits/typescript/build.mjs test` (type check, bundle, `node --test`).

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { DROP, Fail, Forward, Peers, type Proxy, Respond, Router, ToolError } from "../src/index.js";
import { LineSplitter, WRITE_CHUNK, writeInChunks } from "../src/framing.js";

type Msg = Record<string, unknown>;
const request = (id: unknown, method: string, params?: unknown): string => JSON.stringify({ jsonrpc: "2.0", id, method, params });
const wrapped = (id: unknown, method: string, params: unknown): string =>
  JSON.stringify({ jsonrpc: "2.0", ...(id === undefined ? {} : { id }), method: "proxy/successor", params: { method, params } });
const result = (id: unknown, value: unknown): string => JSON.stringify({ jsonrpc: "2.0", id, result: value });
const outputs = (router: Router): Msg[] =>
  router.takeOutput().split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as Msg);

function initialized(proxy: Proxy): Router {
  const router = new Router(proxy);
  router.onLine(request(0, "proxy/initialize", { protocolVersion: 1, clientCapabilities: { terminal: true } }));
  router.onLine(result(0, { protocolVersion: 1, agentCapabilities: { loadSession: true } }));
  router.takeOutput();
  return router;
}

describe("handshake", () => {
  it("passes proxy/initialize on as successor initialize and answers under the conductor's id", () => {
    const router = new Router({ name: "p" });
    router.onLine(request("init", "proxy/initialize", { protocolVersion: 1 }));
    assert.deepEqual(outputs(router), [
      { jsonrpc: "2.0", id: 0, method: "proxy/successor", params: { method: "initialize", params: { protocolVersion: 1 } } },
    ]);
    router.onLine(result(0, { protocolVersion: 1, agentCapabilities: { loadSession: true } }));
    assert.deepEqual(outputs(router), [{ jsonrpc: "2.0", id: "init", result: { protocolVersion: 1, agentCapabilities: { loadSession: true } } }]);
    assert.deepEqual(router.peers.agentCapabilities, { loadSession: true });
  });

  it("answers the underscore dialect in kind and refuses a plain initialize", () => {
    const router = new Router({ name: "p" });
    router.onLine(request(1, "_proxy/initialize", {}));
    router.onLine(request(2, "initialize", {}));
    const [sent, refused] = outputs(router);
    assert.equal(sent.method, "_proxy/successor");
    assert.equal((refused.error as Msg).code, -32600);
  });
});

describe("hooks", () => {
  it("a prompt hook changes what the agent gets", () => {
    const router = initialized({
      name: "shout",
      onPrompt: (_p, params) => ({ ...params, prompt: params.prompt.map((b) => (b.type === "text" ? { ...b, text: b.text.toUpperCase() } : b)) }),
    });
    router.onLine(request(7, "session/prompt", { sessionId: "s", prompt: [{ type: "text", text: "hi" }] }));
    const [sent] = outputs(router);
    assert.deepEqual(sent.params, { method: "session/prompt", params: { sessionId: "s", prompt: [{ type: "text", text: "HI" }] } });
    router.onLine(result(sent.id, { stopReason: "end_turn" }));
    assert.deepEqual(outputs(router), [{ jsonrpc: "2.0", id: 7, result: { stopReason: "end_turn" } }]);
  });

  it("agent requests go plain and the client result hook changes the answer", () => {
    const router = initialized({
      name: "upper",
      onClientResult: (_p, method, params, res) =>
        method === "fs/read_text_file" ? { content: String((res as Msg).content).toUpperCase() + (params as Msg).path } : undefined,
    });
    router.onLine(wrapped(41, "fs/read_text_file", { sessionId: "s", path: "/a" }));
    const [sent] = outputs(router);
    assert.equal(sent.method, "fs/read_text_file");
    router.onLine(result(sent.id, { content: "abc" }));
    assert.deepEqual(outputs(router), [{ jsonrpc: "2.0", id: 41, result: { content: "ABC/a" } }]);
  });

  it("respond, fail and a throwing hook each answer the request", () => {
    const router = initialized({
      name: "answers",
      onPermissionRequest: () => new Respond({ outcome: { outcome: "cancelled" } }),
      onAgentRequest: (_p, method) => {
        if (method === "terminal/create") return new Fail(-32000, "no terminals");
        throw new Error("bug");
      },
    });
    router.onLine(wrapped(3, "session/request_permission", { sessionId: "s", toolCall: {}, options: [] }));
    router.onLine(wrapped(5, "terminal/create", { command: "ls" }));
    router.onLine(wrapped(6, "x/other", {}));
    const [allowed, refused, failed] = outputs(router);
    assert.deepEqual(allowed, { jsonrpc: "2.0", id: 3, result: { outcome: { outcome: "cancelled" } } });
    assert.deepEqual(refused.error, { code: -32000, message: "no terminals" });
    assert.equal((failed.error as Msg).code, -32603);
  });

  it("updates can be changed or dropped", () => {
    const router = initialized({
      name: "quiet",
      onUpdate: (_p, params) => (params.update.sessionUpdate === "plan" ? DROP : { ...params, seen: true }),
    });
    router.onLine(wrapped(undefined, "session/update", { sessionId: "s", update: { sessionUpdate: "plan", entries: [] } }));
    router.onLine(wrapped(undefined, "session/update", { sessionId: "s", update: { sessionUpdate: "agent_message_chunk" } }));
    assert.deepEqual(outputs(router), [
      { jsonrpc: "2.0", method: "session/update", params: { sessionId: "s", update: { sessionUpdate: "agent_message_chunk" }, seen: true } },
    ]);
  });

  it("session start runs after the setup's answer, session end on close", () => {
    const events: string[] = [];
    const router = initialized({
      name: "sessions",
      onSessionStart: (peers, id, cwd) => {
        events.push(`start ${id} ${cwd}`);
        peers.notifyEditor("session/update", { sessionId: id, update: { sessionUpdate: "hello" } });
      },
      onSessionEnd: (_p, id) => void events.push(`end ${id}`),
    });
    router.onLine(request(9, "session/new", { cwd: "/w", mcpServers: [] }));
    const [sent] = outputs(router);
    router.onLine(result(sent.id, { sessionId: "s-1" }));
    const [answer, update] = outputs(router);
    assert.deepEqual(answer, { jsonrpc: "2.0", id: 9, result: { sessionId: "s-1" } });
    assert.equal(update.method, "session/update");
    router.onLine(request(10, "session/close", { sessionId: "s-1" }));
    assert.deepEqual(events, ["start s-1 /w", "end s-1"]);
  });

  it("Forward with then runs the author's hook on the result", () => {
    const router = initialized({ name: "tag", onEditorRequest: () => new Forward(undefined, (res) => ({ ...(res as Msg), tagged: true })) });
    router.onLine(request("x", "session/set_mode", { sessionId: "s", modeId: "m" }));
    const [sent] = outputs(router);
    router.onLine(result(sent.id, {}));
    assert.deepEqual(outputs(router), [{ jsonrpc: "2.0", id: "x", result: { tagged: true } }]);
  });

  it("a deferred request is answered once, later", () => {
    const router = initialized({
      name: "later",
      onEditorRequest: (peers) => {
        const handle = peers.defer();
        peers.requestEditor("x/ask", {}, (res) => peers.respond(handle, { asked: res }));
        return handle;
      },
    });
    router.onLine(request(4, "x/question", {}));
    const [ask] = outputs(router);
    router.onLine(result(ask.id, 42));
    assert.deepEqual(outputs(router), [{ jsonrpc: "2.0", id: 4, result: { asked: 42 } }]);
  });
});

describe("cancellation", () => {
  it("a cancel naming a forwarded request names ours, plain; one naming nothing sends nothing", () => {
    const router = initialized({ name: "p" });
    router.onLine(request("p", "session/prompt", { sessionId: "s", prompt: [] }));
    const [sent] = outputs(router);
    router.onLine(JSON.stringify({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: "p" } }));
    router.onLine(JSON.stringify({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 99 } }));
    assert.deepEqual(outputs(router), [{ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: sent.id } }]);
  });
});

describe("tools over ACP", () => {
  it("declares the server in session setup and answers tools/call over mcp/message", () => {
    const router = initialized({
      name: "echo",
      tools: [
        {
          name: "echo",
          description: "Says it back",
          inputSchema: { type: "object" },
          call: (_p, session, args) => {
            if (!args.text) throw new ToolError("`text` is required");
            return `${session}: ${String(args.text)}`;
          },
        },
      ],
    });
    router.onLine(request(1, "session/new", { cwd: "/w", mcpServers: [{ name: "x" }] }));
    const [sent] = outputs(router);
    assert.deepEqual(((sent.params as Msg).params as Msg).mcpServers, [{ name: "x" }, { type: "acp", name: "echo", serverId: "echo-1" }]);
    router.onLine(result(sent.id, { sessionId: "s-9" }));
    router.takeOutput();
    router.onLine(wrapped(2, "mcp/message", { serverId: "echo-1", requestId: "r", method: "tools/call", params: { name: "echo", arguments: { text: "hi" } } }));
    router.onLine(wrapped(3, "mcp/message", { serverId: "echo-1", requestId: "r2", method: "tools/call", params: { name: "echo", arguments: {} } }));
    router.onLine(wrapped(4, "mcp/message", { serverId: "other-1", method: "ping" }));
    const [done, refused, passed] = outputs(router);
    assert.deepEqual(done.result, { result: { content: [{ type: "text", text: "s-9: hi" }] } });
    assert.equal(((refused.result as Msg).result as Msg).isError, true);
    assert.equal(passed.method, "mcp/message");
  });
});

describe("responses", () => {
  it("a response with nothing to run goes back with its text as it came", () => {
    const router = initialized({ name: "p" });
    router.onLine(request("req-7", "session/prompt", { sessionId: "s", prompt: [] }));
    const [sent] = outputs(router);
    const body = '"result":{"stopReason":"end_turn","z":1.50,  "a":[ 2 ], "big":12345678901234567890},"_meta":{"x":"é"}}';
    router.onLine(`{"jsonrpc":"2.0","id":${sent.id},${body}`);
    assert.equal(router.takeOutput(), `{"jsonrpc":"2.0","id":"req-7",${body}\n`);
    assert.equal(router.peers.inFlight.size, 0);
  });

  it("an error response goes back the same way", () => {
    const router = initialized({ name: "p" });
    router.onLine(request(3, "session/prompt", { sessionId: "s", prompt: [] }));
    const [sent] = outputs(router);
    router.onLine(`{"jsonrpc":"2.0","id":${sent.id},"error":{"code":-32000,"message":"no"}}`);
    assert.equal(router.takeOutput(), '{"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"no"}}\n');
  });

  it("a result hook still runs, and other forms take the full path", () => {
    const router = initialized({
      name: "p",
      onEditorRequest: () => new Forward(undefined, (result) => ({ ...(result as Msg), tagged: true }) as never),
    });
    router.onLine(request(1, "x/one", {}));
    router.onLine(request(2, "x/two", {}));
    const [one, two] = outputs(router);
    router.onLine(`{"jsonrpc":"2.0","id":${one.id},"result":{}}`);
    router.onLine(`{ "id": ${two.id}, "jsonrpc": "2.0", "result": {"b": 1} }`);
    router.onLine('{"jsonrpc":"2.0","id":99,"result":{}}');
    assert.deepEqual(outputs(router), [
      { jsonrpc: "2.0", id: 1, result: { tagged: true } },
      { jsonrpc: "2.0", id: 2, result: { b: 1, tagged: true } },
    ]);
  });
});

describe("encoding", () => {
  it("each line is the text JSON.stringify gives for the message object", () => {
    const params = { sessionId: "s", text: "é \u2028 \"q\"", n: [1, 2.5, null, true], nested: { a: {} } };
    const peers = new Peers();
    peers.successorMethod = "_proxy/successor";
    peers.sendCall("agent", 7, "session/prompt", params);
    peers.sendCall("agent", undefined, "session/cancel", params);
    peers.sendCall("agent", 8, "x/none", undefined);
    peers.sendCall("editor", 9, "fs/read_text_file", params);
    peers.sendCall("editor", undefined, "session/update", params);
    peers.sendCall("editor", undefined, "x/none", undefined);
    peers.sendResult("id-1", params);
    peers.sendResult(3, undefined);
    const objects = [
      { jsonrpc: "2.0", id: 7, method: "_proxy/successor", params: { method: "session/prompt", params } },
      { jsonrpc: "2.0", method: "_proxy/successor", params: { method: "session/cancel", params } },
      { jsonrpc: "2.0", id: 8, method: "_proxy/successor", params: { method: "x/none" } },
      { jsonrpc: "2.0", id: 9, method: "fs/read_text_file", params },
      { jsonrpc: "2.0", method: "session/update", params },
      { jsonrpc: "2.0", method: "x/none" },
      { jsonrpc: "2.0", id: "id-1", result: params },
      { jsonrpc: "2.0", id: 3, result: null },
    ];
    assert.deepEqual(peers.out, objects.map((o) => `${JSON.stringify(o)}\n`));
  });
});

describe("framing", () => {
  it("every chunking gives the same lines", () => {
    const data = new TextEncoder().encode('{"a":1}\n\n{"b":"é"}\r\n{"c":3}');
    for (let size = 1; size <= data.length; size++) {
      const splitter = new LineSplitter();
      const lines: string[] = [];
      for (let at = 0; at < data.length; at += size) lines.push(...splitter.feed(data.subarray(at, at + size)));
      lines.push(...splitter.finish());
      assert.deepEqual(lines, ['{"a":1}', '{"b":"é"}', '{"c":3}'], `chunks of ${size}`);
    }
  });

  it("a chunk of whole lines gives each line, blank ones skipped and a final CR cut", () => {
    const splitter = new LineSplitter();
    const lines = splitter.feed(new TextEncoder().encode('{"a":1}\r\n\n \t\r\n{"b":"é\\r"}\n\r\n'));
    assert.deepEqual(lines, ['{"a":1}', '{"b":"é\\r"}']);
    assert.deepEqual(splitter.feed(new TextEncoder().encode('{"c":3}\n')), ['{"c":3}']);
  });

  it("drops an overlong line even when a chunk holds whole lines", () => {
    const splitter = new LineSplitter(8);
    const lines = splitter.feed(new TextEncoder().encode("0123456789\nok\n"));
    assert.deepEqual([lines, splitter.dropped], [["ok"], 1]);
  });

  it("drops an overlong line and keeps the next", () => {
    const splitter = new LineSplitter(8);
    const enc = new TextEncoder();
    const lines = [...splitter.feed(enc.encode("0123456789")), ...splitter.feed(enc.encode("abc\nok\n"))];
    assert.deepEqual([lines, splitter.dropped], [["ok"], 1]);
  });

  it("writes a 70 KB line in pieces under 4,096 bytes, every byte once", () => {
    const data = new Uint8Array(70_001).fill(120);
    const pieces: number[] = [];
    let total = 0;
    writeInChunks(data, (piece) => {
      pieces.push(piece.length);
      total += piece.length;
    });
    assert.equal(total, data.length);
    assert.ok(pieces.every((n) => n <= WRITE_CHUNK && n < 4096));
  });
});
