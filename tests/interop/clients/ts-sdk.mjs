// An editor written with the official TypeScript SDK (@agentclientprotocol/sdk, its client()
// API): starts the agent command given after `--`, plays the interop scenario and prints one
// JSON line per step on stdout. Knows the scenario's prompts, not what a conductor is.
//
//   node ts-sdk.mjs --sdk DIR --entry stable|unstable|v2 --cwd DIR [--scenario full|initialize] -- COMMAND ARGS...
//
// DIR is the node_modules holding the SDK (target/interop/npm/node_modules). Every step line is
// {"step": NAME, ...what happened}; tests/tests/interop.rs reads them. A step that throws prints
// {"step": NAME, "error": MESSAGE} and ends the run with exit status 1.

import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const ENTRIES = {
  stable: "@agentclientprotocol/sdk",
  unstable: "@agentclientprotocol/sdk/unstable",
  v2: "@agentclientprotocol/sdk/experimental/v2",
};

function parseArgs(argv) {
  const separator = argv.indexOf("--");
  if (separator < 0 || separator === argv.length - 1) {
    throw new Error("usage: ts-sdk.mjs --sdk DIR --entry ENTRY --cwd DIR -- COMMAND ARGS...");
  }
  const options = { scenario: "full" };
  const flags = argv.slice(0, separator);
  for (let i = 0; i < flags.length; i += 2) {
    options[flags[i].replace(/^--/, "")] = flags[i + 1];
  }
  for (const required of ["sdk", "entry", "cwd"]) {
    if (!options[required]) throw new Error(`--${required} is required`);
  }
  if (!ENTRIES[options.entry]) throw new Error(`unknown --entry ${options.entry}`);
  return { options, command: argv.slice(separator + 1) };
}

function emit(step, fields) {
  process.stdout.write(JSON.stringify({ step, ...fields }) + "\n");
}

const { options, command } = parseArgs(process.argv.slice(2));
const resolve = createRequire(join(options.sdk, "_")).resolve;
const acp = await import(pathToFileURL(resolve(ENTRIES[options.entry])).href);

const agent = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
emit("started", { pid: agent.pid, entry: options.entry });
const exited = new Promise((done) => agent.on("exit", (code, signal) => done({ code, signal })));

// What the agent asked of this client during the current step.
let permissionAnswer = "reject";
let asked = { permissions: [], reads: [] };

// The v2 client only initializes (its methods have other names); the v1 clients answer the
// demo agent's requests.
const app = acp.client({ name: "interop-ts-sdk" });
if (options.entry !== "v2") {
  app
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      asked.permissions.push({ title: params.toolCall.title ?? null, kind: params.toolCall.kind ?? null });
      const option = params.options.find((o) => o.kind.startsWith(permissionAnswer));
      return { outcome: { outcome: "selected", optionId: option.optionId } };
    })
    .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
      asked.reads.push(params.path);
      return { content: readFileSync(params.path, "utf8") };
    });
}

const stream = acp.ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));

/// Runs one prompt turn and says what it showed: text, tool calls, plans, what it asked.
async function turn(session, text, { answer = "reject", cancelAfter = null, cx = null } = {}) {
  permissionAnswer = answer;
  asked = { permissions: [], reads: [] };
  const shown = { text: "", toolCalls: [], plans: [] };
  const done = session.prompt(text);
  let cancelled = false;
  for (;;) {
    const message = await session.nextUpdate();
    if (message.kind === "stop") {
      await done;
      return { ...shown, ...asked, stopReason: message.stopReason };
    }
    const update = message.update;
    switch (update.sessionUpdate) {
      case "agent_message_chunk":
        if (update.content.type === "text") shown.text += update.content.text;
        break;
      case "tool_call":
        shown.toolCalls.push({ id: update.toolCallId, title: update.title, status: update.status ?? null });
        break;
      case "tool_call_update":
        shown.toolCalls.push({ id: update.toolCallId, status: update.status ?? null });
        break;
      case "plan":
        shown.plans.push(update.entries.map((e) => e.status));
        break;
      default:
        break;
    }
    if (cancelAfter && !cancelled && shown.text.includes(cancelAfter)) {
      cancelled = true;
      await cx.notify(acp.methods.agent.session.cancel, { sessionId: session.sessionId });
    }
  }
}

async function step(name, work) {
  try {
    emit(name, await work());
  } catch (error) {
    emit(name, { error: String(error?.message ?? error), data: error?.data ?? null });
    throw error;
  }
}

async function scenario(cx) {
  if (options.entry === "v2") {
    await step("initialize", async () => {
      const result = await cx.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        info: { name: "interop-ts-sdk", version: "2.4.0" },
        capabilities: { fs: { readTextFile: true } },
      });
      return { protocolVersion: result.protocolVersion };
    });
    return;
  }
  await step("initialize", async () => {
    const result = await cx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: false } },
      clientInfo: { name: "interop-ts-sdk", version: "2.4.0" },
    });
    return {
      protocolVersion: result.protocolVersion,
      agentName: result.agentInfo?.name ?? null,
      mcpAcp: result.agentCapabilities?.mcpCapabilities?.acp ?? null,
    };
  });
  if (options.scenario === "initialize") return;
  const first = await cx.buildSession(options.cwd).start();
  emit("session/new", { sessionId: first.sessionId });
  await step("hello", () => turn(first, "Hello"));
  await step("write allowed", () => turn(first, "Please write the release notes to a file", { answer: "allow" }));
  await step("write denied", () => turn(first, "Please write the release notes to a file", { answer: "reject" }));
  await step("read", () => turn(first, "Please read notes.txt"));
  await step("plan", () => turn(first, "Plan the release notes"));
  await step("remember", () => turn(first, "Remember that the release is on Friday"));
  await step("recall", () => turn(first, "What do you recall?"));
  await step("cancel", () => turn(first, "Go slow", { cancelAfter: "tick 1", cx }));
  const second = await cx.buildSession(options.cwd).start();
  emit("second session", { sessionId: second.sessionId });
  await step("second session recall", () => turn(second, "What do you recall?"));
  first.dispose();
  second.dispose();
}

let failed = false;
try {
  await app.connectWith(stream, scenario);
} catch {
  failed = true;
}
agent.stdin.end();
const exit = await exited;
emit("agent exited", exit);
process.exit(failed ? 1 : 0);
