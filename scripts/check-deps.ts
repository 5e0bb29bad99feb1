/**
 * Zero-dependency audit. Run as `tsx scripts/check-deps.ts`: prints every problem as
 * `file:line: message` and exits 1, or exits 0 when the project keeps these rules:
 *
 * - package.json has no runtime dependencies of any kind (`dependencies`,
 *   `optionalDependencies`, `peerDependencies`, `bundleDependencies`/`bundledDependencies`).
 * - devDependencies are only `typescript`, `tsx`, `@types/node` and `esbuild` (the bundles
 *   of `npm run build`), each pinned to an exact version.
 * - Files in src/ import only relative paths (that stay inside src/) and `node:` built-ins:
 *   static `import`/`export ... from`, side-effect `import "x"`, `import("x")`, `require("x")`.
 *   A dynamic import or require whose specifier is not a literal is a problem, since it cannot
 *   be checked. A relative import keeps the layer order of scripts/check-layers.ts.
 * - Files under src/jsonrpc, src/mcp, src/schema and src/bridge import no `node:` module and do
 *   not reference the Node globals `Buffer` and `process`.
 *
 * The source scan is deliberately cheap, not a parser: comments, string contents, template
 * text and regular-expression literals are blanked out first, so that text inside them is
 * never mistaken for code, and imports are then matched on what is left.
 */
import { readFile, readdir } from "node:fs/promises";
import { builtinModules } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { layerProblem } from "./check-layers.ts";

const RUNTIME_DEPENDENCY_FIELDS = [
  "dependencies",
  "optionalDependencies",
  "peerDependencies",
  "bundleDependencies",
  "bundledDependencies",
];
const ALLOWED_DEV_DEPENDENCIES = new Set(["typescript", "tsx", "@types/node", "esbuild"]);
/** An exact semver version: no range operators, wildcards, tags or URLs. */
const EXACT_VERSION = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;
const CORE_DIRS = ["jsonrpc", "mcp", "schema", "bridge"];
const CORE_LIST = CORE_DIRS.map((d) => `src/${d}/`).join(", ");
const SOURCE_EXTENSIONS = [".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"];

/**
 * Checks the project at `rootDir` and returns its problems as `path:line: message`, with paths
 * relative to `rootDir`. An empty list means the project passes.
 */
export async function checkProject(rootDir: string): Promise<string[]> {
  const problems = await checkPackageJson(rootDir);
  const srcDir = join(rootDir, "src");
  let files: string[];
  try {
    files = await listSourceFiles(srcDir);
  } catch {
    return [...problems, "src:1: directory not found or unreadable"];
  }
  for (const file of files) {
    const rel = toSlashes(relative(rootDir, file));
    const text = await readFile(file, "utf8");
    const core = CORE_DIRS.some((d) => rel.startsWith(`src/${d}/`));
    for (const p of checkSource(text, file, srcDir, core)) problems.push(`${rel}:${p.line}: ${p.message}`);
  }
  return problems;
}

interface Problem {
  line: number;
  message: string;
}

