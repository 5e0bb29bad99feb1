/**
 * The module specifiers a TypeScript source file names: what `mcp-bridge vendor` follows to
 * find a subset's import closure. A small tokenizer, not a parser: it skips comments, the text
 * of strings, templates and regular expressions, so that `import` inside them is never taken
 * for code, and then reads the specifier after `import`/`export ... from`, `import "x"`,
 * `import("x")` and `typeof import("x")`. Type-only imports count: a vendored copy must still
 * type-check.
 */

/** One token: a word (identifier, keyword, number), a punctuator, or a literal's value. */
interface Token {
  kind: "word" | "punct" | "string" | "template";
  /** The word or punctuator; a string's or plain template's text; "" for a template with `${}`. */
  text: string;
  line: number;
}

/** A specifier and the line it is on, for error messages. */
export interface ModuleReference {
  specifier: string;
  line: number;
}

/** A module reference whose specifier is not a literal, so no closure can follow it. */
export class NonLiteralImportError extends Error {
  readonly line: number;

  constructor(line: number) {
    super(`line ${line}: import() of a computed specifier cannot be followed; write the path as a string literal`);
    this.name = "NonLiteralImportError";
    this.line = line;
  }
}

/** Words after which a `/` starts a regular expression rather than dividing. */
const BEFORE_REGEX = new Set(["return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case", "do", "else", "yield", "await"]);
/** Words that may stand between `import`/`export` and `from`, besides braces, commas and `*`. */
const CLAUSE_WORD = /^[\w$]+$/;

/**
 * Every module specifier in `source`, in order, with duplicates. Throws
 * {@link NonLiteralImportError} for `import(expression)`.
 */
export function moduleReferences(source: string): ModuleReference[] {
  const tokens = tokenize(source);
  const out: ModuleReference[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.kind !== "word" || (token.text !== "import" && token.text !== "export")) continue;
    if (tokens[i - 1]?.text === ".") continue; // a property named `import`
    const next = tokens[i + 1];
    if (token.text === "import" && next?.text === "(") {
      const argument = tokens[i + 2];
      const literal = argument !== undefined && isLiteral(argument) && argument.text !== "";
      if (!literal) throw new NonLiteralImportError(token.line);
      out.push({ specifier: argument.text, line: argument.line });
    } else if (token.text === "import" && next?.kind === "string") {
      out.push({ specifier: next.text, line: next.line });
    } else {
      const from = fromClause(tokens, i + 1);
      if (from !== undefined) out.push({ specifier: from.text, line: from.line });
    }
  }
  return out;
}

function isLiteral(token: Token): boolean {
  return token.kind === "string" || token.kind === "template";
}

/**
 * The specifier token of `... from "x"` when the tokens from `start` are an import or export
 * clause (words, braces, commas, `*`); undefined for `export const ...`, `export { a };`, etc.
 */
function fromClause(tokens: readonly Token[], start: number): Token | undefined {
  for (let j = start; j < tokens.length; j++) {
    const t = tokens[j]!;
    if (t.kind === "word" && t.text === "from" && tokens[j + 1]?.kind === "string") return tokens[j + 1];
    const clause = (t.kind === "word" && CLAUSE_WORD.test(t.text)) || (t.kind === "punct" && "{},*".includes(t.text));
    if (!clause) return undefined;
    // `export const x`, `export function f`: a declaration, whose words would run on.
    if (j === start && t.kind === "word" && t.text !== "type" && tokens[start - 1]?.text === "export") return undefined;
  }
  return undefined;
}

/** Splits `source` into tokens; comments, whitespace and regular expressions leave none. */
function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  /** One entry per template whose `${` is open: the `{` depth inside that substitution. */
  const substitutions: number[] = [];
  let line = 1;
  let i = source.startsWith("#!") ? lineEnd(source, 0) : 0;
  const push = (kind: Token["kind"], text: string, at: number) => tokens.push({ kind, text, line: at });

  /** Reads template text from `from` (just after "`" or "}"); returns where code resumes. */
  const template = (from: number, opened: boolean): number => {
    const startLine = line;
    let k = from;
    while (k < source.length) {
      const c = source[k]!;
      if (c === "\\") k += 2;
      else if (c === "`") {
        // A template with no substitution is a literal; one that had any is not.
        if (opened) push("template", source.slice(from, k), startLine);
        return k + 1;
      } else if (c === "$" && source[k + 1] === "{") {
        if (opened) push("template", "", startLine);
        substitutions.push(0);
        return k + 2;
      } else {
        if (c === "\n") line++;
        k++;
      }
    }
    return k;
  };

  while (i < source.length) {
    const c = source[i]!;
    const next = source[i + 1];
    if (c === "\n") {
      line++;
      i++;
    } else if (/\s/.test(c)) {
      i++;
    } else if (c === "/" && next === "/") {
      i = lineEnd(source, i);
    } else if (c === "/" && next === "*") {
      const end = source.indexOf("*/", i + 2);
      const stop = end === -1 ? source.length : end + 2;
      line += countLines(source, i, stop);
      i = stop;
    } else if (c === '"' || c === "'") {
      let k = i + 1;
      // An unterminated string ends at the line's end, so a mistake stays on one line.
      while (k < source.length && source[k] !== c && source[k] !== "\n") k += source[k] === "\\" ? 2 : 1;
      push("string", source.slice(i + 1, k), line);
      i = source[k] === c ? k + 1 : k;
    } else if (c === "`") {
      i = template(i + 1, true);
    } else if (c === "/" && regexMayStart(tokens[tokens.length - 1])) {
      i = regexEnd(source, i);
    } else if (/[\w$#]/.test(c)) {
      let k = i + 1;
      while (k < source.length && /[\w$]/.test(source[k]!)) k++;
      push("word", source.slice(i, k), line);
      i = k;
    } else if (c === "}" && substitutions.length > 0 && substitutions[substitutions.length - 1] === 0) {
      substitutions.pop();
      i = template(i + 1, false);
    } else {
      if (substitutions.length > 0 && (c === "{" || c === "}")) substitutions[substitutions.length - 1]! += c === "{" ? 1 : -1;
      push("punct", c, line);
      i++;
    }
  }
  return tokens;
}

/** Whether a `/` after `previous` begins a regular expression (a value cannot precede one). */
function regexMayStart(previous: Token | undefined): boolean {
  if (previous === undefined) return true;
  if (previous.kind === "word") return BEFORE_REGEX.has(previous.text);
  if (previous.kind === "punct") return !")]}".includes(previous.text);
  return false;
}

/** The index just past a regular expression literal starting at `start` (its flags included). */
function regexEnd(source: string, start: number): number {
  let k = start + 1;
  let inClass = false;
  while (k < source.length && source[k] !== "\n" && (inClass || source[k] !== "/")) {
    if (source[k] === "\\") k++;
    else if (source[k] === "[") inClass = true;
    else if (source[k] === "]") inClass = false;
    k++;
  }
  k++;
  while (k < source.length && /[a-z]/.test(source[k]!)) k++;
  return k;
}

function lineEnd(source: string, from: number): number {
  const end = source.indexOf("\n", from);
  return end === -1 ? source.length : end;
}

function countLines(source: string, from: number, to: number): number {
  let n = 0;
  for (let k = source.indexOf("\n", from); k !== -1 && k < to; k = source.indexOf("\n", k + 1)) n++;
  return n;
}
