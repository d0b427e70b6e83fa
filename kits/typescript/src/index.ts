// A kit for writing ACP proxies in TypeScript: the author writes hooks, the kit runs the stdio
// loop and the proxy-chain protocol. The same source runs under Node.js and as a WASI component;
// `acp-proxy-kit-platform` is the build's choice of platform-node.ts or platform-wasi.ts.

import * as platform from "acp-proxy-kit-platform";

import * as log from "./log.js";
import type { Proxy } from "./proxy.js";
import { Router } from "./router.js";

export { DROP, Deferred, Fail, Forward, Respond } from "./decisions.js";
export type { Json, NotificationDecision, RequestDecision, ResultHook, Side } from "./decisions.js";
export { LineSplitter, writeInChunks } from "./framing.js";
export { Peers } from "./peers.js";
export type { Proxy, Tool } from "./proxy.js";
export { ToolError } from "./proxy.js";
export { Router } from "./router.js";
export { log };

/** The program's arguments after its name (natively `process.argv.slice(2)`). */
export const args = (): string[] => platform.args();

/** The names of the environment variables the proxy sees (none under the sandbox unless granted). */
export const environmentVariableNames = (): string[] => platform.environmentVariableNames();

/** Reads a UTF-8 file; under the sandbox only inside a granted directory. */
export const readTextFile = (path: string): string => platform.readTextFile(path);

/** Runs `proxy` on stdin/stdout until stdin ends; logs go to stderr. */
export function run(proxy: Proxy): void {
  log.init(proxy.name, platform.writeStderr, platform.environmentVariable("ACP_PROXY_LOG"));
  platform.serve(new Router(proxy));
}
