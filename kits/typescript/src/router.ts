// The proxy-chain protocol, sans I/O: one line from the conductor in, the lines to write out.
// Answers `proxy/initialize`, opens and builds `proxy/successor` envelopes, chooses the id of
// every request it sends and routes each response back, rewrites cancellations, runs the hooks.
//
// | arriving from the conductor              | hook                     | sent on as                        |
// |------------------------------------------|--------------------------|-----------------------------------|
// | `proxy/initialize` / `_proxy/initialize` | onInitialize             | `proxy/successor {initialize}`    |
// | plain request / notification             | onPrompt, onEditor*      | `proxy/successor {method,params}` |
// | `proxy/successor` request / notification | onUpdate, onAgent*, ...  | plain message                     |
// | response to an id we chose               | onClientResult, then     | response under the requester's id |
// | `$/cancel_request` naming a forwarded one| none                     | plain, `requestId` rewritten      |

import {
  DROP,
  Deferred,
  Fail,
  Forward,
  type Json,
  type RequestDecision,
  Respond,
  type ResultHook,
  type Side,
} from "./decisions.js";
import * as log from "./log.js";
import { McpServers } from "./mcp.js";
import { Peers, openKey } from "./peers.js";
import type { Proxy } from "./proxy.js";

const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const INVALID_PARAMS = -32602;
const METHOD_NOT_FOUND = -32601;
const INTERNAL_ERROR = -32603;
/** A Set: in the component `Array.prototype.includes` is JavaScript the engine interprets. */
const SESSION_SETUP = new Set(["session/new", "session/load", "session/resume", "session/fork"]);

/** How a response begins when its sender writes the members in the usual order; see
 *  `Router.passResponse`. */
const RESPONSE_HEAD = '{"jsonrpc":"2.0","id":';
const DIGITS = /^[0-9]+$/;

type Obj = Record<string, Json>;
const isObj = (v: Json): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const other = (side: Side): Side => (side === "editor" ? "agent" : "editor");

/** Runs on a forwarded request's result with the params that were sent. */
type KitHook = (result: Json, sent: Json) => Json | Fail | undefined;

/** A request we passed on: its response goes back to `side` under `originId`. */
class Forwarded {
  constructor(
    readonly side: Side,
    readonly originId: Json,
    readonly method: string,
    readonly params: Json,
    readonly then: KitHook | undefined,
  ) {}
}

export class Router {
  readonly peers = new Peers();
  private readonly mcp: McpServers | undefined;
  /** Session-start hooks, run once the setup's answer is on its way to the editor. */
  private startedSessions: (() => void)[] = [];

  constructor(readonly proxy: Proxy) {
    this.mcp = proxy.tools?.length ? new McpServers(proxy.name, proxy.tools) : undefined;
  }

  takeOutput(): string {
    const out = this.peers.out;
    const text = out.length === 1 ? out[0] : out.join("");
    out.length = 0;
    return text;
  }

  onLine(line: string): void {
    if (line.startsWith(RESPONSE_HEAD) && this.passResponse(line)) return;
    let message: Json;
    try {
      message = JSON.parse(line);
    } catch (e) {
      log.warn(`line that is not JSON dropped: ${String(e)}`);
      this.peers.sendError(null, { code: PARSE_ERROR, message: `Parse error: ${String(e)}` });
      return;
    }
    if (!isObj(message)) {
      this.peers.sendError(null, { code: INVALID_REQUEST, message: "not a JSON-RPC object" });
      return;
    }
    if (typeof message.method === "string") {
      if ("id" in message) this.onRequest(message.id, message.method, message.params);
      else this.onNotification(message.method, message.params);
    } else if ("id" in message) {
      this.onResponse(message);
    } else {
      this.peers.sendError(null, { code: INVALID_REQUEST, message: "neither a call nor a response" });
    }
  }

  private onRequest(id: Json, method: string, params: Json): void {
    if (method === "proxy/successor" || method === "_proxy/successor") {
      if (!isObj(params) || typeof params.method !== "string") {
        this.peers.sendError(id, { code: INVALID_PARAMS, message: `malformed ${method}` });
        return;
      }
      this.requestFrom("agent", id, params.method, params.params);
      return;
    }
    if (method === "proxy/initialize" || method === "_proxy/initialize") {
      this.peers.successorMethod = method.replace("initialize", "successor");
      method = "initialize";
    } else if (method === "initialize") {
      log.error("received `initialize`: a proxy must be started by a conductor");
      this.peers.sendError(id, {
        code: INVALID_REQUEST,
        message: "this program is an ACP proxy: run it from a conductor, which sends `proxy/initialize`",
      });
      return;
    }
    this.requestFrom("editor", id, method, params);
  }

