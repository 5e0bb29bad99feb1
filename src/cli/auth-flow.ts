/**
 * OAuth for the CLI's remote servers (docs/decisions.md 121): tokens kept in a
 * {@link FileTokenStore} under the user's config directory, reused and refreshed by later runs;
 * when the server asks for an authorization, a one-shot loopback redirect listener on
 * 127.0.0.1 (a port the system picks), the authorization URL printed on stderr (a browser
 * opened only with `--open`), and a countdown until the redirect arrives or the time is up.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { FileTokenStore } from "../auth/file-token-store.ts";
import { startLoopbackRedirect } from "../auth/loopback-redirect.ts";
import { OAuthProvider, type OAuthProviderOptions } from "../auth/oauth-provider.ts";
import { defaultGlobalConfigDir } from "../config/discovery.ts";
import type { Redactor } from "../security/redact.ts";
import type { HttpAuthProvider } from "../transport/auth-provider.ts";
import type { CliIo } from "./io.ts";

/** Where the CLI keeps OAuth tokens: `<config dir>/oauth/tokens.json` (the directory 0700, the file 0600). */
export function tokenStorePath(env: Readonly<Record<string, string | undefined>> = process.env): string {
  // A folder of its own: the config directory's *.json files are read as server configs.
  return join(defaultGlobalConfigDir(env), "oauth", "tokens.json");
}

export interface CliAuthOptions {
  io: CliIo;
  /** Every token and client secret obtained goes here before anything can print it. */
  redactor: Redactor;
  /** Open the authorization URL in the system's browser (`--open`). */
  open: boolean;
  /** How long to wait for the user's redirect, ms. */
  waitMs: number;
  /** Limit of each request of the flow (metadata, registration, token), ms. */
  requestTimeoutMs: number;
  /** Told when the wait for the user starts (true) and ends (false): the connect limit pauses. */
  onUserWait?: (waiting: boolean) => void;
}

/** The pattern the CLI's tests (and people) find the authorization URL by, on stderr. */
export const AUTHORIZE_PROMPT = "mcp-bridge: to authorize, open this URL in a browser:";

/**
 * The provider of one remote server for one CLI run. Stored tokens are used and refreshed
 * without a listener; the listener starts only when a 401/403 needs the flow, and is closed
 * once that flow ends, whatever its outcome.
 */
export class CliOAuth implements HttpAuthProvider {
  private readonly serverUrl: string;
  private readonly options: CliAuthOptions;
  private readonly store: FileTokenStore;
  /** For `accessToken()`: nobody is asked to authorize through this one (no `authorize`). */
  private readonly quiet: OAuthProvider;

  constructor(serverUrl: string, options: CliAuthOptions) {
    this.serverUrl = serverUrl;
    this.options = options;
    this.store = new FileTokenStore(tokenStorePath());
    this.quiet = new OAuthProvider(this.providerOptions("http://127.0.0.1/callback"));
  }

  accessToken(): Promise<string | undefined> {
    return this.quiet.accessToken();
  }

  async handleUnauthorized(status: number, wwwAuthenticate: string | undefined): Promise<string> {
    const listener = await startLoopbackRedirect({ timeoutMs: this.options.waitMs });
    try {
      const provider = new OAuthProvider({
        ...this.providerOptions(listener.redirectUri),
        authorize: async (url) => {
          this.show(url);
          const stop = this.countdown();
          this.options.onUserWait?.(true);
          try {
            return await listener.redirect;
          } finally {
            this.options.onUserWait?.(false);
            stop();
          }
        },
      });
      return await provider.handleUnauthorized(status, wwwAuthenticate);
    } finally {
      await listener.close();
    }
  }

  private providerOptions(redirectUri: string): OAuthProviderOptions {
    return {
      serverUrl: this.serverUrl,
      redirectUri,
      store: this.store,
      registration: { clientName: "mcp-bridge CLI" },
      http: { timeoutMs: this.options.requestTimeoutMs },
      onSecret: (secret) => this.options.redactor.addSecret(secret),
    };
  }

  private show(url: string): void {
    // The URL holds no secret (state and the PKCE challenge are one-use and public by design).
    this.options.io.err(`${AUTHORIZE_PROMPT}\n  ${url}`);
    if (this.options.open) openBrowser(url, this.options.io);
  }

  /** A countdown on stderr: in place on a terminal, else a line now and then. */
  private countdown(): () => void {
    const { io, waitMs } = this.options;
    const ends = Date.now() + waitMs;
    let lastLine = 0;
    const tick = () => {
      const left = Math.max(0, Math.ceil((ends - Date.now()) / 1000));
      const text = `waiting for the authorization: ${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")} left (Ctrl-C to give up)`;
      if (io.progress) io.progress(text);
      else if (left === Math.ceil(waitMs / 1000) || lastLine - left >= 30) {
        lastLine = left;
        io.err(`mcp-bridge: ${text}`);
      }
    };
    lastLine = Math.ceil(waitMs / 1000);
    tick();
    const timer = setInterval(tick, 1000);
    return () => {
      clearInterval(timer);
      io.progress?.(undefined);
    };
  }
}

/** Starts the system's URL opener, detached; a failure is reported, not fatal (the URL is printed). */
function openBrowser(url: string, io: CliIo): void {
  const [command, args] =
    process.platform === "darwin" ? ["open", [url]] : process.platform === "win32" ? ["rundll32", ["url.dll,FileProtocolHandler", url]] : ["xdg-open", [url]];
  try {
    // No shell: the URL is an argument, never parsed as a command line.
    const child = spawn(command, args as string[], { stdio: "ignore", detached: true });
    child.on("error", (e) => io.err(`mcp-bridge: could not open a browser (${e.message}); open the URL above yourself`));
    child.unref();
  } catch (e) {
    io.err(`mcp-bridge: could not open a browser (${(e as Error).message}); open the URL above yourself`);
  }
}

/**
 * The CLI's connect time limit, paused while the user is being waited for: a server or an
 * authorization server that never answers still fails at the limit, and a person gets the
 * whole of `--auth-timeout` for the browser step.
 */
export class ConnectDeadline {
  private readonly controller = new AbortController();
  private remaining: number;
  private started = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly error: Error;

  constructor(ms: number, error: Error) {
    this.remaining = ms;
    this.error = error;
    this.resume();
  }

  /** Aborted, with the time-out error as its reason, once the limit has run out. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The time-out error, if the limit ran out. */
  get expired(): Error | undefined {
    return this.controller.signal.aborted ? this.error : undefined;
  }

  pause(): void {
    if (this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.remaining -= Date.now() - this.started;
  }

  resume(): void {
    if (this.timer !== undefined || this.controller.signal.aborted) return;
    this.started = Date.now();
    this.timer = setTimeout(() => this.controller.abort(this.error), Math.max(0, this.remaining));
  }

  clear(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
