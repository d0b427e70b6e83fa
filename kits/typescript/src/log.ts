// Logging to stderr, the only place a proxy may write anything but protocol.
// Knows the proxy's name and the level; nothing about the protocol or the platform.

export type Level = "error" | "warn" | "info" | "debug";
const LEVELS: Record<Level, number> = { error: 0, warn: 1, info: 2, debug: 3 };

const state = {
  name: "proxy",
  level: LEVELS.info,
  write: (_line: string): void => {},
};

/** Names the proxy in every line and says where lines go (the platform's stderr). */
export function init(name: string, write: (line: string) => void, level: string | undefined): void {
  state.name = name;
  state.write = write;
  state.level = LEVELS[(level ?? "info").toLowerCase() as Level] ?? LEVELS.info;
}

function emit(level: Level, message: string): void {
  if (LEVELS[level] <= state.level) {
    state.write(`${level.toUpperCase().padEnd(5)} ${state.name}: ${message}\n`);
  }
}

export const error = (message: string): void => emit("error", message);
export const warn = (message: string): void => emit("warn", message);
export const info = (message: string): void => emit("info", message);
export const debug = (message: string): void => emit("debug", message);
