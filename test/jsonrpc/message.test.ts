import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  classifyMessage,
  isErrorResponse,
  type ClassifiedMessage,
  type JsonRpcResponse,
} from "../../src/jsonrpc/message.ts";

function expectInvalid(value: unknown, id: string | number | null = null): string {
  const c = classifyMessage(value);
  assert.equal(c.kind, "invalid", `expected invalid: ${JSON.stringify(value)}`);
  if (c.kind !== "invalid") throw new Error("unreachable");
  assert.equal(c.id, id, "readable id for the -32600 answer");
  assert.equal(typeof c.reason, "string");
  assert.ok(c.reason.length > 0);
  return c.reason;
}

/** A malformed response: invalid, never answered (`id` null), its readable id kept apart. */
function expectMalformedResponse(value: unknown, id: string | number | null = null): string {
  const c = classifyMessage(value);
  assert.equal(c.kind, "invalid", `expected invalid: ${JSON.stringify(value)}`);
  if (c.kind !== "invalid") throw new Error("unreachable");
  assert.deepEqual({ id: c.id, response: c.response }, { id: null, response: { id } });
  assert.ok(c.reason.length > 0);
  return c.reason;
}

function expectKind<K extends ClassifiedMessage["kind"]>(
  value: unknown,
  kind: K,
): Extract<ClassifiedMessage, { kind: K }> {
  const c = classifyMessage(value);
  assert.equal(c.kind, kind, `expected ${kind}: ${JSON.stringify(value)}`);
  return c as Extract<ClassifiedMessage, { kind: K }>;
}

describe("classifyMessage: requests", () => {
  it("classifies the doc comment example (id 0) as a request", () => {
    const msg = { jsonrpc: "2.0", id: 0, method: "ping" };
    const c = expectKind(msg, "request");
    assert.equal(c.message.id, 0);
    assert.equal(c.message.method, "ping");
  });

  it('accepts the empty string "" as a request id', () => {
    assert.equal(expectKind({ jsonrpc: "2.0", id: "", method: "ping" }, "request").message.id, "");
  });

  it("keeps string and number ids distinct", () => {
    assert.equal(expectKind({ jsonrpc: "2.0", id: "1", method: "m" }, "request").message.id, "1");
    assert.equal(expectKind({ jsonrpc: "2.0", id: 1, method: "m" }, "request").message.id, 1);
  });

  it("accepts object and array params", () => {
    const byName = expectKind({ jsonrpc: "2.0", id: 1, method: "m", params: { a: 1 } }, "request");
    assert.deepEqual(byName.message.params, { a: 1 });
    const byPosition = expectKind({ jsonrpc: "2.0", id: 2, method: "m", params: [1, "two"] }, "request");
    assert.deepEqual(byPosition.message.params, [1, "two"]);
  });

  it("rejects id null on a request (a -32600 case with no readable id)", () => {
    expectInvalid({ jsonrpc: "2.0", id: null, method: "m" });
  });

  it("rejects a boolean, object or array request id", () => {
    expectInvalid({ jsonrpc: "2.0", id: true, method: "m" });
    expectInvalid({ jsonrpc: "2.0", id: false, method: "m" });
    expectInvalid({ jsonrpc: "2.0", id: { n: 1 }, method: "m" });
    expectInvalid({ jsonrpc: "2.0", id: [1], method: "m" });
  });

  it("rejects a non-finite numeric id (not representable in JSON)", () => {
    expectInvalid({ jsonrpc: "2.0", id: Number.NaN, method: "m" });
    expectInvalid({ jsonrpc: "2.0", id: Number.POSITIVE_INFINITY, method: "m" });
  });

  it("rejects a non-string method, reporting the readable id", () => {
    expectInvalid({ jsonrpc: "2.0", id: 3, method: 42 }, 3);
    expectInvalid({ jsonrpc: "2.0", id: "x", method: null }, "x");
    expectInvalid({ jsonrpc: "2.0", method: ["m"] });
  });

  it("rejects scalar and null params, reporting the readable id", () => {
    expectInvalid({ jsonrpc: "2.0", id: 4, method: "m", params: "text" }, 4);
    expectInvalid({ jsonrpc: "2.0", id: 5, method: "m", params: 5 }, 5);
    expectInvalid({ jsonrpc: "2.0", id: 6, method: "m", params: true }, 6);
    expectInvalid({ jsonrpc: "2.0", id: 7, method: "m", params: null }, 7);
    expectInvalid({ jsonrpc: "2.0", method: "m", params: "text" });
  });
});

