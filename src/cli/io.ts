/** What every command gets from `main`: where its output goes, and what the terminal is like. */

/** The terminal side of the CLI's output; see `processTerminal` in main.ts. */
export interface Terminal {
  /** Width that tables and listings fit in: the terminal's columns, or 80 when not a terminal. */
  columns: number;
  /**
   * Shows a transient status line (progress) in place; `undefined` clears it. Absent when
   * stderr is not a terminal, so pipes and logs never get progress noise.
   */
  progress?: (line: string | undefined) => void;
}

export interface CliIo extends Terminal {
  /** Results: one block of text per call (stdout). */
  out: (text: string) => void;
  /** Diagnostics: warnings, the server's log messages and stderr lines (stderr). */
  err: (text: string) => void;
}
