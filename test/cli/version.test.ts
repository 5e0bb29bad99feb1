/** `--version` reads package.json, from the source checkout and from an installed dist/ layout. */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as nodeModule from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ROOT } from "../e2e/helpers.ts";
import { run, runProcess } from "./helpers.ts";

/** Node 22.13+; missing on Node 20 (and from its @types/node). */
const { stripTypeScriptTypes } = nodeModule as { stripTypeScriptTypes?: (code: string) => string };

const VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
const dir = mkdtempSync(join(tmpdir(), "mcp-bridge-cli-version-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Copies version.ts to `<dir>/<at>/` beside the given package.json files, and loads it. A Node
 * that strips types refuses to do so under `node_modules`, where an installed package has the
 * built `.js` anyway: there the copy is `version.js`, stripped by Node as the build would emit
 * it. (Node 20 runs the suite through tsx, which loads the `.ts` copy there.)
 */
async function versionAt(at: string, packages: Record<string, object>): Promise<string | undefined> {
  for (const [where, pkg] of Object.entries(packages)) {
    mkdirSync(join(dir, where), { recursive: true });
    writeFileSync(join(dir, where, "package.json"), JSON.stringify(pkg));
  }
  mkdirSync(join(dir, at), { recursive: true });
  const source = readFileSync(join(ROOT, "src", "cli", "version.ts"), "utf8");
  const asJs = at.split("/").includes("node_modules") && stripTypeScriptTypes !== undefined;
  const file = join(dir, at, asJs ? "version.js" : "version.ts");
  writeFileSync(file, asJs ? stripTypeScriptTypes!(source) : source);
  const mod = (await import(pathToFileURL(file).href)) as { packageVersion: () => string | undefined };
  return mod.packageVersion();
}

test("--version prints the version of package.json and exits 0", async () => {
  assert.deepEqual(await run(["--version"]), { code: 0, out: VERSION, err: "" });
  assert.deepEqual(runProcess(["--version"]), { code: 0, out: `${VERSION}\n`, err: "" });
});

test("the version is found from the installed layout (node_modules/mcp-bridge/dist/src/cli/)", async () => {
  const found = await versionAt("app/node_modules/mcp-bridge/dist/src/cli", {
    app: { name: "app", version: "1.0.0" },
    "app/node_modules/mcp-bridge": { name: "mcp-bridge", version: "9.8.7", type: "module" },
  });
  assert.equal(found, "9.8.7");
});

test("a vendored copy under another package has no version rather than that package's", async () => {
  const found = await versionAt("host/src/vendor/mcp-bridge/cli", { host: { name: "host", version: "3.0.0", type: "module" } });
  assert.equal(found, undefined);
});