describe("classifyMessage: notifications", () => {
  it("classifies a message with a method and no id member as a notification", () => {
    const c = expectKind({ jsonrpc: "2.0", method: "notifications/initialized" }, "notification");
    assert.equal(c.message.method, "notifications/initialized");
    assert.equal(Object.prototype.hasOwnProperty.call(c.message, "id"), false);
  });

  it("keeps notification params", () => {
    const c = expectKind({ jsonrpc: "2.0", method: "n", params: { progress: 1 } }, "notification");
    assert.deepEqual(c.message.params, { progress: 1 });
  });

  it("treats an id member as making it a request, whatever its value", () => {
    // Presence, not truthiness: an explicit id (even an invalid one) is not a notification.
    expectInvalid({ jsonrpc: "2.0", method: "n", id: undefined });
    expectKind({ jsonrpc: "2.0", method: "n", id: 0 }, "request");
  });
});

describe("classifyMessage: envelope", () => {
  it("rejects values that are not plain objects", () => {
    for (const v of [null, undefined, 42, "text", true, [], [{ jsonrpc: "2.0", method: "m" }]]) {
      expectInvalid(v);
    }
  });

  it("rejects an array even when it carries message members", () => {
    expectInvalid(Object.assign([], { jsonrpc: "2.0", id: 1, method: "m" }));
  });

  it('rejects a missing or wrong jsonrpc member, reporting the readable id', () => {
    expectInvalid({ id: 1, method: "m" }, 1);
    expectInvalid({ jsonrpc: "1.0", id: 2, method: "m" }, 2);
    expectInvalid({ jsonrpc: 2.0, id: 3, method: "m" }, 3);
    expectInvalid({ jsonrpc: "2.0 ", id: "x", method: "m" }, "x");
    expectInvalid({ jsonrpc: "1.0", method: "m" });
    expectInvalid({ jsonrpc: "1.0", id: true, method: "m" });
  });

  it("rejects an object with neither method, result nor error; with an id it is a malformed response", () => {
    expectMalformedResponse({ jsonrpc: "2.0", id: 9 }, 9);
    expectInvalid({ jsonrpc: "2.0" });
  });

  it("a response with a wrong jsonrpc member is a malformed response, not an invalid request", () => {
    expectMalformedResponse({ jsonrpc: "1.0", id: 3, result: {} }, 3);
    expectMalformedResponse({ id: 4, error: { code: 1, message: "m" } }, 4);
  });

  it("a malformed request keeps answering with its id and carries no response mark", () => {
    const c = classifyMessage({ jsonrpc: "1.0", id: 2, method: "m" });
    assert.deepEqual(c, { kind: "invalid", id: 2, reason: 'jsonrpc must be "2.0"' });
  });
});

