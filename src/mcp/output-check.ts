/**
 * Client-side check of `structuredContent` against the `outputSchema` a tool declared in its
 * last `tools/list`. Each tool's validator is compiled at its first checked result, once per
 * listing.
 *
 * McpClient keeps the schemas of each listing itself and loads this module, and this module
 * the validator, with the first result that has a schema to meet, not before: many clients
 * never call a tool with an output schema (`mcp-bridge inspect` only lists), and the validator
 * is the largest module of the client (65 KB of the CLI's bundle).
 */
import { BridgeError } from "../jsonrpc/errors.ts";
import type { CompiledValidator } from "../schema/validate.ts";
import type { CallToolResult } from "./types.ts";

type SchemaModule = typeof import("../schema/validate.ts");

export class StructuredContentChecker {
  private schemas: ReadonlyMap<string, unknown>;
  private compiled = new Map<string, CompiledValidator>();
  private validator: SchemaModule | undefined;

  /** `schemas`: the output schemas of the last listing, by tool name. */
  constructor(schemas: ReadonlyMap<string, unknown>) {
    this.schemas = schemas;
  }

  /** Takes the output schemas of a fresh listing (replacing the previous one). */
  remember(schemas: ReadonlyMap<string, unknown>): void {
    this.schemas = schemas;
    this.compiled = new Map();
  }

  /** The list changed: schemas are stale until the next listing. */
  forget(): void {
    this.remember(new Map());
  }

  /**
   * Throws `OUTPUT_SCHEMA_MISMATCH` when the tool declared an output schema and a successful
   * result lacks `structuredContent` or does not match, and `OUTPUT_SCHEMA_UNDECIDED` when the
   * validator could not decide within its budget (an untrusted schema too costly to check: the
   * result is withheld, as it could not be checked). Error results are exempt.
   *
   * Synchronous (returns undefined) once the validator is loaded; the first check that needs it
   * returns a promise that loads it and then checks, so the call path stays free of an extra
   * promise on every later result.
   */
  check(tool: string, result: CallToolResult): Promise<void> | undefined {
    if (result.isError === true) return undefined;
    const schema = this.schemas.get(tool);
    if (schema === undefined) return undefined;
    if (result.structuredContent === undefined) {
      throw new BridgeError("OUTPUT_SCHEMA_MISMATCH", `tool "${tool}" declares an outputSchema but returned no structuredContent`, {
        details: { tool },
      });
    }
    if (this.validator === undefined) {
      return import("../schema/validate.ts").then((module) => {
        this.validator ??= module;
        this.checkWith(this.validator, tool, schema, result);
      });
    }
    this.checkWith(this.validator, tool, schema, result);
    return undefined;
  }

  private checkWith(validator: SchemaModule, tool: string, schema: unknown, result: CallToolResult): void {
    const { compileSchema, formatSchemaErrors } = validator;
    let validate = this.compiled.get(tool);
    if (!validate) this.compiled.set(tool, (validate = compileSchema(schema)));
    const verdict = validate(result.structuredContent);
    if (verdict.undecided) {
      throw new BridgeError(
        "OUTPUT_SCHEMA_UNDECIDED",
        `tool "${tool}" returned structuredContent that could not be checked against its outputSchema, so the result was withheld: ${formatSchemaErrors(verdict.errors, 1)} (turn validateStructuredContent off for this server if you trust it)`,
        { details: { tool, errors: verdict.errors } },
      );
    }
    if (!verdict.valid) {
      throw new BridgeError(
        "OUTPUT_SCHEMA_MISMATCH",
        `tool "${tool}" returned structuredContent that does not match its outputSchema: ${formatSchemaErrors(verdict.errors, 5)}`,
        { details: { tool, errors: verdict.errors } },
      );
    }
  }
}
