/**
 * The command line that runs one of this package's own modules as a program with this very
 * Node (the conductor's shim, the demo's servers). The package runs in two shapes: a source
 * checkout, where the modules are `.ts` and need the `tsx` loader (a dev dependency), and the
 * installed package, where they are built `.js` and need nothing. Node-only (the adapters use
 * it); the core layers never import it.
 */
import { fileURLToPath } from "node:url";

/**
 * `{command, args}` that runs `relativePath` (written without extension, relative to the
 * module whose `import.meta.url` is `from`) with `args`. The extension, and the loader, follow
 * `from`: a `.ts` caller is a source checkout.
 *
 * ```ts
 * nodeCommand(import.meta.url, "../cli/main", ["shim", "4000"]);
 * // built:  {command: "/usr/bin/node", args: ["/.../dist/src/cli/main.js", "shim", "4000"]}
 * ```
 */
export function nodeCommand(from: string, relativePath: string, args: readonly string[] = []): { command: string; args: string[] } {
  const fromSource = new URL(from).pathname.endsWith(".ts");
  const file = fileURLToPath(new URL(`${relativePath}${fromSource ? ".ts" : ".js"}`, from));
  const loader = fromSource ? ["--import", import.meta.resolve("tsx")] : [];
  return { command: process.execPath, args: [...loader, file, ...args] };
}