async function checkPackageJson(rootDir: string): Promise<string[]> {
  let text: string;
  let pkg: unknown;
  try {
    text = await readFile(join(rootDir, "package.json"), "utf8");
    pkg = JSON.parse(text);
  } catch (err) {
    return [`package.json:1: cannot read or parse: ${err instanceof Error ? err.message : String(err)}`];
  }
  if (typeof pkg !== "object" || pkg === null || Array.isArray(pkg)) {
    return ["package.json:1: top level is not an object"];
  }
  const fields = pkg as Record<string, unknown>;
  const out: string[] = [];
  const at = (line: number, message: string) => out.push(`package.json:${line}: ${message}`);

  for (const field of RUNTIME_DEPENDENCY_FIELDS) {
    if (!(field in fields)) continue;
    const value = fields[field];
    const fieldAt = keyPosition(text, field, 0);
    const names = Array.isArray(value) ? value.map(String) : isObject(value) ? Object.keys(value) : [];
    if (!Array.isArray(value) && !isObject(value) && value !== false) {
      at(fieldAt.line, `${field} must be empty, found ${JSON.stringify(value)}`);
    }
    for (const name of names) {
      const line = Array.isArray(value)
        ? stringPosition(text, name, fieldAt.offset)
        : keyPosition(text, name, fieldAt.offset).line;
      at(line, `${field} must be empty (zero runtime dependencies), found "${name}"`);
    }
  }

  if ("devDependencies" in fields) {
    const dev = fields.devDependencies;
    const devAt = keyPosition(text, "devDependencies", 0);
    if (!isObject(dev)) {
      at(devAt.line, "devDependencies must be an object");
    } else {
      for (const [name, version] of Object.entries(dev)) {
        const line = keyPosition(text, name, devAt.offset).line;
        if (!ALLOWED_DEV_DEPENDENCIES.has(name)) {
          at(line, `devDependency "${name}" is not allowed (only ${[...ALLOWED_DEV_DEPENDENCIES].join(", ")})`);
        }
        if (typeof version !== "string" || !EXACT_VERSION.test(version)) {
          at(line, `devDependency "${name}" must be pinned to an exact version, found ${JSON.stringify(version)}`);
        }
      }
    }
  }
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Line and offset of `"key":` at or after `from` (line 1 when not found, e.g. escaped keys). */
function keyPosition(text: string, key: string, from: number): { line: number; offset: number } {
  const re = new RegExp(`${JSON.stringify(key).replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}\\s*:`, "g");
  re.lastIndex = from;
  const m = re.exec(text);
  return m ? { line: lineAt(text, m.index), offset: m.index } : { line: 1, offset: from };
}

function stringPosition(text: string, value: string, from: number): number {
  const i = text.indexOf(JSON.stringify(value), from);
  return i === -1 ? 1 : lineAt(text, i);
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

async function listSourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const entries = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    const path = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await listSourceFiles(path)));
    else if (e.isFile() && SOURCE_EXTENSIONS.some((x) => e.name.endsWith(x))) out.push(path);
  }
  return out;
}

function checkSource(text: string, file: string, srcDir: string, core: boolean): Problem[] {
  const { code, literals } = maskSource(text);
  const out: Problem[] = [];
  for (const imp of findImports(code, literals)) {
    const line = lineAt(text, imp.offset);
    const spec = imp.specifier;
    if (spec === null) {
      out.push({ line, message: `${imp.kind} with a non-literal specifier cannot be checked` });
    } else if (spec.startsWith("node:")) {
      if (core) out.push({ line, message: `core code must not import "${spec}" (no node: modules under ${CORE_LIST})` });
    } else if (spec === "." || spec === ".." || spec.startsWith("./") || spec.startsWith("../")) {
      const target = resolve(dirname(file), spec);
      const fromSrc = relative(srcDir, target);
      if (fromSrc === ".." || fromSrc.startsWith(`..${sep}`)) {
        out.push({ line, message: `relative import "${spec}" leaves src/` });
      } else {
        const layers = layerProblem(toSlashes(relative(srcDir, file)), toSlashes(fromSrc));
        if (layers !== undefined) out.push({ line, message: layers });
      }
    } else {
      const hint = builtinModules.includes(spec) ? ` (write "node:${spec}")` : "";
      out.push({ line, message: `imports "${spec}"; only relative paths and node: built-ins are allowed${hint}` });
    }
  }
  if (core) {
    for (const g of findNodeGlobals(code)) {
      out.push({ line: lineAt(text, g.offset), message: `core code must not use the Node global "${g.name}"` });
    }
  }
  return out;
}

const toSlashes = (path: string): string => path.split(sep).join("/");

interface ImportRef {
  offset: number;
  kind: string;
  /** null: not a literal (or a template with substitutions). */
  specifier: string | null;
}

