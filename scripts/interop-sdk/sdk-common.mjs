// What the SDK client scripts of `npm run interop` share: loading the official SDK from
// scripts/interop/ (where it is pinned, not beside these files), the step report they print
// (one JSON object per step on stdout), and the client transport a mode names.
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const interop = join(fileURLToPath(new URL(".", import.meta.url)), "..", "interop", "package.json");
const sdk = createRequire(interop);

/** Imports `@modelcontextprotocol/sdk/<sub>` from scripts/interop/node_modules. */
export const load = (sub) => import(sdk.resolve(`@modelcontextprotocol/sdk/${sub}`));

/** Steps done so far, each also printed as `{"step": ..., "ok": ..., "detail": ...}`. */
export const steps = [];
export function step(name, ok, detail) {
  steps.push({ step: name, ok, detail });
  process.stdout.write(`${JSON.stringify({ step: name, ok, detail })}\n`);
}

/** The SDK's client transport for `mode`: `stdio` runs `rest` as a command, `http` posts to the URL `rest[0]`. */
export async function transport(mode, rest) {
  if (mode === "stdio") {
    const { StdioClientTransport } = await load("client/stdio.js");
    return new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: "inherit" });
  }
  if (mode === "http") {
    const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");
    return new StreamableHTTPClientTransport(new URL(rest[0]));
  }
  throw new Error(`unknown mode ${mode}: stdio or http`);
}
