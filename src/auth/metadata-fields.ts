/**
 * Field-by-field reading of the JSON documents the OAuth flow fetches: each field the flow uses
 * is checked for its type, and a wrong one names the field. Fields nobody reads are ignored.
 */
import { oauthError, type OAuthFailure } from "./oauth-error.ts";

/** Reads typed optional fields of one document, naming it in every error. */
export class FieldReader {
  private readonly doc: Record<string, unknown>;
  private readonly what: string;
  private readonly reason: OAuthFailure;

  constructor(doc: Record<string, unknown>, what: string, reason: OAuthFailure = "METADATA_INVALID") {
    this.doc = doc;
    this.what = what;
    this.reason = reason;
  }

  /** A string field, or undefined when absent; any other type is refused. */
  string(name: string): string | undefined {
    const v = this.doc[name];
    if (v === undefined) return undefined;
    if (typeof v !== "string") throw this.wrong(name, "a string");
    return v;
  }

  /** A string field that must be present and not empty. */
  requiredString(name: string): string {
    const v = this.string(name);
    if (v === undefined || v === "") throw oauthError(this.reason, `${this.what} has no "${name}"`, { field: name });
    return v;
  }

  /** An array of strings, or undefined when absent. */
  strings(name: string): string[] | undefined {
    const v = this.doc[name];
    if (v === undefined) return undefined;
    if (!Array.isArray(v) || v.some((x) => typeof x !== "string")) throw this.wrong(name, "an array of strings");
    return [...(v as string[])];
  }

  /** A boolean field, or undefined when absent. */
  boolean(name: string): boolean | undefined {
    const v = this.doc[name];
    if (v === undefined) return undefined;
    if (typeof v !== "boolean") throw this.wrong(name, "a boolean");
    return v;
  }

  /** A finite non-negative number, or undefined when absent. */
  count(name: string): number | undefined {
    const v = this.doc[name];
    if (v === undefined) return undefined;
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0) throw this.wrong(name, "a non-negative number");
    return v;
  }

  private wrong(name: string, expected: string) {
    return oauthError(this.reason, `${this.what}: "${name}" must be ${expected}`, { field: name });
  }
}
