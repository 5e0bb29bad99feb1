/**
 * The one place that decides how this very Node runs a module of ours as a program (the
 * conductor's shim, the demo's servers; the tests' fixtures and CLI runs). A module is `.js`
 * in the installed package and `.ts` in a source checkout. Node 22.18+ runs `.ts` itself by
 * stripping the types, so a checkout needs nothing installed there; only a Node that cannot
 * (Node 20) needs the `tsx` loader, a dev dependency. Node-only (the adapters and the tests use
 * it); the core layers never import it.
 */
import { fileURLToPath } from "node:url";

/**
 * Whether this Node runs `.ts` modules by itself. `process.features.typescript` is `"strip"`
 * (or `"transform"`) where type stripping is on, and missing or `false` where it is not: Node
 * 20, or a newer Node started with `--no-experimental-strip-types`.
 */
export function stripsTypes(): boolean {
  const feature = (process.features as { typescript?: unknown }).typescript;
  return typeof feature === "string";
}

/**
 * The Node options a child needs to run `file`: none for JavaScript or where this Node strips
 * types, else `--import` of tsx's loader, resolved from this package (so the child needs no
 * `node_modules` of its own in its `cwd`).
 */
export function loaderArgs(file: string): string[] {
  if (!/\.[cm]?ts$/.test(file) || stripsTypes()) return [];
  return ["--import", import.meta.resolve("tsx")];
}

/**
 * `{command, args}` that runs the module file `file` (a path) with this Node, the loader
 * included where needed, then `args`.
 *
 * ```ts
 * const { command, args } = nodeModuleCommand("/repo/fixtures/servers/echo.ts", ["--flag"]);
 * // Node 22+: {command: "/usr/bin/node", args: ["/repo/fixtures/servers/echo.ts", "--flag"]}
 * // Node 20:  {command: "/usr/bin/node", args: ["--import", "file:///.../tsx/...", "/repo/...", "--flag"]}
 * ```
 */
export function nodeModuleCommand(file: string, args: readonly string[] = []): { command: string; args: string[] } {
  return { command: process.execPath, args: [...loaderArgs(file), file, ...args] };
}

/**
 * `{command, args}` that runs `relativePath` (written without extension, relative to the
 * module whose `import.meta.url` is `from`) with `args`. The extension follows `from`: a `.ts`
 * caller is a source checkout.
 *
 * ```ts
 * nodeCommand(import.meta.url, "../cli/main", ["shim", "4000"]);
 * // built:  {command: "/usr/bin/node", args: ["/.../dist/src/cli/main.js", "shim", "4000"]}
 * ```
 */
export function nodeCommand(from: string, relativePath: string, args: readonly string[] = []): { command: string; args: string[] } {
  const fromSource = new URL(from).pathname.endsWith(".ts");
  return nodeModuleCommand(fileURLToPath(new URL(`${relativePath}${fromSource ? ".ts" : ".js"}`, from)), args);
}
