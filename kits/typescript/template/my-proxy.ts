// my-proxy: say here what this proxy does to the traffic between editor and agent.
//
// Copy this directory, rename the file and the class, keep only the hooks you need. Run it under
// a conductor natively while you develop (`node kits/typescript/build.mjs node my-proxy.ts
// my-proxy.mjs`, then `command = "node"`, `args = ["my-proxy.mjs"]`); build the sandboxed
// component with `node kits/typescript/build.mjs wasm my-proxy.ts my-proxy.wasm`.

import type { ContentBlock, PromptRequest, SessionNotification } from "@agentclientprotocol/sdk";

import { type NotificationDecision, type Peers, type Proxy, type RequestDecision, args, log, run } from "../src/index.js";

export class MyProxy implements Proxy {
  name = "my-proxy";

  constructor(private readonly note: string) {}

  onSessionStart(_peers: Peers, sessionId: string, cwd: string | null): void {
    log.info(`session ${sessionId} started in ${cwd}`);
  }

  onPrompt(_peers: Peers, params: PromptRequest): RequestDecision {
    // Put the note in front of every prompt; return undefined to pass a prompt on unchanged.
    // `concat`, not `[note, ...params.prompt]`: in the sandbox an array spread runs the iterator
    // protocol in the engine's interpreter, about ten times the cost (docs/proxies.md).
    return { ...params, prompt: [{ type: "text", text: this.note } as ContentBlock].concat(params.prompt) };
  }

  onUpdate(_peers: Peers, _params: SessionNotification): NotificationDecision {
    return undefined;
  }
}

export function main(): void {
  run(new MyProxy(args()[0] ?? "Answer briefly."));
}
