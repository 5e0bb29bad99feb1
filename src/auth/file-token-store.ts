/**
 * A {@link TokenStore} in one JSON file, for the CLI: tokens survive between runs. The file is
 * 0600 (in a 0700 directory when the store makes it), written whole to a temporary file and renamed over the old one, so
 * a crash leaves the old file or the new one, never half of either (docs/decisions.md 117).
 */
import { randomBytes } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { oauthError } from "./oauth-error.ts";
import type { ClientCredentials } from "./token-request.ts";
import type { StoredTokens, TokenStore } from "./token-store.ts";

interface FileContents {
  version: 1;
  clients: Record<string, ClientCredentials>;
  tokens: Record<string, StoredTokens>;
}

/**
 * ```ts
 * const store = new FileTokenStore(join(homedir(), ".config", "mcp-bridge", "oauth.json"));
 * ```
 * One process at a time: writes within a store are serialised, but two processes writing the
 * same file keep the last writer's view.
 */
export class FileTokenStore implements TokenStore {
  private readonly path: string;
  /** Writes queue here so a read-modify-write never interleaves with another in this process. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(path: string) {
    this.path = path;
  }

  async getClient(issuer: string): Promise<ClientCredentials | undefined> {
    return (await this.read()).clients[issuer];
  }

  saveClient(client: ClientCredentials): Promise<void> {
    // A key object cannot be written as JSON, and a key belongs in the configuration anyway.
    const { privateKey: _key, ...storable } = client;
    return this.update((c) => {
      c.clients[client.issuer] = storable;
    });
  }

  deleteClient(issuer: string): Promise<void> {
    return this.update((c) => {
      delete c.clients[issuer];
    });
  }

  async getTokens(server: string): Promise<StoredTokens | undefined> {
    return (await this.read()).tokens[server];
  }

  saveTokens(server: string, tokens: StoredTokens): Promise<void> {
    return this.update((c) => {
      c.tokens[server] = { ...tokens };
    });
  }

  deleteTokens(server: string): Promise<void> {
    return this.update((c) => {
      delete c.tokens[server];
    });
  }

  private update(change: (contents: FileContents) => void): Promise<void> {
    const next = this.queue.then(async () => {
      const contents = await this.read();
      change(contents);
      await this.write(contents);
    });
    this.queue = next.catch(() => {});
    return next;
  }

  private async read(): Promise<FileContents> {
    let text: string;
    try {
      text = await readFile(this.path, "utf8");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return { version: 1, clients: {}, tokens: {} };
      throw e;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const p = parsed as Partial<FileContents> | undefined;
    if (p === undefined || p === null || p.version !== 1 || typeof p.clients !== "object" || typeof p.tokens !== "object" || p.clients === null || p.tokens === null) {
      throw oauthError("TOKEN_STORE_INVALID", `token store ${this.path} is not a token store file of this version; remove it to start again`);
    }
    return { version: 1, clients: p.clients, tokens: p.tokens };
  }

  private async write(contents: FileContents): Promise<void> {
    const dir = dirname(this.path);
    // A directory made here is 0700; an existing one is left as it is (it may be the home
    // directory, whose mode is not ours to change).
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const temp = join(dir, `.${randomBytes(6).toString("hex")}.tmp`);
    try {
      await writeFile(temp, `${JSON.stringify(contents, null, 2)}\n`, { mode: 0o600, flag: "wx" });
      await rename(temp, this.path);
    } catch (e) {
      await rm(temp, { force: true });
      throw e;
    }
  }
}
