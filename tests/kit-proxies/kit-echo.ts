// kit-echo (TypeScript): a kit proxy offering one MCP tool over ACP, for the end-to-end test
// tests/tests/kit_mcp.rs. `echo` answers `SESSION: TEXT`, and an `isError` result without `text`.

import { type Json, type Peers, type Proxy, type Tool, ToolError, run } from "../../kits/typescript/src/index.js";

const echo: Tool = {
  name: "echo",
  description: "Says the text back, with the session it was said in",
  inputSchema: { type: "object", properties: { text: { type: "string" } } },
  call(_peers: Peers, sessionId: string | null, args: Record<string, Json>): string {
    const text = args.text;
    if (typeof text !== "string" || text === "") throw new ToolError("`text` is required");
    return `${sessionId}: ${text}`;
  },
};

export class KitEcho implements Proxy {
  name = "kit-echo";
  tools = [echo];
}

export function main(): void {
  run(new KitEcho());
}
