/**
 * The text of a server whose output is untrusted content is scanned for prompt injection in
 * every channel and, where it reaches the model as data, marked: tool results (`call.ts`), tool
 * definitions ({@link UntrustedText.scanTools}), resources, prompts, completions and
 * instructions (`resources.ts`). Known secrets are redacted before any of this.
 *
 * Sources in warnings name the channel: `mcp:fs/read_file` (a tool result), `mcp:fs/<uri>` (a
 * resource), `mcp:fs:tools/list/read_file`, `mcp:fs:prompts/get/<name>`, `mcp:fs:prompts/list`,
 * `mcp:fs:resources/list`, `mcp:fs:completion/complete`, `mcp:fs:instructions`.
 */
import { UntrustedWrapper } from "../bridge/untrusted.ts";
import type { ResolvedServerConfig } from "../config/types.ts";
import type { Tool } from "../mcp/types.ts";
import type { ManagerWarning } from "./events.ts";

/** `McpManagerOptions.untrusted`. */
export interface UntrustedOptions {
  /** Mark untrusted text with boundary markers. Default true. */
  wrap?: boolean;
  /** Scan untrusted text for prompt injection (warnings only). Default true. */
  detect?: boolean;
  /** A fixed marker nonce, for tests; default a fresh one per wrapped piece. */
  nonce?: string;
  /** The servers whose text is untrusted content; default those whose `trust` is `untrusted`. */
  wrapServer?: (config: ResolvedServerConfig) => boolean;
}

/** The default of `wrapServer`: a server's own `trust`. */
function isUntrusted(config: ResolvedServerConfig): boolean {
  return config.trust === "untrusted";
}

/** Which servers' text is untrusted content, and the wrappers that scan and mark it. */
export class UntrustedText {
  private readonly options: UntrustedOptions;
  private readonly warn: (warning: ManagerWarning) => void;
  /** The wrapper of each server name asked for so far. */
  private readonly byServer = new Map<string, UntrustedWrapper>();
  /** For text of several servers at once (a resource context block). */
  readonly shared: UntrustedWrapper;

  constructor(options: UntrustedOptions, warn: (warning: ManagerWarning) => void) {
    this.options = options;
    this.warn = warn;
    this.shared = this.wrapper(undefined);
  }

  /** A paragraph for the system prompt explaining the markers. */
  instructions(): string {
    return this.shared.instructions();
  }

  /** A wrapper for this server's text, or undefined when its text is trusted (or the server unknown). */
  wrapperFor(config: ResolvedServerConfig | undefined): UntrustedWrapper | undefined {
    if (config === undefined) return undefined;
    if (!(this.options.wrapServer ?? isUntrusted)(config)) return undefined;
    // One wrapper per server name, made once: it holds nothing but the options and the name.
    let wrapper = this.byServer.get(config.name);
    if (wrapper === undefined) this.byServer.set(config.name, (wrapper = this.wrapper(config.name)));
    return wrapper;
  }

  /** Scans each tool definition (title, description, schemas, annotations) of an untrusted server. */
  scanTools(config: ResolvedServerConfig, tools: readonly Tool[]): void {
    const wrapper = this.wrapperFor(config);
    if (wrapper === undefined) return;
    for (const tool of tools) wrapper.scanValue(tool, `mcp:${config.name}:tools/list/${tool.name}`);
  }

  private wrapper(server: string | undefined): UntrustedWrapper {
    return new UntrustedWrapper({
      nonce: this.options.nonce,
      enabled: this.options.wrap ?? true,
      detect: this.options.detect ?? true,
      onWarning: (finding, source) =>
        this.warn({
          kind: "injection",
          ...(server === undefined ? {} : { server }),
          rule: finding.rule,
          source,
          message: `untrusted content from ${source} looks like a prompt injection: ${finding.description}: ${JSON.stringify(finding.excerpt)}`,
          at: Date.now(),
        }),
    });
  }
}
