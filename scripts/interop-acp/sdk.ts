/**
 * Loads `@agentclientprotocol/sdk` (pinned in scripts/interop/, never a dependency of
 * mcp-bridge) at run time, through its package `exports`, and describes the few parts of its
 * editor-side (`client()`) API the ACP interop uses. The types are written here rather than
 * imported so that `npm run check` passes on a clone where scripts/interop is not installed;
 * they are a subset of the SDK's own d.ts (dist/v1/stable/acp.d.ts) for version 2.4.0.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { INTEROP_DIR } from "../conformance.ts";

export const ACP_SDK_NAME = "@agentclientprotocol/sdk";
export const ACP_SDK_VERSION = "2.4.0";

/** What the SDK's `ctx.request` rejects with for a JSON-RPC error answer. */
export interface SdkRequestError extends Error {
  code: number;
  data?: unknown;
}

/** `{ cancellationSignal }` and friends; the interop passes none. */
export type SdkSendOptions = Record<string, unknown>;

/** The SDK's `Stream`: JSON-RPC message objects both ways. */
export interface SdkStream {
  writable: WritableStream<unknown>;
  readable: ReadableStream<unknown>;
}

/** One message an `ActiveSession` queue yields. */
export type SdkSessionMessage =
  | { kind: "session_update"; notification: { sessionId: string; update: unknown }; update: unknown }
  | { kind: "stop"; response: { stopReason: string }; stopReason: string };

/** `ActiveSession`: one session's updates, in arrival order, and `prompt`. */
export interface SdkActiveSession {
  readonly sessionId: string;
  prompt(prompt: string, options?: SdkSendOptions): Promise<{ stopReason: string }>;
  nextUpdate(): Promise<SdkSessionMessage>;
  dispose(): void;
}

/** `ClientContext`: how an editor calls the agent. */
export interface SdkClientContext {
  request<R = unknown>(method: string, params?: unknown, options?: SdkSendOptions): Promise<R>;
  notify(method: string, params?: unknown): Promise<void>;
  buildSession(request: { cwd: string; mcpServers: unknown[] }): { start(options?: SdkSendOptions): Promise<SdkActiveSession> };
}

export interface SdkClientConnection {
  readonly agent: SdkClientContext;
  readonly closed: Promise<void>;
  close(error?: unknown): void;
}

/** `ClientApp`: the editor side, built fluently, then connected to a stream. */
export interface SdkClientApp {
  onNotification(method: string, handler: (ctx: { params: unknown }) => void | Promise<void>): SdkClientApp;
  onRequest(method: string, handler: (ctx: { params: unknown }) => unknown): SdkClientApp;
  connect(stream: SdkStream): SdkClientConnection;
}

export interface AcpSdk {
  client(options?: { name?: string }): SdkClientApp;
  ndJsonStream(output: WritableStream<Uint8Array>, input: ReadableStream<Uint8Array>): SdkStream;
  PROTOCOL_VERSION: number;
}

export interface LoadedSdk {
  sdk: AcpSdk;
  version: string;
  /** The SDK's JSON Schema for protocol v1 (schema/v1/schema.json). */
  schema: unknown;
  schemaPath: string;
}

/**
 * Imports the pinned SDK (running `npm ci` in scripts/interop when it is not installed) and
 * reads its v1 schema. Throws when the installed version is not the pinned one.
 */
export async function loadAcpSdk(): Promise<LoadedSdk> {
  const require = createRequire(join(INTEROP_DIR, "package.json"));
  const resolve = (): string | undefined => {
    try {
      return require.resolve(ACP_SDK_NAME);
    } catch {
      return undefined;
    }
  };
  if (resolve() === undefined) {
    process.stderr.write(`installing scripts/interop for ${ACP_SDK_NAME} (npm ci)...\n`);
    const r = spawnSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: INTEROP_DIR, encoding: "utf8", timeout: 300_000 });
    if (r.status !== 0) throw new Error(`npm ci in scripts/interop failed (${r.error?.message ?? `exit ${String(r.status)}`}):\n${r.stdout}\n${r.stderr}`);
  }
  const entry = resolve();
  if (entry === undefined) throw new Error(`${ACP_SDK_NAME} is not installed in scripts/interop`);
  // The entry is <package>/dist/v1/stable/acp.js; the package root holds package.json.
  let root = dirname(entry);
  while (!existsSync(join(root, "package.json")) && dirname(root) !== root) root = dirname(root);
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { name?: string; version?: string };
  if (pkg.name !== ACP_SDK_NAME || pkg.version !== ACP_SDK_VERSION) {
    throw new Error(`expected ${ACP_SDK_NAME}@${ACP_SDK_VERSION} in scripts/interop, found ${String(pkg.name)}@${String(pkg.version)} (run npm ci there)`);
  }
  const sdk = (await import(pathToFileURL(entry).href)) as AcpSdk;
  const schemaPath = join(root, "schema", "v1", "schema.json");
  const schema: unknown = JSON.parse(readFileSync(schemaPath, "utf8"));
  return { sdk, version: pkg.version, schema, schemaPath };
}
