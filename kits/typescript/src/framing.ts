// Line framing of the conductor's stdio channel: bytes in, whole lines out, and bounded writes.
// Pure functions over bytes; knows nothing of JSON-RPC, ACP or where the bytes come from.

/** A line longer than this is dropped (and counted), as the conductor bounds its own lines. */
export const MAX_LINE = 64 * 1024 * 1024;

/** The largest write handed to a WASI output stream at once: one over 4,096 bytes traps. */
export const WRITE_CHUNK = 4000;

/** Whether a line holds nothing but blanks; the first character decides most lines without
 *  `trim`, which the component's engine would run for each. */
function isBlank(line: string): boolean {
  return line.length === 0 || (line.charCodeAt(0) <= 32 && line.trim() === "");
}

export class LineSplitter {
  private pending: Uint8Array[] = [];
  private pendingLength = 0;
  private discarding = false;
  dropped = 0;
  private readonly decoder = new TextDecoder();

  constructor(private readonly maxLine = MAX_LINE) {}

  /** Collects `chunk` and returns the lines it completed (without newline or a final `\r`). */
  feed(chunk: Uint8Array): string[] {
    if (this.pendingLength === 0 && !this.discarding && chunk.length <= this.maxLine && chunk[chunk.length - 1] === 10) {
      // The usual chunk: whole lines and nothing carried over, so no line can be too long.
      // One decode and one split, for an engine that interprets this code (the WASI build).
      const text = this.decoder.decode(chunk);
      const lines: string[] = [];
      for (let start = 0; start < text.length; ) {
        const end = text.indexOf("\n", start);
        const line = text.slice(start, text.charCodeAt(end - 1) === 13 ? end - 1 : end);
        if (!isBlank(line)) lines.push(line);
        start = end + 1;
      }
      return lines;
    }
    const lines: string[] = [];
    let start = 0;
    for (;;) {
      const end = chunk.indexOf(10, start);
      if (end < 0) break;
      const piece = chunk.subarray(start, end);
      if (this.discarding) {
        this.discarding = false;
      } else if (this.pendingLength + piece.length > this.maxLine) {
        this.clear();
        this.dropped += 1;
      } else {
        this.push(piece);
        const line = this.take();
        if (!isBlank(line)) lines.push(line);
      }
      start = end + 1;
    }
    const rest = chunk.subarray(start);
    if (!this.discarding) {
      if (this.pendingLength + rest.length > this.maxLine) {
        this.clear();
        this.discarding = true;
        this.dropped += 1;
      } else if (rest.length > 0) {
        this.push(rest);
      }
    }
    return lines;
  }

  /** The last line, when the input ended without a newline. */
  finish(): string[] {
    if (this.discarding) return [];
    const line = this.take();
    return line.trim() === "" ? [] : [line];
  }

  private push(piece: Uint8Array): void {
    this.pending.push(piece.slice());
    this.pendingLength += piece.length;
  }

  private clear(): void {
    this.pending = [];
    this.pendingLength = 0;
  }

  private take(): string {
    const whole = new Uint8Array(this.pendingLength);
    let at = 0;
    for (const piece of this.pending) {
      whole.set(piece, at);
      at += piece.length;
    }
    this.clear();
    const text = this.decoder.decode(whole);
    return text.endsWith("\r") ? text.slice(0, -1) : text;
  }
}

/** Writes all of `data` through `write`, never more than `chunk` bytes at a time. */
export function writeInChunks(
  data: Uint8Array,
  write: (piece: Uint8Array) => void,
  chunk = WRITE_CHUNK,
): void {
  for (let at = 0; at < data.length; at += chunk) {
    write(data.subarray(at, Math.min(at + chunk, data.length)));
  }
}
