/** Shared pieces of the manager end-to-end tests: fixture configs and event capture. */
import type { McpServerConfig } from "../../src/config/types.ts";
import type { McpManagerEvents, StateChange } from "../../src/manager/events.ts";
import type { McpManager } from "../../src/manager/manager.ts";
import { waitForState } from "../manager/helpers.ts";
import { fixture } from "./helpers.ts";


/** A stdio config running a fixture server (absolute command, so it passes as untrusted too). */
export function fixtureConfig(name: string, file: string, flags: string[] = [], extra: Partial<McpServerConfig> = {}): McpServerConfig {
  const opts = fixture(file, flags);
  return { name, transport: "stdio", command: opts.command, args: [...(opts.args ?? [])], cwd: opts.cwd, trust: "trusted", ...extra };
}

/** Every event a manager emits, in order, as JSON text (to search for leaks) and as objects. */
export function capture(manager: McpManager): { lines: string[]; states: StateChange[]; text(): string } {
  const lines: string[] = [];
  const states: StateChange[] = [];
  const events: (keyof McpManagerEvents)[] = ["state", "toolsChanged", "warning", "log", "audit"];
  for (const event of events) {
    manager.on(event, (payload: unknown) => lines.push(`${event} ${JSON.stringify(payload)}`));
  }
  manager.on("state", (s) => states.push(s));
  return { lines, states, text: () => lines.join("\n") };
}

/** Resolves with the first state event matching; subscribe before causing it. */
export function nextState(manager: McpManager, match: (s: StateChange) => boolean, timeoutMs = 20_000): Promise<StateChange> {
  return waitForState(manager, match, timeoutMs);
}
