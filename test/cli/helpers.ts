/** Running the CLI in tests: in-process through main() with captured output, or as a real process. */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { main } from "../../src/cli/main.ts";
import type { Terminal } from "../../src/cli/io.ts";
import { nodeModuleCommand } from "../../src/util/node-command.ts";
import { ROOT, fixture, reap, waitGone } from "../e2e/helpers.ts";

export interface CliRun {
  code: number;
  out: string;
  err: string;
}

/** Runs `mcp-bridge <argv>` in this process. Not a terminal unless `terminal` says so. */
export async function run(argv: string[], terminal: Terminal = { columns: 80 }): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, (t) => out.push(t), (t) => err.push(t), terminal);
  return { code, out: out.join("\n"), err: err.join("\n") };
}

/** Runs `mcp-bridge <argv>` as a child process with stdout and stderr piped (so not terminals). */
export function runProcess(argv: string[]): CliRun {
  const cli = nodeModuleCommand(join(ROOT, "src", "cli", "main.ts"), argv);
  const r = spawnSync(cli.command, cli.args, {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 60_000,
  });
  return { code: r.status ?? -1, out: r.stdout, err: r.stderr };
}

/** The command line of a fixture server, for after `--`. */
export function fixtureCommand(file: string, args: string[] = []): string[] {
  const f = fixture(file, args);
  return [f.command, ...(f.args ?? [])];
}

export const echoCommand = fixtureCommand("echo.ts");

/**
 * The pid a failure message names (`server "node" (pid 123): ...`), after checking that the
 * process is gone: the CLI must have stopped the server it started.
 */
export async function assertServerStopped(message: string): Promise<void> {
  const match = /\(pid (\d+)\)/.exec(message);
  if (!match) throw new Error(`no pid in: ${message}`);
  const pid = Number(match[1]);
  if (!(await waitGone(pid))) {
    reap(pid);
    throw new Error(`server process ${pid} is still running`);
  }
}
