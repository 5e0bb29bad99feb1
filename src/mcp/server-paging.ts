/**
 * The server's side of pagination: pages of a list by offset, under cursors that name their
 * list, and the list result built from a page.
 */
import { ErrorCode, RpcError } from "../jsonrpc/errors.ts";
import type { ListPage } from "./provider-types.ts";
import type { ListKind } from "./server-registry.ts";

/** One page of `all`, a list of `kind`. Throws -32602 for a cursor we did not issue. */
export function pageOf(all: readonly unknown[], kind: ListKind, cursor: unknown, pageSize: number): ListPage {
  const start = cursor === undefined ? 0 : decodeCursor(kind, cursor);
  const end = start + pageSize;
  const items = all.slice(start, end);
  return end < all.length ? { items, nextCursor: encodeCursor(kind, end) } : { items };
}

/** A list request's result (`{tools: [...], nextCursor?}`), once its page is there. */
export function listResult(kind: ListKind, page: ListPage | Promise<ListPage>): object | Promise<object> {
  if (page instanceof Promise) return page.then((p) => listResult(kind, p));
  return page.nextCursor === undefined ? { [kind]: page.items } : { [kind]: page.items, nextCursor: page.nextCursor };
}

// Cursors name their list so a tools cursor is refused by prompts/list. A cursor stays usable
// after the list changes (the offset is clamped): the client was sent list_changed and will
// list again, and failing the walk half-way would help nobody.
function encodeCursor(kind: ListKind, offset: number): string {
  return btoa(`${kind}:${offset}`).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function decodeCursor(kind: ListKind, cursor: unknown): number {
  const invalid = () => new RpcError(ErrorCode.InvalidParams, "Invalid cursor");
  if (typeof cursor !== "string" || cursor.length > 64 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
  let text: string;
  try {
    text = atob(cursor.replace(/-/g, "+").replace(/_/g, "/"));
  } catch {
    throw invalid();
  }
  const colon = text.indexOf(":");
  const offset = text.slice(colon + 1);
  if (text.slice(0, colon) !== kind || !/^[1-9][0-9]{0,8}$/.test(offset)) throw invalid();
  return Number(offset);
}
