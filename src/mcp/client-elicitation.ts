/**
 * What McpClient does with the questions a server asks: the -32042 error of URL elicitation
 * (2025-11-25), the checks an elicitation passes before the handler sees it (the same for a
 * 2025 `elicitation/create` request and a 2026-07-28 input request), and the answer to an
 * input request of the stateless era.
 */
import { BridgeError, ErrorCode, RpcError } from "../jsonrpc/errors.ts";
import type { RequestContext } from "../jsonrpc/inbound.ts";
import type { ClientHandlers } from "./client-types.ts";
import type { CreateMessageRequestParams, ElicitRequestParams, ElicitRequestURLParams, ElicitResult } from "./types.ts";
import { McpMethod } from "./types.ts";

/**
 * A request the server refused with -32042 (URL elicitation required) until the user completes
 * the URL elicitations it lists. Retry the request once they are done (the client emits
 * `elicitationComplete` when the server says so).
 */
export class UrlElicitationRequiredError extends RpcError {
  /** The method of our request the server refused, e.g. `tools/call`. */
  readonly method: string;
  /** The URL elicitations the server listed (malformed ones left out, at most 8). */
  readonly elicitations: ElicitRequestURLParams[];
  /** The elicitation handler's answer to each, in order; undefined when no handler ran. */
  readonly outcomes: ElicitResult[] | undefined;

  constructor(method: string, cause: RpcError, elicitations: ElicitRequestURLParams[], outcomes?: ElicitResult[]) {
    const hosts = [...new Set(elicitations.map((e) => hostOf(e.url)))].join(", ");
    const asked =
      outcomes !== undefined ? `the user answered ${outcomes.map((o) => o.action).join(", ")}` : elicitations.length === 0 ? "none was listed" : "none was shown to the user (no elicitation handler with URL mode)";
    super(
      ErrorCode.UrlElicitationRequired,
      `${method}: the server requires ${elicitations.length} URL elicitation(s) first${hosts === "" ? "" : ` (${hosts})`}: ${cause.message}; ${asked}; retry once completed`,
      cause.data,
    );
    this.name = "UrlElicitationRequiredError";
    this.method = method;
    this.elicitations = elicitations;
    this.outcomes = outcomes;
  }
}

export function isUrlElicitation(v: unknown): v is ElicitRequestURLParams {
  const e = v as Partial<ElicitRequestURLParams> | null;
  return typeof e === "object" && e !== null && e.mode === "url" && typeof e.elicitationId === "string" && typeof e.url === "string" && typeof e.message === "string";
}

/**
 * Checks an elicitation against the modes the client declared (the spec: a mode the client
 * did not declare is -32602; a missing mode means form) and returns its params typed.
 */
export function checkElicitation(p: unknown, modes: { form: boolean; url: boolean }): ElicitRequestParams {
  const params = p as ElicitRequestParams;
  const mode = typeof params?.mode === "string" ? params.mode : "form";
  if ((mode !== "form" && mode !== "url") || !modes[mode]) {
    throw new RpcError(ErrorCode.InvalidParams, `elicitation/create: this client did not declare ${JSON.stringify(mode)} elicitation`);
  }
  if (mode === "url" && !isUrlElicitation(params)) throw new RpcError(ErrorCode.InvalidParams, "elicitation/create: URL mode needs message, elicitationId and url strings");
  return params;
}

/**
 * Answers one input request of the stateless era with the handler that answers the same
 * request in the 2025 era. The server may ask only what we declared (the MRTR rules); a
 * method we have no handler for is the server's protocol error (docs/decisions.md 134).
 */
export async function answerInput(
  h: ClientHandlers,
  modes: { form: boolean; url: boolean },
  method: string,
  params: Record<string, unknown>,
  signal: AbortSignal,
): Promise<unknown> {
  if (method === McpMethod.ElicitationCreate && h.elicitation) return h.elicitation(checkElicitation(params, modes), { signal });
  if (method === McpMethod.SamplingCreateMessage && h.sampling) return h.sampling(params as unknown as CreateMessageRequestParams, inputContext(method, signal));
  if (method === McpMethod.RootsList && h.roots) return { roots: await h.roots(inputContext(method, signal)) };
  throw new BridgeError("INVALID_RESULT", `the server asked for ${JSON.stringify(method)} input, which this client did not declare`, { details: { method } });
}

/** The context a roots or sampling handler gets for an input request (no request of the server's to answer). */
function inputContext(method: string, signal: AbortSignal): RequestContext {
  const none = (): Promise<never> => Promise.reject(new BridgeError("INVALID_STATE", `${method}: an input request of the stateless era cannot send messages of its own`));
  return { id: method, method, signal, progressToken: undefined, notify: none, request: none, sendProgress: () => Promise.resolve() };
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "an unparsable URL";
  }
}
