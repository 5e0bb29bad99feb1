/**
 * Following `nextCursor` safely: a page cap, an item cap, and a guard against a server that
 * hands back the same cursor forever. Cursors are opaque: passed back untouched, never parsed.
 */
import { BridgeError } from "../jsonrpc/errors.ts";

export interface PageLimits {
  maxPages: number;
  maxItems: number;
}

/**
 * Calls `fetchPage` until a page has no `nextCursor`, concatenating `page[key]`.
 * Throws `BridgeError LIMIT_EXCEEDED` past a limit, `INVALID_RESULT` for a malformed page.
 */
export async function collectPages<T>(
  fetchPage: (cursor: string | undefined) => Promise<Record<string, unknown>>,
  key: string,
  limits: PageLimits,
): Promise<T[]> {
  const items: T[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 1; ; page++) {
    const result = await fetchPage(cursor);
    const list = result?.[key];
    if (!Array.isArray(list)) {
      throw new BridgeError("INVALID_RESULT", `list result has no "${key}" array (page ${page})`);
    }
    for (const item of list) items.push(item as T);
    if (items.length > limits.maxItems) {
      throw new BridgeError("LIMIT_EXCEEDED", `more than ${limits.maxItems} ${key} listed; stopped at page ${page}`, {
        details: { key, maxItems: limits.maxItems },
      });
    }
    const next = result.nextCursor;
    if (next === undefined || next === null) return items;
    if (typeof next !== "string") throw new BridgeError("INVALID_RESULT", `nextCursor of ${key} is not a string`);
    if (seen.has(next)) throw new BridgeError("INVALID_RESULT", `the server repeated a cursor while listing ${key}`);
    if (page >= limits.maxPages) {
      throw new BridgeError("LIMIT_EXCEEDED", `more than ${limits.maxPages} pages of ${key}`, {
        details: { key, maxPages: limits.maxPages },
      });
    }
    seen.add(next);
    cursor = next;
  }
}
