/** The tool list a connection keeps: redacted copies only where a secret was, secret-named tools left out. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { redactTools } from "../../src/manager/tool-list.ts";
import type { Tool } from "../../src/mcp/types.ts";
import { Redactor } from "../../src/security/redact.ts";

const SECRET = "sk-test-51d0c3a9";

test("redactTools keeps the server's objects where no secret is, copies where one is, and leaves out a tool named after one", () => {
  const redactor = new Redactor();
  redactor.addSecret(SECRET);
  const clean: Tool = { name: "clean", description: "Fine.", inputSchema: { type: "object" } };
  const schema = { type: "object", properties: { key: { type: "string", description: "keep" } } };
  const leaky: Tool = { name: "leaky", title: `uses ${SECRET}`, inputSchema: schema, outputSchema: { type: "object", description: SECRET } };
  const named: Tool = { name: `get_${SECRET}`, inputSchema: { type: "object" } };
  const listed = [clean, leaky, named];

  const out = redactTools(listed, redactor);
  assert.deepEqual(out.hidden, ["get_[REDACTED]"]);
  assert.deepEqual(out.tools, [clean, { ...leaky, title: "uses [REDACTED]", outputSchema: { type: "object", description: "[REDACTED]" } }]);
  assert.equal(out.tools[0], clean, "a tool without a secret is the server's own object");
  assert.equal(out.tools[1]!.inputSchema, schema, "a schema without a secret stays the server's own object");
  assert.equal(leaky.title, `uses ${SECRET}`, "the server's objects are not modified");

  const none = [clean];
  assert.equal(redactTools(none, redactor).tools, none, "nothing to redact: the very array");
});
