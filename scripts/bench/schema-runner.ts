/**
 * Child process of the benchmark's section 10 (scripts/bench/schema.ts): measures the JSON
 * Schema validator and prints the result as JSON. Run under plain node with `--expose-gc`.
 *
 *   node --expose-gc schema-runner.js [--quick] [--validator PATH/TO/validate.js --ordinary]
 *
 * `--validator` measures another build of the validator instead (an older commit's, say), and
 * `--ordinary` only the ordinary schemas (an older build would hang on the corpus).
 */
import { pathToFileURL } from "node:url";
import { compileSchema } from "../../src/schema/validate.ts";
import { measureSchema } from "./schema.ts";

type Compile = Parameters<typeof measureSchema>[0];

const args = process.argv.slice(2);
const at = args.indexOf("--validator");
const compile: Compile = at >= 0 ? ((await import(pathToFileURL(args[at + 1]!).href)) as { compileSchema: Compile }).compileSchema : compileSchema;
// A minor GC before each pair clears the young garbage of the one before. Not a full one: V8
// ages out the compiled code of functions idle across full GCs, and each pair would then time
// the interpreter.
const v8gc = (globalThis as { gc?: (options: { type: "minor" | "major" }) => void }).gc;
const gc = v8gc ? () => v8gc({ type: "minor" }) : () => {};
process.stdout.write(JSON.stringify(measureSchema(compile, gc, args.includes("--quick"), args.includes("--ordinary"))) + "\n");
