/**
 * Finds the servers of a session by merging four layers, each later one winning by name:
 *
 * 1. global: every `*.json` file in `globalDir`, in sorted (code-unit) order;
 * 2. workspace: `.mcp.json`, then `.mcp-bridge.json`, in `cwd`;
 * 3. agent: the agent's own list;
 * 4. session: the list of this session (e.g. what an ACP editor sent).
 *
 * A later entry with `enabled: false` (or `disabled: true`) removes the server it names; a
 * later entry replaces an earlier one whole, never field by field. Every replacement and
 * removal is logged by name and source only. Files that are missing are skipped; files that
 * cannot be read or decoded become problems carrying the file path; nothing here throws for
 * bad input. An entry with errors is dropped and does not remove an inherited server.
 */
import { readdir, readFile, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import { parseNativeConfig } from "./parse-native.ts";
import { MAX_CONFIG_FILE_BYTES } from "./parse-common.ts";
import { parseJsonText, parseMcpJsonFile } from "./parse-files.ts";
import type { ConfigProblem, McpServerConfig, ParseResult } from "./types.ts";

/** Workspace files looked for in `cwd`, in the order they are layered. */
export const WORKSPACE_CONFIG_FILES: readonly string[] = [".mcp.json", ".mcp-bridge.json"];

/**
 * The global config directory: `$XDG_CONFIG_HOME/mcp-bridge`, or `~/.config/mcp-bridge` when
 * `XDG_CONFIG_HOME` is unset, empty or relative (the XDG base directory spec ignores relative
 * paths).
 */
export function defaultGlobalConfigDir(env: Readonly<Record<string, string | undefined>> = process.env, home: string = homedir()): string {
  const xdg = env.XDG_CONFIG_HOME;
  return join(xdg !== undefined && isAbsolute(xdg) ? xdg : join(home, ".config"), "mcp-bridge");
}

export interface DiscoverOptions {
  /** Directory of `*.json` config files (any format parse-files.ts accepts). */
  globalDir?: string;
  /** Workspace directory holding `.mcp.json` and/or `.mcp-bridge.json`. */
  cwd?: string;
  agentServers?: McpServerConfig[];
  sessionServers?: McpServerConfig[];
  /** Receives one line per override, removal and shadowing. Never given a secret. */
  log?: (message: string) => void;
}

export interface DiscoveryResult extends ParseResult {
  /** Server name to where its winning definition came from: a file path, `agent` or `session`. */
  sources: Record<string, string>;
}

interface Layer {
  source: string;
  kind: "file" | "agent" | "session";
  servers: McpServerConfig[];
}

/**
 * Reads and merges every layer. `servers` holds only enabled servers, in the order their names
 * first appeared; `problems` holds every layer's problems, each with its `source`.
 */
export async function discoverConfigs(options: DiscoverOptions = {}): Promise<DiscoveryResult> {
  const log = options.log ?? (() => {});
  const problems: ConfigProblem[] = [];
  const layers: Layer[] = [];

  const addFile = async (path: string, missingIsFine: boolean) => {
    const parsed = await readConfigFile(path, missingIsFine);
    if (parsed === undefined) return;
    problems.push(...parsed.problems);
    layers.push({ source: path, kind: "file", servers: parsed.servers });
  };

  if (options.globalDir !== undefined) {
    for (const file of await listJsonFiles(options.globalDir, problems)) await addFile(file, false);
  }
  if (options.cwd !== undefined) {
    const before = layers.length;
    for (const name of WORKSPACE_CONFIG_FILES) await addFile(join(options.cwd, name), true);
    // A workspace file comes with whatever repository was cloned: it may add servers, but it
    // cannot declare them trusted (that would skip first-use approval).
    for (const layer of layers.slice(before)) {
      layer.servers = layer.servers.map((config) => {
        if (config.trust !== "trusted") return config;
        problems.push({
          path: `/${config.name}/trust`,
          message: `a workspace file cannot mark server ${JSON.stringify(config.name)} trusted; it stays untrusted`,
          severity: "warning",
          source: layer.source,
        });
        return { ...config, trust: "untrusted" };
      });
    }
  }
  for (const kind of ["agent", "session"] as const) {
    const list = kind === "agent" ? options.agentServers : options.sessionServers;
    if (list === undefined) continue;
    const parsed = parseNativeConfig(list);
    problems.push(...parsed.problems.map((p) => ({ ...p, source: kind })));
    layers.push({ source: kind, kind, servers: parsed.servers });
  }

  const merged = new Map<string, { config: McpServerConfig; layer: Layer }>();
  for (const layer of layers) {
    for (const config of layer.servers) {
      const name = JSON.stringify(config.name);
      const earlier = merged.get(config.name);
      if (config.enabled === false) {
        if (earlier !== undefined) {
          merged.delete(config.name);
          log(`config: server ${name} from ${earlier.layer.source} is disabled by ${layer.source}`);
        }
        continue;
      }
      if (earlier !== undefined) {
        if (layer.kind === "session" && earlier.layer.kind === "agent") {
          log(`config: session server ${name} shadows the agent's server of the same name`);
        } else {
          log(`config: server ${name} from ${layer.source} replaces the one from ${earlier.layer.source}`);
        }
      }
      merged.set(config.name, { config, layer });
    }
  }

  const servers: McpServerConfig[] = [];
  const sources: Record<string, string> = {};
  for (const [name, { config, layer }] of merged) {
    servers.push(config);
    sources[name] = layer.source;
  }
  return { servers, problems, sources };
}

/** The `*.json` files of a directory, sorted; a missing directory is simply empty. */
async function listJsonFiles(dir: string, problems: ConfigProblem[]): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    const code = errnoCode(err);
    if (code !== "ENOENT") problems.push(fileProblem(dir, `cannot list the config directory (${code})`));
    return [];
  }
  // Code-unit order, not locale order: the same on every machine.
  return names
    .filter((n) => n.endsWith(".json"))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map((n) => join(dir, n));
}

/** One config file parsed, or undefined if it does not exist and that is fine. */
async function readConfigFile(path: string, missingIsFine: boolean): Promise<ParseResult | undefined> {
  let text: string;
  try {
    const info = await stat(path);
    if (!info.isFile()) return { servers: [], problems: [fileProblem(path, "is not a regular file")] };
    if (info.size > MAX_CONFIG_FILE_BYTES) {
      return { servers: [], problems: [fileProblem(path, `is larger than ${MAX_CONFIG_FILE_BYTES} bytes`)] };
    }
    text = await readFile(path, "utf8");
  } catch (err) {
    const code = errnoCode(err);
    if (code === "ENOENT" && missingIsFine) return undefined;
    return { servers: [], problems: [fileProblem(path, `cannot read the file (${code})`)] };
  }
  const decoded = parseJsonText(text, path);
  if (!decoded.ok) return { servers: [], problems: [decoded.problem] };
  return parseMcpJsonFile(decoded.value, path);
}

function fileProblem(source: string, message: string): ConfigProblem {
  return { path: "", message, severity: "error", source };
}

function errnoCode(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === "string" ? code : "unknown error";
}
