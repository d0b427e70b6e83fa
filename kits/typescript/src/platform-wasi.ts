// The kit's platform inside a WASI component (componentize-js): blocking reads of wasi:cli's
// stdin, stdout through the engine's console, stderr in chunks under 4,096 bytes (a larger one
// traps), arguments and preopened directories of wasi:filesystem. The Node.js twin is
// platform-node.ts. Knows nothing of ACP.

import { getArguments, getEnvironment } from "wasi:cli/environment@0.2.12";
import { getStderr } from "wasi:cli/stderr@0.2.12";
import { getStdin } from "wasi:cli/stdin@0.2.12";
import { getDirectories } from "wasi:filesystem/preopens@0.2.12";

import { LineSplitter, writeInChunks } from "./framing.js";
import * as log from "./log.js";
import type { Router } from "./router.js";

const READ_CHUNK = 64n * 1024n;
const encoder = new TextEncoder();

export function args(): string[] {
  // argv[0] is the proxy's name, as for a native program.
  return getArguments().slice(1);
}

export function environmentVariableNames(): string[] {
  return getEnvironment().map(([key]) => key);
}

export function environmentVariable(name: string): string | undefined {
  return getEnvironment().find(([key]) => key === name)?.[1];
}

export function writeStderr(line: string): void {
  const stderr = getStderr();
  writeInChunks(encoder.encode(line), (piece) => stderr.blockingWriteAndFlush(piece));
}

/** Reads a file through the preopened directory (a grant) whose guest path contains it. */
export function readTextFile(path: string): string {
  for (const [dir, guestPath] of getDirectories()) {
    const root = guestPath.endsWith("/") ? guestPath : `${guestPath}/`;
    if (!path.startsWith(root)) continue;
    const file = dir.openAt({ symlinkFollow: true }, path.slice(root.length), {}, { read: true });
    const size = file.stat().size;
    const pieces: Uint8Array[] = [];
    let offset = 0n;
    while (offset < size) {
      const [bytes, end] = file.read(size - offset, offset);
      pieces.push(bytes);
      offset += BigInt(bytes.length);
      if (end || bytes.length === 0) break;
    }
    const whole = new Uint8Array(pieces.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const piece of pieces) {
      whole.set(piece, at);
      at += piece.length;
    }
    return new TextDecoder().decode(whole);
  }
  throw new Error(`${path}: not inside a granted directory`);
}

/** Feeds stdin's lines to `router` and writes what it produced, until stdin ends. */
export function serve(router: Router): void {
  const stdin = getStdin();
  const splitter = new LineSplitter();
  // The lines go out through `console.log`, the engine's own path to stdout (a write of any
  // size, completed before it returns), not through wasi:io's stream from here: with
  // componentize-js 0.23.0 each `blockingWriteAndFlush` from JavaScript took longer the longer
  // the proxy ran (21 us per write at first, 99 us after 60,000 writes), while `console.log`
  // stays at 6-10 us. With one argument it substitutes nothing (no `%s`) and adds the newline
  // the last line already ends with.
  const flush = (): void => {
    const text = router.takeOutput();
    if (text) console.log(text.endsWith("\n") ? text.slice(0, -1) : text);
  };
  for (;;) {
    let chunk: Uint8Array;
    try {
      chunk = stdin.blockingRead(READ_CHUNK);
    } catch {
      break; // the stream closed: the conductor is done with us
    }
    // An indexed loop: `for...of` runs the iterator protocol, interpreted here (several µs).
    const lines = splitter.feed(chunk);
    for (let i = 0; i < lines.length; i++) router.onLine(lines[i]);
    if (splitter.dropped) {
      log.error(`${splitter.dropped} line(s) over the size limit dropped`);
      splitter.dropped = 0;
    }
    flush();
  }
  for (const line of splitter.finish()) router.onLine(line);
  flush();
  if (router.peers.open.size) log.warn(`input ended with ${router.peers.open.size} request(s) never answered`);
}
