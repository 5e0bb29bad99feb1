/**
 * Input round trips of the stateless era (MRTR, 2026-07-28): what a 2025 server asked its
 * client with a request of its own (elicitation, sampling, roots) it now asks by answering
 * `resultType: "input_required"` with `inputRequests`; the client retries the same request
 * with `inputResponses` and the `requestState` echoed.
 *
 * A handler never sees the rounds: it asks (`session.elicit(...)`) and either gets the answer
 * (it came with this retry or an earlier one) or is stopped by {@link InputRequired}, which
 * the server turns into the `input_required` result. The handler runs again from the top on
 * the retry, so it must ask in the same order with the same keys (docs/decisions.md 109).
 */
import { ErrorCode, RpcError } from "../jsonrpc/errors.ts";
import { isPlainObject } from "../util/object.ts";
import { requestDigest, type RequestStateSeal } from "./request-state.ts";
import { McpMethod } from "./types.ts";

/** One request a server needs the client to answer before it can finish. */
export interface InputRequest {
  method: typeof McpMethod.ElicitationCreate | typeof McpMethod.SamplingCreateMessage | typeof McpMethod.RootsList;
  params: Record<string, unknown>;
}

/** The result that ends a round: what to ask, and the state to echo. */
export interface InputRequiredResult {
  resultType: "input_required";
  inputRequests: Record<string, InputRequest>;
  requestState: string;
}

/**
 * Thrown through a handler when it asked for input the client has not given yet. Not an
 * error to report: the server answers it with an {@link InputRequiredResult}. A handler that
 * catches everything must rethrow it.
 */
export class InputRequired extends Error {
  readonly requests: Record<string, InputRequest>;

  constructor(requests: Record<string, InputRequest>) {
    super(`input required: ${Object.keys(requests).join(", ")}`);
    this.name = "InputRequired";
    this.requests = requests;
  }
}

/** An input response of the wrong shape (-32602): the client broke the protocol. */
export class InputResponseError extends RpcError {
  constructor(message: string, key: string) {
    super(ErrorCode.InvalidParams, message, { key });
    this.name = "InputResponseError";
  }
}

/**
 * The input side of one stateless request: the answers it brought (checked against the
 * sealed state of earlier rounds) and the keys it has handed out.
 */
export class InputRound {
  private readonly seal: RequestStateSeal;
  private readonly method: string;
  /** What identifies the request across rounds; hashed only when a state is opened or sealed. */
  private readonly target: unknown;
  private readonly args: unknown;
  /** Their digest, made once, when a state is first opened or sealed. */
  private madeDigest: Promise<string> | undefined;
  /** Answers from earlier rounds (sealed) and from this retry. */
  private answers: Record<string, unknown>;
  /** Answers the handler used: the next state carries exactly these. */
  private readonly used: Record<string, unknown> = {};
  private counter = 0;

  private constructor(seal: RequestStateSeal, method: string, params: Record<string, unknown>, answers: Record<string, unknown>) {
    this.seal = seal;
    this.method = method;
    this.target = params.name ?? params.uri;
    this.args = params.arguments;
    this.answers = answers;
  }

  /**
   * Reads `requestState` and `inputResponses` from the params of a `method` request. Rejects
   * with RpcError -32602 for a state that does not open (see {@link RequestStateSeal.open})
   * or `inputResponses` that is not an object. A request with neither (nearly every one)
   * costs no hashing: the digest is made only to open a state or to seal one.
   */
  static async open(seal: RequestStateSeal, method: string, params: Record<string, unknown>): Promise<InputRound> {
    const given = params.inputResponses;
    if (given !== undefined && !isPlainObject(given)) throw new RpcError(ErrorCode.InvalidParams, `${method}: inputResponses must be an object`);
    const round = new InputRound(seal, method, params, given === undefined ? NO_ANSWERS : given);
    if (params.requestState === undefined) return round;
    const earlier = (await seal.open(params.requestState, method, await round.digest())).answers;
    round.answers = { ...earlier, ...given };
    return round;
  }

  private digest(): Promise<string> {
    this.madeDigest ??= requestDigest(this.target, this.args);
    return this.madeDigest;
  }

  /** A key for an input request the handler did not name: the same on every retry. */
  nextKey(method: string): string {
    return `${method}#${++this.counter}`;
  }

  /**
   * Every answer to `requests`, or InputRequired naming those still missing. An answer of
   * the wrong shape is refused (-32602): the client broke the protocol, asking again would
   * not help.
   */
  collect(requests: Record<string, InputRequest>): Record<string, unknown> {
    const missing: Record<string, InputRequest> = {};
    const out: Record<string, unknown> = {};
    for (const [key, req] of Object.entries(requests)) {
      if (!Object.hasOwn(this.answers, key)) {
        missing[key] = req;
        continue;
      }
      const answer = this.answers[key];
      if (!wellFormed(req.method, answer)) {
        throw new InputResponseError(`${this.method}: inputResponses[${JSON.stringify(key)}] is not a valid ${req.method} result`, key);
      }
      out[key] = answer;
      this.used[key] = answer;
    }
    if (Object.keys(missing).length > 0) throw new InputRequired(missing);
    return out;
  }

  /** The `input_required` result for `signal`, sealing the answers used so far. */
  async result(signal: InputRequired): Promise<InputRequiredResult> {
    const requestState = await this.seal.seal({ method: this.method, request: await this.digest(), answers: this.used });
    return { resultType: "input_required", inputRequests: signal.requests, requestState };
  }
}

/** The answers of a request that brought none (never written to: `collect` only reads them). */
const NO_ANSWERS: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;

/** The minimum each answer must hold for the handler to read it. */
function wellFormed(method: string, answer: unknown): boolean {
  if (!isPlainObject(answer)) return false;
  switch (method) {
    case McpMethod.ElicitationCreate:
      return ["accept", "decline", "cancel"].includes(answer.action as string);
    case McpMethod.SamplingCreateMessage:
      return typeof answer.model === "string" && typeof answer.content === "object" && answer.content !== null;
    default:
      return Array.isArray(answer.roots);
  }
}
