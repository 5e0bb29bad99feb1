/** Shared by the stdio client tests: a recording transport on the faulty fixture, and small utilities. */
import type { JsonRpcMessage } from "../../src/jsonrpc/message.ts";
import { StdioClientTransport, type StdioClientOptions } from "../../src/transport/stdio-client.ts";
import { fixture } from "../e2e/helpers.ts";
import { until, within } from "../helpers/wait.ts";

/** A transport on the faulty fixture, recording everything it reports. */
export function faulty(flags: string[], options: Partial<StdioClientOptions> = {}) {
  const messages: unknown[] = [];
  const errors: Error[] = [];
  const closes: (Error | undefined)[] = [];
  const stderr: string[] = [];
  const logs: string[] = [];
  const waiters: { match: (m: unknown) => boolean; resolve: (m: unknown) => void }[] = [];
  const transport = new StdioClientTransport(fixture("faulty.ts", flags, {
    name: "faulty",
    shutdownGraceMs: 200,
    onStderr: (line) => stderr.push(line),
    onLog: (msg) => logs.push(msg),
    ...options,
  }));
  let closed: (reason: Error | undefined) => void = () => {};
  const closedPromise = new Promise<Error | undefined>((res) => (closed = res));
  transport.onmessage = (m) => {
    messages.push(m);
    const i = waiters.findIndex((w) => w.match(m));
    if (i !== -1) waiters.splice(i, 1)[0]!.resolve(m);
  };
  transport.onerror = (e) => errors.push(e);
  transport.onclose = (reason) => {
    closes.push(reason);
    closed(reason);
  };
  const waitFor = (match: (m: unknown) => boolean, what = "a matching message"): Promise<unknown> => {
    const seen = messages.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return within(new Promise((resolve) => waiters.push({ match, resolve })), what);
  };
  const request = async (id: number, method: string, params?: Record<string, unknown>) => {
    const response = waitFor((m) => (m as { id?: unknown }).id === id, `the response to ${method} (id ${id})`);
    const msg: JsonRpcMessage = params ? { jsonrpc: "2.0", id, method, params } : { jsonrpc: "2.0", id, method };
    await transport.send(msg);
    return (await response) as { id: number; result?: Record<string, unknown>; error?: { code: number } };
  };
  const stderrLine = async (prefix: string): Promise<string> => {
    const find = () => stderr.find((l) => l.startsWith(prefix));
    await until(() => find() !== undefined, `a stderr line starting with "${prefix}"`);
    return find()!;
  };
  return { transport, messages, errors, closes, stderr, logs, closedPromise, waitFor, request, stderrLine };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((res) => setTimeout(res, ms));
}

export function textOf(result: Record<string, unknown> | undefined): string {
  const content = (result?.content ?? []) as { type: string; text: string }[];
  return content[0]!.text;
}

