// The few WASI 0.2 imports platform-wasi.ts uses, typed as componentize-js binds them
// (results that are errors throw; tuples are arrays; u64 is bigint).

declare module "wasi:cli/environment@0.2.12" {
  export function getArguments(): string[];
  export function getEnvironment(): [string, string][];
}
declare module "wasi:cli/stdin@0.2.12" {
  export function getStdin(): { blockingRead(len: bigint): Uint8Array };
}
declare module "wasi:cli/stdout@0.2.12" {
  export function getStdout(): { blockingWriteAndFlush(contents: Uint8Array): void };
}
declare module "wasi:cli/stderr@0.2.12" {
  export function getStderr(): { blockingWriteAndFlush(contents: Uint8Array): void };
}
declare module "wasi:filesystem/preopens@0.2.12" {
  interface Descriptor {
    openAt(
      pathFlags: { symlinkFollow?: boolean },
      path: string,
      openFlags: Record<string, boolean>,
      flags: { read?: boolean },
    ): Descriptor;
    stat(): { size: bigint };
    read(length: bigint, offset: bigint): [Uint8Array, boolean];
  }
  export function getDirectories(): [Descriptor, string][];
}
