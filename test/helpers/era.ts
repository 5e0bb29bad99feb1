/**
 * What differs between the protocol eras in what tests observe (docs/decisions.md 130):
 * results have one shape, but some error codes are the era's own.
 */
import { ErrorCode } from "../../src/jsonrpc/errors.ts";

/**
 * The code of "resource not found": -32002 in the handshake era, -32602 (with `data.uri`) in
 * the stateless one (2026-07-28 moved it).
 */
export function resourceNotFoundCode(era: "legacy" | "modern" | undefined): number {
  return era === "modern" ? ErrorCode.InvalidParams : ErrorCode.ResourceNotFound;
}
