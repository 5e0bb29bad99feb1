/**
 * Client-side check of `structuredContent` against the `outputSchema` a tool declared in its
 * last `tools/list`. Validators are compiled once per listing.
 *
 * McpClient loads this module, and it the validator, with the first listing that has an output
 * schema, not when the client is imported: many clients never meet one, and the validator is
 * the largest module of the client.
 */
import { BridgeError } from "../jsonrpc/errors.ts";
import type { CompiledValidator } from "../schema/validate.ts";
import type { CallToolResult, Tool } from "./types.ts";

type SchemaModule = typeof import("../schema/validate.ts");

export class StructuredContentChecker {
  private schemas = new Map<string, unknown>();
  private compiled = new Map<string, CompiledValidator>();
  private validator: SchemaModule | undefined;

  /** Remembers the output schemas of a fresh listing (replacing the previous one). */
  async remember(tools: readonly Tool[]): Promise<void> {
    const schemas = new Map<string, unknown>();
    for (const t of tools) if (t.outputSchema !== undefined) schemas.set(t.name, t.outputSchema);
    if (schemas.size > 0) this.validator ??= await import("../schema/validate.ts");
    this.schemas = schemas;
    this.compiled = new Map();
  }

  /** The list changed: schemas are stale until the next listing. */
  forget(): void {
    this.schemas.clear();
    this.compiled.clear();
  }

  /**
   * Throws `OUTPUT_SCHEMA_MISMATCH` when the tool declared an output schema and a successful
   * result lacks `structuredContent` or does not match, and `OUTPUT_SCHEMA_UNDECIDED` when the
   * validator could not decide within its budget (an untrusted schema too costly to check: the
   * result is withheld, as it could not be checked). Error results are exempt.
   */
  check(tool: string, result: CallToolResult): void {
    if (result.isError === true) return;
    const schema = this.schemas.get(tool);
    if (schema === undefined) return;
    if (result.structuredContent === undefined) {
      throw new BridgeError("OUTPUT_SCHEMA_MISMATCH", `tool "${tool}" declares an outputSchema but returned no structuredContent`, {
        details: { tool },
      });
    }
    // `remember` loaded the module before it stored any schema.
    const { compileSchema, formatSchemaErrors } = this.validator!;
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
