import { test } from "node:test";
import assert from "node:assert/strict";
import {
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
  allowsBatches,
  hasAudio,
  hasCompletionsCapability,
  hasElicitation,
  hasProtocolVersionHeader,
  hasResourceLinks,
  hasSamplingTools,
  hasStreamableHttp,
  hasStructuredContent,
  hasToolAnnotations,
  hasUrlElicitation,
  isSupportedVersion,
  negotiateVersion,
  versionAtLeast,
} from "../../src/mcp/versions.ts";

test("supported versions are listed newest first and the latest is the first", () => {
  const sorted = [...SUPPORTED_PROTOCOL_VERSIONS].sort().reverse();
  assert.deepEqual([...SUPPORTED_PROTOCOL_VERSIONS], sorted);
  assert.equal(LATEST_PROTOCOL_VERSION, "2025-11-25");
});

test("isSupportedVersion accepts exactly the supported strings", () => {
  for (const v of SUPPORTED_PROTOCOL_VERSIONS) assert.equal(isSupportedVersion(v), true, v);
  for (const v of ["2024-10-07", "2026-07-28", "2025-11-25 ", "", 20251125, null, undefined, {}]) {
    assert.equal(isSupportedVersion(v), false, String(v));
  }
});

test("negotiateVersion echoes every supported version", () => {
  for (const v of SUPPORTED_PROTOCOL_VERSIONS) assert.equal(negotiateVersion(v), v);
});

test("negotiateVersion answers the latest for unknown, garbage and non-string requests", () => {
  const requests: unknown[] = [
    "2024-10-07",
    "2026-07-28",
    "1999-01-01",
    "latest",
    "",
    " 2025-06-18",
    20250618,
    null,
    undefined,
    ["2025-06-18"],
    { version: "2025-06-18" },
  ];
  for (const r of requests) assert.equal(negotiateVersion(r), LATEST_PROTOCOL_VERSION, JSON.stringify(r));
});

test("negotiateVersion with a narrowed list never answers outside it", () => {
  const only = ["2025-03-26", "2024-11-05"];
  assert.equal(negotiateVersion("2024-11-05", only), "2024-11-05");
  assert.equal(negotiateVersion("2025-11-25", only), "2025-03-26");
  assert.equal(negotiateVersion("nonsense", only), "2025-03-26");
  // The newest of the list is chosen whatever its order.
  assert.equal(negotiateVersion(undefined, ["2024-11-05", "2025-06-18", "2025-03-26"]), "2025-06-18");
});

test("negotiateVersion refuses an empty supported list", () => {
  assert.throws(() => negotiateVersion("2025-11-25", []), RangeError);
});

test("batches are allowed only for 2025-03-26", () => {
  assert.equal(allowsBatches("2025-03-26"), true);
  for (const v of ["2024-11-05", "2025-06-18", "2025-11-25", "2026-07-28", "", undefined]) {
    assert.equal(allowsBatches(v), false, String(v));
  }
});

test("versionAtLeast compares dates and rejects malformed versions", () => {
  assert.equal(versionAtLeast("2025-06-18", "2025-06-18"), true);
  assert.equal(versionAtLeast("2025-11-25", "2025-06-18"), true);
  assert.equal(versionAtLeast("2025-03-26", "2025-06-18"), false);
  assert.equal(versionAtLeast("2026-07-28", "2025-06-18"), true);
  // As plain strings these would all compare greater than "2025-06-18".
  for (const bad of ["abc", "9", "2025-6-18x", "2025-06-18T00:00", "v2025-11-25"]) {
    assert.equal(versionAtLeast(bad, "2025-06-18"), false, bad);
  }
  assert.equal(versionAtLeast(undefined, "2024-11-05"), false);
});

test("feature gates open at the revision that introduced the feature", () => {
  const gates: Array<[string, (v: string | undefined) => boolean, string]> = [
    ["hasStreamableHttp", hasStreamableHttp, "2025-03-26"],
    ["hasAudio", hasAudio, "2025-03-26"],
    ["hasToolAnnotations", hasToolAnnotations, "2025-03-26"],
    ["hasCompletionsCapability", hasCompletionsCapability, "2025-03-26"],
    ["hasStructuredContent", hasStructuredContent, "2025-06-18"],
    ["hasResourceLinks", hasResourceLinks, "2025-06-18"],
    ["hasElicitation", hasElicitation, "2025-06-18"],
    ["hasProtocolVersionHeader", hasProtocolVersionHeader, "2025-06-18"],
    ["hasUrlElicitation", hasUrlElicitation, "2025-11-25"],
    ["hasSamplingTools", hasSamplingTools, "2025-11-25"],
  ];
  for (const [name, gate, since] of gates) {
    for (const v of SUPPORTED_PROTOCOL_VERSIONS) {
      assert.equal(gate(v), v >= since, `${name}(${v})`);
    }
    assert.equal(gate(undefined), false, `${name}(undefined)`);
    assert.equal(gate("garbage"), false, `${name}("garbage")`);
  }
});
