/**
 * Locating the repository's fixture servers, for the benchmark. They are TypeScript, so they
 * run under Node with the `tsx` loader. (The demo runs the packaged src/cli/demo-server.ts.)
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root: the nearest directory above this file with a `fixtures/servers`. */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, "fixtures", "servers")) && existsSync(join(dir, "package.json"))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error("fixtures/servers not found (the benchmark runs from a source checkout)");
    dir = parent;
  }
}

/** `[node, --import, <tsx>, <fixture>, ...args]`: a command line that runs a fixture server. */
export function fixtureCommand(fixture: string, args: readonly string[] = []): string[] {
  const tsx = import.meta.resolve("tsx");
  return [process.execPath, "--import", tsx, join(repoRoot(), "fixtures", "servers", fixture), ...args];
}
