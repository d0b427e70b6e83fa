// The kit's platform under Node.js (development, tests): stdin events, stdout writes, argv and
// node:fs. The WASI twin is platform-wasi.ts; the build picks one. Knows nothing of ACP.

import { readFileSync } from "node:fs";

import { LineSplitter } from "./framing.js";
import * as log from "./log.js";
import type { Router } from "./router.js";

export function args(): string[] {
  return process.argv.slice(2);
}

export function readTextFile(path: string): string {
  return readFileSync(path, "utf8");
}

export function writeStderr(line: string): void {
  process.stderr.write(line);
}

export function environmentVariableNames(): string[] {
  return Object.keys(process.env);
}

export function environmentVariable(name: string): string | undefined {
  return process.env[name];
}

/** Feeds stdin's lines to `router` and writes what it produced, until stdin ends. */
export function serve(router: Router): void {
  const splitter = new LineSplitter();
  const flush = (): void => {
    const text = router.takeOutput();
    if (text) process.stdout.write(text);
  };
  process.stdin.on("data", (chunk: Buffer) => {
    for (const line of splitter.feed(chunk)) router.onLine(line);
    if (splitter.dropped) {
      log.error(`${splitter.dropped} line(s) over the size limit dropped`);
      splitter.dropped = 0;
    }
    flush();
  });
  process.stdin.on("end", () => {
    for (const line of splitter.finish()) router.onLine(line);
    flush();
    if (router.peers.open.size) log.warn(`input ended with ${router.peers.open.size} request(s) never answered`);
  });
}
