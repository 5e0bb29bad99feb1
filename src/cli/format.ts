/** Plain-text layout for the CLI (no colours: output is often piped or logged). */

/**
 * Control characters other than tab and newline, and the C1 range: what a server could use to
 * move the cursor or rewrite a terminal line. Server text is untrusted, so it is shown escaped.
 */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** Makes untrusted text safe to print on a terminal: control characters become `\uXXXX`. */
export function printable(text: string): string {
  return text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** Cuts a string to `max` characters with an ellipsis, on one line. */
export function oneLine(text: string | undefined, max = 80): string {
  const flat = printable((text ?? "").replace(/\s+/g, " ").trim());
  if (max < 1) return "";
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Cuts an already printable line to `width` characters, with an ellipsis, keeping its spacing. */
export function clip(line: string, width: number): string {
  return line.length > width ? `${line.slice(0, Math.max(0, width - 1))}…` : line;
}

/**
 * Breaks `text` (flattened to one paragraph) into lines of at most `width` characters, at
 * spaces where it can; a word longer than a line is cut. At most `maxLines` lines: the last
 * one ends with an ellipsis when text was left out.
 */
export function wrap(text: string | undefined, width: number, maxLines = 3): string[] {
  width = Math.max(1, width);
  const words = oneLine(text, Number.MAX_SAFE_INTEGER).split(" ").filter((w) => w !== "");
  const lines: string[] = [];
  let line = "";
  for (let word of words) {
    while (word.length > width) {
      if (line !== "") lines.push(line);
      lines.push(word.slice(0, width));
      line = "";
      word = word.slice(width);
    }
    if (line === "") line = word;
    else if (line.length + 1 + word.length <= width) line += ` ${word}`;
    else {
      lines.push(line);
      line = word;
    }
  }
  if (line !== "") lines.push(line);
  if (lines.length <= maxLines) return lines;
  // The next line did not fit after the last kept one, so joining them always overflows and
  // oneLine ends the result with an ellipsis.
  const kept = lines.slice(0, maxLines);
  kept[maxLines - 1] = oneLine(`${kept[maxLines - 1]!} ${lines[maxLines]!}`, width);
  return kept;
}

/**
 * Renders rows under a header, columns padded to the widest cell. With a `width`, no line is
 * longer: a column other than the last is cut at half the width, and the last column takes
 * what is left (cut with an ellipsis).
 */
export function table(header: readonly string[], rows: readonly (readonly string[])[], width?: number): string {
  const all = [header, ...rows];
  const last = header.length - 1;
  const cap = width === undefined ? Infinity : Math.max(8, Math.floor(width / 2));
  const widths = header.map((_, i) => Math.min(cap, Math.max(...all.map((r) => (r[i] ?? "").length))));
  const lead = widths.slice(0, last).reduce((sum, w) => sum + w + 2, 0);
  const lastMax = width === undefined ? Infinity : Math.max(1, width - lead);
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === last ? clip(c, lastMax) : clip(c, widths[i]!).padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(header), line(widths.map((w, i) => "-".repeat(i === last ? Math.min(w, lastMax) : w))), ...rows.map(line)].join("\n");
}
