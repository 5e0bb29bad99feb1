/**
 * The input side of a stateless request (src/mcp/input-round.ts): answers are collected across
 * rounds through the sealed state, and a request that brings no state and asks for nothing
 * never hashes its params (Web Crypto's SHA-256 is a trip through the thread pool per call).
 */
import assert from "node:assert/strict";
import { afterEach, beforeEach, test } from "node:test";
import { RpcError } from "../../src/jsonrpc/errors.ts";
import { InputRequired, InputRound, type InputRequest } from "../../src/mcp/input-round.ts";
import { RequestStateSeal } from "../../src/mcp/request-state.ts";

const ASK: Record<string, InputRequest> = { name: { method: "elicitation/create", params: { message: "Your name?", requestedSchema: { type: "object", properties: {} } } } };
const ANSWER = { action: "accept", content: { name: "Ada" } };

// Counts the digests made: the one observable sign of the hashing this file is about.
const subtle = globalThis.crypto.subtle;
const realDigest = subtle.digest.bind(subtle);
let digests = 0;
beforeEach(() => {
  digests = 0;
  subtle.digest = ((...args: Parameters<typeof realDigest>) => (digests++, realDigest(...args))) as typeof subtle.digest;
});
afterEach(() => {
  subtle.digest = realDigest;
});

/** The InputRequired a collect of `requests` throws on `round`. */
function asked(round: InputRound, requests: Record<string, InputRequest>): InputRequired {
  try {
    round.collect(requests);
  } catch (err) {
    if (err instanceof InputRequired) return err;
    throw err;
  }
  assert.fail("collect did not ask for input");
}

test("a request with no state that asks for nothing hashes nothing", async () => {
  const round = await InputRound.open(new RequestStateSeal(), "tools/call", { name: "echo", arguments: { text: "hi" } });
  assert.deepEqual(round.collect({}), {});
  assert.equal(digests, 0);
});

test("answers travel through the sealed state to the retry of the same request, and only to it", async () => {
  const seal = new RequestStateSeal();
  const params = { name: "greet", arguments: { who: "x" } };
  const first = await InputRound.open(seal, "tools/call", params);
  const result = await first.result(asked(first, ASK));
  assert.equal(result.resultType, "input_required");
  assert.deepEqual(Object.keys(result.inputRequests), ["name"]);

  // The retry brings the answer: the handler gets it.
  const retry = await InputRound.open(seal, "tools/call", { ...params, inputResponses: { name: ANSWER }, requestState: result.requestState });
  assert.deepEqual(retry.collect(ASK), { name: ANSWER });

  // A later round still has it from the state sealed with it, and asks only for the new key.
  const more = { ...ASK, age: { method: "elicitation/create", params: { message: "Age?", requestedSchema: { type: "object", properties: {} } } } } as Record<string, InputRequest>;
  const second = await retry.result(asked(retry, more));
  const last = await InputRound.open(seal, "tools/call", { ...params, inputResponses: { age: { action: "decline" } }, requestState: second.requestState });
  assert.deepEqual(last.collect(more), { name: ANSWER, age: { action: "decline" } });

  // The same state with other arguments is another request: refused.
  await assert.rejects(InputRound.open(seal, "tools/call", { name: "greet", arguments: { who: "y" }, requestState: result.requestState }), (err: unknown) => {
    assert.ok(err instanceof RpcError);
    assert.equal(err.code, -32602);
    return true;
  });
});
