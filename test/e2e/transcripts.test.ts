/**
 * Golden wire transcripts: every fixtures/transcripts/*.jsonl replayed against its fixture
 * server as a real child process over stdio. Then the runner itself, so a runner that
 * accepts everything cannot pass unnoticed.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { ROOT, ServerProcess, fillWildcards, parseTranscript, replayTranscript } from "./transcript-runner.ts";

const DIR = join(ROOT, "fixtures", "transcripts");
const FILES = readdirSync(DIR)
  .filter((f) => f.endsWith(".jsonl"))
  .sort();

/** Transcripts the protocol suite must have; a missing file would otherwise just not run. */
const REQUIRED = [
  "handshake",
  "negotiate-2025-06-18",
  "negotiate-2025-03-26",
  "negotiate-2024-11-05",
  "negotiate-unsupported-version",
  "negotiate-garbage-version",
  "tools-list-single-page",
  "tools-list-paginated",
  "tools-call-echo",
  "tools-call-structured",
  "error-unknown-method",
  "error-unknown-tool",
  "tool-invalid-arguments",
  "tool-throws",
  "before-initialize",
  "error-invalid-json",
  "error-id-null",
  "error-jsonrpc-version",
  "batch-rejected-2025-11-25",
  "batch-2025-03-26",
  "error-resource-not-found",
  "error-prompt-missing-argument",
  "error-bad-log-level",
  "error-second-initialize",
  "notifications-never-answered",
  "malformed-responses-never-answered",
];

describe("golden transcripts", { concurrency: 4 }, () => {
  test("every required transcript exists and parses", () => {
    assert.deepEqual(
      REQUIRED.filter((name) => !FILES.includes(`${name}.jsonl`)),
      [],
    );
    for (const f of FILES) parseTranscript(f, readFileSync(join(DIR, f), "utf8"));
  });

  for (const file of FILES) {
    test(file, async () => {
      await replayTranscript(parseTranscript(file, readFileSync(join(DIR, file), "utf8")));
    });
  }
});

const line = (v: unknown): string => JSON.stringify(v);
const INIT = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } } };

describe("transcript runner", { concurrency: 3 }, () => {
  test("refuses malformed transcripts, naming the line", () => {
    const cases: Array<[string, RegExp]> = [
      [`${line({ send: {} })}\n${line({ server: "echo" })}`, /x:2: the server line must come before/],
      [line({ server: "../../etc/passwd" }), /x:1: unknown server/],
      [`${line({ send: {} })}\n${line({ expectNone: true })}`, /x:2: expectNone needs an earlier expect/],
      [line({ send: {}, expect: {} }), /x:1: each line has exactly one key/],
      [line({ recv: {} }), /x:1: unknown key "recv"/],
      [line({ sendRaw: "a\nb" }), /x:1: sendRaw must be a string without a newline/],
      ["{not json", /x:1: not a JSON line/],
      [line({ comment: "only a comment" }), /x: no steps/],
    ];
    for (const [text, error] of cases) assert.throws(() => parseTranscript("x", text), error);
    const t = parseTranscript("x", [line({ server: "many" }), line({ comment: "c" }), "", line({ sendRaw: "{\r" })].join("\n"));
    assert.deepEqual(t, { name: "x", server: "many", steps: [{ kind: "sendRaw", line: 4, text: "{\r" }] });
  });

  test("a wildcard matches any present value, and only where it stands", () => {
    const actual = { id: 3, result: { cursor: "abc", items: [1, 2] } };
    assert.deepEqual(fillWildcards({ id: 3, result: { cursor: "<any>", items: [1, "<any>"] } }, actual), actual);
    assert.notDeepEqual(fillWildcards({ id: "<any>", result: { cursor: "abd", items: [1, 2] } }, actual), actual);
    assert.notDeepEqual(fillWildcards({ id: 3, result: { cursor: "abc", items: [1, 2], extra: "<any>" } }, actual), actual);
  });

  test("a wrong expectation fails the replay, naming the transcript line", async () => {
    const text = [line({ send: INIT }), line({ expect: { jsonrpc: "2.0", id: 1, result: { protocolVersion: "1999-01-01" } } })].join("\n");
    await assert.rejects(replayTranscript(parseTranscript("wrong", text)), {
      message: /^wrong:2 \(expect\): /,
      transcriptLine: 2,
    });
  });

  test("expectNone fails when the server does write something", async () => {
    const ping = (id: number) => line({ send: { jsonrpc: "2.0", id, method: "ping" } });
    const text = [ping(1), line({ expect: { jsonrpc: "2.0", id: 1, result: {} } }), ping(2), line({ expectNone: true })].join("\n");
    await assert.rejects(replayTranscript(parseTranscript("noisy", text)), /noisy:4 \(expectNone\): expected no message, the server wrote: .*"id":2/);
  });

  test("kill() ends a live server by pid and the pid is gone afterwards", async () => {
    const server = new ServerProcess("echo");
    await server.writeLine(line({ jsonrpc: "2.0", id: 1, method: "ping" }));
    assert.deepEqual(JSON.parse(await server.nextLine(15_000)), { jsonrpc: "2.0", id: 1, result: {} });
    const pid = server.pid;
    process.kill(pid, 0);
    await server.kill();
    assert.throws(() => process.kill(pid, 0), { code: "ESRCH" });
  });
});
