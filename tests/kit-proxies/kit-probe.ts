// kit-probe (TypeScript): the TypeScript kit's template with two additions, for the end-to-end
// tests (tests/tests/wasm_kits.rs): every agent message chunk is tagged, and editor requests
// `kitprobe/read` (a file), `kitprobe/environment` (variable names), `kitprobe/net` (a network
// request) and `kitprobe/big` (a result of `size` bytes) are answered here, to show what the
// sandbox lets a TypeScript proxy do and that a large line is written whole.

import type { ContentBlock, PromptRequest, SessionNotification } from "@agentclientprotocol/sdk";

import {
  type Json,
  type NotificationDecision,
  type Peers,
  type Proxy,
  type RequestDecision,
  Respond,
  args,
  environmentVariableNames,
  log,
  readTextFile,
  run,
} from "../../kits/typescript/src/index.js";

function outcome(attempt: () => Json): Json {
  try {
    return { ok: true, value: attempt() };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.constructor.name : typeof e };
  }
}

export class KitProbe implements Proxy {
  name = "kit-probe";

  constructor(private readonly note: string) {}

  onSessionStart(_peers: Peers, sessionId: string, cwd: string | null): void {
    log.info(`session ${sessionId} started in ${cwd}`);
  }

  onPrompt(_peers: Peers, params: PromptRequest): RequestDecision {
    return { ...params, prompt: [{ type: "text", text: this.note } as ContentBlock].concat(params.prompt) };
  }

  onUpdate(_peers: Peers, params: SessionNotification): NotificationDecision {
    const update = params.update;
    if (update.sessionUpdate !== "agent_message_chunk" || update.content.type !== "text") return undefined;
    return { ...params, update: { ...update, content: { ...update.content, text: `${update.content.text} [kit-probe]` } } };
  }

  onEditorRequest(_peers: Peers, method: string, params: Json): RequestDecision {
    const p = params as Record<string, Json>;
    switch (method) {
      case "kitprobe/read":
        return new Respond(outcome(() => readTextFile(String(p.path))));
      case "kitprobe/environment":
        return new Respond({ names: environmentVariableNames().sort() });
      case "kitprobe/net":
        // `fetch` only starts its request here (the kit answers synchronously): the test
        // watches its loopback listener. In the component, built without wasi:http, the
        // call traps.
        return new Respond(startFetch(`http://${String(p.host)}:${Number(p.port)}/`));
      case "kitprobe/big":
        return new Respond({ text: "x".repeat(Number(p.size)) });
      default:
        return undefined;
    }
  }
}

/** Starts a request to `url`; whether it got anywhere only the server can tell. */
function startFetch(url: string): Json {
  if (typeof fetch !== "function") return { started: false, error: "ReferenceError" };
  try {
    void fetch(url).catch(() => undefined);
  } catch (e) {
    return { started: false, error: e instanceof Error ? e.constructor.name : typeof e };
  }
  return { started: true };
}

export function main(): void {
  run(new KitProbe(args()[0] ?? "Answer briefly."));
}