describe("classifyMessage: responses", () => {
  it("classifies a success response, including ids 0 and \"\" and falsy results", () => {
    for (const id of [0, "", 1, "abc"]) {
      for (const result of [{ tools: [] }, null, 0, false, ""]) {
        const c = expectKind({ jsonrpc: "2.0", id, result }, "response");
        assert.equal(c.message.id, id);
        assert.ok(!isErrorResponse(c.message));
        assert.deepEqual((c.message as { result: unknown }).result, result);
      }
    }
  });

  it("rejects a success response with id null, a missing id or a boolean id", () => {
    expectMalformedResponse({ jsonrpc: "2.0", id: null, result: 1 });
    expectMalformedResponse({ jsonrpc: "2.0", result: 1 });
    expectMalformedResponse({ jsonrpc: "2.0", id: true, result: 1 });
  });

  it("classifies an error response and keeps code, message and data", () => {
    const c = expectKind(
      { jsonrpc: "2.0", id: 5, error: { code: -32601, message: "Method not found", data: { m: "x" } } },
      "response",
    );
    assert.ok(isErrorResponse(c.message));
    assert.equal(c.message.id, 5);
    assert.deepEqual(c.message.error, { code: -32601, message: "Method not found", data: { m: "x" } });
  });

  it("accepts an error response with id 0 or \"\"", () => {
    for (const id of [0, ""]) {
      const c = expectKind({ jsonrpc: "2.0", id, error: { code: 1, message: "m" } }, "response");
      assert.ok(isErrorResponse(c.message));
      assert.equal(c.message.id, id);
    }
  });

  it("accepts an error response with id null", () => {
    const c = expectKind({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } }, "response");
    assert.ok(isErrorResponse(c.message));
    assert.equal(c.message.id, null);
  });

  it("accepts an error response without an id and reports its id as null", () => {
    const c = expectKind({ jsonrpc: "2.0", error: { code: -32600, message: "Invalid Request" } }, "response");
    assert.ok(isErrorResponse(c.message));
    assert.equal(c.message.id, null);
    assert.deepEqual(c.message.error, { code: -32600, message: "Invalid Request" });
  });

  it("rejects an error response with a boolean or object id", () => {
    expectMalformedResponse({ jsonrpc: "2.0", id: true, error: { code: 1, message: "m" } });
    expectMalformedResponse({ jsonrpc: "2.0", id: {}, error: { code: 1, message: "m" } });
  });

  it("rejects a message with both result and error", () => {
    expectMalformedResponse({ jsonrpc: "2.0", id: 1, result: {}, error: { code: 1, message: "m" } }, 1);
    expectMalformedResponse({ jsonrpc: "2.0", id: 2, result: null, error: null }, 2);
  });

  it("rejects an error whose code is not a number or whose message is not a string", () => {
    expectMalformedResponse({ jsonrpc: "2.0", id: 1, error: { code: "E_BAD" } }, 1);
    expectMalformedResponse({ jsonrpc: "2.0", id: 1, error: { code: "-32600", message: "m" } }, 1);
    expectMalformedResponse({ jsonrpc: "2.0", id: 1, error: { message: "m" } }, 1);
    expectMalformedResponse({ jsonrpc: "2.0", id: 1, error: { code: null, message: "m" } }, 1);
    expectMalformedResponse({ jsonrpc: "2.0", id: 1, error: { code: -1 } }, 1);
    expectMalformedResponse({ jsonrpc: "2.0", id: 1, error: { code: -1, message: 7 } }, 1);
  });

  it("rejects an error that is not an object", () => {
    expectMalformedResponse({ jsonrpc: "2.0", id: 1, error: "boom" }, 1);
    expectMalformedResponse({ jsonrpc: "2.0", id: 1, error: null }, 1);
    expectMalformedResponse({ jsonrpc: "2.0", id: 1, error: [-32600, "m"] }, 1);
  });
});

describe("isErrorResponse", () => {
  it("is true exactly when the response has an error member", () => {
    const ok: JsonRpcResponse = { jsonrpc: "2.0", id: 1, result: { error: "inside result" } };
    const failed: JsonRpcResponse = { jsonrpc: "2.0", id: 1, error: { code: -1, message: "m" } };
    assert.equal(isErrorResponse(ok), false);
    assert.equal(isErrorResponse(failed), true);
  });

  it("is false for a success response whose result is falsy", () => {
    assert.equal(isErrorResponse({ jsonrpc: "2.0", id: 0, result: null }), false);
    assert.equal(isErrorResponse({ jsonrpc: "2.0", id: "", result: false }), false);
  });
});