/** Every module reference in masked code. `literals` maps a quote's offset to its raw text. */
function findImports(code: string, literals: Map<number, string | null>): ImportRef[] {
  const out: ImportRef[] = [];
  const keyword = /(?<![\w$.#])(import|export|require)(?![\w$])/g;
  const staticFrom = /[\w$*{},\s]*?(?<![\w$])from\s*(?=["'])/y;
  const exportFrom = /(?:type\s+)?(?:\*(?:\s*as\s+[\w$]+)?|\{[^}]*\})\s*from\s*(?=["'])/y;
  const literalAt = (i: number): string | null => literals.get(i) ?? null;
  for (let m = keyword.exec(code); m !== null; m = keyword.exec(code)) {
    const word = m[1]!;
    if (/(?<![\w$])function\s*$/.test(code.slice(Math.max(0, m.index - 12), m.index))) continue;
    const after = skipSpace(code, m.index + word.length);
    const next = code[after];
    if (next === "(" && word !== "export") {
      const arg = skipSpace(code, after + 1);
      const kind = word === "import" ? "dynamic import()" : "require()";
      out.push({ offset: arg, kind, specifier: literalAt(arg) });
    } else if (word === "import" && (next === '"' || next === "'")) {
      out.push({ offset: after, kind: "import", specifier: literalAt(after) });
    } else if (word !== "require") {
      const re = word === "import" ? staticFrom : exportFrom;
      re.lastIndex = after;
      const found = re.exec(code);
      if (found) {
        const quote = after + found[0].length;
        out.push({ offset: quote, kind: word, specifier: literalAt(quote) });
      }
    }
  }
  return out;
}

function skipSpace(code: string, i: number): number {
  while (i < code.length && /\s/.test(code[i]!)) i++;
  return i;
}

/** References to the globals `Buffer` and `process` (not property names or keys). */
function findNodeGlobals(code: string): { offset: number; name: string }[] {
  const out: { offset: number; name: string }[] = [];
  const re = /(?<![\w$#])(Buffer|process)(?![\w$])/g;
  for (let m = re.exec(code); m !== null; m = re.exec(code)) {
    let p = m.index - 1;
    while (p >= 0 && /\s/.test(code[p]!)) p--;
    const before = code[p];
    if (before === "." && code.slice(p - 2, p + 1) !== "...") {
      // Member access is fine unless the object is the global object itself.
      const owner = /(?<![\w$.])(globalThis|global|window|self)\s*\??$/.exec(code.slice(Math.max(0, p - 20), p));
      if (!owner) continue;
    }
    const rest = code.slice(m.index + m[1]!.length, m.index + m[1]!.length + 8);
    // A key or member type (`process: x`, `process?: T`), not a ternary branch (`c ? process : x`).
    if (/^\s*\??\s*:(?!:)/.test(rest) && before !== "?") continue;
    // The global `process` is not callable, so `process(` declares or calls a local method.
    if (m[1] === "process" && /^\s*\(/.test(rest)) continue;
    out.push({ offset: m.index, name: m[1]! });
  }
  return out;
}

/** Tokens after which a `/` starts a regular expression rather than a division. */
const REGEX_AFTER_CHARS = "(,=:[!&|?{};+-*%<>~^";
const REGEX_AFTER_WORDS = new Set([
  "return", "typeof", "instanceof", "in", "of", "new", "delete", "void",
  "throw", "case", "do", "else", "yield", "await",
]);

function regexMayStart(prevChar: string, prevWord: string): boolean {
  if (prevWord !== "") return REGEX_AFTER_WORDS.has(prevWord);
  return prevChar === "" || REGEX_AFTER_CHARS.includes(prevChar);
}

/**
 * Blanks comments, string and template text and regex literals (same length, newlines kept),
 * and records each string literal (and template without substitutions) by the offset of its
 * opening quote. Code inside `${...}` stays visible.
 */
function maskSource(src: string): { code: string; literals: Map<number, string | null> } {
  const out = src.split("");
  const literals = new Map<number, string | null>();
  const blank = (from: number, to: number) => {
    for (let k = from; k < to; k++) if (out[k] !== "\n" && out[k] !== "\r") out[k] = " ";
  };
  // One frame per open template literal; while frames exist, code mode is inside `${}` of the top.
  const templates: { start: number; hasSubstitution: boolean; depth: number }[] = [];
  let prevChar = "";
  let prevWord = "";
  const n = src.length;

  /** Scans template text from `from`; returns where code resumes. */
  const scanTemplate = (from: number): number => {
    let k = from;
    while (k < n) {
      const ch = src[k];
      if (ch === "\\") k += 2;
      else if (ch === "`") {
        blank(from, k);
        const t = templates.pop()!;
        literals.set(t.start, t.hasSubstitution ? null : src.slice(t.start + 1, k));
        return k + 1;
      } else if (ch === "$" && src[k + 1] === "{") {
        blank(from, k);
        const t = templates[templates.length - 1]!;
        t.hasSubstitution = true;
        t.depth = 0;
        return k + 2;
      } else k++;
    }
    blank(from, n);
    return n;
  };

  /** Scans template text, then sets the previous token for the code that follows. */
  const resumeTemplate = (from: number): number => {
    const open = templates.length;
    const end = scanTemplate(from);
    // Closed: the template is a value. Still open: code inside `${` starts an expression.
    prevChar = templates.length < open ? "`" : "{";
    prevWord = "";
    return end;
  };

  let i = src.startsWith("#!") ? src.indexOf("\n") : 0;
  if (i === -1) i = n;
  blank(0, i);
  while (i < n) {
    const c = src[i]!;
    const next = src[i + 1];
    if (c === "/" && next === "/") {
      const e = src.indexOf("\n", i);
      const end = e === -1 ? n : e;
      blank(i, end);
      i = end;
    } else if (c === "/" && next === "*") {
      const e = src.indexOf("*/", i + 2);
      const end = e === -1 ? n : e + 2;
      blank(i, end);
      i = end;
    } else if (c === '"' || c === "'") {
      let k = i + 1;
      while (k < n && src[k] !== c && src[k] !== "\n") k += src[k] === "\\" ? 2 : 1;
      const close = Math.min(k, n);
      literals.set(i, src.slice(i + 1, close));
      blank(i + 1, close);
      i = close < n && src[close] === c ? close + 1 : close;
      prevChar = c;
      prevWord = "";
    } else if (c === "`") {
      templates.push({ start: i, hasSubstitution: false, depth: 0 });
      i = resumeTemplate(i + 1);
    } else if (c === "/" && regexMayStart(prevChar, prevWord)) {
      let k = i + 1;
      let inClass = false;
      while (k < n && src[k] !== "\n" && (inClass || src[k] !== "/")) {
        if (src[k] === "\\") k++;
        else if (src[k] === "[") inClass = true;
        else if (src[k] === "]") inClass = false;
        k++;
      }
      k = Math.min(k + 1, n);
      while (k < n && /[a-z]/.test(src[k]!)) k++;
      blank(i, k);
      i = k;
      prevChar = ")"; // a regex is a value: a following `/` divides
      prevWord = "";
    } else if (/[\w$]/.test(c)) {
      let k = i + 1;
      while (k < n && /[\w$]/.test(src[k]!)) k++;
      prevWord = src.slice(i, k);
      prevChar = src[k - 1]!;
      i = k;
    } else if (/\s/.test(c)) {
      i++;
    } else {
      if (templates.length > 0 && c === "{") templates[templates.length - 1]!.depth++;
      if (templates.length > 0 && c === "}") {
        const top = templates[templates.length - 1]!;
        if (top.depth === 0) {
          i = resumeTemplate(i + 1);
          continue;
        }
        top.depth--;
      }
      prevChar = c;
      prevWord = "";
      i++;
    }
  }
  return { code: out.join(""), literals };
}

async function main(): Promise<void> {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
  const problems = await checkProject(root);
  for (const p of problems) console.error(p);
  if (problems.length > 0) {
    console.error(`check-deps: ${problems.length} problem(s)`);
    process.exitCode = 1;
  } else {
    console.log("check-deps: ok (no runtime dependencies; src/ imports only relative paths and node: built-ins, in layer order)");
  }
}

const invokedAs = process.argv[1];
if (invokedAs !== undefined && resolve(invokedAs) === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