  private requestFrom(side: Side, id: Json, method: string, params: Json): void {
    const peers = this.peers;
    peers.deciding = { side, id, method };
    let decision: RequestDecision;
    try {
      decision = this.decide(side, method, params);
    } catch (e) {
      log.error(`hook for \`${method}\` failed: ${String(e)}`);
      decision = new Fail(INTERNAL_ERROR, `proxy ${this.proxy.name} failed on \`${method}\`: ${String(e)}`);
    }
    const handle = peers.current;
    peers.deciding = undefined;
    peers.current = undefined;
    if (decision instanceof Deferred) return;
    if (handle) peers.open.delete(openKey(side, id)); // deferred, then decided otherwise after all
    if (decision instanceof Respond) {
      peers.sendResult(id, decision.result);
    } else if (decision instanceof Fail) {
      peers.sendError(id, decision.errorObject());
    } else {
      let sent = params;
      let then: KitHook | undefined;
      if (decision instanceof Forward) {
        if (decision.params !== undefined) sent = decision.params;
        if (decision.then) then = kitHookOf(decision.then);
      } else if (decision !== undefined) {
        sent = decision;
      }
      const route = new Forwarded(side, id, method, sent, then);
      peers.sendCall(other(side), peers.newId(route), method, sent);
    }
  }

  private decide(side: Side, method: string, params: Json): RequestDecision {
    const { proxy, peers } = this;
    if (side === "editor") {
      if (method === "initialize") {
        if (isObj(params) && isObj(params.clientCapabilities)) peers.clientCapabilities = params.clientCapabilities;
        return this.then(proxy.onInitialize?.(peers, params as never), (result) => {
          if (isObj(result) && isObj(result.agentCapabilities)) peers.agentCapabilities = result.agentCapabilities;
          return undefined;
        });
      }
      if (SESSION_SETUP.has(method) && isObj(params)) return this.sessionSetup(method, params);
      if (method === "session/close" && isObj(params) && typeof params.sessionId === "string") {
        proxy.onSessionEnd?.(peers, params.sessionId);
        peers.sessionCwds.delete(params.sessionId);
      }
      if (method === "session/prompt" && isObj(params)) return proxy.onPrompt?.(peers, params as never);
      return proxy.onEditorRequest?.(peers, method, params);
    }
    if (method === "mcp/message" && this.mcp?.owns(params)) return new Respond(this.mcp.handle(peers, params));
    if ((method === "mcp/connect" || method === "mcp/disconnect") && this.mcp) {
      return new Fail(
        METHOD_NOT_FOUND,
        `Method not found: \`${method}\` (the ${proxy.name} MCP servers speak connectionless \`mcp/message\`)`,
      );
    }
    const decision =
      method === "session/request_permission" && isObj(params)
        ? proxy.onPermissionRequest?.(peers, params as never)
        : proxy.onAgentRequest?.(peers, method, params);
    return this.then(decision, (result, sent) => proxy.onClientResult?.(peers, method, sent, result));
  }

  /** `decision`, when it passes the request on, with `hook` run on the result first. */
  private then(decision: RequestDecision, hook: KitHook): RequestDecision {
    if (decision instanceof Respond || decision instanceof Fail || decision instanceof Deferred) return decision;
    const forward = decision instanceof Forward ? decision : new Forward(decision);
    const own = forward.then;
    const combined: KitHook = (result, sent) => {
      const changed = hook(result, sent);
      if (changed instanceof Fail) return changed;
      let next = changed === undefined ? result : changed;
      if (own) {
        const ownChanged = own(next);
        if (ownChanged instanceof Fail) return ownChanged;
        next = ownChanged === undefined ? next : ownChanged;
      }
      return next;
    };
    // The router tells a kit hook (result, sent) from an author's (result) by its mark.
    return new Forward(forward.params, markKit(combined) as unknown as ResultHook);
  }

  private sessionSetup(method: string, params: Obj): RequestDecision {
    const cwd = typeof params.cwd === "string" ? params.cwd : null;
    const known =
      (method === "session/load" || method === "session/resume") && typeof params.sessionId === "string"
        ? params.sessionId
        : null;
    let serverId: string | undefined;
    if (this.mcp) [params, serverId] = this.mcp.declare(params, known);
    let decision = this.proxy.onEditorRequest?.(this.peers, method, params);
    if (decision === undefined && serverId !== undefined) decision = params;
    return this.then(decision, (result) => {
      const sessionId = known ?? (isObj(result) && typeof result.sessionId === "string" ? result.sessionId : null);
      if (sessionId !== null) {
        if (serverId !== undefined) this.mcp?.sessions.set(serverId, sessionId);
        this.peers.sessionCwds.set(sessionId, cwd);
        this.startedSessions.push(() => this.proxy.onSessionStart?.(this.peers, sessionId, cwd));
      }
      return undefined;
    });
  }

