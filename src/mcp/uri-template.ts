/**
 * Matching URIs against RFC 6570 URI templates, for `resources/read` on resource templates.
 *
 * Supported: level 1 `{var}` (simple string expansion) and level 2 `{+var}` (reserved
 * expansion, so `file:///{+path}` can match a path with slashes). Anything else (`{#x}`,
 * `{?x,y}`, `{x:3}`, `{x*}`) is refused when the template is parsed, so a server never
 * advertises a template it would silently fail to match.
 *
 * Matching walks the template's literal parts with `startsWith`/`indexOf`; no regular
 * expression is built from the template or the URI.
 */

type Part =
  | { kind: "literal"; text: string }
  | { kind: "variable"; name: string; reserved: boolean };

/** A parsed template. Create with {@link parseUriTemplate}. */
export interface UriTemplate {
  readonly template: string;
  readonly variables: readonly string[];
  /** The variables of `uri` when it matches, percent-decoded; `undefined` otherwise. */
  match(uri: string): Record<string, string> | undefined;
}

const VARNAME = /^[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*$/;
// What a level-1 expansion can produce: unreserved characters and percent-encoded octets.
const UNRESERVED_OR_PCT = /^(?:[A-Za-z0-9\-._~]|%[0-9A-Fa-f]{2})+$/;
// What a `{+var}` expansion can produce: any URI character (it stops at nothing but the
// next literal), but never whitespace, quotes or angle brackets.
const URI_CHARS = /^(?:[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})+$/;

/**
 * Parses a template. Throws a `TypeError` naming the problem for unbalanced braces, empty or
 * malformed variable names, repeated names, adjacent variables (`{a}{b}` cannot be split
 * back), and operators other than `+`.
 *
 * ```ts
 * parseUriTemplate("echo://items/{id}").match("echo://items/42") // { id: "42" }
 * ```
 */
export function parseUriTemplate(template: string): UriTemplate {
  const parts: Part[] = [];
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf("{", i);
    const literalEnd = open === -1 ? template.length : open;
    const literal = template.slice(i, literalEnd);
    if (literal.includes("}")) throw new TypeError(`URI template "${template}": unmatched "}"`);
    if (literal) parts.push({ kind: "literal", text: literal });
    if (open === -1) break;
    const close = template.indexOf("}", open);
    if (close === -1) throw new TypeError(`URI template "${template}": unclosed "{"`);
    let expr = template.slice(open + 1, close);
    const reserved = expr.startsWith("+");
    if (reserved) expr = expr.slice(1);
    if (!VARNAME.test(expr)) {
      throw new TypeError(
        `URI template "${template}": unsupported expression "{${template.slice(open + 1, close)}}" (only {name} and {+name} are supported)`,
      );
    }
    const prev = parts[parts.length - 1];
    if (prev?.kind === "variable") {
      throw new TypeError(`URI template "${template}": variables must be separated by literal text`);
    }
    if (parts.some((p) => p.kind === "variable" && p.name === expr)) {
      throw new TypeError(`URI template "${template}": variable "${expr}" appears twice`);
    }
    parts.push({ kind: "variable", name: expr, reserved });
    i = close + 1;
  }
  const variables = parts.flatMap((p) => (p.kind === "variable" ? [p.name] : []));
  return { template, variables, match: (uri) => matchParts(parts, uri) };
}

function matchParts(parts: readonly Part[], uri: string): Record<string, string> | undefined {
  const vars: Record<string, string> = Object.create(null) as Record<string, string>;
  let pos = 0;
  for (let k = 0; k < parts.length; k++) {
    const part = parts[k];
    if (part.kind === "literal") {
      if (!uri.startsWith(part.text, pos)) return undefined;
      pos += part.text.length;
      continue;
    }
    // The value runs to the next literal (the first occurrence), or to the end of the URI.
    const next = parts[k + 1];
    const end = next === undefined ? uri.length : uri.indexOf((next as { text: string }).text, pos);
    if (end === -1 || end === pos) return undefined;
    const raw = uri.slice(pos, end);
    if (!(part.reserved ? URI_CHARS : UNRESERVED_OR_PCT).test(raw)) return undefined;
    let value: string;
    try {
      value = decodeURIComponent(raw);
    } catch {
      return undefined;
    }
    vars[part.name] = value;
    pos = end;
  }
  return pos === uri.length ? { ...vars } : undefined;
}
