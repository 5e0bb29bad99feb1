/**
 * Client-side check of `structuredContent` against the `outputSchema` a tool declared in its
 * last `tools/list`. Validators are compiled once per listing.
 */
import { BridgeError } from "../jsonrpc/errors.ts";
import { compileSchema, formatSchemaErrors, type CompiledValidator } from "../schema/validate.ts";
import type { CallToolResult, Tool } from "./types.ts";

export class StructuredContentChecker {
  private schemas = new Map<string, unknown>();
  private compiled = new Map<string, CompiledValidator>();

  /** Remembers the output schemas of a fresh listing (replacing the previous one). */
  remember(tools: readonly Tool[]): void {
    this.schemas = new Map();
    this.compiled = new Map();
    for (const t of tools) if (t.outputSchema !== undefined) this.schemas.set(t.name, t.outputSchema);
  }

  /** The list changed: schemas are stale until the next listing. */
  forget(): void {
    this.schemas.clear();
    this.compiled.clear();
  }

  /**
   * Throws `OUTPUT_SCHEMA_MISMATCH` when the tool declared an output schema and a successful
   * result lacks `structuredContent` or does not match. Error results are exempt.
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
    let validate = this.compiled.get(tool);
    if (!validate) this.compiled.set(tool, (validate = compileSchema(schema)));
    const verdict = validate(result.structuredContent);
    if (!verdict.valid) {
      throw new BridgeError(
        "OUTPUT_SCHEMA_MISMATCH",
        `tool "${tool}" returned structuredContent that does not match its outputSchema: ${formatSchemaErrors(verdict.errors, 5)}`,
        { details: { tool, errors: verdict.errors } },
      );
    }
  }
}
