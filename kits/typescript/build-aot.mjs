// Builds a TypeScript proxy (a module exporting `main()`, which calls the kit's `run`):
//
//   node kits/typescript/build.mjs wasm path/to/proxy.ts out.wasm   # a sandboxed WASI component
//   node kits/typescript/build.mjs node path/to/proxy.ts out.mjs    # the same source for Node.js
//   node kits/typescript/build.mjs test                             # the kit's type check and tests
//
// esbuild bundles the proxy and the kit into one ES module (for WASM with platform-wasi.ts, for
// Node.js with platform-node.ts); componentize-js 0.23.0 (SpiderMonkey) makes the component,
// with wasi:http and the fetch event disabled: the sandbox grants no network.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import * as esbuild from "esbuild";

const kit = dirname(fileURLToPath(import.meta.url));
const bin = (name) => join(kit, "node_modules", ".bin", name);

async function bundle(entryContents, platform, outfile) {
  await esbuild.build({
    stdin: { contents: entryContents, resolveDir: kit, sourcefile: "entry.ts", loader: "ts" },
    bundle: true,
    format: "esm",
    target: "es2022",
    platform: platform === "node" ? "node" : "neutral",
    external: ["wasi:*"],
    alias: { "acp-proxy-kit-platform": join(kit, "src", `platform-${platform}.ts`) },
    outfile,
    logLevel: "warning",
  });
}

async function buildNode(source, out) {
  await bundle(`import { main } from ${JSON.stringify(resolve(source))};\nmain();\n`, "node", resolve(out));
}

async function buildWasm(source, out) {
  const work = mkdtempSync(join(tmpdir(), "acp-proxy-ts-"));
  try {
    const bundled = join(work, `${basename(source, ".ts")}.js`);
    const entry = `import { main } from ${JSON.stringify(resolve(source))};\n` +
      "export const run = { run() { main(); } };\n";
    await bundle(entry, "wasi", bundled);
    execFileSync(bin("componentize-js"), [
      bundled, "--wit", join(kit, "..", "wit"), "--world-name", "proxy",
      "--disable", "http", "fetch-event", "--aot", "--weval-bin", "/work/weval-install/bin/weval", "--out", resolve(out),
    ], { stdio: ["ignore", "inherit", "inherit"] });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function test() {
  execFileSync(bin("tsc"), ["-p", kit], { stdio: "inherit" });
  const work = mkdtempSync(join(tmpdir(), "acp-proxy-ts-test-"));
  try {
    const tests = readdirSync(join(kit, "test")).filter((f) => f.endsWith(".test.ts"));
    const outs = [];
    for (const file of tests) {
      const out = join(work, file.replace(/\.ts$/, ".mjs"));
      await esbuild.build({
        entryPoints: [join(kit, "test", file)], bundle: true, format: "esm", platform: "node",
        target: "es2022", outfile: out, logLevel: "warning",
        alias: { "acp-proxy-kit-platform": join(kit, "src", "platform-node.ts") },
      });
      outs.push(out);
    }
    execFileSync(process.execPath, ["--test", ...outs], { stdio: "inherit" });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const [mode, source, out] = process.argv.slice(2);
if (mode === "wasm" && source && out) await buildWasm(source, out);
else if (mode === "node" && source && out) await buildNode(source, out);
else if (mode === "test") await test();
else {
  console.error("usage: build.mjs wasm PROXY.ts OUT.wasm | node PROXY.ts OUT.mjs | test");
  process.exit(2);
}
