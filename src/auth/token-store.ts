/**
 * Where the OAuth client keeps what it obtained: client credentials by issuer, tokens by MCP
 * server. An interface, so a host can keep them in its own keychain; the in-memory store is
 * the default (a file store for the CLI is to come).
 */
import type { ClientCredentials, TokenSet } from "./token-request.ts";

/** Tokens for one MCP server, with the issuer and resource they were obtained from. */
export interface StoredTokens extends TokenSet {
  /** The authorization server that issued them: tokens of another one are never reused. */
  issuer: string;
  /** The `resource` they were requested for (RFC 8707), when one was sent. */
  resource?: string;
  /** The `scope` the authorization request asked for (a step-up asks for it again, plus more). */
  requestedScope?: string;
}

/**
 * Storage of OAuth state. Keys: `issuer` exactly as the authorization server metadata says it;
 * `server` the MCP endpoint's origin and path. Implementations must not log what they keep.
 */
export interface TokenStore {
  getClient(issuer: string): Promise<ClientCredentials | undefined>;
  saveClient(client: ClientCredentials): Promise<void>;
  deleteClient(issuer: string): Promise<void>;
  getTokens(server: string): Promise<StoredTokens | undefined>;
  saveTokens(server: string, tokens: StoredTokens): Promise<void>;
  deleteTokens(server: string): Promise<void>;
}

/** A {@link TokenStore} in memory: lost when the process ends. Copies in and out. */
export class MemoryTokenStore implements TokenStore {
  private readonly clients = new Map<string, ClientCredentials>();
  private readonly tokens = new Map<string, StoredTokens>();

  async getClient(issuer: string): Promise<ClientCredentials | undefined> {
    const found = this.clients.get(issuer);
    return found === undefined ? undefined : { ...found };
  }

  async saveClient(client: ClientCredentials): Promise<void> {
    this.clients.set(client.issuer, { ...client });
  }

  async deleteClient(issuer: string): Promise<void> {
    this.clients.delete(issuer);
  }

  async getTokens(server: string): Promise<StoredTokens | undefined> {
    const found = this.tokens.get(server);
    return found === undefined ? undefined : { ...found };
  }

  async saveTokens(server: string, tokens: StoredTokens): Promise<void> {
    this.tokens.set(server, { ...tokens });
  }

  async deleteTokens(server: string): Promise<void> {
    this.tokens.delete(server);
  }
}
