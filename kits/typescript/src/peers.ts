// A hook's handle on the proxy's two neighbours: send notifications and requests either way,
// answer deferred requests, read what the handshake told us. Queues lines; knows nothing of I/O.

import { Deferred, Fail, type Json, type Side } from "./decisions.js";
import * as log from "./log.js";

/** Called with the result, or with the error object. */
export type ResponseCallback = (result: Json, error: Record<string, Json> | undefined) => void;

export class Peers {
  /** Encoded lines, each ending in a newline, waiting to be written. */
  out: string[] = [];
  successorMethod = "proxy/successor";
  /** `clientCapabilities` of the editor's `initialize`, once seen. */
  clientCapabilities: Record<string, Json> = {};
  /** `agentCapabilities` of the agent's `initialize` result, once seen. */
  agentCapabilities: Record<string, Json> = {};
  /** Session id -> its working directory, from the session setup requests. */
  sessionCwds = new Map<string, string | null>();
  /** Our id -> where its response goes (see router.ts). */
  inFlight = new Map<number, unknown>();
  /** Requests a hook deferred and has not answered yet, by side and JSON id. */
  open = new Set<string>();
  /** The request the hook running now was shown (set by the router), and its handle once the
   *  hook asked for one. */
  deciding: { side: Side; id: Json; method: string } | undefined;
  current: Deferred | undefined;
  private nextId = 0;

  newId(route: unknown): number {
    const ours = this.nextId++;
    this.inFlight.set(ours, route);
    return ours;
  }

  /** A request (`id` given) or notification: wrapped in `proxy/successor` toward the agent
   *  side, plain toward the editor side. */
  sendCall(to: Side, id: number | undefined, method: string, params: Json): void {
    // The same text JSON.stringify gives for {jsonrpc, id, method, params}, put together from
    // strings: in the component each object built and walked costs interpreted steps.
    const head = id === undefined ? '{"jsonrpc":"2.0","method":' : `{"jsonrpc":"2.0","id":${id},"method":`;
    const encoded = params === undefined ? undefined : JSON.stringify(params);
    const call = encoded === undefined ? `${JSON.stringify(method)}` : `${JSON.stringify(method)},"params":${encoded}`;
    this.out.push(
      to === "agent"
        ? `${head}${JSON.stringify(this.successorMethod)},"params":{"method":${call}}}\n`
        : `${head}${call}}\n`,
    );
  }

  sendResult(id: Json, result: Json): void {
    this.out.push(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${JSON.stringify(result ?? null)}}\n`);
  }

  sendError(id: Json, error: Record<string, Json>): void {
    this.out.push(JSON.stringify({ jsonrpc: "2.0", id, error }) + "\n");
  }

  notifyAgent(method: string, params: Json): void {
    this.sendCall("agent", undefined, method, params);
  }

  notifyEditor(method: string, params: Json): void {
    this.sendCall("editor", undefined, method, params);
  }

  requestAgent(method: string, params: Json, onResponse: ResponseCallback): void {
    this.sendCall("agent", this.newId(onResponse), method, params);
  }

  requestEditor(method: string, params: Json, onResponse: ResponseCallback): void {
    this.sendCall("editor", this.newId(onResponse), method, params);
  }

  /** Keeps the request being decided open: return the handle from the hook and answer later. */
  defer(): Deferred {
    if (!this.current) {
      if (!this.deciding) throw new Error("defer() outside a request hook");
      const { side, id, method } = this.deciding;
      this.current = new Deferred(side, id, method);
      this.open.add(openKey(side, id));
    }
    return this.current;
  }

  respond(handle: Deferred, result: Json): void {
    if (this.close(handle)) this.sendResult(handle.id, result);
  }

  fail(handle: Deferred, failure: Fail): void {
    if (this.close(handle)) this.sendError(handle.id, failure.errorObject());
  }

  private close(handle: Deferred): boolean {
    const key = openKey(handle.side, handle.id);
    if (handle.answered || !this.open.has(key)) {
      log.error(`request ${JSON.stringify(handle.id)} \`${handle.method}\` was already answered; answer dropped`);
      return false;
    }
    handle.answered = true;
    this.open.delete(key);
    return true;
  }
}

/** How a request received is known while it is open: by side and JSON id. */
export function openKey(side: Side, id: Json): string {
  return `${side} ${JSON.stringify(id)}`;
}
