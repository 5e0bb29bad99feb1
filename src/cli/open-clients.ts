/**
 * The MCP clients the CLI has opened, and stdio transports started before their client, so
 * that the process can close them all when it must end early (its output pipe broke: see
 * main.ts). Closing a stdio client stops the server's whole process group, which exiting
 * alone would not: the server would see stdin end, but a grandchild it started would live on.
 */

/** A client, or a transport started before its client (early-start.ts). */
interface Closable {
  close(): Promise<void>;
}

// Kept after their "close" event too: that event comes when the connection ends, while the
// server's shutdown (grace, SIGTERM, SIGKILL of its group) may still be running, and the
// process must not exit before it is done. `close()` is idempotent and returns that shutdown.
const opened = new Set<Closable>();

/** Remembers `client` for {@link closeOpenClients}; returns it. */
export function trackClient<T extends Closable>(client: T): T {
  opened.add(client);
  return client;
}

/** Closes every client opened, and waits until each shutdown is complete; never rejects. */
export async function closeOpenClients(): Promise<void> {
  await Promise.allSettled([...opened].map((client) => client.close()));
}
