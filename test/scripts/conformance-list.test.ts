/**
 * Reading scenario names out of `conformance list` output (scripts/conformance-list.ts), in
 * both forms the pinned suites print.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { BridgeError } from "../../src/jsonrpc/errors.ts";
import { parseScenarioList } from "../../scripts/conformance-list.ts";

const PLAIN = `Server scenarios (test against a server):
  - server-initialize [2025-06-18,2025-11-25]
  - tools-list [2025-06-18,2025-11-25,2026-07-28]

Client scenarios (test against a client):
  - initialize [2025-06-18,2025-11-25]
  - auth/metadata-default [2025-11-25,2026-07-28]

Authorization server scenarios (test against an authorization server):
  - authorization-code-grant [2025-03-26,2025-06-18,2025-11-25,2026-07-28]
`;

const REQUIREMENTS = `Required for 2026-07-28 (5 scenarios, frozen; run at the 2026-07-28 wire):

Server scenarios (test against a server):
  - server-stateless
  - caching

Client scenarios (test against a client):
  - tools_call
  - auth/iss-supported

Run and reported, but never scored:
  extension (2):
    - auth/dpop [client]
    - tasks-lifecycle [server]
  pending (1):
    - http-header-validation [server]

`;

test("a plain list: every name under the leg's heading, the version tags dropped", () => {
  assert.deepEqual(parseScenarioList(PLAIN, "server"), { required: ["server-initialize", "tools-list"], notScored: [] });
  assert.deepEqual(parseScenarioList(PLAIN, "client"), { required: ["initialize", "auth/metadata-default"], notScored: [] });
});

test("a requirement set: required names under the leg's heading, unscored ones by their [leg] tag", () => {
  assert.deepEqual(parseScenarioList(REQUIREMENTS, "server"), {
    required: ["server-stateless", "caching"],
    notScored: ["tasks-lifecycle", "http-header-validation"],
  });
  assert.deepEqual(parseScenarioList(REQUIREMENTS, "client"), { required: ["tools_call", "auth/iss-supported"], notScored: ["auth/dpop"] });
});

test("output with no scenario of the leg is an error, not an empty run", () => {
  assert.throws(
    () => parseScenarioList("Usage: conformance list [options]\n", "server"),
    (err: unknown) => err instanceof BridgeError && err.code === "INVALID_MESSAGE",
  );
});