  private onNotification(method: string, params: Json): void {
    let side: Side = "editor";
    if (method === "proxy/successor" || method === "_proxy/successor") {
      if (!isObj(params) || typeof params.method !== "string") {
        log.warn(`malformed ${method} notification dropped`);
        return;
      }
      side = "agent";
      method = params.method;
      params = params.params;
    }
    if (method === "$/cancel_request") {
      this.passOnCancel(params);
      return;
    }
    const { proxy, peers } = this;
    let decision;
    try {
      if (side === "agent" && method === "session/update" && isObj(params)) decision = proxy.onUpdate?.(peers, params as never);
      else if (side === "agent" && method === "mcp/message" && this.mcp?.owns(params)) decision = DROP;
      else if (side === "agent") decision = proxy.onAgentNotification?.(peers, method, params);
      else decision = proxy.onEditorNotification?.(peers, method, params);
    } catch (e) {
      log.error(`hook for \`${method}\` failed: ${String(e)}; passed on unchanged`);
      decision = undefined;
    }
    if (decision === DROP) {
      log.debug(`\`${method}\` from the ${side} side dropped`);
      return;
    }
    peers.sendCall(other(side), undefined, method, decision === undefined ? params : decision);
  }

  /** Cancellation names a request on this hop: we cancel ours, plain, never wrapped. */
  private passOnCancel(params: Json): void {
    if (!isObj(params) || !("requestId" in params)) return;
    const wanted = JSON.stringify(params.requestId);
    for (const [ours, route] of this.peers.inFlight) {
      if (route instanceof Forwarded && JSON.stringify(route.originId) === wanted) {
        this.peers.sendCall("editor", undefined, "$/cancel_request", { ...params, requestId: ours });
        return;
      }
    }
    log.debug(`$/cancel_request for ${wanted}, not a request we passed on: nothing to pass on`);
  }

  /** A response, written `{"jsonrpc":"2.0","id":N,"result"|"error":...`, to a request we passed
   *  on with nothing to run on its result: sent back under the requester's id with the rest of
   *  its text as it came, never parsed. False: the full path decides. */
  private passResponse(line: string): boolean {
    const comma = line.indexOf(",", RESPONSE_HEAD.length);
    const digits = comma < 0 ? "" : line.slice(RESPONSE_HEAD.length, comma);
    if (!DIGITS.test(digits)) return false;
    const ours = Number(digits);
    const route = this.peers.inFlight.get(ours);
    if (!(route instanceof Forwarded) || route.then) return false;
    if (!line.startsWith(',"result":', comma) && !line.startsWith(',"error":', comma)) return false;
    this.peers.inFlight.delete(ours);
    this.peers.out.push(`${RESPONSE_HEAD}${JSON.stringify(route.originId)}${line.slice(comma)}\n`);
    return true;
  }

  private onResponse(message: Obj): void {
    const id = message.id;
    const route = typeof id === "number" ? this.peers.inFlight.get(id) : undefined;
    if (route === undefined) {
      log.warn(`response to id ${JSON.stringify(id)} that we are not waiting for; dropped`);
      return;
    }
    this.peers.inFlight.delete(id as number);
    const error = isObj(message.error) ? message.error : undefined;
    let result = message.result;
    if (!(route instanceof Forwarded)) {
      (route as (result: Json, error: Obj | undefined) => void)(result, error);
      return;
    }
    if (error) {
      this.peers.sendError(route.originId, error);
      return;
    }
    if (route.then) {
      let changed;
      try {
        changed = route.then(result, route.params);
      } catch (e) {
        log.error(`result hook for \`${route.method}\` failed: ${String(e)}`);
        changed = new Fail(INTERNAL_ERROR, `proxy ${this.proxy.name} failed on the result of \`${route.method}\``);
      }
      if (changed instanceof Fail) {
        this.peers.sendError(route.originId, changed.errorObject());
        return;
      }
      if (changed !== undefined) result = changed;
    }
    this.peers.sendResult(route.originId, result);
    if (this.startedSessions.length) {
      const started = this.startedSessions;
      this.startedSessions = [];
      for (const start of started) start();
    }
  }
}

const KIT = Symbol("kit hook");

function markKit(hook: KitHook): KitHook {
  (hook as unknown as Record<symbol, boolean>)[KIT] = true;
  return hook;
}

/** A hook of the kit's takes the sent params too; an author's `then` takes the result only. */
function kitHookOf(then: (result: Json) => Json | Fail | undefined): KitHook {
  return (then as unknown as Record<symbol, boolean>)[KIT] ? (then as KitHook) : (result) => then(result);
}
