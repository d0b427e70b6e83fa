// The interface a proxy author implements: one optional hook per kind of traffic, each passing
// its message through unchanged when absent. Says what a proxy may decide, not how it is sent.

import type {
  InitializeRequest,
  PromptRequest,
  RequestPermissionRequest,
  SessionNotification,
} from "@agentclientprotocol/sdk";

import type { Json, NotificationDecision, RequestDecision } from "./decisions.js";
import type { Peers } from "./peers.js";

/** An MCP tool offered to the agent over ACP (an `acp` MCP server declared in each session
 *  setup). `call` returns the tool's text, or throws a ToolError to report a failure. */
export interface Tool {
  name: string;
  description: string;
  inputSchema: Record<string, Json>;
  call(peers: Peers, sessionId: string | null, args: Record<string, Json>): string;
}

/** A tool's failure, reported to the agent as an `isError` result with this text. */
export class ToolError extends Error {}

export interface Proxy {
  /** Names the proxy in logs and its MCP server. */
  name: string;
  /** MCP tools offered to the agent over ACP; none: no server is declared. */
  tools?: Tool[];

  // Editor side -> agent side.
  onInitialize?(peers: Peers, params: InitializeRequest): RequestDecision;
  /** A session was created, loaded, resumed or forked (after the agent answered). */
  onSessionStart?(peers: Peers, sessionId: string, cwd: string | null): void;
  /** The editor closed the session (`session/close`). */
  onSessionEnd?(peers: Peers, sessionId: string): void;
  onPrompt?(peers: Peers, params: PromptRequest): RequestDecision;
  onEditorRequest?(peers: Peers, method: string, params: Json): RequestDecision;
  onEditorNotification?(peers: Peers, method: string, params: Json): NotificationDecision;

  // Agent side -> editor side.
  /** A `session/update` notification. */
  onUpdate?(peers: Peers, params: SessionNotification): NotificationDecision;
  onPermissionRequest?(peers: Peers, params: RequestPermissionRequest): RequestDecision;
  /** Any other request of the agent (`fs/*`, `terminal/*`, extensions). */
  onAgentRequest?(peers: Peers, method: string, params: Json): RequestDecision;
  /** The editor's result for an agent request passed on, before the agent sees it. */
  onClientResult?(peers: Peers, method: string, params: Json, result: Json): Json | undefined;
  onAgentNotification?(peers: Peers, method: string, params: Json): NotificationDecision;
}
