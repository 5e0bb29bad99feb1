/**
 * The MCP logging levels, in a module of their own: the CLI checks `--log-level` before it
 * spawns a server, and importing them from `types.ts` made that start load two more files
 * (the wire types and `util/object.ts`) ahead of the spawn (docs/decisions.md 179).
 * `types.ts` re-exports them, so callers still import from there.
 */

/** RFC 5424 severities, least severe first: index order is severity order. */
export const LOGGING_LEVELS = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
] as const;
